/**
 * The lock and the records under real processes: 20 separate node processes racing to begin a release, and a
 * writer killed with SIGKILL at seeded random moments. The processes import the built modules (dist/release).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ReleaseLockedError } from '../../../src/release/errors.js';
import { beginRelease, unlockRelease } from '../../../src/release/recorder.js';
import { FileReleaseStore } from '../../../src/release/file-store.js';
import type { ReleaseStore } from '../../../src/release/store-types.js';
import { isRunningPhase } from '../../../src/release/types.js';
import { backends, cleanupTempDirs, stackSpec, uniqueProject } from './helpers.js';

const DIST = fileURLToPath(new URL('../../../dist', import.meta.url));
const BEGIN = fileURLToPath(new URL('./fixtures/begin-release.mjs', import.meta.url));
const CRASH = fileURLToPath(new URL('./fixtures/crash-writer.mjs', import.meta.url));

afterAll(() => cleanupTempDirs());

interface Outcome {
  pid: number;
  won?: number;
  refused?: string;
  message?: string;
}

/** Spawn a node script; collect stdout lines; `onLine` sees each line as it comes. */
function start(script: string, args: string[], onLine: (line: string) => void = () => undefined) {
  const child = spawn(process.execPath, [script, DIST, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let stderr = '';
  let buffer = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      lines.push(line);
      onLine(line);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, lines, exited, stderr: () => stderr };
}

/** mulberry32, so a failing run can be replayed from its seed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function revisions(store: ReleaseStore, project: string, stack: string): Promise<number[]> {
  return (await store.list(project, stack)).map((s) => s.revision).reverse();
}

describe.each(backends)('releases under concurrent and crashing processes ($name backend)', (backend) => {
  it('lets exactly one of 20 processes begin a release; the 19 others are refused with the owner named', async () => {
    const location = backend.location();
    const store = backend.open(location);
    const project = uniqueProject('race');
    try {
      for (let round = 1; round <= 3; round++) {
        let ready = 0;
        let go: () => void = () => undefined;
        const allReady = new Promise<void>((resolve) => (go = resolve));
        const contenders = Array.from({ length: 20 }, () =>
          start(BEGIN, [location, project, 'dev'], (line) => {
            if (line === 'ready' && ++ready === 20) go();
          }),
        );
        await allReady;
        for (const c of contenders) c.child.stdin?.write('go\n');
        const exits = await Promise.all(contenders.map((c) => c.exited));
        expect(exits.map((e) => e.code)).toEqual(Array(20).fill(0));
        const outcomes = contenders.map((c) => JSON.parse(c.lines.at(-1) ?? '{}') as Outcome);

        const winners = outcomes.filter((o) => o.won !== undefined);
        expect(winners).toHaveLength(1);
        const winner = winners[0]!;
        expect(winner.won).toBe(round);
        const refused = outcomes.filter((o) => o.refused !== undefined);
        expect(refused).toHaveLength(19);
        for (const o of refused) {
          expect(o.refused).toBe('ReleaseLockedError');
          expect(o.message).toContain(`${project}/dev is locked by release ${round} (install, applying)`);
          expect(o.message).toContain(`(pid ${winner.pid})`);
          expect(o.message).toContain(`@${hostname()}`);
        }
        const stored = await store.latest(project, 'dev');
        expect(stored?.owner.pid).toBe(winner.pid);
        expect(stored?.phase).toBe('applying');
        expect(await revisions(store, project, 'dev')).toEqual(Array.from({ length: round }, (_, i) => i + 1));
        // The winner exited without finishing: its lock stays until unlocked.
        expect((await unlockRelease({ store, project, stack: 'dev', by: 'test@here' })).unlocked).toBe(true);
      }
    } finally {
      await store.close();
    }
  }, 180_000);

  it('keeps every record readable when a writer is killed -9 at random moments; the dead owner can be unlocked', async () => {
    const location = backend.location();
    const store = backend.open(location);
    const project = uniqueProject('crash');
    const random = seeded(20_260_101);
    let lockedRounds = 0;
    try {
      for (let round = 0; round < 8; round++) {
        let began: () => void = () => undefined;
        const hasBegun = new Promise<void>((resolve) => (began = resolve));
        const writer: { child: ChildProcess; exited: Promise<unknown>; stderr: () => string } = start(
          CRASH,
          [location, project, 'dev', String(Math.floor(random() * 2 ** 31))],
          (line) => {
            if (line.startsWith('began ')) began();
          },
        );
        await Promise.race([hasBegun, writer.exited]);
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.floor(random() * 400)));
        writer.child.kill('SIGKILL');
        const exit = (await writer.exited) as { signal: string | null };
        expect(exit.signal, writer.stderr()).toBe('SIGKILL');

        // Every record parses (list and get read them all), and the revisions have no gap.
        const summaries = await store.list(project, 'dev');
        const numbers = summaries.map((s) => s.revision).reverse();
        expect(numbers).toEqual(Array.from({ length: numbers.length }, (_, i) => i + 1));
        for (const n of numbers) expect((await store.get(project, 'dev', n))?.revision).toBe(n);
        if (store instanceof FileReleaseStore) {
          const names = readdirSync(store.directoryOf(project, 'dev'));
          expect(
            // A writer killed while saving may leave a temp file, or its record's lock file (removed by the next writer);
            // one killed mid-run leaves its release's journal (folded by the unlock).
            names.filter(
              (name) =>
                !/^([1-9]\d*\.yaml|[1-9]\d*\.journal\.ndjson|\.[1-9]\d*\.yaml\.\d+\.[0-9a-f]+\.tmp|\.[1-9]\d*\.yaml\.lock)$/.test(
                  name,
                ),
            ),
          ).toEqual([]);
        }

        const latest = await store.latest(project, 'dev');
        const begin = () =>
          beginRelease({
            store,
            project,
            stack: 'dev',
            operation: 'install',
            spec: stackSpec([]),
            command: ['test'],
            selectors: { include: [], exclude: [] },
            kappsVersion: 'test',
          });
        if (latest && isRunningPhase(latest.phase)) {
          lockedRounds++;
          const error = await begin().catch((e: unknown) => e);
          expect(error).toBeInstanceOf(ReleaseLockedError);
          expect((error as ReleaseLockedError).looksDead).toBe(true);
          expect((error as Error).message).toContain(
            `the owner looks dead: process ${writer.child.pid} is not running on ${hostname()}`,
          );
          expect((await unlockRelease({ store, project, stack: 'dev', by: 'test@here' })).unlocked).toBe(true);
        }
        const next = await begin();
        expect(next.revision).toBe((latest?.revision ?? 0) + 1);
        await next.finish('succeeded');
      }
      // Most kills land inside an open release (it writes far more often than it finishes).
      expect(lockedRounds).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  }, 180_000);
});
