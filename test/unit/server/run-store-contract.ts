/**
 * The guarantees every `RunStore` gives (src/server/queue/run-store.ts), as one suite each implementation runs:
 *
 * ```ts
 * describeRunStore('file', async () => ({ store: new FileRunStore(dir), cleanup: async () => rm(dir) }));
 * ```
 *
 * `makeStore` returns a fresh, empty store (not opened); `reopen` (optional) a second store on the same data, for
 * the checks of what survives a restart.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalDecision, CheckResult, LogLine, RunApproval } from '../../../src/api/index.js';
import { MAX_PAGE_RUNS, QUEUE_FULL_RETRY_AFTER_SECONDS, RunCursorError } from '../../../src/server/queue/policy.js';
import {
  ownerOf,
  RunLeaseLostError,
  type AwaitApproval,
  type NewRun,
  type RunStore,
  type StoreNotice,
  type SubmitLimits,
} from '../../../src/server/queue/run-store.js';

export interface StoreFixture {
  readonly store: RunStore;
  /** Another store on the same data (not opened), as a restarted server would have. */
  readonly reopen?: () => RunStore;
  readonly cleanup: () => Promise<void>;
}

const LIMITS: SubmitLimits = { maxQueuedPerStack: 20, maxQueuedTotal: 200 };
const LEASE = 30_000;

function newRun(stack: string, extra: Partial<NewRun> = {}): NewRun {
  return { type: 'apply', project: 'shop', stack, createdBy: 'ci', options: {}, ...extra };
}

function logLine(text: string): LogLine {
  return { time: '2026-11-25T10:00:00.000Z', stream: 'stdout', kapp: 'web:db', phase: 'install', step: 'apply', text };
}

/** The approval a gated run is submitted with: the policy, no decisions, not waiting. */
export function approvalPolicy(required = 1): RunApproval {
  return {
    required,
    fromRoles: ['apply', 'admin'],
    authorMayApprove: false,
    decisions: [],
    waitingSince: null,
    expiresAt: null,
    basedOnRevision: null,
    breakGlass: null,
  };
}

export const WAITING: AwaitApproval = {
  preview: { contentType: 'application/json', body: '{"kapps":[{"name":"web","action":"Update"}]}' },
  basedOnRevision: 3,
  waitingSince: '2026-11-25T10:00:00.000Z',
  expiresAt: '2026-12-02T10:00:00.000Z',
};

export function decision(by: string, extra: Partial<ApprovalDecision> = {}): ApprovalDecision {
  return { by, role: 'apply', at: '2026-11-25T10:05:00.000Z', decision: 'approved', comment: null, ...extra };
}

const CHECK: CheckResult = {
  name: 'policy',
  stage: 'after_preview',
  enforcement: 'mandatory',
  status: 'passed',
  message: 'ok',
  durationMs: 12,
  at: '2026-11-25T10:00:00.000Z',
};

async function submitted(store: RunStore, run: NewRun, limits: SubmitLimits = LIMITS): Promise<string> {
  const outcome = await store.submit(run, limits);
  if (outcome.kind === 'full') throw new Error('queue full');
  return outcome.run.id;
}

/** A gated apply of `stack`, claimed and waiting for approvals (the stack's only run). */
export async function waitingRun(store: RunStore, stack: string, required = 1, instance = 'i1'): Promise<string> {
  const outcome = await store.submit(newRun(stack, { approval: approvalPolicy(required) }), LIMITS);
  if (outcome.kind === 'full') throw new Error('queue full');
  const claimed = await store.claim(instance, LEASE);
  if (claimed?.id !== outcome.run.id) throw new Error(`claimed ${claimed?.id} instead of ${outcome.run.id}`);
  if (!(await store.awaitApproval(claimed.id, ownerOf(claimed, instance), WAITING))) throw new Error('not waiting');
  return claimed.id;
}

