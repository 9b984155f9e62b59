/**
 * These tests send real signals to the test process itself: with the handlers installed, SIGINT no longer ends
 * it, and the forced exit goes through an injected function instead of process.exit.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { InterruptedError, onInterrupt } from '../../../src/process/interrupt.js';
import { spawnStep } from '../../../src/process/spawn.js';
import { markersKilledAfterEach } from '../../support/processes.js';
import { FIXTURE_PATH, survivors, waitForProcess } from './processes.js';

const dir = mkdtempSync(path.join(tmpdir(), 'kapps-interrupt-'));
const env = { PATH: FIXTURE_PATH };
const newMarker = markersKilledAfterEach();
const cleanups: (() => void)[] = [];

afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves once the process has received `signal` and our handlers have run. */
function sendToSelf(signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    process.once(signal, () => setImmediate(resolve));
    process.kill(process.pid, signal);
  });
}

describe('onInterrupt', () => {
  it('aborts the run on the first SIGINT, so the running step is stopped and reports cancelled', async () => {
    const marker = newMarker();
    const controller = new AbortController();
    const exits: number[] = [];
    const firsts: string[] = [];
    cleanups.push(onInterrupt(controller, { exit: (code) => exits.push(code), onFirstSignal: (s) => firsts.push(s) }));

    const run = spawnStep({
      command: 'kapps-fake',
      args: ['--fork-sleep', '60', marker, '--hang'],
      cwd: dir,
      env,
      signal: controller.signal,
    });
    await waitForProcess(marker);
    await sendToSelf('SIGINT');

    const result = await run;
    expect(result).toMatchObject({ cancelled: true, signal: 'SIGTERM' });
    expect(controller.signal.reason).toBeInstanceOf(InterruptedError);
    expect((controller.signal.reason as InterruptedError).signal).toBe('SIGINT');
    expect((controller.signal.reason as InterruptedError).message).toBe('Interrupted by SIGINT');
    expect(firsts).toEqual(['SIGINT']);
    expect(exits).toEqual([]);
    expect(await survivors(marker)).toEqual([]);
  });

  it('on a second signal, SIGKILLs every live process group and exits 130 at once', async () => {
    const marker = newMarker();
    const controller = new AbortController();
    const exits: number[] = [];
    cleanups.push(onInterrupt(controller, { exit: (code) => exits.push(code) }));

    // The step ignores SIGTERM and has a long grace period: only the forced kill can stop it quickly.
    const ready = deferred();
    const run = spawnStep({
      command: 'kapps-fake',
      args: ['--ignore-term', '--fork-sleep', '60', marker, '--stdout', 'ready', '--hang'],
      cwd: dir,
      env,
      signal: controller.signal,
      killGraceMs: 600_000,
      onOutput: (_stream, chunk) => chunk.includes('ready') && ready.resolve(),
    });
    await ready.promise;
    await sendToSelf('SIGINT');
    expect(controller.signal.aborted).toBe(true);
    expect(exits).toEqual([]);

    await sendToSelf('SIGTERM');
    expect(exits).toEqual([130]);
    const result = await run;
    expect(result).toMatchObject({ cancelled: true, signal: 'SIGKILL' });
    expect(await survivors(marker)).toEqual([]);
  });

  it('removes its handlers when disposed', () => {
    const before = [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')];
    const dispose = onInterrupt(new AbortController(), { exit: () => undefined });
    expect([process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')]).toEqual([
      before[0]! + 1,
      before[1]! + 1,
    ]);
    dispose();
    expect([process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')]).toEqual(before);
  });
});
