import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freshDatabases, pgUrl, sql } from '../../support/pg.js';
import type { LogLine } from '../../../src/api/index.js';
import { loadMigrations } from '../../../src/pg/migrate.js';
import { PgRunStore, RunCursorError, RunStoreError } from '../../../src/server/queue/pg-run-store.js';
import {
  ownerOf,
  RunLeaseLostError,
  type NewRun,
  type StoreNotice,
  type StoredRun,
  type SubmitLimits,
} from '../../../src/server/queue/run-store.js';
import { decision, describeRunStore, waitingRun, WAITING } from './run-store-contract.js';

const databases = freshDatabases('kapps_runs_t');
const stores: PgRunStore[] = [];

/** An opened store (closed after the test). */
async function openStore(url: string, instance = 'i1'): Promise<PgRunStore> {
  const store = new PgRunStore(url);
  stores.push(store);
  await store.open(instance);
  return store;
}

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

afterAll(() => databases.dropAll());

describeRunStore('postgres', async () => {
  const url = await databases.create();
  return {
    store: new PgRunStore(url),
    reopen: () => new PgRunStore(url),
    cleanup: () => Promise.resolve(),
  };
});

const LIMITS: SubmitLimits = { maxQueuedPerStack: 100, maxQueuedTotal: 1000 };

function newRun(stack: string, extra: Partial<NewRun> = {}): NewRun {
  return { type: 'apply', project: 'shop', stack, createdBy: 'ci', options: {}, ...extra };
}

async function submit(store: PgRunStore, run: NewRun, limits: SubmitLimits = LIMITS): Promise<StoredRun> {
  const outcome = await store.submit(run, limits);
  if (outcome.kind === 'full') throw new Error(`queue full (${outcome.scope})`);
  return outcome.run;
}

/** Resolves with the first notice the predicate accepts (fails the test after 5 s). */
function waitForNotice(store: PgRunStore, accept: (n: StoreNotice) => boolean): Promise<StoreNotice> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error('no such notice within 5 s'));
    }, 5_000);
    const stop = store.subscribe((notice) => {
      if (!accept(notice)) return;
      clearTimeout(timer);
      stop();
      resolve(notice);
    });
  });
}

function logLine(text: string, extra: Partial<LogLine> = {}): LogLine {
  return {
    time: '2026-11-25T14:00:00.000Z',
    stream: 'stdout',
    kapp: 'm:k',
    phase: 'apply_install',
    step: 's',
    text,
    ...extra,
  };
}

