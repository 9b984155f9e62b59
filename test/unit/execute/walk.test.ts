import { describe, expect, it } from 'vitest';
import {
  walkDag,
  type NodeResult,
  type NodeOutcome,
  type WalkNode,
  type WalkOptions,
} from '../../../src/execute/walk.js';
import { InternalError } from '../../../src/diagnostics/errors.js';

/** Nodes in the object's key order (= manifest order), each with its dependencies. */
function graph(spec: Record<string, string[]>): WalkNode[] {
  return Object.entries(spec).map(([id, deps]) => ({ id, deps }));
}

/** A promise with its resolve function. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

/**
 * Walks with a fake `run` that records `start:id` / `end:id` and returns the outcome given for the node
 * (default `succeeded`) after an immediate tick.
 */
async function walkRecorded(
  nodes: WalkNode[],
  options: Partial<WalkOptions> & { outcomes?: Record<string, NodeOutcome> } = {},
): Promise<{ trace: string[]; statuses: Record<string, NodeResult> }> {
  const trace: string[] = [];
  const { outcomes = {}, ...rest } = options;
  const result = await walkDag({
    nodes,
    direction: 'down',
    concurrency: 1,
    keepGoing: false,
    signal: new AbortController().signal,
    run: async (id) => {
      trace.push(`start:${id}`);
      await tick();
      trace.push(`end:${id}`);
      return outcomes[id] ?? 'succeeded';
    },
    ...rest,
  });
  return { trace, statuses: Object.fromEntries(result.statuses) };
}

const starts = (trace: string[]): string[] => trace.filter((t) => t.startsWith('start:')).map((t) => t.slice(6));

describe('walkDag: order', () => {
  it('runs dependents after their dependencies', async () => {
    //   a ──► b ──► d
    //   └───► c ──┘
    const { trace, statuses } = await walkRecorded(graph({ a: [], b: ['a'], c: ['a'], d: ['b', 'c'] }), {
      concurrency: 4,
    });
    const at = (e: string): number => trace.indexOf(e);
    expect(at('end:a')).toBeLessThan(at('start:b'));
    expect(at('end:a')).toBeLessThan(at('start:c'));
    expect(at('end:b')).toBeLessThan(at('start:d'));
    expect(at('end:c')).toBeLessThan(at('start:d'));
    expect(Object.values(statuses).every((s) => s.status === 'succeeded')).toBe(true);
  });

  it('runs independent nodes in parallel: the second starts before the first finishes', async () => {
    const bStarted = deferred<void>();
    const trace: string[] = [];
    await walkDag({
      nodes: graph({ a: [], b: [] }),
      direction: 'down',
      concurrency: 2,
      keepGoing: false,
      signal: new AbortController().signal,
      run: async (id) => {
        trace.push(`start:${id}`);
        if (id === 'a')
          await bStarted.promise; // a can only finish once b has started
        else bStarted.resolve();
        trace.push(`end:${id}`);
        return 'succeeded';
      },
    });
    expect(trace.indexOf('start:b')).toBeLessThan(trace.indexOf('end:a'));
  });

  it('starts ready nodes in manifest order with concurrency 1', async () => {
    const { trace } = await walkRecorded(graph({ zeta: [], alpha: [], mid: [] }));
    expect(starts(trace)).toEqual(['zeta', 'alpha', 'mid']);
  });

  it('prefers a node that became ready later when it comes earlier in the manifest', async () => {
    // x waits for y; z is ready from the start but comes after x in the manifest.
    const { trace } = await walkRecorded(graph({ x: ['y'], y: [], z: [] }));
    expect(starts(trace)).toEqual(['y', 'x', 'z']);
  });

  it('walks up: dependents before their dependencies', async () => {
    //   db ◄── api ◄── web,  db ◄── cache
    const { trace } = await walkRecorded(graph({ db: [], cache: ['db'], api: ['db'], web: ['api'] }), {
      direction: 'up',
    });
    expect(starts(trace)).toEqual(['cache', 'web', 'api', 'db']);
    const at = (e: string): number => trace.indexOf(e);
    expect(at('end:web')).toBeLessThan(at('start:api'));
    expect(at('end:api')).toBeLessThan(at('start:db'));
    expect(at('end:cache')).toBeLessThan(at('start:db'));
  });

  it('never runs more than `concurrency` nodes at once, and does reach it', async () => {
    let running = 0;
    let peak = 0;
    const nodes = Array.from({ length: 12 }, (_, i) => ({ id: `n${i}`, deps: [] }));
    await walkDag({
      nodes,
      direction: 'down',
      concurrency: 3,
      keepGoing: false,
      signal: new AbortController().signal,
      run: async () => {
        peak = Math.max(peak, ++running);
        await tick();
        running--;
        return 'succeeded';
      },
    });
    expect(peak).toBe(3);
  });

  it('lets the dependents of a skipped node run, and keeps the reason it gave', async () => {
    const { trace, statuses } = await walkRecorded(graph({ a: [], b: ['a'] }), {
      outcomes: { a: { status: 'skipped', reason: 'conditions are false' } },
    });
    expect(starts(trace)).toEqual(['a', 'b']);
    expect(statuses).toEqual({
      a: { status: 'skipped', reason: 'conditions are false' },
      b: { status: 'succeeded' },
    });
  });
});

