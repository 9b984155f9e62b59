/**
 * The guarantees of the drift store (src/server/drift/drift-store.ts), one suite run against both backends (files in
 * the data directory, PostgreSQL): episodes opened, extended and closed by checks, bounded history, noisy marks and
 * remediations kept across a restart, and each due scheduled check handed to one claimer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { DriftReport } from '../../../src/api/index.js';
import { MAX_CHECKS, MAX_EPISODES, type DriftStore } from '../../../src/server/drift/drift-store.js';
import { FileDriftStore } from '../../../src/server/drift/file-drift-store.js';
import { PgDriftStore } from '../../../src/server/drift/pg-drift-store.js';
import { freshDatabases } from '../../support/pg.js';

const databases = freshDatabases('kapps_drift_t');
afterAll(() => databases.dropAll());

interface Fixture {
  /** A new store on the fixture's data: each call is another instance, or a restart. */
  store(): DriftStore;
  /** Whether two instances may share the data at once (PostgreSQL; one instance holds a data directory). */
  readonly shared: boolean;
  cleanup(): Promise<void>;
}

const open: DriftStore[] = [];
const fixtures: Fixture[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  for (const f of fixtures.splice(0)) await f.cleanup();
});

const BACKENDS: [string, () => Promise<Fixture>][] = [
  [
    'files',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'kapps-drift-'));
      return Promise.resolve({
        store: () => new FileDriftStore(dir),
        shared: false,
        cleanup: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
      });
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const url = await databases.create();
      return { store: () => new PgDriftStore(url), shared: true, cleanup: () => Promise.resolve() };
    },
  ],
];

/** A report of `state` with the kapps given drifted (and `unknown` ones), checked at minute `minute`. */
function report(state: DriftReport['state'], drifted: string[] = [], minute = 0, unknown: string[] = []): DriftReport {
  return {
    project: 'shop',
    stack: 'dev',
    state,
    checkedAt: new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString(),
    basedOnRevision: 3,
    kapps: [
      ...drifted.map((id) => ({
        id,
        state: 'drifted' as const,
        changes: [{ path: ['outputs', 'v'], from: 'a', to: 'b' }],
        ignored: [],
        noisy: [],
        reason: null,
      })),
      ...unknown.map((id) => ({
        id,
        state: 'unknown' as const,
        changes: [],
        ignored: [],
        noisy: [],
        reason: 'no',
      })),
    ],
    pending: [],
    read: [...drifted, ...unknown],
    reason: null,
    readDigests: { 'web:db': { v: `digest-${minute}` } },
  };
}

