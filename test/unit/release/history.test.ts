import { describe, expect, it } from 'vitest';
import {
  diffReleases,
  formatDuration,
  formatReleaseApprovals,
  formatReleaseDiff,
  formatReleaseTable,
  releaseListEntries,
} from '../../../src/release/history.js';
import { summarise, type KappState, type Release } from '../../../src/release/types.js';
import type { SpecKapp, SpecStep } from '../../../src/plan/spec.js';
import { makeRelease } from './helpers.js';
import { parseReleaseRecord } from '../../../src/release/record-schema.js';

function entry(status: KappState['status'], digest: string, outputs: KappState['outputs'] = {}): KappState {
  return { status, specDigest: digest, revision: 1, updatedAt: '2026-01-01T00:00:00.000Z', outputs, steps: [] };
}

describe('release approvals', () => {
  it('says who approved, when and why, and who skipped the approvals by break glass', () => {
    expect(
      formatReleaseApprovals({
        approvals: [
          { by: 'alice', at: '2026-11-25T10:05:00.000Z', comment: 'looks fine' },
          { by: 'bob', at: '2026-11-25T10:06:00.000Z', comment: null },
        ],
      }),
    ).toEqual([
      'approved by alice at 2026-11-25T10:05:00.000Z: looks fine',
      'approved by bob at 2026-11-25T10:06:00.000Z',
    ]);
    expect(
      formatReleaseApprovals({ breakGlass: { by: 'ops', role: 'admin', at: '2026-11-25T11:00:00.000Z' } }),
    ).toEqual(['approvals skipped by break glass: ops (admin) at 2026-11-25T11:00:00.000Z']);
    expect(formatReleaseApprovals({})).toEqual([]);
  });

  it('shows a comment on one line, with nothing a terminal would run', () => {
    const [line] = formatReleaseApprovals({
      approvals: [{ by: 'alice', at: '2026-11-25T10:05:00.000Z', comment: 'ok\n\u001b[31mred\u009b' }],
    });
    expect(line).toBe('approved by alice at 2026-11-25T10:05:00.000Z: ok\\n\\u001b[31mred\\u009b');
  });
});