describe('walkDag: failures', () => {
  it('stops starting nodes after a failure and says why each node was skipped', async () => {
    const { trace, statuses } = await walkRecorded(graph({ a: [], b: ['a'], c: [], d: ['b'] }), {
      outcomes: { a: { status: 'failed', reason: 'exit code 3' } },
    });
    expect(starts(trace)).toEqual(['a']);
    expect(statuses).toEqual({
      a: { status: 'failed', reason: 'exit code 3' },
      b: { status: 'skipped', reason: 'dependency a failed' },
      c: { status: 'skipped', reason: 'not started: the run stopped after a failed' },
      d: { status: 'skipped', reason: 'dependency a failed' },
    });
  });

  it('lets running nodes finish after a failure', async () => {
    const release = deferred<void>();
    const result = await walkDag({
      nodes: graph({ a: [], b: [], c: [] }),
      direction: 'down',
      concurrency: 2,
      keepGoing: false,
      signal: new AbortController().signal,
      run: async (id) => {
        if (id === 'a') {
          release.resolve();
          return 'failed';
        }
        await release.promise;
        await tick();
        return 'succeeded';
      },
    });
    expect(Object.fromEntries(result.statuses)).toEqual({
      a: { status: 'failed' },
      b: { status: 'succeeded' },
      c: { status: 'skipped', reason: 'not started: the run stopped after a failed' },
    });
  });

  it('with keepGoing, runs every node that does not come after a failure', async () => {
    const { trace, statuses } = await walkRecorded(graph({ a: [], b: ['a'], c: [], d: ['c'], e: ['b', 'd'] }), {
      keepGoing: true,
      outcomes: { a: 'failed' },
    });
    expect(starts(trace)).toEqual(['a', 'c', 'd']);
    expect(statuses).toEqual({
      a: { status: 'failed' },
      b: { status: 'skipped', reason: 'dependency a failed' },
      c: { status: 'succeeded' },
      d: { status: 'succeeded' },
      e: { status: 'skipped', reason: 'dependency a failed' },
    });
  });

  it('names the nearest failed ancestor', async () => {
    //   r ──► f1 ✗ ──► m ──► x
    //         f2 ✗ ─────────┘
    const { statuses } = await walkRecorded(graph({ r: [], f1: ['r'], f2: [], m: ['f1'], x: ['m', 'f2'] }), {
      keepGoing: true,
      outcomes: { f1: 'failed', f2: 'failed' },
    });
    expect(statuses.m).toEqual({ status: 'skipped', reason: 'dependency f1 failed' });
    expect(statuses.x).toEqual({ status: 'skipped', reason: 'dependency f2 failed' });
  });

  it('breaks a tie between equally near failures by manifest order', async () => {
    const { statuses } = await walkRecorded(graph({ p: [], q: [], child: ['q', 'p'] }), {
      keepGoing: true,
      outcomes: { p: 'failed', q: 'failed' },
    });
    expect(statuses.child).toEqual({ status: 'skipped', reason: 'dependency p failed' });
  });

  it('says "dependent" when walking up', async () => {
    const { statuses } = await walkRecorded(graph({ db: [], api: ['db'] }), {
      direction: 'up',
      outcomes: { api: 'failed' },
    });
    expect(statuses.db).toEqual({ status: 'skipped', reason: 'dependent api failed' });
  });

  it('treats a run that throws (or rejects) as a failure of that node, with the message as reason', async () => {
    const result = await walkDag({
      nodes: graph({ sync: [], async: [], after: ['sync'] }),
      direction: 'down',
      concurrency: 1,
      keepGoing: true,
      signal: new AbortController().signal,
      run: (id) => {
        if (id === 'sync') throw new Error('thrown synchronously');
        return Promise.reject(new Error('rejected'));
      },
    });
    expect(Object.fromEntries(result.statuses)).toEqual({
      sync: { status: 'failed', reason: 'thrown synchronously' },
      async: { status: 'failed', reason: 'rejected' },
      after: { status: 'skipped', reason: 'dependency sync failed' },
    });
  });

  it('fails a node whose run returns something that is not a status', async () => {
    const { statuses } = await walkRecorded(graph({ a: [] }), {
      outcomes: { a: 'done' as unknown as NodeOutcome },
    });
    expect(statuses.a).toEqual({ status: 'failed', reason: 'internal error: run returned "done"' });
  });
});