describe('PostgreSQL run store', () => {
  it('creates its tables once, even when several instances open a new database at the same time', async () => {
    const url = await databases.create();
    const opened = await Promise.all([1, 2, 3, 4].map((n) => openStore(url, `i${n}`)));
    expect(opened).toHaveLength(4);
    const migrations = await loadMigrations();
    expect(await sql(url, 'SELECT id, name FROM kapps_migrations ORDER BY id')).toEqual(
      migrations.map(({ id, name }) => ({ id, name })),
    );
    const tables = await sql<{ tablename: string }>(
      url,
      `SELECT tablename FROM pg_tables WHERE tablename LIKE 'kapps_run%' ORDER BY tablename`,
    );
    expect(tables.map((t) => t.tablename)).toEqual([
      'kapps_run_feed',
      'kapps_run_previews',
      'kapps_run_results',
      'kapps_runs',
    ]);
  });

  it('refuses a database migrated by a newer kapps, naming the database without its password', async () => {
    const url = await databases.create();
    await openStore(url);
    await sql(url, `INSERT INTO kapps_migrations (id, name) VALUES (99, 'later')`);
    const withPassword = new URL(url);
    withPassword.password = 'S3cret-Pa55';
    const newer = new PgRunStore(withPassword.toString());
    stores.push(newer);
    const error = await newer.open('i2').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RunStoreError);
    expect((error as Error).message).toMatch(
      /has migration 99 applied, newer than this kapps knows \(its latest is \d+\); upgrade kapps/,
    );
    expect((error as Error).message).toContain(':***@');
    expect((error as Error).message).not.toContain('S3cret-Pa55');
  });

  it('the database refuses a second running run of one stack (the unique index), whatever the caller does', async () => {
    const url = await databases.create();
    const store = await openStore(url);
    const a = await submit(store, newRun('dev'));
    const b = await submit(store, newRun('dev'));
    await sql(url, `UPDATE kapps_runs SET status = 'running' WHERE id = $1`, [a.id]);
    await expect(sql(url, `UPDATE kapps_runs SET status = 'running' WHERE id = $1`, [b.id])).rejects.toThrow(
      /kapps_runs_one_running/,
    );
  });

  it('queues runs in submission order per stack, with their position and what blocks them', async () => {
    const store = await openStore(await databases.create());
    const a = await submit(store, newRun('dev'));
    const b = await submit(store, newRun('dev', { type: 'preview', options: { include: ['m:k'], workers: 3 } }));
    const c = await submit(store, newRun('dev'));
    const other = await submit(store, newRun('prod'));
    expect(b).toMatchObject({ status: 'queued', type: 'preview', project: 'shop', stack: 'dev', createdBy: 'ci' });
    expect(b.options).toEqual({ include: ['m:k'], workers: 3 });
    expect(b.seq).toBeGreaterThan(a.seq);
    expect(await store.get(b.id)).toEqual(b);
    expect(await store.get('nope')).toBeUndefined();

    expect(await store.queueInfo(a)).toEqual({ queuePosition: 1, blockedBy: null });
    expect(await store.queueInfo(c)).toEqual({ queuePosition: 3, blockedBy: b.id });

    const claimed = await store.claim('i1', 30_000);
    expect(claimed).toMatchObject({ id: a.id, status: 'running', instance: 'i1', cancelRequested: false });
    expect(claimed?.startedAt).not.toBeNull();
    expect(Date.parse(claimed?.leaseUntil ?? '')).toBeGreaterThan(Date.now() + 20_000);
    const bNow = (await store.get(b.id))!;
    expect(await store.queueInfo(bNow)).toEqual({ queuePosition: 1, blockedBy: a.id });
    expect(await store.queueInfo(claimed!)).toEqual({ queuePosition: null, blockedBy: null });

    // dev is busy: the next claim takes prod, then nothing is left that may start.
    expect((await store.claim('i1', 30_000))?.id).toBe(other.id);
    expect(await store.claim('i1', 30_000)).toBeUndefined();
    expect((await store.active('shop', 'dev')).map((r) => [r.id, r.status])).toEqual([
      [a.id, 'running'],
      [b.id, 'queued'],
      [c.id, 'queued'],
    ]);

    expect(await store.finish(a.id, 'i2', { status: 'succeeded' })).toBe(false);
    expect(await store.finish(a.id, 'i1', { status: 'succeeded', releaseRevision: 4 })).toBe(true);
    expect(await store.finish(a.id, 'i1', { status: 'failed' })).toBe(false);
    expect(await store.get(a.id)).toMatchObject({ status: 'succeeded', releaseRevision: 4, leaseUntil: null });
    expect((await store.claim('i1', 30_000))?.id).toBe(b.id);
  });

  it('records each status change in the feed, and the release a run took', async () => {
    const store = await openStore(await databases.create());
    const run = await submit(store, newRun('dev'));
    await store.claim('i1', 30_000);
    await store.setRelease(run.id, 'i1', 7);
    expect(await store.appendFeed(run.id, [{ kind: 'log', data: logLine('hello') }])).toBe(3);
    await store.finish(run.id, 'i1', { status: 'failed', error: 'step s of m:k exited 1' });
    const feed = await store.readFeed(run.id, 0, 100);
    expect(feed.map((e) => [e.seq, e.item.kind, e.item.kind === 'status' ? e.item.data.status : null])).toEqual([
      [1, 'status', 'queued'],
      [2, 'status', 'running'],
      [3, 'log', null],
      [4, 'status', 'failed'],
    ]);
    expect(feed[3]?.item.data).toMatchObject({ id: run.id, releaseRevision: 7, error: 'step s of m:k exited 1' });
    expect((await store.readFeed(run.id, 3, 100)).map((e) => e.seq)).toEqual([4]);
    expect((await store.readFeed(run.id, 0, 1)).map((e) => e.seq)).toEqual([1]);
  });

  it('returns the run an idempotency key created, per createdBy', async () => {
    const store = await openStore(await databases.create());
    const first = await store.submit(newRun('dev'), { ...LIMITS, idempotencyKey: 'k1' });
    const again = await store.submit(newRun('dev'), { ...LIMITS, idempotencyKey: 'k1' });
    const otherUser = await store.submit(newRun('dev', { createdBy: 'alice' }), { ...LIMITS, idempotencyKey: 'k1' });
    expect(first.kind).toBe('created');
    expect(again.kind).toBe('existing');
    expect(otherUser.kind).toBe('created');
    if (first.kind === 'full' || again.kind === 'full' || otherUser.kind === 'full') throw new Error('full');
    expect(again.run.id).toBe(first.run.id);
    expect(otherUser.run.id).not.toBe(first.run.id);
  });

  it('refuses submissions beyond the queue limits, per stack and in total, exactly, from several instances', async () => {
    const url = await databases.create();
    const a = await openStore(url, 'a');
    const b = await openStore(url, 'b');
    const limits: SubmitLimits = { maxQueuedPerStack: 3, maxQueuedTotal: 5 };
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, (_, n) => (n % 2 ? a : b).submit(newRun('dev'), limits)),
    );
    expect(outcomes.filter((o) => o.kind === 'created')).toHaveLength(3);
    expect(outcomes.filter((o) => o.kind === 'full')).toEqual(
      Array.from({ length: 7 }, () => ({ kind: 'full', scope: 'stack', retryAfterSeconds: 5 })),
    );
    expect((await a.submit(newRun('prod'), limits)).kind).toBe('created');
    expect((await a.submit(newRun('qa'), limits)).kind).toBe('created');
    expect(await a.submit(newRun('qa'), limits)).toMatchObject({ kind: 'full', scope: 'total' });
    // A running run no longer counts as queued.
    await a.claim('a', 30_000);
    expect((await a.submit(newRun('qa'), limits)).kind).toBe('created');
  });

  it('lists runs newest first with filters, and pages with a stable cursor', async () => {
    const store = await openStore(await databases.create());
    const made: StoredRun[] = [];
    for (let n = 0; n < 7; n++) {
      made.push(
        await submit(
          store,
          newRun(n % 2 ? 'dev' : 'prod', { type: n % 3 ? 'apply' : 'generate', createdBy: n < 5 ? 'ci' : 'bob' }),
        ),
      );
    }
    const newestFirst = made.map((r) => r.id).reverse();
    const all = await store.list({ limit: 100 });
    expect(all.runs.map((r) => r.id)).toEqual(newestFirst);
    expect(all.nextCursor).toBeNull();

    const pages: string[][] = [];
    let extra: StoredRun | undefined;
    let cursor: string | undefined;
    do {
      const page = await store.list({ limit: 3, ...(cursor ? { cursor } : {}) });
      pages.push(page.runs.map((r) => r.id));
      // A run submitted while paging appears on no later page and moves nothing.
      if (pages.length === 1) extra = await submit(store, newRun('dev'));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(pages).toEqual([newestFirst.slice(0, 3), newestFirst.slice(3, 6), newestFirst.slice(6)]);

    expect((await store.list({ limit: 100, stack: 'dev', type: 'apply' })).runs.map((r) => r.id)).toEqual([
      extra!.id,
      ...made
        .filter((_, n) => n % 2 === 1 && n % 3 !== 0)
        .map((r) => r.id)
        .reverse(),
    ]);
    expect((await store.list({ limit: 100, createdBy: 'bob' })).runs.map((r) => r.id)).toEqual([
      made[6]!.id,
      made[5]!.id,
    ]);
    await store.claim('i1', 30_000);
    expect((await store.list({ limit: 100, status: 'running' })).runs.map((r) => r.id)).toEqual([made[0]!.id]);
    expect((await store.list({ limit: 100, project: 'other' })).runs).toEqual([]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await store.list({ limit: 100, since: future })).runs).toEqual([]);
    expect((await store.list({ limit: 100, until: future })).runs).toHaveLength(8);
    await expect(store.list({ limit: 3, cursor: 'not-a-cursor' })).rejects.toThrow(RunCursorError);
  });

  it('keeps log lines at the byte offsets of the log in NDJSON form', async () => {
    const store = await openStore(await databases.create());
    const run = await submit(store, newRun('dev'));
    await store.claim('i1', 30_000);
    const lines = [
      logLine('first', { stream: 'kapps', kapp: undefined, phase: undefined, step: undefined }),
      logLine('zweite Zeile — ünïcødé ✓'),
      logLine('third', { stream: 'stderr' }),
    ];
    const clean = lines.map((l) => JSON.parse(JSON.stringify(l)) as LogLine);
    await store.appendFeed(run.id, [
      { kind: 'log', data: clean[0]! },
      {
        kind: 'run-event',
        data: { type: 'kapp-started', time: '2026-11-25T14:00:00.000Z', kapp: 'm:k', role: 'selected' },
      },
    ]);
    await store.appendFeed(run.id, [
      { kind: 'log', data: clean[1]! },
      { kind: 'log', data: clean[2]! },
    ]);
    const ndjson = clean.map((l) => `${JSON.stringify(l)}\n`);
    const ends = ndjson.map((_, n) => Buffer.byteLength(ndjson.slice(0, n + 1).join('')));

    expect(await store.readLog(run.id, 0, 1 << 20)).toEqual({ lines: clean, nextOffset: ends[2] });
    // Small reads return at least one line and resume where they stopped.
    expect(await store.readLog(run.id, 0, 1)).toEqual({ lines: [clean[0]], nextOffset: ends[0] });
    expect(await store.readLog(run.id, ends[0]!, 1)).toEqual({ lines: [clean[1]], nextOffset: ends[1] });
    expect(await store.readLog(run.id, ends[1]!, 1 << 20)).toEqual({ lines: [clean[2]], nextOffset: ends[2] });
    expect(await store.readLog(run.id, ends[2]!, 1 << 20)).toEqual({ lines: [], nextOffset: ends[2] });
    const feed = await store.readFeed(run.id, 0, 100);
    expect(feed.map((e) => e.item.kind)).toEqual(['status', 'status', 'log', 'run-event', 'log', 'log']);
  });

  it('writes appends made at once in call order, gap-free, each told its own last sequence number', async () => {
    const store = await openStore(await databases.create());
    const run = await submit(store, newRun('dev'));
    await store.claim('i1', 30_000);
    const feedNotices: StoreNotice[] = [];
    store.subscribe((n) => {
      if (n.type === 'feed' && n.runId === run.id && n.seq > 2) feedNotices.push(n);
    });
    const lastNotice = waitForNotice(store, (n) => n.type === 'feed' && n.seq === 222);
    const calls = Array.from({ length: 200 }, (_, n) =>
      store.appendFeed(
        run.id,
        n % 10 === 0
          ? [
              { kind: 'log', data: logLine(`line ${n}`) },
              { kind: 'log', data: logLine(`line ${n}b`) },
            ]
          : [{ kind: 'log', data: logLine(`line ${n}`) }],
      ),
    );
    const lasts = await Promise.all(calls);
    // After the `queued` and `running` entries: one or two entries per call, in call order.
    let expected = 2;
    expect(lasts).toEqual(Array.from({ length: 200 }, (_, n) => (expected += n % 10 === 0 ? 2 : 1)));
    const texts = (await store.readLog(run.id, 0, 1 << 20)).lines.map((l) => l.text);
    expect(texts).toEqual(
      Array.from({ length: 200 }, (_, n) => (n % 10 === 0 ? [`line ${n}`, `line ${n}b`] : [`line ${n}`])).flat(),
    );
    const seqs = (await store.readFeed(run.id, 0, 1000)).map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: 222 }, (_, n) => n + 1));
    // Gathered: far fewer transactions (one feed notice each) than calls.
    await lastNotice;
    expect(feedNotices.length).toBeLessThan(100);
  });

  it('keeps a log line holding a NUL (as U+FFFD) and counts offsets in that form', async () => {
    const store = await openStore(await databases.create());
    const run = await submit(store, newRun('dev'));
    await store.claim('i1', 30_000);
    await store.appendFeed(run.id, [
      { kind: 'log', data: logLine('a\u0000b') },
      { kind: 'log', data: logLine('next') },
    ]);
    const read = await store.readLog(run.id, 0, 1 << 20);
    expect(read.lines.map((l) => l.text)).toEqual(['a\uFFFDb', 'next']);
    expect(read.nextOffset).toBe(Buffer.byteLength(read.lines.map((l) => `${JSON.stringify(l)}\n`).join('')));
  });

  it('stores and replaces a result', async () => {
    const store = await openStore(await databases.create());
    const run = await submit(store, newRun('dev', { type: 'generate' }));
    expect(await store.getResult(run.id)).toBeUndefined();
    await store.setResult(run.id, { contentType: 'application/yaml', body: 'a: 1\n' });
    await store.setResult(run.id, { contentType: 'application/yaml', body: 'b: 2\n' });
    expect(await store.getResult(run.id)).toEqual({ contentType: 'application/yaml', body: 'b: 2\n' });
  });

  it('cancels a queued run at once, and carries a cancel of a running run to the other instances', async () => {
    const url = await databases.create();
    const owner = await openStore(url, 'owner');
    const other = await openStore(url, 'other');
    const running = await submit(other, newRun('dev'));
    const queued = await submit(other, newRun('dev'));
    expect((await owner.claim('owner', 30_000))?.id).toBe(running.id);

    const cancelled = await other.requestCancel(queued.id, 'alice');
    expect(cancelled).toMatchObject({ status: 'cancelled', error: 'cancelled by alice before it started' });
    expect(cancelled?.finishedAt).not.toBeNull();

    const heard = waitForNotice(owner, (n) => n.type === 'cancel');
    const asked = await other.requestCancel(running.id, 'alice');
    expect(asked).toMatchObject({ status: 'running', cancelRequested: true });
    expect(await heard).toEqual({ type: 'cancel', runId: running.id });
    expect(await other.requestCancel('missing', 'alice')).toBeUndefined();
    expect(await owner.finish(running.id, 'owner', { status: 'cancelled', error: 'cancelled by alice' })).toBe(true);
    expect(await other.requestCancel(running.id, 'alice')).toMatchObject({ status: 'cancelled' });
    // The cancelled queued run is never claimed.
    expect(await owner.claim('owner', 30_000)).toBeUndefined();
  });

  it('tells every instance about submissions, feed appends and finished runs', async () => {
    const url = await databases.create();
    const a = await openStore(url, 'a');
    const b = await openStore(url, 'b');
    const queued = waitForNotice(b, (n) => n.type === 'queued');
    const run = await submit(a, newRun('dev'));
    expect(await queued).toEqual({ type: 'queued', runId: run.id });
    await a.claim('a', 30_000);
    const feed = waitForNotice(b, (n) => n.type === 'feed' && n.seq === 4);
    await a.appendFeed(run.id, [
      { kind: 'log', data: logLine('x') },
      { kind: 'log', data: logLine('y') },
    ]);
    expect(await feed).toEqual({ type: 'feed', runId: run.id, seq: 4 });
    const finished = waitForNotice(b, (n) => n.type === 'finished');
    await a.finish(run.id, 'a', { status: 'succeeded' });
    expect(await finished).toEqual({ type: 'finished', runId: run.id });
  });

  it('listens again after its listening connection is dropped', async () => {
    const url = await databases.create();
    const a = await openStore(url, 'a');
    const b = await openStore(url, 'b');
    const dropped = await sql<{ n: string }>(
      url,
      `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
        WHERE application_name = 'kapps-serve-listen' AND datname = current_database()`,
    );
    expect(Number(dropped[0]?.n)).toBe(2);
    // Submit until b hears one (its listener comes back after a short back-off).
    const heard = waitForNotice(b, (n) => n.type === 'queued');
    let done = false;
    void heard.finally(() => {
      done = true;
    });
    for (let n = 0; n < 40 && !done; n++) {
      await submit(a, newRun('dev'));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await heard).type).toBe('queued');
  });

  it('errors runs whose lease expired, never re-queues them, and the owner learns it lost them', async () => {
    const url = await databases.create();
    const dead = await openStore(url, 'dead');
    const live = await openStore(url, 'live');
    const lost = await submit(dead, newRun('dev'));
    const kept = await submit(dead, newRun('prod'));
    await dead.claim('dead', 200);
    await live.claim('live', 30_000);
    expect(await live.reapExpired('lease expired')).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const reaped = await live.reapExpired('the instance running it stopped renewing its lease');
    expect(reaped.map((r) => [r.id, r.status, r.error])).toEqual([
      [lost.id, 'errored', 'the instance running it stopped renewing its lease'],
    ]);
    expect(await live.reapExpired('again')).toEqual([]);
    expect(await dead.renew('dead', [lost.id], 30_000)).toEqual([lost.id]);
    expect(await live.renew('live', [kept.id], 30_000)).toEqual([]);
    expect(await dead.finish(lost.id, 'dead', { status: 'succeeded' })).toBe(false);
    expect(await live.get(lost.id)).toMatchObject({ status: 'errored' });
    // Not re-queued: a new run of the stack is the next to start.
    expect(await live.claim('live', 30_000)).toBeUndefined();
    const next = await submit(live, newRun('dev'));
    expect((await live.claim('live', 30_000))?.id).toBe(next.id);
    const feed = await live.readFeed(lost.id, 0, 10);
    expect(feed.map((e) => (e.item.kind === 'status' ? e.item.data.status : e.item.kind))).toEqual([
      'queued',
      'running',
      'errored',
    ]);
  });

  it('fences a reaped owner: its feed writes, release and finish are refused, as is a write of another generation', async () => {
    const url = await databases.create();
    const old = await openStore(url, 'old');
    const live = await openStore(url, 'live');
    const run = await submit(old, newRun('dev'));
    const claimed = await old.claim('old', 200);
    expect(claimed?.leaseGeneration).toBe(1);
    const owner = ownerOf(claimed!, 'old');
    expect(await old.appendFeed(run.id, [{ kind: 'log', data: logLine('before') }], owner)).toBe(3);
    // A write carrying another generation is refused even by the right instance.
    await expect(
      old.appendFeed(run.id, [{ kind: 'log', data: logLine('x') }], { instance: 'old', generation: 2 }),
    ).rejects.toBeInstanceOf(RunLeaseLostError);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect((await live.reapExpired('lease expired')).map((r) => r.id)).toEqual([run.id]);
    await expect(old.appendFeed(run.id, [{ kind: 'log', data: logLine('after') }], owner)).rejects.toBeInstanceOf(
      RunLeaseLostError,
    );
    await old.setRelease(run.id, owner, 9);
    expect(await old.finish(run.id, owner, { status: 'succeeded' })).toBe(false);
    expect(await live.get(run.id)).toMatchObject({ status: 'errored', releaseRevision: null });
    const log = await live.readLog(run.id, 0, 1 << 20);
    expect(log.lines.map((l) => l.text)).toEqual(['before']);
  });

  it('reaps only after the grace, and closes the release before anyone hears the run errored', async () => {
    const url = await databases.create();
    const old = await openStore(url, 'old');
    const live = await openStore(url, 'live');
    const run = await submit(old, newRun('dev'));
    const queued = await submit(old, newRun('dev'));
    await old.claim('old', 100);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await live.reapExpired('lease expired', { graceMs: 60_000 })).toEqual([]);
    // While the release is being closed, the run still counts as running: its stack's next run is not claimed.
    const seen: string[] = [];
    const reaped = await live.reapExpired('lease expired', {
      graceMs: 100,
      beforeErrored: async (r) => {
        seen.push(`${r.id} ${r.status} ${r.error}`);
        const other = await openStore(url, 'other');
        expect(await other.claim('other', 30_000)).toBeUndefined();
        expect((await other.get(r.id))?.status).toBe('running');
      },
    });
    expect(seen).toEqual([`${run.id} errored lease expired`]);
    expect(reaped.map((r) => r.id)).toEqual([run.id]);
    expect((await live.claim('live', 30_000))?.id).toBe(queued.id);
  });

  it('a run whose release cannot be closed stays running until a later reap closes it', async () => {
    const url = await databases.create();
    const old = await openStore(url, 'old');
    const live = await openStore(url, 'live');
    const run = await submit(old, newRun('dev'));
    await old.claim('old', 50);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const failing = await live.reapExpired('lease expired', {
      beforeErrored: () => Promise.reject(new Error('the release store is down')),
    });
    expect(failing).toEqual([]);
    expect((await live.get(run.id))?.status).toBe('running');
    expect(
      (await live.reapExpired('lease expired', { beforeErrored: () => Promise.resolve() })).map((r) => r.id),
    ).toEqual([run.id]);
  });

  it('a closed instance gives up its leases: its runs are errored at the next reap, not after the lease', async () => {
    const url = await databases.create();
    const gone = await openStore(url, 'gone');
    const live = await openStore(url, 'live');
    const run = await submit(gone, newRun('dev'));
    await gone.claim('gone', 600_000);
    expect(await live.reapExpired('x')).toEqual([]);
    await gone.close();
    expect((await live.reapExpired('its server stopped')).map((r) => [r.id, r.status])).toEqual([[run.id, 'errored']]);
  });

  it('renewing keeps a lease alive past its first term', async () => {
    const store = await openStore(await databases.create());
    const run = await submit(store, newRun('dev'));
    await store.claim('i1', 300);
    for (let n = 0; n < 4; n++) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(await store.renew('i1', [run.id], 300)).toEqual([]);
    }
    expect(await store.reapExpired('expired')).toEqual([]);
    expect(await store.get(run.id)).toMatchObject({ status: 'running' });
  });

  it('many instances claiming at once: each run claimed once, never two running on one stack, in order', async () => {
    const url = await databases.create();
    const claimers = await Promise.all(['c1', 'c2', 'c3', 'c4', 'c5'].map((n) => openStore(url, n)));
    const stacks = ['s1', 's2', 's3', 's4'];
    const submitted = await Promise.all(
      Array.from({ length: 48 }, (_, n) => submit(claimers[n % claimers.length]!, newRun(stacks[n % stacks.length]!))),
    );
    const claimedBy = new Map<string, string>();
    const runningNow = new Map<string, string>();
    const startOrder = new Map<string, number[]>();
    const overlaps: string[] = [];
    await Promise.all(
      claimers.map(async (store, index) => {
        const instance = `c${index + 1}`;
        let idle = 0;
        while (idle < 5) {
          const run = await store.claim(instance, 30_000);
          if (!run) {
            idle++;
            await new Promise((resolve) => setTimeout(resolve, 10));
            continue;
          }
          idle = 0;
          if (claimedBy.has(run.id)) overlaps.push(`${run.id} claimed twice`);
          claimedBy.set(run.id, instance);
          const holder = runningNow.get(run.stack);
          if (holder) overlaps.push(`${run.id} started while ${holder} runs on ${run.stack}`);
          runningNow.set(run.stack, run.id);
          startOrder.set(run.stack, [...(startOrder.get(run.stack) ?? []), run.seq]);
          await new Promise((resolve) => setTimeout(resolve, 15));
          runningNow.delete(run.stack);
          expect(await store.finish(run.id, instance, { status: 'succeeded' })).toBe(true);
        }
      }),
    );
    expect(overlaps).toEqual([]);
    expect([...claimedBy.keys()].sort()).toEqual(submitted.map((r) => r.id).sort());
    for (const [, seqs] of startOrder) expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect((await claimers[0]!.list({ limit: 500, status: 'succeeded' })).runs).toHaveLength(48);
  });

  it('many instances submitting at once never go beyond the queue limits, per stack and in total', async () => {
    const url = await databases.create();
    const submitters = await Promise.all(['p1', 'p2', 'p3', 'p4'].map((n) => openStore(url, n)));
    const limits: SubmitLimits = { maxQueuedPerStack: 3, maxQueuedTotal: 8 };
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, n) =>
        submitters[n % submitters.length]!.submit(newRun(n % 2 === 0 ? 'a' : 'b'), limits),
      ),
    );
    const created = outcomes.flatMap((o) => (o.kind === 'created' ? [o.run.stack] : []));
    expect(created.sort()).toEqual(['a', 'a', 'a', 'b', 'b', 'b']);
    expect(outcomes.filter((o) => o.kind === 'full' && o.scope === 'stack')).toHaveLength(34);
    expect((await submitters[0]!.submit(newRun('c'), limits)).kind).toBe('created');
    const last = await Promise.all([
      submitters[1]!.submit(newRun('d'), limits),
      submitters[2]!.submit(newRun('e'), limits),
    ]);
    expect(last.map((o) => o.kind).sort()).toEqual(['created', 'full']);
    expect(last.find((o) => o.kind === 'full')).toMatchObject({ scope: 'total' });
    expect((await submitters[3]!.list({ limit: 100, status: 'queued' })).runs).toHaveLength(8);
  });

  it('two instances deciding on one waiting run at once count both; the run is claimed by either', async () => {
    const url = await databases.create();
    const [a, b] = await Promise.all([openStore(url, 'a'), openStore(url, 'b')]);
    for (let round = 0; round < 5; round++) {
      const id = await waitingRun(a, `s${round}`, 2, 'a');
      const outcomes = await Promise.all([a.decide(id, decision('alice')), b.decide(id, decision('bob'))]);
      expect(outcomes.map((o) => o?.kind).sort()).toEqual(['approved', 'recorded']);
      const run = await b.get(id);
      expect(run?.status).toBe('queued');
      expect(run?.approval?.decisions.map((d) => d.by).sort()).toEqual(['alice', 'bob']);
      // Approved on either instance, applied by the other, on the preview kept in the database.
      const claimed = await b.claim('b', 30_000);
      expect(claimed?.id).toBe(id);
      expect(await b.getPreview(id)).toEqual(WAITING.preview);
      expect(await b.finish(id, ownerOf(claimed!, 'b'), { status: 'succeeded' })).toBe(true);
    }
    // The same token on two instances at once: one approval, one duplicate.
    const id = await waitingRun(a, 'dup', 2, 'a');
    const twice = await Promise.all([a.decide(id, decision('alice')), b.decide(id, decision('alice'))]);
    expect(twice.map((o) => o?.kind).sort()).toEqual(['duplicate', 'recorded']);
    expect((await a.get(id))?.approval?.decisions).toHaveLength(1);
  });

  it('two instances ending one waiting run at once: one does, and every instance hears of it', async () => {
    const url = await databases.create();
    const [a, b] = await Promise.all([openStore(url, 'a'), openStore(url, 'b')]);
    const id = await waitingRun(a, 'dev', 1, 'a');
    const heard = waitForNotice(b, (n) => n.type === 'finished' && n.runId === id);
    const ended = await Promise.all([
      a.endWaiting(id, 'stale', 'the release changed'),
      b.endWaiting(id, 'cancelled', 'discarded: waited for approval longer than 7d'),
    ]);
    expect(ended.filter((r) => r !== undefined)).toHaveLength(1);
    await heard;
    const statuses = (await b.readFeed(id, 0, 100))
      .filter((e) => e.item.kind === 'status')
      .map((e) => (e.item.data as StoredRun).status);
    expect(statuses).toEqual(['queued', 'running', 'needs-approval', (await a.get(id))?.status]);
  });

  it('the database refuses a status no run has', async () => {
    const url = await databases.create();
    const store = await openStore(url);
    const run = await submit(store, newRun('dev'));
    await expect(sql(url, `UPDATE kapps_runs SET status = 'paused' WHERE id = $1`, [run.id])).rejects.toThrow(
      /kapps_runs_status_check/,
    );
    await sql(url, `UPDATE kapps_runs SET status = 'stale' WHERE id = $1`, [run.id]);
    expect((await store.get(run.id))?.status).toBe('stale');
  });

  it('names the database without its password when it cannot be reached', async () => {
    const url = new URL(pgUrl());
    url.port = '1';
    url.password = 'S3cret-Pa55';
    const store = new PgRunStore(url.toString());
    stores.push(store);
    expect(store.description).not.toContain('S3cret-Pa55');
    const error = await store.open('i1').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RunStoreError);
    expect(String((error as Error).message)).toMatch(
      /^cannot open the run store in postgres:\/\/.*:\*\*\*@127\.0\.0\.1:1\//,
    );
    expect(String((error as Error).message)).not.toContain('S3cret-Pa55');
  });
});
