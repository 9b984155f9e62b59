/**
 * A file run store whose server is killed -9 while a run prints: after the restart, the run's log (`GET /logs`)
 * and its feed (the event stream) hold the same lines. The writer is a real process running the built store
 * (dist/server/queue), killed at moments of its appends.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { FileRunStore } from '../../../src/server/queue/file-run-store.js';

const STORE = fileURLToPath(new URL('../../../dist/server/queue/file-run-store.js', import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The writer: submits and claims a run, then appends batches of log lines and events until killed. */
const WRITER = `
const { FileRunStore } = await import(process.argv[1]);
const store = new FileRunStore(process.argv[2]);
await store.open('writer');
const outcome = await store.submit({ type: 'apply', project: 'shop', stack: 'dev', createdBy: 'ci', options: {} },
  { maxQueuedPerStack: 5, maxQueuedTotal: 5 });
await store.claim('writer', 600000);
for (let n = 0; ; n++) {
  const line = (k) => ({ kind: 'log', data: { time: new Date().toISOString(), stream: 'stdout', kapp: 'm:k', text: 'line ' + n + '.' + k } });
  const batch = [line(0), { kind: 'run-event', data: { type: 'kapp-started', time: 'x', kapp: 'm:k', role: 'selected' } }, line(1)];
  // Not awaited one by one: several appends in flight, as a run printing fast has them.
  void store.appendFeed(outcome.run.id, batch);
  if (n % 4 === 3) await store.appendFeed(outcome.run.id, [line(2)]);
  if (n === 40) process.stdout.write(outcome.run.id + '\\n');
}
`;

async function killedWhileWriting(dir: string, afterMs: number): Promise<string> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', WRITER, STORE, dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const id = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    child.on('exit', (code) => reject(new Error(`the writer exited (${code}) before it wrote`)));
  });
  await new Promise((resolve) => setTimeout(resolve, afterMs));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  return id;
}

describe('file run store killed -9 mid-append', () => {
  it('keeps the log and the feed of the run agreeing after the restart', async () => {
    for (let round = 0; round < 8; round++) {
      const dir = mkdtempSync(join(tmpdir(), 'kapps-kill-'));
      dirs.push(dir);
      const id = await killedWhileWriting(dir, round * 7);
      const store = new FileRunStore(dir);
      await store.open('restarted');
      try {
        const feed = await store.readFeed(id, 0, 1_000_000);
        expect(feed.map((e) => e.seq)).toEqual(feed.map((_, n) => n + 1));
        const fromFeed = feed.filter((e) => e.item.kind === 'log').map((e) => e.item.data);
        expect(fromFeed.length).toBeGreaterThan(40);
        const fromLog = [];
        for (let offset = 0; ;) {
          const chunk = await store.readLog(id, offset, 64 * 1024);
          if (chunk.nextOffset === offset) break;
          fromLog.push(...chunk.lines);
          offset = chunk.nextOffset;
        }
        expect(fromLog).toEqual(fromFeed);
        // The run left running by the killed server is errored at start-up's reap, after its last line.
        expect((await store.reapExpired('its server stopped')).map((r) => r.id)).toEqual([id]);
      } finally {
        await store.close();
      }
    }
  });
});