describe('walkDag: cancellation', () => {
  it('aborts the running nodes’ signals, starts nothing more, and skips the rest', async () => {
    const controller = new AbortController();
    const started: string[] = [];
    const result = await walkDag({
      nodes: graph({ a: [], b: [], c: [], d: ['a'] }),
      direction: 'down',
      concurrency: 2,
      keepGoing: false,
      signal: controller.signal,
      run: (id, signal) => {
        started.push(id);
        if (started.length === 2) setTimeout(() => controller.abort(), 0);
        return new Promise((resolve) => signal.addEventListener('abort', () => resolve('cancelled')));
      },
    });
    expect(started).toEqual(['a', 'b']);
    expect(Object.fromEntries(result.statuses)).toEqual({
      a: { status: 'cancelled' },
      b: { status: 'cancelled' },
      c: { status: 'skipped', reason: 'not started: the run was cancelled' },
      d: { status: 'skipped', reason: 'not started: the run was cancelled' },
    });
  });

  it('counts a run that throws after its signal aborted as cancelled', async () => {
    const controller = new AbortController();
    const result = await walkDag({
      nodes: graph({ a: [] }),
      direction: 'down',
      concurrency: 1,
      keepGoing: false,
      signal: controller.signal,
      run: (_id, signal) => {
        setTimeout(() => controller.abort(), 0);
        return new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(new Error('step killed'))),
        );
      },
    });
    expect(result.statuses.get('a')).toEqual({ status: 'cancelled', reason: 'step killed' });
  });

  it('treats a node that cancels itself, while the walk goes on, like a failure', async () => {
    const { statuses } = await walkRecorded(graph({ a: [], b: ['a'], c: [] }), { outcomes: { a: 'cancelled' } });
    expect(statuses).toEqual({
      a: { status: 'cancelled' },
      b: { status: 'skipped', reason: 'dependency a was cancelled' },
      c: { status: 'skipped', reason: 'not started: the run stopped after a was cancelled' },
    });
  });

  it('runs nothing when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const { trace, statuses } = await walkRecorded(graph({ a: [], b: ['a'] }), { signal: controller.signal });
    expect(trace).toEqual([]);
    expect(statuses).toEqual({
      a: { status: 'skipped', reason: 'not started: the run was cancelled' },
      b: { status: 'skipped', reason: 'not started: the run was cancelled' },
    });
  });
});

describe('walkDag: callbacks', () => {
  it('reports every node once: starts as they happen, late skips at the end in manifest order', async () => {
    const events: string[] = [];
    await walkDag({
      nodes: graph({ a: [], b: ['a'], c: [], d: [] }),
      direction: 'down',
      concurrency: 1,
      keepGoing: false,
      signal: new AbortController().signal,
      run: (id) => Promise.resolve(id === 'a' ? 'failed' : 'succeeded'),
      onNodeStart: (id) => events.push(`start ${id}`),
      onNodeFinish: (id, r) => events.push(`finish ${id} ${r.status}${r.reason ? `: ${r.reason}` : ''}`),
    });
    expect(events).toEqual([
      'start a',
      'finish a failed',
      'finish b skipped: dependency a failed',
      'finish c skipped: not started: the run stopped after a failed',
      'finish d skipped: not started: the run stopped after a failed',
    ]);
  });

  it('finishes the walk, then rejects, when a callback throws', async () => {
    const ran: string[] = [];
    const walk = walkDag({
      nodes: graph({ a: [], b: [] }),
      direction: 'down',
      concurrency: 1,
      keepGoing: false,
      signal: new AbortController().signal,
      run: (id) => {
        ran.push(id);
        return Promise.resolve('succeeded');
      },
      onNodeStart: (id) => {
        if (id === 'a') throw new Error('reporter broke');
      },
    });
    await expect(walk).rejects.toThrow('reporter broke');
    expect(ran).toEqual(['a', 'b']);
  });
});