export function describeRunStore(name: string, makeStore: () => Promise<StoreFixture>): void {
  describe(`run store contract: ${name}`, () => {
    const open: StoreFixture[] = [];
    const extra: RunStore[] = [];
    afterEach(async () => {
      for (const s of extra.splice(0)) await s.close().catch(() => undefined);
      for (const f of open.splice(0)) {
        await f.store.close().catch(() => undefined);
        await f.cleanup();
      }
    });
    async function fresh(instance = 'i1'): Promise<StoreFixture> {
      const f = await makeStore();
      open.push(f);
      await f.store.open(instance);
      return f;
    }

    it('submits queued runs with distinct ids, readable by get, newest first in list', async () => {
      const { store } = await fresh();
      const a = await submitted(store, newRun('dev'));
      const b = await submitted(store, newRun('prod', { type: 'generate', createdBy: 'alice' }));
      expect(a).not.toBe(b);
      const got = await store.get(b);
      expect(got).toMatchObject({ id: b, type: 'generate', project: 'shop', stack: 'prod', status: 'queued' });
      expect(got?.createdBy).toBe('alice');
      expect(got?.startedAt).toBeNull();
      expect(await store.get('no-such-run')).toBeUndefined();
      const { runs, nextCursor } = await store.list({ limit: 10 });
      expect(runs.map((r) => r.id)).toEqual([b, a]);
      expect(nextCursor).toBeNull();
    });

    it('claims exclusively: one running per stack, in submission order, other stacks in parallel', async () => {
      const { store } = await fresh();
      const d1 = await submitted(store, newRun('dev'));
      const d2 = await submitted(store, newRun('dev'));
      const p1 = await submitted(store, newRun('prod'));
      // Many claims at once: each run is claimed at most once, dev's second waits for its first.
      const claims = await Promise.all(Array.from({ length: 6 }, () => store.claim('i1', LEASE)));
      const ids = claims.filter((c) => c !== undefined).map((c) => c.id);
      expect(ids.sort()).toEqual([d1, p1].sort());
      expect((await store.get(d1))?.status).toBe('running');
      expect((await store.get(d1))?.instance).toBe('i1');
      expect(await store.queueInfo((await store.get(d2))!)).toEqual({ queuePosition: 1, blockedBy: d1 });
      expect(await store.finish(d1, 'i1', { status: 'succeeded' })).toBe(true);
      expect((await store.claim('i1', LEASE))?.id).toBe(d2);
      expect(await store.claim('i1', LEASE)).toBeUndefined();
    });

    it('gives queue positions in submission order and lists the active runs of a stack', async () => {
      const { store } = await fresh();
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push(await submitted(store, newRun('dev')));
      await store.claim('i1', LEASE);
      const [first, second, third] = ids as [string, string, string];
      expect((await store.active('shop', 'dev')).map((r) => r.id)).toEqual(ids);
      expect(await store.queueInfo((await store.get(third))!)).toEqual({ queuePosition: 2, blockedBy: second });
      expect(await store.queueInfo((await store.get(first))!)).toEqual({ queuePosition: null, blockedBy: null });
      expect(await store.active('shop', 'other')).toEqual([]);
    });

    it('refuses beyond the queue limits, per stack and in total', async () => {
      const { store } = await fresh();
      const limits = { maxQueuedPerStack: 2, maxQueuedTotal: 3 };
      await submitted(store, newRun('dev'), limits);
      await submitted(store, newRun('dev'), limits);
      const full = await store.submit(newRun('dev'), limits);
      expect(full).toMatchObject({ kind: 'full', scope: 'stack' });
      if (full.kind === 'full') expect(full.retryAfterSeconds).toBeGreaterThan(0);
      await submitted(store, newRun('prod'), limits);
      expect(await store.submit(newRun('qa'), limits)).toMatchObject({ kind: 'full', scope: 'total' });
      // A running run is not queued: it frees a place.
      await store.claim('i1', LEASE);
      expect((await store.submit(newRun('qa'), limits)).kind).toBe('created');
    });

    it('returns the same run for the same idempotency key from the same submitter', async () => {
      const { store } = await fresh();
      const first = await store.submit(newRun('dev'), { ...LIMITS, idempotencyKey: 'k1' });
      const again = await store.submit(newRun('dev'), { ...LIMITS, idempotencyKey: 'k1' });
      const other = await store.submit(newRun('dev', { createdBy: 'bob' }), { ...LIMITS, idempotencyKey: 'k1' });
      expect(first.kind).toBe('created');
      expect(again.kind).toBe('existing');
      if (first.kind !== 'full' && again.kind !== 'full' && other.kind !== 'full') {
        expect(again.run.id).toBe(first.run.id);
        expect(other.kind).toBe('created');
        expect(other.run.id).not.toBe(first.run.id);
      }
    });

    it('cancels a queued run at once and asks the owner of a running one', async () => {
      const { store } = await fresh();
      const notices: StoreNotice[] = [];
      store.subscribe((n) => notices.push(n));
      const running = await submitted(store, newRun('dev'));
      const queued = await submitted(store, newRun('dev'));
      await store.claim('i1', LEASE);
      const q = await store.requestCancel(queued, 'ci');
      expect(q?.status).toBe('cancelled');
      expect(q?.finishedAt).not.toBeNull();
      const r = await store.requestCancel(running, 'ci');
      expect(r?.status).toBe('running');
      expect(r?.cancelRequested).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(notices).toContainEqual({ type: 'cancel', runId: running });
      expect(await store.requestCancel('no-such-run', 'ci')).toBeUndefined();
      expect(await store.finish(running, 'i1', { status: 'cancelled', error: 'cancelled by ci' })).toBe(true);
      expect((await store.get(running))?.status).toBe('cancelled');
      // Finished runs stay as they are.
      expect((await store.requestCancel(running, 'ci'))?.status).toBe('cancelled');
    });

    it('prunes finished runs by count per stack and by age, never queued or running ones', async () => {
      const { store } = await fresh();
      const finished: string[] = [];
      for (let i = 0; i < 4; i++) {
        const id = await submitted(store, newRun('dev'));
        await store.claim('i1', LEASE);
        await store.finish(id, 'i1', { status: 'succeeded' });
        finished.push(id);
      }
      const prod = await submitted(store, newRun('prod'));
      await store.claim('i1', LEASE);
      await store.finish(prod, 'i1', { status: 'failed', error: 'x' });
      const running = await submitted(store, newRun('dev'));
      await store.claim('i1', LEASE);
      const queued = await submitted(store, newRun('dev'));
      await store.appendFeed(finished[0]!, [{ kind: 'log', data: logLine('old') }]);
      expect(await store.prune({ keepPerStack: 2 })).toBe(2);
      const left = (await store.list({ limit: 50 })).runs.map((r) => r.id);
      expect(left).toEqual([queued, running, prod, finished[3], finished[2]]);
      expect(await store.get(finished[0]!)).toBeUndefined();
      expect((await store.readLog(finished[0]!, 0, 1000)).lines).toEqual([]);
      // By age: everything finished before a time after now goes; the active runs stay.
      expect(await store.prune({ keepPerStack: 100, before: new Date(Date.now() + 60_000).toISOString() })).toBe(3);
      expect((await store.list({ limit: 50 })).runs.map((r) => r.id)).toEqual([queued, running]);
    });

    it('does not bring back a run the retention deletes while it is being read', async () => {
      const { store } = await fresh();
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const id = await submitted(store, newRun('dev'));
        await store.claim('i1', LEASE);
        await store.finish(id, 'i1', { status: 'succeeded' });
        ids.push(id);
      }
      let done = false;
      const pruning = store.prune({ keepPerStack: 1 }).finally(() => (done = true));
      // Reads of the doomed run all through the deletion (a client polling it, as the page does); once it reads as
      // gone, a list read after that does not show it either.
      let listedAfterGone = false;
      const read = async (): Promise<void> => {
        if ((await store.get(ids[0]!)) !== undefined) return;
        if ((await store.list({ limit: 50 })).runs.some((r) => r.id === ids[0])) listedAfterGone = true;
      };
      const reads: Promise<unknown>[] = [];
      while (!done) {
        reads.push(read());
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(await pruning).toBe(1);
      await Promise.all(reads);
      expect(listedAfterGone).toBe(false);
      expect(await store.get(ids[0]!)).toBeUndefined();
      expect((await store.list({ limit: 50 })).runs.map((r) => r.id)).toEqual([ids[1]]);
    });

    it('finishes only runs the instance owns; renew reports the lost ones; setRelease records the revision', async () => {
      const { store } = await fresh();
      const id = await submitted(store, newRun('dev'));
      await store.claim('i1', LEASE);
      expect(await store.finish(id, 'other', { status: 'succeeded' })).toBe(false);
      expect(await store.renew('i1', [id, 'gone'], LEASE)).toEqual(['gone']);
      await store.setRelease(id, 'i1', 7);
      expect((await store.get(id))?.releaseRevision).toBe(7);
      expect(await store.finish(id, 'i1', { status: 'failed', error: 'boom' })).toBe(true);
      expect(await store.get(id)).toMatchObject({ status: 'failed', error: 'boom', releaseRevision: 7 });
      expect(await store.finish(id, 'i1', { status: 'succeeded' })).toBe(false);
      expect(await store.renew('i1', [id], LEASE)).toEqual([id]);
    });

    it('reaps runs whose lease expired as errored, never re-queued', async () => {
      const { store } = await fresh();
      const id = await submitted(store, newRun('dev'));
      const next = await submitted(store, newRun('dev'));
      await store.claim('i1', 1);
      await new Promise((resolve) => setTimeout(resolve, 30));
      const reaped = await store.reapExpired('the server stopped');
      expect(reaped.map((r) => r.id)).toEqual([id]);
      expect(await store.get(id)).toMatchObject({ status: 'errored', error: 'the server stopped' });
      expect(await store.reapExpired('again')).toEqual([]);
      // The next run of the stack may start; the errored one never again.
      expect((await store.claim('i1', LEASE))?.id).toBe(next);
      expect(await store.claim('i1', LEASE)).toBeUndefined();
    });

    it('fences writes by owner and lease generation; reaps after the grace, closing the release first', async () => {
      const { store } = await fresh();
      const id = await submitted(store, newRun('dev'));
      const next = await submitted(store, newRun('dev'));
      const claimed = await store.claim('i1', 1);
      expect(claimed?.leaseGeneration).toBe(1);
      const owner = ownerOf(claimed!, 'i1');
      await store.appendFeed(id, [{ kind: 'log', data: logLine('mine') }], owner);
      await expect(
        store.appendFeed(id, [{ kind: 'log', data: logLine('stale') }], { instance: 'i1', generation: 0 }),
      ).rejects.toBeInstanceOf(RunLeaseLostError);
      await expect(
        store.appendFeed(id, [{ kind: 'log', data: logLine('other') }], { instance: 'i2', generation: 1 }),
      ).rejects.toBeInstanceOf(RunLeaseLostError);
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(await store.reapExpired('lease expired', { graceMs: 60_000 })).toEqual([]);
      const closed: string[] = [];
      const reaped = await store.reapExpired('lease expired', {
        beforeErrored: async (run) => {
          closed.push(run.id);
          // Its release is closed while the run still counts as running: its stack's next run waits.
          expect((await store.get(run.id))?.status).toBe('running');
        },
      });
      expect(closed).toEqual([id]);
      expect(reaped.map((r) => r.id)).toEqual([id]);
      await expect(store.appendFeed(id, [{ kind: 'log', data: logLine('late') }], owner)).rejects.toBeInstanceOf(
        RunLeaseLostError,
      );
      expect(await store.finish(id, owner, { status: 'succeeded' })).toBe(false);
      expect((await store.readLog(id, 0, 1 << 20)).lines.map((l) => l.text)).toEqual(['mine']);
      expect((await store.claim('i1', LEASE))?.id).toBe(next);
    });

    it('appends and reads the feed by sequence number, ending with the final status', async () => {
      const { store } = await fresh();
      const id = await submitted(store, newRun('dev'));
      await store.claim('i1', LEASE);
      const last = await store.appendFeed(id, [
        { kind: 'log', data: logLine('one') },
        { kind: 'log', data: logLine('two') },
      ]);
      await store.finish(id, 'i1', { status: 'succeeded' });
      const all = await store.readFeed(id, 0, 1000);
      expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
      expect(all.find((e) => e.seq === last)?.item).toEqual({ kind: 'log', data: logLine('two') });
      const statuses = all.filter((e) => e.item.kind === 'status').map((e) => e.item.data as { status: string });
      expect(statuses.map((s) => s.status)).toEqual(['queued', 'running', 'succeeded']);
      expect(await store.readFeed(id, last - 1, 1)).toHaveLength(1);
      expect((await store.readFeed(id, last - 1, 1))[0]?.seq).toBe(last);
      expect(await store.readFeed(id, all.length, 10)).toEqual([]);
    });

    it('reads the log by byte offset, in pieces, while it grows', async () => {
      const { store } = await fresh();
      const id = await submitted(store, newRun('dev'));
      await store.claim('i1', LEASE);
      await store.appendFeed(id, [{ kind: 'log', data: logLine('first') }]);
      const one = await store.readLog(id, 0, 1 << 20);
      expect(one.lines.map((l) => l.text)).toEqual(['first']);
      expect(one.nextOffset).toBe(Buffer.byteLength(`${JSON.stringify(logLine('first'))}\n`));
      await store.appendFeed(id, [
        { kind: 'log', data: logLine('second') },
        { kind: 'run-event', data: { type: 'run-finished', status: 'succeeded' } as never },
        { kind: 'log', data: logLine('third') },
      ]);
      const rest = await store.readLog(id, one.nextOffset, 1 << 20);
      expect(rest.lines.map((l) => l.text)).toEqual(['second', 'third']);
      // A small maxBytes returns whole lines only (at least one).
      const piece = await store.readLog(id, one.nextOffset, 10);
      expect(piece.lines.map((l) => l.text)).toEqual(['second']);
      expect(await store.readLog(id, rest.nextOffset, 1 << 20)).toEqual({ lines: [], nextOffset: rest.nextOffset });
    });

    it('pages the history with a cursor and filters it', async () => {
      const { store } = await fresh();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push(await submitted(store, newRun(i % 2 ? 'prod' : 'dev', { type: i < 2 ? 'generate' : 'apply' })));
      const page1 = await store.list({ limit: 2 });
      expect(page1.runs.map((r) => r.id)).toEqual([ids[4], ids[3]]);
      expect(page1.nextCursor).not.toBeNull();
      const page2 = await store.list({ limit: 2, cursor: page1.nextCursor! });
      expect(page2.runs.map((r) => r.id)).toEqual([ids[2], ids[1]]);
      const page3 = await store.list({ limit: 2, cursor: page2.nextCursor! });
      expect(page3.runs.map((r) => r.id)).toEqual([ids[0]]);
      expect(page3.nextCursor).toBeNull();
      expect((await store.list({ limit: 10, stack: 'prod' })).runs.map((r) => r.id)).toEqual([ids[3], ids[1]]);
      expect((await store.list({ limit: 10, type: 'generate' })).runs.map((r) => r.id)).toEqual([ids[1], ids[0]]);
      expect((await store.list({ limit: 10, createdBy: 'nobody' })).runs).toEqual([]);
      const future = new Date(Date.now() + 60_000).toISOString();
      expect((await store.list({ limit: 10, since: future })).runs).toEqual([]);
      expect((await store.list({ limit: 10, until: future })).runs).toHaveLength(5);
    });

    it('names runs in the one id format and answers a full queue with the one Retry-After', async () => {
      const { store } = await fresh();
      const id = await submitted(store, newRun('dev'));
      expect(id).toMatch(/^[0-9a-z]{9}-[0-9a-f]{12}$/);
      const limits = { maxQueuedPerStack: 1, maxQueuedTotal: 10 };
      expect(await store.submit(newRun('dev'), limits)).toEqual({
        kind: 'full',
        scope: 'stack',
        retryAfterSeconds: QUEUE_FULL_RETRY_AFTER_SECONDS,
      });
      expect(QUEUE_FULL_RETRY_AFTER_SECONDS).toBe(5);
    });

    it('takes a cursor of 1 to 15 decimal digits only, and bounds a page', async () => {
      const { store } = await fresh();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push(await submitted(store, newRun('dev')));
      for (const bad of ['1234567890123456', '', '-1', '1e3', ' 1', '0x10', '99999999999999999999']) {
        await expect(store.list({ limit: 2, cursor: bad })).rejects.toBeInstanceOf(RunCursorError);
      }
      const top = await store.list({ limit: 10, cursor: '999999999999999' });
      expect(top.runs.map((r) => r.id)).toEqual([...ids].reverse());
      expect(top.nextCursor).toBeNull();
      expect(await store.list({ limit: 10, cursor: '0' })).toEqual({ runs: [], nextCursor: null });
      const first = await store.list({ limit: 1 });
      expect(first.nextCursor).toMatch(/^[0-9]{1,15}$/);
      // A page never holds more than the policy's maximum, whatever is asked.
      expect((await store.list({ limit: MAX_PAGE_RUNS * 10 })).runs).toHaveLength(3);
      expect((await store.list({ limit: 0 })).runs).toHaveLength(1);
    });

    it('bounds feed reads and starts a log read from inside a line at the next line', async () => {
      const { store } = await fresh();
      const id = await submitted(store, newRun('dev'));
      await store.claim('i1', LEASE);
      await store.appendFeed(id, [
        { kind: 'log', data: logLine('one') },
        { kind: 'log', data: logLine('two') },
      ]);
      expect((await store.readFeed(id, -5, 2)).map((e) => e.seq)).toEqual([1, 2]);
      expect(await store.readFeed(id, 0, 0)).toEqual([]);
      expect((await store.readLog(id, 3, 1 << 20)).lines.map((l) => l.text)).toEqual(['two']);
      expect((await store.readLog(id, -7, 1 << 20)).lines.map((l) => l.text)).toEqual(['one', 'two']);
      expect(await store.readLog('no-such-run', 5, 100)).toEqual({ lines: [], nextOffset: 5 });
    });

    it('keeps results', async () => {
      const { store } = await fresh();
      const id = await submitted(store, newRun('dev', { type: 'generate' }));
      expect(await store.getResult(id)).toBeUndefined();
      await store.setResult(id, { contentType: 'application/yaml', body: 'a: 1\n' });
      expect(await store.getResult(id)).toEqual({ contentType: 'application/yaml', body: 'a: 1\n' });
    });

    it('keeps the queue, the history and the feed across a restart', async () => {
      const f = await fresh();
      if (!f.reopen) return;
      const done = await submitted(f.store, newRun('dev'));
      const queued = await submitted(f.store, newRun('dev'));
      // A short lease, so that any store reaps it after the restart (the file store reaps every run left running).
      await f.store.claim('i1', 1);
      await f.store.appendFeed(done, [{ kind: 'log', data: logLine('kept') }]);
      await f.store.close();
      await new Promise((resolve) => setTimeout(resolve, 30));
      const again = f.reopen();
      extra.push(again);
      await again.open('i2');
      // The run left running by the dead instance is errored; the queued one is claimed next.
      const reaped = await again.reapExpired('its server stopped');
      expect(reaped.map((r) => r.id)).toEqual([done]);
      expect((await again.readLog(done, 0, 1 << 20)).lines.map((l) => l.text)).toEqual(['kept']);
      expect((await again.claim('i2', LEASE))?.id).toBe(queued);
      const next = await submitted(again, newRun('dev'));
      expect((await again.list({ limit: 1 })).runs[0]?.id).toBe(next);
    });

    it('keeps the approval a run is submitted with, its checks, and its preview while it waits', async () => {
      const { store } = await fresh();
      const notices: StoreNotice[] = [];
      store.subscribe((n) => notices.push(n));
      const id = await submitted(store, newRun('dev', { approval: approvalPolicy(2) }));
      expect((await store.get(id))?.approval).toEqual(approvalPolicy(2));
      expect((await store.get(await submitted(store, newRun('qa'))))?.approval ?? null).toBeNull();
      const claimed = await store.claim('i1', LEASE);
      expect(claimed?.id).toBe(id);
      const owner = ownerOf(claimed!, 'i1');
      await store.addChecks(id, owner, [CHECK]);
      await store.addChecks(id, owner, [{ ...CHECK, name: 'cost', enforcement: 'advisory', status: 'failed' }]);
      await expect(store.addChecks(id, { instance: 'i2', generation: 1 }, [CHECK])).rejects.toBeInstanceOf(
        RunLeaseLostError,
      );
      expect((await store.get(id))?.checks?.map((c) => `${c.name}:${c.status}`)).toEqual([
        'policy:passed',
        'cost:failed',
      ]);
      expect(await store.getPreview(id)).toBeUndefined();
      expect(await store.awaitApproval(id, { instance: 'i1', generation: 7 }, WAITING)).toBe(false);
      expect(await store.awaitApproval(id, owner, WAITING)).toBe(true);
      const run = await store.get(id);
      expect(run).toMatchObject({ status: 'needs-approval', instance: null, leaseUntil: null });
      expect(run?.approval).toEqual({
        ...approvalPolicy(2),
        waitingSince: WAITING.waitingSince,
        expiresAt: WAITING.expiresAt,
        basedOnRevision: 3,
      });
      expect(run?.checks).toHaveLength(2);
      expect(await store.getPreview(id)).toEqual(WAITING.preview);
      expect((await store.waiting()).map((r) => r.id)).toEqual([id]);
      expect((await store.list({ limit: 10, status: 'needs-approval' })).runs.map((r) => r.id)).toEqual([id]);
      // No longer running: the owner's writes are refused, its lease is not renewed.
      expect(await store.renew('i1', [id], LEASE)).toEqual([id]);
      expect(await store.finish(id, owner, { status: 'succeeded' })).toBe(false);
      expect(await store.awaitApproval(id, owner, WAITING)).toBe(false);
      const statuses = (await store.readFeed(id, 0, 100))
        .filter((e) => e.item.kind === 'status')
        .map((e) => (e.item.data as { status: string; checks?: unknown[] }).status);
      expect(statuses).toEqual(['queued', 'running', 'running', 'running', 'needs-approval']);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(notices.filter((n) => n.runId === id && n.type === 'feed').length).toBeGreaterThanOrEqual(5);
      // A run of the stack is active while it waits.
      expect((await store.active('shop', 'dev')).map((r) => r.status)).toEqual(['needs-approval']);
    });

    it('holds back the later applies, destroys and rollbacks of a waiting run’s stack, not its other runs', async () => {
      const { store } = await fresh();
      const waiting = await waitingRun(store, 'dev');
      const apply = await submitted(store, newRun('dev'));
      const destroy = await submitted(store, newRun('dev', { type: 'destroy' }));
      const preview = await submitted(store, newRun('dev', { type: 'preview' }));
      const other = await submitted(store, newRun('prod'));
      expect(await store.queueInfo((await store.get(apply))!)).toEqual({ queuePosition: 1, blockedBy: waiting });
      expect(await store.queueInfo((await store.get(destroy))!)).toEqual({ queuePosition: 2, blockedBy: waiting });
      // The preview goes first: nothing before it is free to run.
      expect(await store.queueInfo((await store.get(preview))!)).toEqual({ queuePosition: 1, blockedBy: null });
      expect(await store.queueInfo((await store.get(waiting))!)).toEqual({ queuePosition: null, blockedBy: null });
      const claimed = [await store.claim('i1', LEASE), await store.claim('i1', LEASE)].map((r) => r?.id);
      expect(claimed.sort()).toEqual([preview, other].sort());
      expect(await store.claim('i1', LEASE)).toBeUndefined();
      expect(await store.finish(preview, 'i1', { status: 'succeeded' })).toBe(true);
      expect(await store.claim('i1', LEASE)).toBeUndefined();
      // A rejection ends it: the held runs go, in submission order.
      expect((await store.decide(waiting, decision('bob', { decision: 'rejected' })))?.kind).toBe('rejected');
      expect((await store.claim('i1', LEASE))?.id).toBe(apply);
    });

    it('counts approvals per token name and queues an approved run again, first of its stack', async () => {
      const { store } = await fresh();
      const notices: StoreNotice[] = [];
      store.subscribe((n) => notices.push(n));
      const id = await waitingRun(store, 'dev', 2);
      const later = await submitted(store, newRun('dev'));
      const first = await store.decide(id, decision('alice', { comment: 'looks fine' }));
      expect(first?.kind).toBe('recorded');
      expect(first?.run.status).toBe('needs-approval');
      const again = await store.decide(id, decision('alice', { comment: 'twice' }));
      expect(again?.kind).toBe('duplicate');
      expect(again?.run.approval?.decisions.map((d) => d.by)).toEqual(['alice']);
      const second = await store.decide(id, decision('carol', { role: 'admin' }));
      expect(second?.kind).toBe('approved');
      expect(second?.run.status).toBe('queued');
      expect(second?.run.approval?.decisions).toEqual([
        decision('alice', { comment: 'looks fine' }),
        decision('carol', { role: 'admin' }),
      ]);
      expect(second?.run.approval?.basedOnRevision).toBe(3);
      expect((await store.decide(id, decision('dave')))?.kind).toBe('not-waiting');
      expect(await store.decide('no-such-run', decision('dave'))).toBeUndefined();
      expect(await store.waiting()).toEqual([]);
      expect(await store.queueInfo((await store.get(id))!)).toEqual({ queuePosition: 1, blockedBy: null });
      expect(await store.queueInfo((await store.get(later))!)).toEqual({ queuePosition: 2, blockedBy: id });
      // Its preview is kept for the apply; the second claim is a new lease.
      const claimed = await store.claim('i1', LEASE);
      expect(claimed?.id).toBe(id);
      expect(claimed?.leaseGeneration).toBe(2);
      expect(await store.getPreview(id)).toEqual(WAITING.preview);
      expect(await store.finish(id, ownerOf(claimed!, 'i1'), { status: 'succeeded', releaseRevision: 4 })).toBe(true);
      expect((await store.get(id))?.approval?.decisions).toHaveLength(2);
      expect((await store.claim('i1', LEASE))?.id).toBe(later);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(notices).toContainEqual({ type: 'queued', runId: id });
      const statuses = (await store.readFeed(id, 0, 100))
        .filter((e) => e.item.kind === 'status')
        .map((e) => (e.item.data as { status: string }).status);
      expect(statuses).toEqual([
        'queued',
        'running',
        'needs-approval',
        'needs-approval',
        'queued',
        'running',
        'succeeded',
      ]);
    });

    it('counts two decisions made at once', async () => {
      const { store } = await fresh();
      const id = await waitingRun(store, 'dev', 2);
      const outcomes = await Promise.all([store.decide(id, decision('alice')), store.decide(id, decision('bob'))]);
      expect(outcomes.map((o) => o?.kind).sort()).toEqual(['approved', 'recorded']);
      const run = await store.get(id);
      expect(run?.status).toBe('queued');
      expect(run?.approval?.decisions.map((d) => d.by).sort()).toEqual(['alice', 'bob']);
    });

    it('ends a rejected run with who rejected it and why', async () => {
      const { store } = await fresh();
      const notices: StoreNotice[] = [];
      store.subscribe((n) => notices.push(n));
      const id = await waitingRun(store, 'dev', 2);
      await store.decide(id, decision('alice'));
      const outcome = await store.decide(id, decision('bob', { decision: 'rejected', comment: 'not on a Friday' }));
      expect(outcome?.kind).toBe('rejected');
      expect(outcome?.run).toMatchObject({ status: 'rejected', error: 'rejected by bob: not on a Friday' });
      expect(outcome?.run.finishedAt).not.toBeNull();
      expect((await store.get(id))?.approval?.decisions.map((d) => d.decision)).toEqual(['approved', 'rejected']);
      expect((await store.decide(id, decision('carol')))?.kind).toBe('not-waiting');
      expect(await store.waiting()).toEqual([]);
      expect(await store.active('shop', 'dev')).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(notices).toContainEqual({ type: 'finished', runId: id });
    });

    it('ends a waiting run stale or discarded once, and cancels it at once', async () => {
      const { store } = await fresh();
      const stale = await waitingRun(store, 'dev');
      const discarded = await waitingRun(store, 'qa');
      const cancelled = await waitingRun(store, 'prod');
      const queued = await submitted(store, newRun('ops'));
      const why = 'the stack’s release changed while it waited: revision 3 then, 4 now';
      const ended = await Promise.all([store.endWaiting(stale, 'stale', why), store.endWaiting(stale, 'stale', why)]);
      expect(ended.filter((r) => r !== undefined)).toHaveLength(1);
      expect(await store.get(stale)).toMatchObject({ status: 'stale', error: why });
      expect((await store.get(stale))?.finishedAt).not.toBeNull();
      const gone = await store.endWaiting(discarded, 'cancelled', 'discarded: waited for approval longer than 7d');
      expect(gone).toMatchObject({ status: 'cancelled', error: 'discarded: waited for approval longer than 7d' });
      expect(await store.endWaiting(queued, 'stale', why)).toBeUndefined();
      expect(await store.endWaiting('no-such-run', 'stale', why)).toBeUndefined();
      const c = await store.requestCancel(cancelled, 'alice');
      expect(c).toMatchObject({ status: 'cancelled', error: 'cancelled by alice while it waited for approval' });
      expect((await store.decide(cancelled, decision('bob')))?.kind).toBe('not-waiting');
      expect(await store.waiting()).toEqual([]);
      // Its preview stays with it.
      expect(await store.getPreview(stale)).toEqual(WAITING.preview);
    });

    it('ends an approved run stale when its preview no longer holds', async () => {
      const { store } = await fresh();
      const id = await waitingRun(store, 'dev');
      await store.decide(id, decision('alice'));
      const claimed = await store.claim('i1', LEASE);
      const error = 'the stack’s release changed since its preview: a new preview and new approvals are needed';
      expect(await store.finish(id, ownerOf(claimed!, 'i1'), { status: 'stale', error })).toBe(true);
      expect(await store.get(id)).toMatchObject({ status: 'stale', error });
    });

    it('never reaps nor prunes a waiting run, and counts it in the queue limits', async () => {
      const { store } = await fresh();
      const id = await waitingRun(store, 'dev');
      const done = await submitted(store, newRun('dev', { type: 'preview' }));
      await store.claim('i1', LEASE);
      await store.finish(done, 'i1', { status: 'succeeded' });
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(await store.reapExpired('lease expired')).toEqual([]);
      expect(await store.prune({ keepPerStack: 0, before: new Date(Date.now() + 60_000).toISOString() })).toBe(1);
      expect((await store.get(id))?.status).toBe('needs-approval');
      expect(await store.getPreview(id)).toEqual(WAITING.preview);
      const limits = { maxQueuedPerStack: 1, maxQueuedTotal: 10 };
      expect(await store.submit(newRun('dev'), limits)).toMatchObject({ kind: 'full', scope: 'stack' });
    });

    it('keeps a waiting run, its approvals and its preview across a restart', async () => {
      const f = await fresh();
      if (!f.reopen) return;
      const id = await waitingRun(f.store, 'dev', 2);
      await f.store.decide(id, decision('alice', { comment: 'fine' }));
      await f.store.close();
      const again = f.reopen();
      extra.push(again);
      await again.open('i2');
      expect(await again.reapExpired('its server stopped')).toEqual([]);
      expect((await again.waiting()).map((r) => r.id)).toEqual([id]);
      expect(await again.getPreview(id)).toEqual(WAITING.preview);
      expect(await again.claim('i2', LEASE)).toBeUndefined();
      expect((await again.decide(id, decision('bob')))?.kind).toBe('approved');
      expect((await again.claim('i2', LEASE))?.id).toBe(id);
    });
  });
}
