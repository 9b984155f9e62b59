import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { InternalError } from '../../../src/diagnostics/errors.js';
import { ReleaseConflictError, ReleaseLockedError } from '../../../src/release/errors.js';
import { specDigest } from '../../../src/release/canonical-json.js';
import { beginRelease, phaseFor, unlockRelease, type BeginReleaseOptions } from '../../../src/release/recorder.js';
import type { ReleaseStore } from '../../../src/release/store-types.js';
import type { StepRecord } from '../../../src/release/types.js';
import { backends, cleanupTempDirs, specKapp, stackSpec, uniqueProject } from './helpers.js';

/** A pid that is certainly not running: a child that has exited and been reaped. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid ?? 999_999;
}

/** The ReleaseLockedError a begin is refused with (fails the test if it is not refused). */
async function refusal(begin: Promise<unknown>): Promise<ReleaseLockedError> {
  const error = await begin.then(
    () => new Error('the release began, but it should have been refused'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ReleaseLockedError);
  return error as ReleaseLockedError;
}

const step: StepRecord = {
  phase: 'apply_install',
  name: 'helm',
  status: 'succeeded',
  exitCode: 0,
  startedAt: '2026-01-01T00:00:00.000Z',
  endedAt: '2026-01-01T00:00:02.000Z',
  durationMs: 2000,
  timedOut: false,
};

describe.each(backends)('release lifecycle ($name backend)', (backend) => {
  const opened: ReleaseStore[] = [];
  const open = (): ReleaseStore => {
    const store = backend.open(backend.location());
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  afterAll(() => cleanupTempDirs());

  const options = (store: ReleaseStore, project: string, extra: Partial<BeginReleaseOptions> = {}) => ({
    store,
    project,
    stack: 'dev',
    operation: 'install' as const,
    spec: stackSpec(['web:db', 'web:api']),
    command: ['kapps', 'install', 'stacks.yaml', 'dev', '-y'],
    selectors: { include: [], exclude: [] },
    kappsVersion: '0.1.0',
    ...extra,
  });

  it('begins revision 1 as applying, owned by this process, with an empty state', async () => {
    const store = open();
    const project = uniqueProject();
    const recorder = await beginRelease(options(store, project));
    const stored = await store.latest(project, 'dev');
    expect(stored).toMatchObject({
      revision: 1,
      operation: 'install',
      phase: 'applying',
      owner: { host: hostname(), pid: process.pid },
      state: {},
      command: ['kapps', 'install', 'stacks.yaml', 'dev', '-y'],
    });
    expect(stored?.finishedAt).toBeUndefined();
    await recorder.finish('succeeded');
  });

  it('records the approvals that let a run apply, and a break glass, after rollbackOf in the record', async () => {
    const store = open();
    const project = uniqueProject();
    const approvals = [
      { by: 'alice', at: '2026-11-25T10:05:00.000Z', comment: 'looks fine' },
      { by: 'bob', at: '2026-11-25T10:06:00.000Z', comment: null },
    ];
    const recorder = await beginRelease(options(store, project, { approvals, rollbackOf: 1 }));
    await recorder.finish('succeeded');
    const stored = await store.latest(project, 'dev');
    expect(stored?.approvals).toEqual(approvals);
    expect(stored).not.toHaveProperty('breakGlass');
    const keys = Object.keys(stored!);
    expect(keys.slice(keys.indexOf('rollbackOf'), keys.indexOf('rollbackOf') + 2)).toEqual(['rollbackOf', 'approvals']);
    expect((await store.list(project, 'dev'))[0]?.approvals).toEqual(approvals);

    const glass = { by: 'ops', role: 'admin', at: '2026-11-25T11:00:00.000Z' };
    await (await beginRelease(options(store, project, { breakGlass: glass }))).finish('succeeded');
    const second = await store.latest(project, 'dev');
    expect(second?.breakGlass).toEqual(glass);
    expect(second).not.toHaveProperty('approvals');
    expect((await store.list(project, 'dev'))[0]).toMatchObject({ revision: 2, breakGlass: glass });
    expect((await store.list(project, 'dev'))[0]).not.toHaveProperty('approvals');
  });

  it('begins a delete as deleting', async () => {
    const store = open();
    const project = uniqueProject();
    const recorder = await beginRelease(options(store, project, { operation: 'delete' }));
    expect((await store.latest(project, 'dev'))?.phase).toBe('deleting');
    expect((await recorder.finish('succeeded')).phase).toBe('succeeded');
  });

  it('writes a save waiting for the write interval at once on flush', async () => {
    const store = open();
    const project = uniqueProject();
    const recorder = await beginRelease(options(store, project));
    await recorder.recordKapp('web:db', { status: 'installed' });
    // The next write waits for the interval on a timer; with timers frozen it only happens through flush.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      let saved = false;
      const saving = recorder.recordKapp('web:api', { status: 'installed' }).then(() => {
        saved = true;
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(saved).toBe(false);
      recorder.flush();
      await saving;
      expect(Object.keys((await store.get(project, 'dev', 1))?.state ?? {})).toEqual(['web:db', 'web:api']);
    } finally {
      vi.useRealTimers();
    }
    await recorder.finish('succeeded');
  });

  it('saves each kapp as it is recorded, and the final phase on finish', async () => {
    const store = open();
    const project = uniqueProject();
    const recorder = await beginRelease(options(store, project));
    await recorder.recordKapp('web:db', {
      status: 'installed',
      outputs: { host: 'db.local', port: 5432 },
      steps: [step],
    });
    const afterOne = await store.get(project, 'dev', 1);
    expect(afterOne?.phase).toBe('applying');
    expect(afterOne?.state['web:db']).toMatchObject({
      status: 'installed',
      outputs: { host: 'db.local', port: 5432 },
      steps: [step],
      revision: 1,
      specDigest: specDigest(specKapp('web:db')),
    });
    expect(afterOne?.state['web:api']).toBeUndefined();
    await recorder.recordKapp('web:api', { status: 'installed' });
    const final = await recorder.finish('succeeded');
    expect(final.phase).toBe('succeeded');
    expect(final.finishedAt).toBeDefined();
    expect(await store.get(project, 'dev', 1)).toEqual(final);
  });

  it('copies the previous release state (even of a failed release) so untouched kapps keep their entries', async () => {
    const store = open();
    const project = uniqueProject();
    const first = await beginRelease(options(store, project));
    await first.recordKapp('web:db', { status: 'installed', outputs: { v: 1 } });
    await first.recordKapp('web:api', { status: 'failed' });
    await first.finish('failed');
    const second = await beginRelease(options(store, project, { spec: stackSpec(['web:api']) }));
    expect(second.release.state['web:db']).toMatchObject({ status: 'installed', revision: 1, outputs: { v: 1 } });
    await second.recordKapp('web:api', { status: 'installed' });
    const final = await second.finish('succeeded');
    expect(final.revision).toBe(2);
    expect(final.state['web:db']?.revision).toBe(1);
    expect(final.state['web:api']).toMatchObject({ status: 'installed', revision: 2 });
  });

  it('is never succeeded while a kapp of this release failed or was cancelled', async () => {
    const store = open();
    const project = uniqueProject();
    const a = await beginRelease(options(store, project));
    await a.recordKapp('web:db', { status: 'failed' });
    expect((await a.finish('succeeded')).phase).toBe('failed');
    const b = await beginRelease(options(store, project));
    await b.recordKapp('web:db', { status: 'cancelled' });
    expect((await b.finish('succeeded')).phase).toBe('cancelled');
    // An old failure (revision 1) copied into the state does not fail revision 3.
    const c = await beginRelease(options(store, project, { spec: stackSpec(['web:api']) }));
    await c.recordKapp('web:api', { status: 'installed' });
    expect((await c.finish('succeeded')).phase).toBe('succeeded');
  });

  it('finishes only once: later calls give the first result and write nothing', async () => {
    const store = open();
    const project = uniqueProject();
    const recorder = await beginRelease(options(store, project));
    const first = await recorder.finish('cancelled');
    const second = await recorder.finish('succeeded');
    expect(second).toEqual(first);
    expect(await store.latest(project, 'dev')).toEqual(first);
    await expect(recorder.recordKapp('web:db', { status: 'installed' })).rejects.toThrow(InternalError);
  });

  it('serialises writes: many records fired at once are all saved', async () => {
    const store = open();
    const project = uniqueProject();
    const ids = Array.from({ length: 25 }, (_, i) => `m:k${i}`);
    const recorder = await beginRelease(options(store, project, { spec: stackSpec(ids) }));
    await Promise.all(ids.map((id, i) => recorder.recordKapp(id, { status: 'installed', outputs: { i } })));
    const final = await recorder.finish('succeeded');
    expect(Object.keys(final.state)).toEqual(ids);
    expect((await store.latest(project, 'dev'))?.state['m:k24']?.outputs).toEqual({ i: 24 });
  });

  it('refuses outputs that are not JSON data', async () => {
    const store = open();
    const project = uniqueProject();
    const recorder = await beginRelease(options(store, project));
    await expect(recorder.recordKapp('web:db', { status: 'installed', outputs: { n: 1n } as never })).rejects.toThrow(
      'outputs of kapp web:db are not JSON-safe data',
    );
    await recorder.finish('failed');
  });

  it('refuses to begin while the latest release runs, naming it and its live owner', async () => {
    const store = open();
    const project = uniqueProject();
    const holder = await beginRelease(options(store, project));
    const error = await beginRelease(options(store, project, { stackFile: 'stacks/my stacks.yaml' })).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ReleaseLockedError);
    const started = holder.release.createdAt;
    expect((error as Error).message).toBe(
      `${project}/dev is locked by release 1 (install, applying) started ${started} by ` +
        `${holder.release.owner.user}@${hostname()} (pid ${process.pid}); the owner looks alive: ` +
        `its last heartbeat was 0 s ago.\n` +
        `Wait for it to finish; if you are sure it is gone, unlock it with: ` +
        `kapps release unlock 'stacks/my stacks.yaml' dev`,
    );
    expect((error as ReleaseLockedError).looksDead).toBe(false);
    await holder.finish('succeeded');
    const next = await beginRelease(options(store, project));
    expect(next.revision).toBe(2);
    await next.finish('succeeded');
  });

  it('says the owner looks dead when its process is gone on this host', async () => {
    const store = open();
    const project = uniqueProject();
    const pid = deadPid();
    await beginRelease(options(store, project, { owner: { user: 'ci', host: hostname(), pid } }));
    const error = await beginRelease(options(store, project)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReleaseLockedError);
    expect((error as ReleaseLockedError).looksDead).toBe(true);
    expect((error as Error).message).toContain(
      `by ci@${hostname()} (pid ${pid}); the owner looks dead: process ${pid} is not running on ${hostname()}.\n` +
        'If no kapps run is working on this stack any more, unlock it with: kapps release unlock <stack-file> dev',
    );
  });

  it('says the owner looks dead when its heartbeat is older than 60 s', async () => {
    const store = open();
    const project = uniqueProject();
    const start = new Date('2026-05-01T10:00:00.000Z');
    await beginRelease(options(store, project, { owner: { user: 'ci', host: 'elsewhere', pid: 1 }, now: () => start }));
    const fresh = await refusal(
      beginRelease(options(store, project, { now: () => new Date(start.getTime() + 59_000) })),
    );
    expect(fresh.looksDead).toBe(false);
    const stale = await refusal(
      beginRelease(options(store, project, { now: () => new Date(start.getTime() + 125_000) })),
    );
    expect(stale.looksDead).toBe(true);
    expect(stale.message).toContain(
      'started 2026-05-01T10:00:00.000Z by ci@elsewhere (pid 1); the owner looks dead: its last heartbeat was 2 min 5 s ago',
    );
  });

  it('sends heartbeats while open', async () => {
    const store = open();
    const project = uniqueProject();
    const recorder = await beginRelease(options(store, project, { heartbeatMs: 30 }));
    const first = (await store.latest(project, 'dev'))?.heartbeatAt;
    let latest = first;
    for (let i = 0; i < 200 && latest === first; i++) {
      await new Promise((r) => setTimeout(r, 20));
      latest = (await store.latest(project, 'dev'))?.heartbeatAt;
    }
    expect(latest).not.toBe(first);
    await recorder.finish('succeeded');
  });

  it('reports a lost race as a lock held by the winner', async () => {
    const store = open();
    const project = uniqueProject();
    const winner = await beginRelease(options(store, project, { owner: { user: 'w', host: 'h', pid: 7 } }));
    // A run that read the latest release before the winner created revision 1.
    const stale: ReleaseStore = {
      description: store.description,
      latest: () => Promise.resolve(undefined),
      get: (p, s, r) => store.get(p, s, r),
      list: (p, s) => store.list(p, s),
      create: (r) => store.create(r),
      update: (r, o) => store.update(r, o),
      appendLog: (p, s, r, l) => store.appendLog(p, s, r, l),
      readLog: (p, s, r, o, m) => store.readLog(p, s, r, o, m),
      specKey: (o) => store.specKey(o),
      close: () => Promise.resolve(),
    };
    const error = await beginRelease(options(stale, project)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReleaseLockedError);
    expect((error as Error).message).toContain(
      `is locked by release 1 (install, applying) started ${winner.release.createdAt} by w@h (pid 7)`,
    );
    expect((error as Error).message).toContain('(it began at the same moment as this run).');
    expect((await store.list(project, 'dev')).map((s) => s.revision)).toEqual([1]);
  });

  it('unlocks a running release: failed, who and when, modifiedAt moved on; then a run can begin', async () => {
    const store = open();
    const project = uniqueProject();
    const holder = await beginRelease(
      options(store, project, { owner: { user: 'ci', host: hostname(), pid: deadPid() } }),
    );
    const before = holder.release;
    const at = new Date(Date.parse(before.modifiedAt) + 5000);
    const result = await unlockRelease({ store, project, stack: 'dev', by: 'bob@ops-1', now: () => at });
    expect(result.unlocked).toBe(true);
    const stored = await store.latest(project, 'dev');
    expect(stored).toMatchObject({
      revision: 1,
      phase: 'failed',
      unlocked: { by: 'bob@ops-1', at: at.toISOString() },
      modifiedAt: at.toISOString(),
      finishedAt: at.toISOString(),
    });
    const next = await beginRelease(options(store, project));
    expect(next.revision).toBe(2);
    await next.finish('succeeded');
  });

  it('has nothing to unlock when the latest release finished, or when there is none', async () => {
    const store = open();
    const project = uniqueProject();
    expect(await unlockRelease({ store, project, stack: 'dev', by: 'bob@ops' })).toEqual({
      unlocked: false,
      message: `${project}/dev has no releases: nothing to unlock`,
    });
    const recorder = await beginRelease(options(store, project));
    await recorder.finish('succeeded');
    const result = await unlockRelease({ store, project, stack: 'dev', by: 'bob@ops' });
    expect(result.unlocked).toBe(false);
    expect(!result.unlocked && result.message).toBe(
      `nothing to unlock: the latest release of ${project}/dev, revision 1, is succeeded`,
    );
    expect((await store.latest(project, 'dev'))?.unlocked).toBeUndefined();
  });

  it('stops writing once its release was unlocked by someone else', async () => {
    const store = open();
    const project = uniqueProject();
    const recorder = await beginRelease(options(store, project));
    await recorder.recordKapp('web:db', { status: 'installed' });
    await unlockRelease({ store, project, stack: 'dev', by: 'bob@ops' });
    const error = await recorder.recordKapp('web:api', { status: 'installed' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReleaseConflictError);
    expect((error as Error).message).toMatch(
      new RegExp(`^release 1 of ${project}/dev was changed by another process \\(unlocked by bob@ops at `),
    );
    await expect(recorder.finish('succeeded')).rejects.toThrow(ReleaseConflictError);
    const stored = await store.latest(project, 'dev');
    expect(stored?.phase).toBe('failed');
    expect(stored?.state['web:api']).toBeUndefined();
  });
});

describe('phaseFor', () => {
  it.each([
    [[], 'succeeded'],
    [['installed', 'skipped', 'deleted'], 'succeeded'],
    [['succeeded', 'skipped'], 'succeeded'],
    [['installed', 'cancelled'], 'cancelled'],
    [['cancelled', 'failed', 'installed'], 'failed'],
    [['failed'], 'failed'],
  ] as const)('%j → %s', (statuses, phase) => {
    expect(phaseFor(statuses)).toBe(phase);
  });
});
