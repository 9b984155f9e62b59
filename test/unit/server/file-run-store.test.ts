import fs, { appendFileSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogLine } from '../../../src/log/line.js';
import { FileReleaseStore } from '../../../src/release/file-store.js';
import { FileRunStore } from '../../../src/server/queue/file-run-store.js';
import { makeRelease } from '../release/helpers.js';
import { RunStoreBusyError } from '../../../src/server/queue/run-store.js';
import { describeRunStore } from './run-store-contract.js';

describeRunStore('file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kapps-runs-'));
  return Promise.resolve({
    store: new FileRunStore(dir),
    reopen: () => new FileRunStore(dir),
    cleanup: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
  });
});

describe('file run store: the instance lock', () => {
  const dirs: string[] = [];
  const stores: FileRunStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  function tempDir(): string {
    const d = mkdtempSync(join(tmpdir(), 'kapps-runs-'));
    dirs.push(d);
    return d;
  }

  it('refuses a second instance while the holder lives, naming it', async () => {
    const dir = tempDir();
    // A live process other than this one holds the lock.
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      const lock = join(dir, 'runs', 'instance.lock');
      const first = new FileRunStore(dir);
      stores.push(first);
      await first.open('a');
      await first.close();
      stores.pop();
      writeFileSync(lock, JSON.stringify({ pid: holder.pid, host: hostname(), startedAt: '2026-11-25T10:00:00Z' }));
      const second = new FileRunStore(dir);
      const error = await second.open('b').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(RunStoreBusyError);
      expect(String((error as Error).message)).toContain(`pid ${holder.pid} on ${hostname()}`);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('takes over the lock of a dead holder', async () => {
    const dir = tempDir();
    const first = new FileRunStore(dir);
    await first.open('a');
    await first.close();
    const lock = join(dir, 'runs', 'instance.lock');
    writeFileSync(lock, JSON.stringify({ pid: 2 ** 22 + 17, host: hostname(), startedAt: '2026-11-25T10:00:00Z' }));
    const second = new FileRunStore(dir);
    stores.push(second);
    await second.open('b');
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
  });

  it('cuts a torn last line of a feed (a writer killed mid-append) and goes on numbering after it', async () => {
    const dir = tempDir();
    const first = new FileRunStore(dir);
    await first.open('a');
    const outcome = await first.submit(
      { type: 'generate', project: 'shop', stack: 'dev', createdBy: 'ci', options: {} },
      { maxQueuedPerStack: 5, maxQueuedTotal: 5 },
    );
    if (outcome.kind === 'full') throw new Error('full');
    const id = outcome.run.id;
    await first.close();
    appendFileSync(join(dir, 'runs', id, 'feed.ndjson'), '{"seq":2,"kind":"log","da');
    const second = new FileRunStore(dir);
    stores.push(second);
    await second.open('b');
    expect((await second.readFeed(id, 0, 10)).map((e) => e.seq)).toEqual([1]);
    const last = await second.appendFeed(id, [
      { kind: 'log', data: { time: '2026-11-25T10:00:00Z', stream: 'kapps', text: 'after' } },
    ]);
    expect(last).toBe(2);
    expect((await second.readFeed(id, 1, 10)).map((e) => [e.seq, e.item.kind])).toEqual([[2, 'log']]);
  });
});

describe('file run store: durable files, the index, and one ordered append', () => {
  const dirs: string[] = [];
  const stores: FileRunStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  async function openStore(dir: string, instance = 'a'): Promise<FileRunStore> {
    const store = new FileRunStore(dir);
    stores.push(store);
    await store.open(instance);
    return store;
  }
  async function closeAll(): Promise<void> {
    for (const s of stores.splice(0)) await s.close();
  }
  function tempDir(): string {
    const d = mkdtempSync(join(tmpdir(), 'kapps-runs-'));
    dirs.push(d);
    return d;
  }
  async function submit(store: FileRunStore, stack = 'dev'): Promise<string> {
    const outcome = await store.submit(
      { type: 'apply', project: 'shop', stack, createdBy: 'ci', options: {} },
      { maxQueuedPerStack: 100, maxQueuedTotal: 100 },
    );
    if (outcome.kind === 'full') throw new Error('full');
    return outcome.run.id;
  }
  const log = (text: string): LogLine => ({ time: '2026-11-25T10:00:00.000Z', stream: 'stdout', text });

  it('fsyncs run.json before renaming it into place and its directory after, as a release record', async () => {
    const dir = tempDir();
    const trace = traceFileSystem();
    try {
      const store = await openStore(dir);
      const id = await submit(store);
      const runDir = join(dir, 'runs', id);
      expectDurableReplace(trace.events, join(runDir, 'run.json'));
      trace.events.length = 0;
      await store.claim('a', 30_000);
      expectDurableReplace(trace.events, join(runDir, 'run.json'));

      trace.events.length = 0;
      const releases = new FileReleaseStore(join(dir, 'home'));
      await releases.create(makeRelease('shop', 'dev', 1));
      await releases.update({ ...makeRelease('shop', 'dev', 1), phase: 'failed' });
      expectDurableReplace(trace.events, releases.fileOf('shop', 'dev', 1));
    } finally {
      trace.restore();
    }
  });

  it('claims a run only once its submission is written: a claim racing the submit never loses its feed', async () => {
    // A server claims as soon as a run finishes: a run submitted at that moment was claimed before its directory
    // existed, its claim failed, and it stayed `running` with no feed but its `queued` line (its events never came).
    const store = await openStore(tempDir());
    const submitted = store.submit(
      { type: 'apply', project: 'shop', stack: 'dev', createdBy: 'ci', options: {} },
      { maxQueuedPerStack: 100, maxQueuedTotal: 100 },
    );
    const early = await store.claim('a', 30_000);
    const outcome = await submitted;
    if (outcome.kind === 'full') throw new Error('full');
    const id = outcome.run.id;
    const claimed = early ?? (await store.claim('a', 30_000));
    expect(claimed?.id).toBe(id);
    const feed = await store.readFeed(id, 0, 10);
    expect(feed.map((e) => [e.seq, e.item.kind === 'status' ? e.item.data.status : e.item.kind])).toEqual([
      [1, 'queued'],
      [2, 'running'],
    ]);
    expect(await store.appendFeed(id, [{ kind: 'log', data: log('a step') }], 'a')).toBe(3);
    expect(await store.finish(id, 'a', { status: 'succeeded' })).toBe(true);
    expect((await store.get(id))?.status).toBe('succeeded');
  });

  it('starts and lists from its index: the run.json of finished runs is not read', async () => {
    const dir = tempDir();
    const first = await openStore(dir);
    const finished: string[] = [];
    for (let n = 0; n < 40; n++) {
      const id = await submit(first, `s${n % 4}`);
      await first.claim('a', 30_000);
      await first.finish(id, 'a', { status: 'succeeded' });
      finished.push(id);
    }
    const queued = await submit(first, 's0');
    await closeAll();
    // The finished runs' records are gone: only the index knows them now.
    for (const id of finished) unlinkSync(join(dir, 'runs', id, 'run.json'));
    const again = await openStore(dir, 'b');
    const page = await again.list({ limit: 100 });
    expect(page.runs.map((r) => r.id)).toEqual([queued, ...[...finished].reverse()]);
    expect(page.runs.slice(1).every((r) => r.status === 'succeeded')).toBe(true);
    expect(await again.get(finished[5]!)).toEqual(page.runs.find((r) => r.id === finished[5]));
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const next = await again.list({ limit: 7, stack: 's1', ...(cursor ? { cursor } : {}) });
      paged.push(...next.runs.map((r) => r.id));
      cursor = next.nextCursor ?? undefined;
    } while (cursor);
    expect(paged).toEqual(finished.filter((_, n) => n % 4 === 1).reverse());
    // The queued run was taken up from its directory, and numbering goes on after the highest.
    expect((await again.claim('b', 30_000))?.id).toBe(queued);
    const next = await submit(again);
    expect((await again.get(next))?.seq).toBe(42);
  });

  it('rebuilds a missing or damaged index from the run directories', async () => {
    const dir = tempDir();
    const first = await openStore(dir);
    const ids = [await submit(first), await submit(first, 'prod')];
    await first.claim('a', 30_000);
    await first.finish(ids[0]!, 'a', { status: 'failed', error: 'boom' });
    await closeAll();
    const index = join(dir, 'runs', 'index.ndjson');
    for (const damage of [
      () => unlinkSync(index),
      () => writeFileSync(index, `not json\n${readFileSync(index, 'utf8')}`),
    ]) {
      damage();
      const again = await openStore(dir);
      expect((await again.list({ limit: 10 })).runs.map((r) => [r.id, r.status])).toEqual([
        [ids[1], 'queued'],
        [ids[0], 'failed'],
      ]);
      await closeAll();
      expect(readFileSync(index, 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
    }
  });

  it('after a kill between the feed and the log appends, the log is rebuilt from the feed: both agree', async () => {
    const dir = tempDir();
    const first = await openStore(dir);
    const id = await submit(first);
    await first.claim('a', 30_000);
    await first.appendFeed(id, [{ kind: 'log', data: log('one') }]);
    await closeAll();
    // As a kill -9 leaves it: the feed has a line the log has not got yet, and a torn line after it.
    const runDir = join(dir, 'runs', id);
    appendFileSync(join(runDir, 'feed.ndjson'), `${JSON.stringify({ seq: 4, kind: 'log', data: log('two') })}\n`);
    appendFileSync(join(runDir, 'feed.ndjson'), '{"seq":5,"kind":"log","data":{"ti');
    const again = await openStore(dir, 'b');
    const fromFeed = (await again.readFeed(id, 0, 100)).filter((e) => e.item.kind === 'log').map((e) => e.item.data);
    expect(fromFeed).toEqual([log('one'), log('two')]);
    expect((await again.readLog(id, 0, 1 << 20)).lines).toEqual(fromFeed);
  });
});

/** What `fs/promises` did (opened handles' syncs, renames, links), through the real calls. */
function traceFileSystem(): { events: string[]; restore: () => void } {
  const events: string[] = [];
  const fsp = fs.promises as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const saved = { open: fsp.open!, rename: fsp.rename!, link: fsp.link! };
  const paths = new WeakMap<object, string>();
  let proto: { sync: () => Promise<void> } | undefined;
  let savedSync: (() => Promise<void>) | undefined;
  fsp.open = async (...args: unknown[]) => {
    const handle = (await saved.open(...args)) as { sync: () => Promise<void> };
    paths.set(handle, String(args[0]));
    if (!proto) {
      proto = Object.getPrototypeOf(handle) as { sync: () => Promise<void> };
      savedSync = proto.sync;
      proto.sync = function (this: object) {
        events.push(`sync ${paths.get(this) ?? '?'}`);
        return savedSync!.call(this);
      };
    }
    return handle;
  };
  fsp.rename = (...args: unknown[]) => {
    events.push(`rename ${String(args[0])} ${String(args[1])}`);
    return saved.rename(...args);
  };
  fsp.link = (...args: unknown[]) => {
    events.push(`link ${String(args[0])} ${String(args[1])}`);
    return saved.link(...args);
  };
  syncBuiltinESMExports();
  return {
    events,
    restore: () => {
      Object.assign(fsp, saved);
      if (proto && savedSync) proto.sync = savedSync;
      syncBuiltinESMExports();
    },
  };
}

/** `events` show `target` replaced by a temp file synced first, then renamed, then its directory synced. */
function expectDurableReplace(events: readonly string[], target: string): void {
  const rename = events.findIndex((e) => e.startsWith('rename ') && e.endsWith(` ${target}`));
  expect(rename, `no rename onto ${target} in ${events.join(', ')}`).toBeGreaterThanOrEqual(0);
  const temp = events[rename]!.split(' ')[1]!;
  const synced = events.indexOf(`sync ${temp}`);
  expect(synced, `the temp file is synced before the rename: ${events.join(', ')}`).toBeGreaterThanOrEqual(0);
  expect(synced).toBeLessThan(rename);
  const dirSynced = events.indexOf(`sync ${dirname(target)}`, rename);
  expect(dirSynced, `the directory is synced after the rename: ${events.join(', ')}`).toBeGreaterThan(rename);
}
