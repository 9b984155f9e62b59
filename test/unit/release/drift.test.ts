/** The pure drift comparison: field-by-field output changes, ignore rules, noisy outputs, digests of what was read. */
import { describe, expect, it } from 'vitest';
import { evaluateDrift, kappMatches, outputDigests, pathMatches, type DriftInput } from '../../../src/release/drift.js';
import type { JsonValue, ReleaseState } from '../../../src/release/types.js';

function state(outputs: Record<string, JsonValue>): ReleaseState {
  const entry = (o: JsonValue) => ({
    status: 'installed' as const,
    outputs: o,
    steps: [],
    specDigest: 'x',
    revision: 1,
    updatedAt: '2026-01-01T00:00:00.000Z',
  });
  return Object.fromEntries(Object.entries(outputs).map(([id, o]) => [id, entry(o)]));
}

function input(recorded: Record<string, JsonValue>, read: Record<string, JsonValue>, extra: Partial<DriftInput> = {}) {
  return {
    project: 'p',
    stack: 's',
    checkedAt: '2026-11-26T00:00:00.000Z',
    rows: Object.keys(recorded).map((id) => ({ id, action: 'UnChanged' as const })),
    basedOnRevision: 3,
    state: state(recorded),
    live: new Map(Object.entries(read).map(([id, outputs]) => [id, { outputs }])),
    ...extra,
  };
}

describe('output patterns', () => {
  it('matches kapps with * as any text and dotted paths segment by segment, a pattern covering what is under it', () => {
    expect(kappMatches('infra:*', 'infra:vpc')).toBe(true);
    expect(kappMatches('infra:*', 'apps:infra:x')).toBe(false);
    expect(kappMatches('web:a.b', 'web:aXb')).toBe(false);
    expect(pathMatches('last_seen', ['last_seen'])).toBe(true);
    expect(pathMatches('info', ['info', 'meta', 'x'])).toBe(true);
    expect(pathMatches('*.timestamp', ['info', 'timestamp'])).toBe(true);
    expect(pathMatches('*.timestamp', ['info', 'meta', 'timestamp'])).toBe(false);
    expect(pathMatches('**.timestamp', ['info', 'meta', 'timestamp'])).toBe(true);
    expect(pathMatches('in*.ts_*', ['info', 'ts_1'])).toBe(true);
    expect(pathMatches('info.timestamp', ['info'])).toBe(false);
  });
});

describe('evaluateDrift', () => {
  it('lists changes field by field, masks sensitive values and never digests a secret', () => {
    const { report } = evaluateDrift(
      input(
        { 'w:a': { info: { host: 'a', port: 1 }, dsn: 'x <sensitive>' } },
        { 'w:a': { info: { host: 'b', port: 1 }, dsn: 'y <sensitive>' } },
      ),
    );
    expect(report.state).toBe('drifted');
    expect(report.kapps).toEqual([
      {
        id: 'w:a',
        state: 'drifted',
        changes: [
          { path: ['outputs', 'dsn'], from: '(sensitive)', to: '(sensitive, changed)' },
          { path: ['outputs', 'info', 'host'], from: 'a', to: 'b' },
        ],
        ignored: [],
        noisy: [],
        reason: null,
      },
    ]);
    const masked = outputDigests({ dsn: 'x <sensitive>' }).dsn;
    expect(outputDigests({ dsn: 'y <sensitive>' }).dsn).toBe(masked);
  });

  it('marks an output noisy only when two reads in a row disagree and neither is the recorded value', () => {
    const recorded = { 'w:a': { clock: { t: 1 }, version: 'v1' } };
    // A drift that happens once: read as recorded, then changed. Not noise.
    const first = evaluateDrift(input(recorded, { 'w:a': { clock: { t: 1 }, version: 'v1' } }));
    const once = evaluateDrift(
      input(
        recorded,
        { 'w:a': { clock: { t: 1 }, version: 'v2' } },
        {
          previous: { basedOnRevision: 3, digests: first.report.readDigests },
        },
      ),
    );
    expect(once.newlyNoisy).toEqual([]);
    expect(once.report.state).toBe('drifted');
    // A clock: every read differs from the one before and from the record.
    const r1 = evaluateDrift(input(recorded, { 'w:a': { clock: { t: 2 }, version: 'v1' } }));
    expect(r1.report.state).toBe('drifted');
    const r2 = evaluateDrift(
      input(
        recorded,
        { 'w:a': { clock: { t: 3 }, version: 'v1' } },
        {
          previous: { basedOnRevision: 3, digests: r1.report.readDigests },
        },
      ),
    );
    expect(r2.newlyNoisy).toEqual([{ kapp: 'w:a', path: ['outputs', 'clock', 't'] }]);
    expect(r2.report.state).toBe('inSync');
    expect(r2.report.kapps[0]?.noisy).toEqual([['outputs', 'clock', 't']]);
    // A release between the reads: no conclusion.
    const r3 = evaluateDrift(
      input(
        recorded,
        { 'w:a': { clock: { t: 4 }, version: 'v1' } },
        {
          previous: { basedOnRevision: 2, digests: r2.report.readDigests },
        },
      ),
    );
    expect(r3.newlyNoisy).toEqual([]);
    // A kept mark leaves the output out of later checks.
    const r4 = evaluateDrift(
      input(
        recorded,
        { 'w:a': { clock: { t: 9 }, version: 'v1' } },
        {
          noisy: [{ kapp: 'w:a', path: ['outputs', 'clock', 't'] }],
        },
      ),
    );
    expect(r4.report.state).toBe('inSync');
  });

  it('is unknown without a release, or when a kapp could not be read and none drifted', () => {
    const none = evaluateDrift({ ...input({}, {}), basedOnRevision: null, state: undefined });
    expect(none.report).toMatchObject({ state: 'unknown', reason: 'the stack has no release to compare with' });
    const failed = evaluateDrift({
      ...input({ 'w:a': {} }, {}),
      live: new Map([['w:a', { error: 'outputs not read: exit 3' }]]),
    });
    expect(failed.report.state).toBe('unknown');
    expect(failed.report.kapps[0]).toMatchObject({ id: 'w:a', state: 'unknown', reason: 'outputs not read: exit 3' });
  });
});
