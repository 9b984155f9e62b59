/**
 * The walker driving real processes (kapps-fake), with the order read back from the fake's trace file.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnStep } from '../../../src/process/spawn.js';
import { walkDag, type NodeResult, type WalkNode } from '../../../src/execute/walk.js';
import { markersKilledAfterEach } from '../../support/processes.js';
import { waitFor } from '../../support/wait.js';
import { FIXTURE_PATH, survivors } from './processes.js';

const root = mkdtempSync(path.join(tmpdir(), 'kapps-walk-'));
const newMarker = markersKilledAfterEach();
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Run {
  readonly statuses: Record<string, NodeResult>;
  /** `start a`, `end a`, … in the order the fakes wrote them. */
  readonly trace: string[];
}

let counter = 0;

/** Walks `nodes`, each running `kapps-fake --tag <id> <args[id]…>` with a shared trace file. */
async function walkFakes(
  nodes: WalkNode[],
  args: (dir: string) => Record<string, string[]>,
  options: { concurrency: number; direction?: 'down' | 'up'; keepGoing?: boolean; signal?: AbortSignal },
): Promise<Run> {
  const dir = path.join(root, String(counter++));
  const trace = path.join(dir, 'trace');
  const argsById = args(dir);
  mkdirSync(dir);
  const result = await walkDag({
    nodes,
    direction: options.direction ?? 'down',
    concurrency: options.concurrency,
    keepGoing: options.keepGoing ?? false,
    signal: options.signal ?? new AbortController().signal,
    run: async (id, signal) => {
      const r = await spawnStep({
        command: 'kapps-fake',
        args: ['--tag', id, ...(argsById[id] ?? [])],
        cwd: dir,
        env: { PATH: FIXTURE_PATH, FAKE_TRACE: trace },
        signal,
      });
      if (r.cancelled) return 'cancelled';
      if (r.spawnError) return { status: 'failed', reason: r.spawnError };
      if (r.exitCode !== 0) return { status: 'failed', reason: `exit code ${r.exitCode ?? r.signal}` };
      return 'succeeded';
    },
  });
  const lines = existsSync(trace) ? readFileSync(trace, 'utf8').trim().split('\n') : [];
  // Each line: <ns> <pid> <event> --tag <id> …
  const events = lines.map((line) => {
    const [, , event, , id] = line.split(' ');
    return `${event} ${id}`;
  });
  return { statuses: Object.fromEntries(result.statuses), trace: events };
}

const graph = (spec: Record<string, string[]>): WalkNode[] => Object.entries(spec).map(([id, deps]) => ({ id, deps }));

describe('walkDag with real processes', () => {
  it('runs independent steps at the same time, and a dependent only after both', async () => {
    // a can only end after b has started (it waits for the file b writes): proof that they overlapped.
    const { trace, statuses } = await walkFakes(
      graph({ a: [], b: [], c: ['a', 'b'] }),
      (dir) => ({
        a: ['--wait-file', path.join(dir, 'b-started')],
        b: ['--write-file', path.join(dir, 'b-started'), 'x'],
      }),
      { concurrency: 2 },
    );
    expect(trace.indexOf('start b')).toBeLessThan(trace.indexOf('end a'));
    expect(trace.indexOf('start c')).toBeGreaterThan(trace.indexOf('end a'));
    expect(trace.indexOf('start c')).toBeGreaterThan(trace.indexOf('end b'));
    expect(Object.values(statuses).map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  });

  it('with one worker, runs ready steps one by one in manifest order', async () => {
    const { trace } = await walkFakes(graph({ zeta: [], alpha: [], mid: ['zeta'] }), () => ({}), {
      concurrency: 1,
    });
    expect(trace).toEqual(['start zeta', 'end zeta', 'start alpha', 'end alpha', 'start mid', 'end mid']);
  });

  it('walks up: the dependent is deleted before what it depends on', async () => {
    const { trace } = await walkFakes(graph({ db: [], api: ['db'], web: ['api'] }), () => ({}), {
      concurrency: 4,
      direction: 'up',
    });
    expect(trace).toEqual(['start web', 'end web', 'start api', 'end api', 'start db', 'end db']);
  });

  it('stops after a step exits non-zero, and skips what depends on it', async () => {
    const { trace, statuses } = await walkFakes(
      graph({ a: [], b: ['a'], c: [] }),
      () => ({ a: ['--stderr', 'broken', '--exit', '3'] }),
      { concurrency: 1 },
    );
    expect(trace).toEqual(['start a', 'end a']);
    expect(statuses).toEqual({
      a: { status: 'failed', reason: 'exit code 3' },
      b: { status: 'skipped', reason: 'dependency a failed' },
      c: { status: 'skipped', reason: 'not started: the run stopped after a failed' },
    });
  });

  it('on cancellation, kills the running steps’ process trees and starts nothing more', async () => {
    const marker = newMarker();
    const controller = new AbortController();
    let trace = '';
    const run = walkFakes(
      graph({ a: [], b: [], c: [] }),
      (dir) => {
        trace = path.join(dir, 'trace');
        const hang = ['--fork-sleep', '60', marker, '--hang'];
        return { a: hang, b: hang, c: hang };
      },
      { concurrency: 2, signal: controller.signal },
    );
    // Cancel once both running steps have started (two `start` lines in the trace).
    await waitFor(
      'both running steps to start',
      () => existsSync(trace) && readFileSync(trace, 'utf8').trim().split('\n').length === 2,
    );
    controller.abort();
    const { statuses } = await run;
    expect(statuses).toEqual({
      a: { status: 'cancelled' },
      b: { status: 'cancelled' },
      c: { status: 'skipped', reason: 'not started: the run was cancelled' },
    });
    expect(await survivors(marker)).toEqual([]);
  });
});
