import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileRunStore } from '../../../src/server/queue/file-run-store.js';
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