describe('walkDag: size', () => {
  const run = (): Promise<NodeOutcome> => Promise.resolve('succeeded');

  it('walks a 10,000-node chain without overflowing the stack', async () => {
    const n = 10_000;
    const nodes = Array.from({ length: n }, (_, i) => ({ id: `n${i}`, deps: i === 0 ? [] : [`n${i - 1}`] }));
    const order: string[] = [];
    const result = await walkDag({
      nodes,
      direction: 'down',
      concurrency: 8,
      keepGoing: false,
      signal: new AbortController().signal,
      run: (id) => {
        order.push(id);
        return run();
      },
    });
    expect(order).toEqual(nodes.map((node) => node.id));
    expect([...result.statuses.values()].every((s) => s.status === 'succeeded')).toBe(true);
  });

  it('walks a 10,000-node chain up, and skips all of it after a failure at the top', async () => {
    const n = 10_000;
    const nodes = Array.from({ length: n }, (_, i) => ({ id: `n${i}`, deps: i === 0 ? [] : [`n${i - 1}`] }));
    const result = await walkDag({
      nodes,
      direction: 'up',
      concurrency: 8,
      keepGoing: false,
      signal: new AbortController().signal,
      run: (id) => Promise.resolve(id === `n${n - 1}` ? 'failed' : 'succeeded'),
    });
    expect(result.statuses.get('n0')).toEqual({ status: 'skipped', reason: `dependent n${n - 1} failed` });
    expect([...result.statuses.values()].filter((s) => s.status === 'skipped')).toHaveLength(n - 1);
  });

  it('walks a 10,000-node wide graph (one root, 9,998 middles, one sink)', async () => {
    const n = 10_000;
    const middles = Array.from({ length: n - 2 }, (_, i) => `m${i}`);
    const nodes = [
      { id: 'root', deps: [] },
      ...middles.map((id) => ({ id, deps: ['root'] })),
      { id: 'sink', deps: middles },
    ];
    let running = 0;
    let peak = 0;
    const order: string[] = [];
    const result = await walkDag({
      nodes,
      direction: 'down',
      concurrency: 8,
      keepGoing: false,
      signal: new AbortController().signal,
      run: async (id) => {
        order.push(id);
        peak = Math.max(peak, ++running);
        await tick();
        running--;
        return 'succeeded';
      },
    });
    expect(order[0]).toBe('root');
    expect(order.at(-1)).toBe('sink');
    expect(order.slice(1, -1)).toEqual(middles);
    expect(peak).toBe(8);
    expect(result.statuses.size).toBe(n);
  });
});

describe('walkDag: broken invariants', () => {
  const base = {
    direction: 'down' as const,
    concurrency: 1,
    keepGoing: false,
    signal: new AbortController().signal,
    run: (): Promise<NodeOutcome> => Promise.resolve('succeeded'),
  };

  it('rejects an unknown dependency', () => {
    expect(() => walkDag({ ...base, nodes: graph({ a: ['ghost'] }) })).toThrow(
      new InternalError('walk: a depends on unknown node ghost'),
    );
  });

  it('rejects a duplicate id', () => {
    expect(() => walkDag({ ...base, nodes: [...graph({ a: [] }), ...graph({ a: [] })] })).toThrow(
      'walk: duplicate node id a',
    );
  });

  it('rejects a cycle', () => {
    expect(() => walkDag({ ...base, nodes: graph({ ok: [], a: ['c'], b: ['a'], c: ['b'] }) })).toThrow(
      'walk: the graph has a cycle through a, b, c',
    );
  });

  it('rejects a concurrency below 1', () => {
    expect(() => walkDag({ ...base, concurrency: 0, nodes: graph({ a: [] }) })).toThrow(
      'walk concurrency must be at least 1',
    );
  });
});