describe.each(BACKENDS)('drift store on %s', (_name, make) => {
  async function fixture(): Promise<{ f: Fixture; store: DriftStore }> {
    const f = await make();
    fixtures.push(f);
    const store = f.store();
    open.push(store);
    return { f, store };
  }

  it('a drift that persists is one episode; an unknown check leaves it; a check in sync closes it', async () => {
    const { store } = await fixture();
    expect(await store.get('shop', 'dev')).toMatchObject({ latest: null, history: [], episodes: [] });

    const first = await store.recordCheck('shop', 'dev', 'run-1', report('drifted', ['web:db'], 1));
    expect(first.opened).toBe(true);
    expect(first.episode).toMatchObject({ openedBy: 'run-1', checks: 1, kapps: ['web:db'], closedAt: null });

    const second = await store.recordCheck('shop', 'dev', 'run-2', report('drifted', ['web:cache'], 2));
    expect(second.opened).toBe(false);
    expect(second.episode).toMatchObject({ id: first.episode!.id, checks: 2, kapps: ['web:db', 'web:cache'] });

    const unknown = await store.recordCheck('shop', 'dev', 'run-3', report('unknown', [], 3, ['web:db']));
    expect(unknown).toMatchObject({ opened: false, resolved: null, episode: { id: first.episode!.id, checks: 2 } });

    const fleet = await store.summaries();
    expect(fleet.get('shop/dev')).toEqual({
      state: 'unknown',
      checkedAt: report('unknown', [], 3).checkedAt,
      runId: 'run-3',
      drifted: 0,
      unknown: 1,
      since: report('drifted', [], 1).checkedAt,
    });

    const calm = await store.recordCheck('shop', 'dev', 'run-4', report('inSync', [], 4));
    expect(calm.episode).toBeNull();
    expect(calm.resolved).toMatchObject({ id: first.episode!.id, closedAt: report('inSync', [], 4).checkedAt });

    const record = await store.get('shop', 'dev');
    expect(record.latest).toMatchObject({ runId: 'run-4', state: 'inSync' });
    expect(record.history.map((c) => [c.runId, c.state, c.episodeId])).toEqual([
      ['run-4', 'inSync', null],
      ['run-3', 'unknown', null],
      ['run-2', 'drifted', first.episode!.id],
      ['run-1', 'drifted', first.episode!.id],
    ]);
    expect(record.history[1]).toMatchObject({ drifted: [], unknown: ['web:db'] });
    expect(record.episodes).toHaveLength(1);
    expect(record.previous).toEqual({ basedOnRevision: 3, digests: { 'web:db': { v: 'digest-4' } } });

    // A new drift opens a new episode, listed first.
    const again = await store.recordCheck('shop', 'dev', 'run-5', report('drifted', ['web:db'], 5));
    expect(again.opened).toBe(true);
    expect(again.episode!.id).not.toBe(first.episode!.id);
    expect((await store.get('shop', 'dev')).episodes.map((e) => e.id)).toEqual([again.episode!.id, first.episode!.id]);
    expect((await store.summaries()).get('shop/dev')).toMatchObject({
      state: 'drifted',
      drifted: 1,
      since: again.episode!.openedAt,
    });
  });

  it('keeps the newest checks and episodes only', async () => {
    const { store } = await fixture();
    for (let i = 0; i < MAX_CHECKS + 5; i++) {
      await store.recordCheck('shop', 'dev', `run-${i}`, report(i % 2 === 0 ? 'drifted' : 'inSync', ['web:db'], i));
    }
    const record = await store.get('shop', 'dev');
    expect(record.history).toHaveLength(MAX_CHECKS);
    expect(record.history[0]?.runId).toBe(`run-${MAX_CHECKS + 4}`);
    expect(record.episodes).toHaveLength(MAX_EPISODES);
  });

  it('keeps noisy marks and remediations across a restart, per stack', async () => {
    const { f, store } = await fixture();
    const opened = await store.recordCheck('shop', 'dev', 'run-1', report('drifted', ['web:db'], 1));
    await store.addRemediation('shop', 'dev', opened.episode!.id, { runId: 'run-2', type: 'apply' });
    await store.setNoisy('shop', 'dev', [{ kapp: 'web:db', path: ['outputs', 'at'], since: 'then', entry: 'e1' }]);
    await store.close();

    const again = f.store();
    open.push(again);
    const record = await again.get('shop', 'dev');
    expect(record.episodes[0]?.remediations).toEqual([{ runId: 'run-2', type: 'apply' }]);
    expect(record.noisy).toEqual([{ kapp: 'web:db', path: ['outputs', 'at'], since: 'then', entry: 'e1' }]);
    expect(record.latest?.runId).toBe('run-1');
    expect((await again.get('shop', 'prod')).latest).toBeNull();
  });

  it('hands a due check to one claimer, then not again within the interval', async () => {
    const { f, store } = await fixture();
    const stacks = [
      { project: 'shop', stack: 'dev', everySeconds: 3600, offsetSeconds: 0 },
      { project: 'shop', stack: 'prod', everySeconds: 3600, offsetSeconds: 1800 },
    ];
    await store.schedule(stacks);
    const next = await store.nextChecks();
    expect([...next.keys()].sort()).toEqual(['shop/dev', 'shop/prod']);

    const other = f.shared ? f.store() : store;
    if (other !== store) open.push(other);
    // Several claimers at once (another instance on PostgreSQL): `dev` is due and handed out exactly once.
    const claims = await Promise.all([store, other, store, other].map((s) => s.claimDue(stacks)));
    expect(claims.flat()).toEqual([{ project: 'shop', stack: 'dev' }]);
    expect(await store.claimDue(stacks)).toEqual([]);
    // Scheduling again does not make it due sooner.
    await store.schedule(stacks);
    expect(await store.claimDue(stacks)).toEqual([]);
    // A stack not asked for is not claimed.
    expect(await store.claimDue([{ project: 'shop', stack: 'other' }])).toEqual([]);
  });
});
