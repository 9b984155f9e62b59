/**
 * Test helpers for process trees: where the fake commands are, and which processes are still alive.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';

/** The folder of fake commands (`kapps-fake`). */
export const FIXTURE_BIN = fileURLToPath(new URL('../../fixtures/bin', import.meta.url));

/** A PATH with the fake commands first, then the usual system directories. */
export const FIXTURE_PATH = `${FIXTURE_BIN}:/usr/local/bin:/usr/bin:/bin`;

/** A string unlikely to appear in any other process's command line. */
export function uniqueMarker(prefix = 'kapps-test'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

/** A `sleep` duration that doubles as a marker: `sleep 60.<digits>` (GNU sleep takes fractions). */
export function markedSleepSeconds(): string {
  return `60.${randomBytes(4).readUInt32BE(0)}`;
}

/** Pids of live (not zombie) processes whose command line contains `marker`, this process excluded. */
export function processesMatching(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (!cmdline.includes(marker)) continue;
      // The state is the field after the parenthesised command name: Z = zombie, which counts as gone.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && state !== 'X') found.push(pid);
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/**
 * Survivors matching `marker`, after allowing up to `graceMs` for signalled processes to finish dying (the kernel
 * delivers a kill asynchronously). Returns the empty list as soon as nothing matches.
 */
export async function survivors(marker: string, graceMs = 2000): Promise<number[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const found = processesMatching(marker);
    if (found.length === 0 || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits until some live process's command line contains `marker` (fails after `timeoutMs`). */
export async function waitForProcess(marker: string, timeoutMs = 10_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = processesMatching(marker);
    if (found.length > 0) return found;
    if (Date.now() > deadline) throw new Error(`no process with ${marker} in its command line appeared`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Kills leftovers of a failed test so they do not outlive the test run. */
export function killMatching(marker: string): void {
  for (const pid of processesMatching(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}
