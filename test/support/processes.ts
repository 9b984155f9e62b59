/**
 * Processes in tests: which ones are alive (read from /proc, the way `pgrep -f` finds them, without pgrep), waiting
 * for them, and killing what a test's steps left behind. A test gives its step processes a unique marker in their
 * command line (`uniqueMarker()`), then checks `survivors(marker)`; `markersKilledAfterEach()` makes sure nothing
 * carrying a marker outlives the test, whether it passed or failed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { afterEach } from 'vitest';
import { sleep, waitFor } from './wait.js';

/** A string unlikely to appear in any other process's command line. */
export function uniqueMarker(prefix = 'kapps-test'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

/** A `sleep` duration that doubles as a marker: `sleep 60.<digits>` (GNU sleep takes fractions). */
export function markedSleepSeconds(): string {
  return `60.${randomBytes(4).readUInt32BE(0)}`;
}

/** The state letter of process `pid` (`R`, `S`, `Z` for a zombie…), or undefined when there is no such process. */
function processState(pid: number | string): string | undefined {
  try {
    // The state is the field after the parenthesised command name.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2);
  } catch {
    return undefined;
  }
}

/** Whether process `pid` runs (a zombie, exited but not yet reaped by its parent, does not count). */
export function isRunning(pid: number): boolean {
  const state = processState(pid);
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** Pids of live (not zombie) processes whose command line contains `marker`, this process excluded. */
export function processesMatching(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      continue; // it ended while we looked
    }
    if (cmdline.includes(marker) && isRunning(Number(entry))) found.push(Number(entry));
  }
  return found;
}

/**
 * Live processes matching `marker`, after allowing up to `graceMs` for signalled ones to finish dying (the kernel
 * delivers a kill asynchronously). Returns the empty list as soon as nothing matches.
 */
export async function survivors(marker: string, graceMs = 2000): Promise<number[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const found = processesMatching(marker);
    if (found.length === 0 || Date.now() > deadline) return found;
    await sleep(20);
  }
}

/** Wait until some live process's command line contains `marker`; returns their pids. */
export async function waitForProcess(marker: string, timeoutMs = 10_000): Promise<number[]> {
  let found: number[] = [];
  await waitFor(
    `a process with ${marker} in its command line`,
    () => (found = processesMatching(marker)).length > 0,
    timeoutMs,
  );
  return found;
}

/** SIGKILL, once, every live process matching `marker` and its process group (if it leads one). Returns how many. */
export function killMatching(marker: string): number {
  const pids = processesMatching(marker);
  for (const pid of pids) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // not a group leader, or already gone
      }
    }
  }
  return pids.length;
}

/**
 * Kill the processes a test left behind: those whose command line holds `marker`, each with its process group,
 * repeating until none is left (a dying parent may start one more). Returns how many it killed.
 */
export async function killLeftovers(marker: string): Promise<number> {
  let killed = 0;
  for (let round = 0; round < 50; round++) {
    const n = killMatching(marker);
    if (n === 0) return killed;
    killed += n;
    await sleep(50);
  }
  throw new Error(`processes with ${marker} keep coming back: ${processesMatching(marker).join(', ')}`);
}

/**
 * Call once at the top of a test file: returns a maker of unique markers, and after each test kills whatever
 * still carries a marker made (or given to it, e.g. `sleep 60.123`) during that test.
 *
 * ```ts
 * const newMarker = markersKilledAfterEach();
 * it('…', async () => { const marker = newMarker(); … expect(await survivors(marker)).toEqual([]); });
 * ```
 */
export function markersKilledAfterEach(prefix?: string): (marker?: string) => string {
  const markers: string[] = [];
  afterEach(async () => {
    for (const marker of markers.splice(0)) await killLeftovers(marker);
  });
  return (marker = uniqueMarker(prefix)) => {
    markers.push(marker);
    return marker;
  };
}
