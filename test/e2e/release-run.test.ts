/**
 * Releases around real runs of the built CLI, on the file backend and on PostgreSQL: what an install or delete
 * records, when nothing is recorded, failed and interrupted runs, `--changed-only`, preview and secrets.
 */
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { kappsVersion } from '../../src/engine/version.js';
import {
  BACKENDS,
  PG_PASSWORD,
  allReleases,
  cleanup,
  fakeKapp,
  fileBackend,
  freshBackend,
  makeProject,
  processesWith,
  startedTags,
  tempDir,
  waitFor,
  type KappDef,
} from '../fixtures/release/harness.js';
import { markersKilledAfterEach } from '../support/processes.js';

afterAll(cleanup);
const newMarker = markersKilledAfterEach();

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const anyString: unknown = expect.any(String);
const anyNumber: unknown = expect.any(Number);
const isoTime: unknown = expect.stringMatching(ISO);
const sha256: unknown = expect.stringMatching(/^[0-9a-f]{64}$/);

/** db, then api (after db): each has plan, apply and delete steps tagged with their names. */
function twoKapps(suffix = ''): KappDef[] {
  return [
    {
      id: 'db',
      descriptor: fakeKapp({ plan: '--tag plan-db', apply: `--tag apply-db${suffix}`, delete: '--tag delete-db' }),
    },
    {
      id: 'api',
      dependsOn: ['db'],
      descriptor: fakeKapp({ plan: '--tag plan-api', apply: `--tag apply-api${suffix}`, delete: '--tag delete-api' }),
    },
  ];
}

function noPassword(...results: { stdout: string; stderr: string }[]): void {
  for (const r of results) expect(r.stdout + r.stderr).not.toContain(PG_PASSWORD);
}