describe('release list', () => {
  const releases: Release[] = [
    makeRelease('shop', 'dev', 3, {
      phase: 'applying',
      finishedAt: undefined,
      owner: { user: 'carol', host: 'ci-7', pid: 991 },
    }),
    makeRelease('shop', 'dev', 2, {
      phase: 'failed',
      operation: 'delete',
      createdAt: '2026-01-01T12:00:00.000Z',
      finishedAt: '2026-01-01T12:04:05.400Z',
      unlocked: { by: 'bob@ops', at: '2026-01-01T12:04:05.400Z' },
    }),
    makeRelease('shop', 'dev', 1, { createdAt: '2026-01-01T11:00:00.250Z', finishedAt: '2026-01-01T11:00:12.600Z' }),
  ];

  it('prints a table, newest first', () => {
    expect(formatReleaseTable(releases.map(summarise))).toBe(
      [
        'REVISION  OPERATION  PHASE              KAPPS  OWNER                     STARTED               DURATION',
        '3         install    applying           1      carol@ci-7 (pid 991)      2026-01-01T12:00:03Z  running',
        '2         delete     failed (unlocked)  1      alice@build-1 (pid 4242)  2026-01-01T12:00:00Z  4 min 05 s',
        '1         install    succeeded          1      alice@build-1 (pid 4242)  2026-01-01T11:00:00Z  12.3 s',
        '',
      ].join('\n'),
    );
  });

  it('adds a COMMIT column when a release records its source (a run of a project from git)', () => {
    const sha = '0123456789abcdef0123456789abcdef01234567';
    const withSource = [
      makeRelease('shop', 'dev', 2, { source: { repo: 'https://git.example.com/acme/infra.git', commit: sha } }),
      makeRelease('shop', 'dev', 1),
    ].map(summarise);
    expect(withSource[0]?.source).toEqual({ repo: 'https://git.example.com/acme/infra.git', commit: sha });
    expect(
      formatReleaseTable(withSource)
        .split('\n')
        .map((l) => l.split(/ {2,}/).at(-1)),
    ).toEqual(['COMMIT', '0123456789ab', '-', '']);
    expect(parseReleaseRecord(JSON.parse(JSON.stringify(releases[2])), 'old')).not.toHaveProperty('source');
    expect(() =>
      parseReleaseRecord({ ...JSON.parse(JSON.stringify(releases[2])), source: { repo: 'r' } }, 'bad'),
    ).toThrow(/source\.commit/);
  });

  it('marks a rollback in the OPERATION column and a checkout with local changes in the COMMIT column', () => {
    const sha = '0123456789abcdef0123456789abcdef01234567';
    const source = { repo: '/src/infra', commit: sha };
    const rows = formatReleaseTable(
      [
        makeRelease('shop', 'dev', 3, { source: { ...source, dirty: false }, rollbackOf: 1 }),
        makeRelease('shop', 'dev', 2, { source: { ...source, dirty: true } }),
        makeRelease('shop', 'dev', 1, { source }),
      ].map(summarise),
    )
      .split('\n')
      .map((l) => l.split(/ {2,}/));
    expect(rows.map((r) => r[1])).toEqual(['OPERATION', 'install (rollback of 1)', 'install', 'install', undefined]);
    expect(rows.map((r) => r.at(-1))).toEqual(['COMMIT', '0123456789ab', '0123456789ab (dirty)', '0123456789ab', '']);
  });

  it('gives JSON entries with the duration in milliseconds (null while running)', () => {
    const entries = releaseListEntries(releases.map(summarise));
    expect(entries.map((e) => [e.revision, e.durationMs])).toEqual([
      [3, null],
      [2, 245_400],
      [1, 12_350],
    ]);
    expect(entries[1]).toMatchObject({ phase: 'failed', kappsCount: 1, unlocked: { by: 'bob@ops' } });
  });

  it.each([
    [0, '0 ms'],
    [999, '999 ms'],
    [1000, '1.0 s'],
    [59_940, '59.9 s'],
    [61_000, '1 min 01 s'],
    [3_725_000, '1 h 02 min'],
  ])('formats %d ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('release diff', () => {
  const a = makeRelease('shop', 'dev', 1, {
    state: {
      'web:api': entry('installed', 'A1', { url: 'http://a', port: 80, old: true }),
      'web:db': entry('installed', 'D1'),
      'web:cache': entry('installed', 'C1'),
      'web:gone': entry('deleted', 'G1'),
      'web:worker': entry('failed', 'W1'),
      'web:same': entry('installed', 'S1', { x: [1, 2] }),
      'web:list': entry('installed', 'L1', [1, 2]),
    },
  });
  const b = makeRelease('shop', 'dev', 4, {
    state: {
      'web:same': entry('installed', 'S1', { x: [1, 2] }),
      'web:api': entry('installed', 'A2', { port: 8080, url: 'http://a', new: 1 }),
      'web:db': entry('installed', 'D1'),
      'web:cache': entry('deleted', 'C1'),
      'web:gone': entry('deleted', 'G1'),
      'web:worker': entry('installed', 'W1'),
      'web:new': entry('installed', 'N1'),
      'web:list': entry('installed', 'L1', [2, 1]),
    },
  });

  it('lists added, removed and changed kapps (spec, outputs, status)', () => {
    expect(diffReleases(a, b)).toEqual({
      project: 'shop',
      stack: 'dev',
      from: 1,
      to: 4,
      added: [{ id: 'web:new', status: 'installed' }],
      removed: [{ id: 'web:cache', status: 'installed', now: 'deleted' }],
      changed: [
        {
          id: 'web:api',
          spec: true,
          outputs: { added: ['new'], removed: ['old'], changed: ['port'] },
          status: null,
          // The recorded specs were not given: no field-level changes.
          changes: [],
          outputChanges: [
            { path: ['outputs', 'new'], from: null, to: 1 },
            { path: ['outputs', 'old'], from: true, to: null },
            { path: ['outputs', 'port'], from: 80, to: 8080 },
          ],
        },
        {
          id: 'web:list',
          spec: false,
          outputs: { added: [], removed: [], changed: [] },
          status: null,
          changes: [],
          outputChanges: [{ path: ['outputs'], from: [1, 2], to: [2, 1] }],
        },
        {
          id: 'web:worker',
          spec: false,
          outputs: null,
          status: { from: 'failed', to: 'installed' },
          changes: [],
          outputChanges: [],
        },
      ],
      unchanged: ['web:db', 'web:same'],
      notRecorded: [],
    });
  });

  it('prints the diff readably', () => {
    expect(formatReleaseDiff(diffReleases(a, b))).toBe(
      [
        'Release 1 → 4 of shop/dev',
        '+ web:new (added, installed)',
        '- web:cache (removed; was installed, now deleted)',
        '~ web:api: spec changed; outputs changed (+new, -old, ~port)',
        '    + outputs.new: (none) → 1',
        '    - outputs.old: true → (none)',
        '    ~ outputs.port: 80 → 8080',
        '~ web:list: outputs changed',
        '    ~ outputs: [1,2] → [2,1]',
        '~ web:worker: status failed → installed',
        '5 changed, 2 unchanged',
        '',
      ].join('\n'),
    );
  });

  it('says when two releases do not differ', () => {
    expect(formatReleaseDiff(diffReleases(a, a))).toBe(
      'Release 1 → 1 of shop/dev\nNo differences.\n0 changed, 6 unchanged\n',
    );
  });
});

describe('release diff against a kapp recorded before the spec had a format', () => {
  const step = (dir: string, tag: string): SpecStep => ({
    name: 'apply',
    command: 'helm',
    args: ['upgrade', '-f', `${dir}/_generated_values.yaml`, tag],
    env: { CONFIG: `${dir}/config` },
    workingDir: dir,
    stdout: `${dir}/out.json`,
  });
  const spec = (dir: string, tag: string, complete: boolean): SpecKapp =>
    ({
      id: 'web:api',
      dependsOn: [],
      selected: true,
      conditionsOk: true,
      phases: { apply_install: [step(dir, tag)] },
      ...(complete ? { sources: [], templates: [], vars: { replicas: 2 } } : {}),
    }) as unknown as SpecKapp;
  const releases = (oldTag: string) => {
    const a = makeRelease('shop', 'dev', 1, { state: { 'web:api': entry('installed', 'legacy') } });
    const b = makeRelease('shop', 'dev', 2, {
      state: { 'web:api': { ...entry('installed', 'new'), specFormat: 2 } },
    });
    const specs = {
      // Recorded by another checkout, with its absolute paths.
      from: new Map([['web:api', spec('/home/ci/work/shop/.kapps-workspace/dev/web/api', oldTag, false)]]),
      to: new Map([['web:api', spec('${kapp_dir}', '--tag v1', true)]]),
    };
    return { a, b, specs };
  };

  it('finds no difference where only the form of the paths changed, and names what the old one lacks', () => {
    const { a, b, specs } = releases('--tag v1');
    const diff = diffReleases(a, b, specs);
    expect(diff).toMatchObject({
      changed: [],
      unchanged: ['web:api'],
      notRecorded: [{ id: 'web:api', revision: 1, fields: ['sources', 'templates', 'vars'] }],
    });
    expect(diffReleases(b, a, { from: specs.to, to: specs.from })).toMatchObject({
      changed: [],
      notRecorded: [{ revision: 1 }],
    });
  });

  it('still lists a real change of a step, and only it', () => {
    const { a, b, specs } = releases('--tag v0');
    const diff = diffReleases(a, b, specs);
    expect(diff.changed.map((c) => [c.id, c.spec, c.changes])).toEqual([
      [
        'web:api',
        true,
        [
          {
            path: ['apply_install', 'apply', 'args'],
            from: ['upgrade', '-f', '${kapp_dir}/_generated_values.yaml', '--tag v0'],
            to: ['upgrade', '-f', '${kapp_dir}/_generated_values.yaml', '--tag v1'],
          },
        ],
      ],
    ]);
  });
});
