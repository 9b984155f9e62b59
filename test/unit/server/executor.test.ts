/**
 * The executor with a stand-in engine: a crash inside a run ends that run failed with the stack in its log, and the
 * next runs go on; cancel aborts a running run; stop waits for the grace, then cancels.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Executor, type RunEngine } from '../../../src/server/runs/executor.js';
import { FileRunStore } from '../../../src/server/queue/file-run-store.js';
import type { StoredRun } from '../../../src/server/queue/run-store.js';

const LIMITS = { maxQueuedPerStack: 10, maxQueuedTotal: 10 };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup(engine: RunEngine, options: { maxRuns?: number } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'kapps-exec-'));
  const store = new FileRunStore(dir);
  await store.open('i1');
  const said: string[] = [];
  const executor = new Executor({
    store,
    engine,
    instance: 'i1',
    maxRuns: options.maxRuns ?? 2,
    leaseMs: 30_000,
    say: (t) => said.push(t),
    flushMs: 5,
  });
  cleanups.push(async () => {
    await executor.stop(0);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await executor.start();
  const submit = async (stack = 'dev'): Promise<string> => {
    const o = await store.submit({ type: 'apply', project: 'shop', stack, createdBy: 'ci', options: {} }, LIMITS);
    if (o.kind === 'full') throw new Error('full');
    return o.run.id;
  };
  const finished = async (id: string): Promise<StoredRun> => {
    for (let i = 0; i < 500; i++) {
      const run = await store.get(id);
      if (run && !['queued', 'running'].includes(run.status)) return run;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`run ${id} did not finish`);
  };
  return { store, executor, submit, finished, said };
}

describe('executor', () => {
  it('ends a run whose engine throws as failed, its stack in the log, and goes on with the next', async () => {
    let calls = 0;
    const { store, submit, finished, said } = await setup({
      execute: (_run, io) => {
        calls++;
        if (calls === 1) {
          io.message('about to break');
          return Promise.reject(new TypeError('Cannot read properties of undefined (reading "x")\nsecond line'));
        }
        return Promise.resolve({ status: 'succeeded', result: { contentType: 'application/json', body: '{}' } });
      },
    });
    const bad = await submit();
    const good = await submit();
    const broken = await finished(bad);
    expect(broken.status).toBe('failed');
    expect(broken.error).toBe('internal error: Cannot read properties of undefined (reading "x")');
    const log = await store.readLog(bad, 0, 1 << 20);
    const text = log.lines.map((l) => l.text).join('\n');
    expect(text).toContain('about to break');
    expect(text).toContain('kapps: the run stopped on an internal error:');
    expect(text).toMatch(/TypeError: Cannot read properties/);
    expect(text).toMatch(/\n\s+at /);
    expect(said.join('\n')).toContain(`run ${bad} failed on an internal error`);
    expect((await finished(good)).status).toBe('succeeded');
    expect(await store.getResult(good)).toEqual({ contentType: 'application/json', body: '{}' });
  });

  it('aborts a running run on cancel and records it cancelled', async () => {
    const { store, submit, finished } = await setup({
      execute: (_run, io) =>
        new Promise((resolve) => {
          io.signal.addEventListener('abort', () => resolve({ status: 'cancelled' }));
        }),
    });
    const id = await submit();
    for (let i = 0; i < 200 && (await store.get(id))?.status !== 'running'; i++)
      await new Promise((r) => setTimeout(r, 5));
    await store.requestCancel(id, 'ci');
    const run = await finished(id);
    expect(run.status).toBe('cancelled');
    expect(run.error).toBe('cancelled on request');
  });

  it('on stop, lets runs finish within the grace, then cancels the rest; a run that succeeds after an abort is cancelled', async () => {
    const { store, executor, submit, finished } = await setup({
      execute: (run, io) =>
        new Promise((resolve) => {
          if (run.stack === 'quick') setTimeout(() => resolve({ status: 'succeeded' }), 30);
          // A run that ignores the abort and says it succeeded: still recorded as cancelled.
          else io.signal.addEventListener('abort', () => setTimeout(() => resolve({ status: 'succeeded' }), 10));
        }),
    });
    const quick = await submit('quick');
    const slow = await submit('slow');
    for (let i = 0; i < 200 && (await store.get(slow))?.status !== 'running'; i++)
      await new Promise((r) => setTimeout(r, 5));
    await executor.stop(200);
    expect((await finished(quick)).status).toBe('succeeded');
    const stopped = await finished(slow);
    expect(stopped.status).toBe('cancelled');
    expect(stopped.error).toBe('cancelled: the server stopped');
  });
});