describe.each(BACKENDS)('releases around runs (%s backend)', (kind) => {
  it('records install -y, --one-shot and delete -y as revisions 1, 2, … and nothing for plans or dry runs', async () => {
    const backend = await freshBackend(kind);
    const p = makeProject('shop', backend, twoKapps());

    const runs = [
      await p.run(['install', 'stacks.yaml', 'dev']),
      await p.run(['install', 'stacks.yaml', 'dev', '-y', '--dry-run']),
      await p.run(['delete', 'stacks.yaml', 'dev']),
      await p.run(['delete', 'stacks.yaml', 'dev', '--one-shot', '-n']),
    ];
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    expect(await allReleases(backend, 'shop')).toEqual([]);
    expect(startedTags(p.traceLines())).toEqual(['plan-db', 'plan-api']);

    const installed = await p.run(['install', 'stacks.yaml', 'dev', '-y']);
    expect(installed.code, installed.stderr).toBe(0);
    const oneShot = await p.run(['install', 'stacks.yaml', 'dev', '--one-shot', '-i', 'web:api']);
    expect(oneShot.code, oneShot.stderr).toBe(0);
    const deleted = await p.run(['delete', 'stacks.yaml', 'dev', '-y', '-i', 'web:api']);
    expect(deleted.code, deleted.stderr).toBe(0);
    noPassword(...runs, installed, oneShot, deleted);

    const releases = await allReleases(backend, 'shop');
    expect(releases.map((r) => [r.revision, r.operation, r.phase])).toEqual([
      [1, 'install', 'succeeded'],
      [2, 'install', 'succeeded'],
      [3, 'delete', 'succeeded'],
    ]);
    const [first, second, third] = releases as [(typeof releases)[0], (typeof releases)[0], (typeof releases)[0]];

    // Revision 1: every field a release holds.
    expect(first).toMatchObject({
      project: 'shop',
      stack: 'dev',
      owner: { user: anyString, host: hostname(), pid: anyNumber },
      selectors: { include: [], exclude: [] },
      kappsVersion: kappsVersion(),
    });
    expect(first.command.slice(1)).toEqual(['install', 'stacks.yaml', 'dev', '-y']);
    expect(first.owner.pid).not.toBe(process.pid);
    for (const time of [first.createdAt, first.modifiedAt, first.finishedAt, first.heartbeatAt])
      expect(time).toMatch(ISO);
    expect(Date.parse(first.modifiedAt)).toBeGreaterThan(Date.parse(first.createdAt));
    expect(first.spec.stack).toBe('dev');
    expect(first.spec.kapps.map((k) => [k.id, k.phases.apply_install.map((s) => s.args.join(' '))])).toEqual([
      ['web:db', ['--tag apply-db']],
      ['web:api', ['--tag apply-api']],
    ]);
    expect(Object.keys(first.state)).toEqual(['web:db', 'web:api']);
    for (const id of ['web:db', 'web:api']) {
      const entry = first.state[id];
      expect(entry).toMatchObject({
        status: 'installed',
        revision: 1,
        outputs: {},
        specDigest: sha256,
      });
      expect(entry?.steps).toEqual([
        {
          phase: 'apply_install',
          name: 'apply',
          status: 'succeeded',
          exitCode: 0,
          startedAt: isoTime,
          endedAt: isoTime,
          durationMs: anyNumber,
          timedOut: false,
        },
      ]);
    }

    // Revision 2 (--one-shot, only api): db's entry is carried over from revision 1 as it was.
    expect(second.selectors).toEqual({ include: ['web:api'], exclude: [] });
    expect(second.spec.kapps.map((k) => k.id)).toEqual(['web:api']);
    expect(second.state['web:db']).toEqual(first.state['web:db']);
    expect(second.state['web:api']).toMatchObject({ status: 'installed', revision: 2 });
    expect(second.state['web:api']?.steps.map((s) => s.phase)).toEqual(['plan_install', 'apply_install']);

    // Revision 3 (delete api).
    expect(third.state['web:db']).toEqual(first.state['web:db']);
    expect(third.state['web:api']).toMatchObject({ status: 'deleted', revision: 3 });
    expect(third.state['web:api']?.steps.map((s) => `${s.phase}/${s.name}`)).toEqual(['apply_delete/apply']);
    expect(startedTags(p.traceLines()).slice(2)).toEqual([
      'apply-db',
      'apply-api',
      'plan-api',
      'apply-api',
      'delete-api',
    ]);

    if (kind === 'file') {
      const file = join(backend.value, 'releases', 'shop', 'dev', '1.yaml');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(join(backend.value, 'releases', 'shop', 'dev')).mode & 0o777).toBe(0o700);
    }
  });

  it('names the project after --project, else project: in sugarkube-conf.yaml, else the stack file folder', async () => {
    const backend = await freshBackend(kind);
    const p = makeProject('shop', backend, [{ id: 'db', descriptor: fakeKapp({ apply: '--tag apply-db' }) }]);
    expect((await p.run(['install', 'stacks.yaml', 'dev', '-y'])).code).toBe(0);
    writeFileSync(join(p.dir, 'sugarkube-conf.yaml'), 'project: store\n');
    expect((await p.run(['install', 'stacks.yaml', 'dev', '-y'])).code).toBe(0);
    expect((await p.run(['install', 'stacks.yaml', 'dev', '-y'])).code).toBe(0);
    expect((await p.run(['install', 'stacks.yaml', 'dev', '-y', '--project', 'team/a'])).code).toBe(0);

    expect((await allReleases(backend, 'shop')).map((r) => r.revision)).toEqual([1]);
    expect((await allReleases(backend, 'store')).map((r) => r.revision)).toEqual([1, 2]);
    expect((await allReleases(backend, 'team/a')).map((r) => [r.project, r.revision])).toEqual([['team/a', 1]]);
    const list = await p.run(['release', 'list', 'stacks.yaml', 'dev', '-o', 'json']);
    expect(list.code, list.stderr).toBe(0);
    expect((JSON.parse(list.stdout) as { revision: number }[]).map((r) => r.revision)).toEqual([2, 1]);
  });

  it('keeps releases where --backend, else KAPPS_BACKEND, else backend: in sugarkube-conf.yaml says', async () => {
    const [fromConfig, fromEnv, fromFlag] = [
      await freshBackend(kind),
      await freshBackend(kind),
      await freshBackend(kind),
    ];
    const p = makeProject('shop', fromConfig, [{ id: 'db', descriptor: fakeKapp({ apply: '--tag apply-db' }) }]);
    // A relative directory in sugarkube-conf.yaml is taken from the file's folder, not from where kapps runs.
    const configValue = kind === 'file' ? 'kept-releases' : fromConfig.value;
    writeFileSync(join(p.dir, 'sugarkube-conf.yaml'), `backend: ${configValue}\n`);
    const configPlace = kind === 'file' ? fileBackend(join(p.dir, 'kept-releases')) : fromConfig;
    const unset = { KAPPS_BACKEND: '', KAPPS_HOME: tempDir('kapps-release-default-home-') };
    const stackFile = join('shop', 'stacks.yaml');

    const runs = [
      await p.run(['install', stackFile, 'dev', '-y'], unset, p.root),
      await p.run(['install', stackFile, 'dev', '-y'], { ...unset, KAPPS_BACKEND: fromEnv.value }, p.root),
      await p.run(
        ['install', stackFile, 'dev', '-y', '--backend', fromFlag.value],
        { ...unset, KAPPS_BACKEND: fromEnv.value },
        p.root,
      ),
      await p.run(['install', stackFile, 'dev', '-y', '--backend', fromFlag.value], unset, p.root),
    ];
    for (const r of runs) expect(r.code, r.stdout + r.stderr).toBe(0);
    noPassword(...runs);
    const revisions = async (place: typeof fromConfig) => (await allReleases(place, 'shop')).map((r) => r.revision);
    expect(await revisions(configPlace)).toEqual([1]);
    expect(await revisions(fromEnv)).toEqual([1]);
    expect(await revisions(fromFlag)).toEqual([1, 2]);
    // The command line is recorded with the password masked.
    const [flagged] = await allReleases(fromFlag, 'shop');
    expect(flagged?.command.slice(1)).toEqual([
      'install',
      stackFile,
      'dev',
      '-y',
      '--backend',
      kind === 'file' ? fromFlag.value : fromFlag.value.replace(PG_PASSWORD, '***'),
    ]);
    if (kind === 'postgres') expect(JSON.stringify(flagged)).not.toContain(PG_PASSWORD);
    expect(existsSync(join(unset.KAPPS_HOME, 'releases'))).toBe(false);
  });

  it('ends the release failed, with an empty spec and the state unchanged, when the run stops before any kapp', async () => {
    const backend = await freshBackend(kind);
    const db = { id: 'db', descriptor: fakeKapp({ apply: '--tag apply-db' }) };
    const p = makeProject('shop', backend, [db]);
    expect((await p.run(['install', 'stacks.yaml', 'dev', '-y'])).code).toBe(0);
    const missing = 'kapps-e2e-no-such-command';
    p.writeKapps([
      db,
      { id: 'api', descriptor: fakeKapp({ apply: '--tag apply-api' }).replace('kapps-fake', missing) },
    ]);
    const run = await p.run(['install', 'stacks.yaml', 'dev', '-y']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`'${missing}' not found`);
    const [first, second] = await allReleases(backend, 'shop');
    expect(second).toMatchObject({ revision: 2, phase: 'failed', spec: { stack: 'dev', kapps: [] } });
    expect(second?.state).toEqual(first?.state);
    expect(startedTags(p.traceLines())).toEqual(['apply-db']);
  });

  it('ends a release failed when a kapp fails, keeps what succeeded, and --changed-only retries only the rest', async () => {
    const backend = await freshBackend(kind);
    const flag = join(tempDir(), 'api-may-succeed');
    const kapps = (cacheArgs: string): KappDef[] => [
      { id: 'db', descriptor: fakeKapp({ apply: '--tag apply-db' }) },
      { id: 'cache', descriptor: fakeKapp({ apply: cacheArgs }) },
      // Fails (exit 127) until the flag file exists; its spec does not change.
      { id: 'api', dependsOn: ['db'], descriptor: fakeKapp({ apply: `--tag apply-api --wait-file ${flag} 0` }) },
      { id: 'worker', dependsOn: ['api'], descriptor: fakeKapp({ apply: '--tag apply-worker' }) },
    ];
    const p = makeProject('shop', backend, kapps('--tag apply-cache'));

    const failed = await p.run(['install', 'stacks.yaml', 'dev', '-y', '-w', '1']);
    expect(failed.code).toBe(1);
    expect(startedTags(p.traceLines())).toEqual(['apply-db', 'apply-cache', 'apply-api']);
    let [release] = await allReleases(backend, 'shop');
    expect(release?.phase).toBe('failed');
    expect(Object.fromEntries(Object.entries(release?.state ?? {}).map(([id, s]) => [id, s.status]))).toEqual({
      'web:db': 'installed',
      'web:cache': 'installed',
      'web:api': 'failed',
    });
    expect(release?.state['web:api']?.steps).toMatchObject([
      { phase: 'apply_install', status: 'failed', exitCode: 127 },
    ]);

    // api may succeed now; cache's arguments change; db is as it was.
    writeFileSync(flag, '');
    p.writeKapps(kapps('--tag apply-cache-v2'));
    const preview = await p.run(['preview', 'stacks.yaml', 'dev', '-o', 'json']);
    expect(JSON.parse(preview.stdout)).toMatchObject({
      basedOnRevision: 1,
      kapps: [
        { id: 'web:db', action: 'UnChanged' },
        { id: 'web:cache', action: 'Update' },
        { id: 'web:api', action: 'Create' },
        { id: 'web:worker', action: 'Create' },
      ],
    });
    const before = p.traceLines().length;
    const retried = await p.run(['install', 'stacks.yaml', 'dev', '-y', '--changed-only', '-w', '1']);
    expect(retried.code, retried.stdout + retried.stderr).toBe(0);
    expect(startedTags(p.traceLines().slice(before))).toEqual(['apply-cache-v2', 'apply-api', 'apply-worker']);
    const releases = await allReleases(backend, 'shop');
    release = releases[1];
    expect(release).toMatchObject({ revision: 2, phase: 'succeeded' });
    expect(release?.spec.kapps.map((k) => k.id)).toEqual(['web:cache', 'web:api', 'web:worker']);
    expect(
      Object.fromEntries(Object.entries(release?.state ?? {}).map(([id, s]) => [id, [s.status, s.revision]])),
    ).toEqual({
      'web:db': ['installed', 1],
      'web:cache': ['installed', 2],
      'web:api': ['installed', 2],
      'web:worker': ['installed', 2],
    });

    // Nothing changed: --changed-only runs nothing and records an empty, successful release.
    const idle = await p.run(['install', 'stacks.yaml', 'dev', '-y', '--changed-only']);
    expect(idle.code, idle.stderr).toBe(0);
    expect(p.traceLines().length).toBe(before + 6);
    expect((await allReleases(backend, 'shop'))[2]).toMatchObject({
      revision: 3,
      phase: 'succeeded',
      spec: { kapps: [] },
    });
  });

  it('previews Update, Create, Delete and UnChanged against the last release, as a table and as documented JSON', async () => {
    const backend = await freshBackend(kind);
    const db = { id: 'db', descriptor: fakeKapp({ plan: '--tag plan-db', apply: '--tag apply-db' }) };
    const api = (version: string): KappDef => ({
      id: 'api',
      dependsOn: ['db'],
      descriptor: fakeKapp({ plan: '--tag plan-api', apply: `--tag apply-api --stdout ${version}` }),
    });
    const web = { id: 'web', descriptor: fakeKapp({ plan: '--tag plan-web', apply: '--tag apply-web' }) };
    const p = makeProject('shop', backend, [db, api('v1'), web]);

    const empty = await p.run(['preview', 'stacks.yaml', 'dev', '-o', 'json']);
    expect(empty.code, empty.stderr).toBe(0);
    // Per kapp: from (nothing recorded yet), to (the spec now) and the changes (every step is new).
    const created = (id: string): unknown => ({
      id,
      action: 'Create',
      from: null,
      to: expect.objectContaining({ id }) as unknown,
      changes: expect.arrayContaining([
        expect.objectContaining({ path: ['apply_install', 'apply'], from: null }),
      ]) as unknown,
      drift: [],
      reason: null,
      // Before the first release a file store has no spec key yet, and a preview makes none: no digest to show.
      specDigest: kind === 'file' ? null : (expect.stringMatching(/^[0-9a-f]{64}$/) as unknown),
      notRecorded: [],
    });
    expect(JSON.parse(empty.stdout)).toEqual({
      stack: 'dev',
      project: 'shop',
      basedOnRevision: null,
      kapps: [created('web:db'), created('web:api'), created('web:web')],
      refreshed: null,
      hasChanges: true,
    });
    expect((await p.run(['install', 'stacks.yaml', 'dev', '-y'])).code).toBe(0);
    const same = await p.run(['preview', 'stacks.yaml', 'dev']);
    // Nothing would change: one line (the table is shown only when something changes).
    expect(same.stdout).toBe('No changes: the 3 kapp(s) match release 1.\n');

    // api's arguments change, cache is new, web leaves the stack.
    const cache = { id: 'cache', descriptor: fakeKapp({ plan: '--tag plan-cache', apply: '--tag apply-cache' }) };
    p.writeKapps([db, api('v2'), cache]);
    const preview = await p.run(['preview', 'stacks.yaml', 'dev', '-o', 'json']);
    expect(preview).toMatchObject({ code: 0, stderr: '' });
    const expected = {
      stack: 'dev',
      project: 'shop',
      basedOnRevision: 1,
      kapps: [
        { id: 'web:db', action: 'UnChanged' },
        { id: 'web:api', action: 'Update' },
        { id: 'web:cache', action: 'Create' },
        { id: 'web:web', action: 'Delete' },
      ],
    };
    // Exactly the documented document: these keys in this order, two-space indented, one trailing newline.
    const parsed = JSON.parse(preview.stdout) as typeof expected & { kapps: Record<string, unknown>[] };
    expect(preview.stdout).toBe(`${JSON.stringify(parsed, null, 2)}\n`);
    expect(Object.keys(parsed)).toEqual(['stack', 'project', 'basedOnRevision', 'kapps', 'refreshed', 'hasChanges']);
    expect({ ...parsed, kapps: parsed.kapps.map((k) => ({ id: k.id, action: k.action })) }).toEqual({
      ...expected,
      refreshed: null,
      hasChanges: true,
    });
    for (const k of parsed.kapps) {
      expect(Object.keys(k)).toEqual([
        'id',
        'action',
        'from',
        'to',
        'changes',
        'drift',
        'reason',
        'specDigest',
        'notRecorded',
      ]);
    }
    expect(parsed.kapps[1]?.changes).toEqual([
      {
        path: ['apply_install', 'apply', 'args'],
        from: ['--tag', 'apply-api', '--stdout', 'v1'],
        to: ['--tag', 'apply-api', '--stdout', 'v2'],
      },
    ]);
    expect(parsed.kapps[3]).toMatchObject({ id: 'web:web', from: { id: 'web:web' }, to: null });
    const table = await p.run(['preview', 'stacks.yaml', 'dev']);
    const rows = 'ID         ACTION\nweb:db     UnChanged\nweb:api    Update\nweb:cache  Create\nweb:web    Delete\n';
    const details = [
      '~ web:api (Update)',
      '    ~ apply_install/apply args: "--tag apply-api --stdout v1" → "--tag apply-api --stdout v2"',
      '+ web:cache (Create)',
      '    + apply_install/apply: kapps-fake --tag apply-cache',
      '- web:web (Delete)',
      '',
    ].join('\n');
    expect(table.stdout).toBe(`Preview against release 1:\n${rows}\n${details}`);

    // A plan-only install shows the same preview before planning, and records nothing.
    const plan = await p.run(['install', 'stacks.yaml', 'dev']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stderr).toContain(`Preview against release 1:\n${rows}`);
    expect((await allReleases(backend, 'shop')).length).toBe(1);

    // Selecting kapps previews those kapps (and still the ones gone from the stack).
    const selected = await p.run(['preview', 'stacks.yaml', 'dev', '-o', 'json', '-i', 'web:api']);
    const selectedKapps = (JSON.parse(selected.stdout) as { kapps: { id: string; action: string }[] }).kapps;
    expect(selectedKapps.map((k) => ({ id: k.id, action: k.action }))).toEqual([
      { id: 'web:api', action: 'Update' },
      { id: 'web:web', action: 'Delete' },
    ]);
    noPassword(empty, same, preview, table, plan, selected);
  });

  it('never records a sensitive output, in the spec or in the state', async () => {
    const backend = await freshBackend(kind);
    const secret = 'Hunter2-e2e-s3cret-value';
    const db = fakeKapp(
      { apply: '--tag apply-db' },
      [
        '    output:',
        '      - name: password',
        '        command: kapps-fake',
        '        args: --print-env DB_PASSWORD',
        '        stdout: db/password.txt',
        '      - name: endpoint',
        '        command: kapps-fake',
        '        args: --stdout http://db.internal:5432',
        '        stdout: db/endpoint.txt',
        'outputs:',
        '  - id: password',
        '    path: password.txt',
        '    format: text',
        '    sensitive: true',
        '  - id: endpoint',
        '    path: endpoint.txt',
        '    format: text',
        '',
      ].join('\n'),
    );
    // api receives the secret as an argument (its template sees db's outputs).
    const api = fakeKapp({ apply: '--tag apply-api --stdout "{{ .outputs.db.password }}"' });
    const p = makeProject('shop', backend, [
      { id: 'db', descriptor: db },
      { id: 'api', dependsOn: ['db'], descriptor: api },
    ]);
    const run = await p.run(['install', 'stacks.yaml', 'dev', '-y'], { DB_PASSWORD: secret });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(p.traceLines().some((l) => l.args.includes(secret))).toBe(true); // the step did get it

    const [release] = await allReleases(backend, 'shop');
    expect(release?.state['web:db']?.outputs).toEqual({ endpoint: 'http://db.internal:5432\n' });
    expect(release?.state['web:db']?.status).toBe('installed');
    const raw = await backend.rawRecords('shop', 'dev');
    expect(raw.size).toBe(1);
    expect(raw.get(1)).toContain('http://db.internal:5432');
    expect(raw.get(1)).not.toContain(secret);
    const show = await p.run(['release', 'show', 'stacks.yaml', 'dev', '-o', 'json']);
    expect(show.code).toBe(0);
    expect(show.stdout).not.toContain(secret);
    expect(run.stdout + run.stderr).not.toContain(secret);
  });

  it('keeps a sensitive value out of the state when a later kapp passes it on in an ordinary output', async () => {
    const backend = await freshBackend(kind);
    const secret = 'Hunter2-e2e-derived-secret';
    const db = fakeKapp(
      { apply: '--tag apply-db' },
      [
        '    output:',
        '      - name: password',
        '        command: kapps-fake',
        '        args: --print-env DB_PASSWORD',
        '        stdout: db/password.txt',
        'outputs:',
        '  - id: password',
        '    path: password.txt',
        '    format: text',
        '    sensitive: true',
        '',
      ].join('\n'),
    );
    // api writes a connection string holding the password into an output that is not marked sensitive.
    const api = fakeKapp(
      { apply: '--tag apply-api --write-file api/conn.txt "postgres://app:{{ .outputs.db.password }}@db"' },
      'outputs:\n  - id: conn\n    path: conn.txt\n    format: text\n',
    );
    const p = makeProject('shop', backend, [
      { id: 'db', descriptor: db },
      { id: 'api', dependsOn: ['db'], descriptor: api },
    ]);
    const run = await p.run(['install', 'stacks.yaml', 'dev', '-y'], { DB_PASSWORD: secret });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const [release] = await allReleases(backend, 'shop');
    expect(release?.state['web:api']?.outputs).toHaveProperty('conn');
    expect((await backend.rawRecords('shop', 'dev')).get(1)).not.toContain(secret);
  });

  it('ends a release cancelled on a second SIGINT too, which kills the steps at once', async () => {
    const backend = await freshBackend(kind);
    const marker = newMarker();
    const p = makeProject('shop', backend, [
      // Ignores SIGTERM: the first SIGINT leaves it running for the kill grace (30 s here).
      { id: 'db', descriptor: fakeKapp({ apply: `--tag apply-db --ignore-term --fork-sleep 120 ${marker} --hang` }) },
    ]);
    const run = p.start(['install', 'stacks.yaml', 'dev', '-y', '--kill-grace', '30']);
    await waitFor(
      'the step of web:db and its child to start',
      () => startedTags(p.traceLines()).includes('apply-db') && processesWith(marker).length >= 2,
    );
    run.child.kill('SIGINT');
    await waitFor('the first SIGINT to be handled', () => run.exited() || /SIGINT: stopping/.test(run.stderr()));
    run.child.kill('SIGINT');
    const result = await run.done;
    expect(result.code, result.stdout + result.stderr).toBe(130);
    await waitFor('the steps to be gone', () => processesWith(marker).length === 0, 10_000);
    const [release] = await allReleases(backend, 'shop');
    expect(release?.phase).toBe('cancelled');
  });

  it('stops starting kapps and fails, without crashing, when its release is unlocked by hand while it runs', async () => {
    const backend = await freshBackend(kind);
    const p = makeProject('shop', backend, []);
    const go = join(p.root, 'go');
    p.writeKapps([
      { id: 'db', descriptor: fakeKapp({ apply: `--tag apply-db --wait-file ${go} 60000` }) },
      // Running while db's save fails (it starts at once after db); web, after it, must not start.
      { id: 'api', dependsOn: ['db'], descriptor: fakeKapp({ apply: '--tag apply-api --sleep 2000' }) },
      { id: 'web', dependsOn: ['api'], descriptor: fakeKapp({ apply: '--tag apply-web' }) },
    ]);
    const run = p.start(['install', 'stacks.yaml', 'dev', '-y']);
    await waitFor('the step of web:db to start', () => startedTags(p.traceLines()).includes('apply-db'));
    const unlocked = await p.run(['release', 'unlock', 'stacks.yaml', 'dev', '-y']);
    expect(unlocked.code, unlocked.stderr).toBe(0);
    writeFileSync(go, 'x');
    const result = await run.done;
    const printed = result.stdout + result.stderr;
    expect(result.code, printed).toBe(1);
    expect(printed).toContain('cannot record the run: ');
    expect(printed).not.toMatch(/^\s+at /m);
    expect(printed).toContain('not started: the run could not record its release');
    expect(startedTags(p.traceLines())).toEqual(['apply-db', 'apply-api']);
    const [release] = await allReleases(backend, 'shop');
    expect(release?.phase).toBe('failed');
    expect(release?.unlocked).toBeDefined();
  });

  it('ends a release cancelled on SIGINT, exits 130 and leaves no step process behind', async () => {
    const backend = await freshBackend(kind);
    const marker = newMarker();
    const p = makeProject('shop', backend, [
      { id: 'db', descriptor: fakeKapp({ apply: '--tag apply-db' }) },
      {
        id: 'api',
        dependsOn: ['db'],
        descriptor: fakeKapp({ apply: `--tag apply-api --fork-sleep 120 ${marker} --hang` }),
      },
      { id: 'web', dependsOn: ['api'], descriptor: fakeKapp({ apply: '--tag apply-web' }) },
    ]);
    const run = p.start(['install', 'stacks.yaml', 'dev', '-y']);
    // The step has started (its trace line) and has started its own child (a second process with the marker).
    await waitFor(
      'the step of web:api and its child to start',
      () => startedTags(p.traceLines()).includes('apply-api') && processesWith(marker).length >= 2,
    );
    // db's state is saved as soon as db finished, while the release still runs.
    const [during] = await allReleases(backend, 'shop');
    expect(during).toMatchObject({ revision: 1, phase: 'applying' });
    expect(Object.entries(during?.state ?? {}).map(([id, e]) => [id, e.status])).toEqual([['web:db', 'installed']]);
    run.child.kill('SIGINT');
    const result = await run.done;
    expect(result.code, result.stdout + result.stderr).toBe(130);
    expect(processesWith(marker)).toEqual([]);
    const [release] = await allReleases(backend, 'shop');
    expect(release?.phase).toBe('cancelled');
    expect(release?.finishedAt).toMatch(ISO);
    expect(release?.state['web:db']?.status).toBe('installed');
    expect(release?.state['web:api']).toMatchObject({ status: 'cancelled', steps: [{ status: 'cancelled' }] });
    expect(release?.state).not.toHaveProperty('web:web');
    expect(startedTags(p.traceLines())).toEqual(['apply-db', 'apply-api']);

    // The lock is free again.
    p.writeKapps([{ id: 'db', descriptor: fakeKapp({ apply: '--tag apply-db' }) }]);
    expect((await p.run(['install', 'stacks.yaml', 'dev', '-y'])).code).toBe(0);
    expect((await allReleases(backend, 'shop')).map((r) => r.phase)).toEqual(['cancelled', 'succeeded']);
  });
});
