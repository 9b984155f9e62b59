/**
 * The parallel DAG walker: runs a callback for every node of a dependency graph, each node as soon as the nodes
 * it waits for are done, at most `concurrency` at a time. It knows nothing of kapps, steps or processes.
 *
 * ```
 *   down (install):  db ──► api ──► web      db first; web last
 *   up   (delete):   db ◄── api ◄── web      web first; db last (dependents before their dependencies)
 * ```
 *
 * Rules:
 * - A node is *ready* when every node it waits for has succeeded or was skipped (a `skipped` node chose not to
 *   run, e.g. its conditions were false; the nodes after it still run). Among ready nodes the earliest in
 *   manifest order starts first.
 * - A failure stops new starts (unless `keepGoing`); running nodes finish. Nodes after a failure are skipped
 *   with `dependency <id> failed` (`dependent <id> failed` when walking up), naming the nearest failed node; the
 *   other nodes that never started get `not started: the run stopped after <id> failed`.
 * - Cancellation (`signal`): nothing new starts; each running node's own signal aborts (its caller stops its
 *   work and reports `cancelled`); nodes never started get `not started: the run was cancelled`.
 * - A `run` that throws fails its node, with the error's message as the reason; or cancels it, when the node's
 *   signal had aborted.
 *
 * Cost: O(nodes + edges) plus a heap's log factor for the ready queue; completions never rescan the graph, and
 * nothing recurses per node, so 10,000-node chains are fine.
 *
 * Not its job: checking the graph for the user (the config layer reports unknown dependencies and cycles with
 * their locations; here they are broken invariants), rendering, or killing processes.
 */
import { InternalError } from '../diagnostics/errors.js';
import { IndexHeap } from '../plan/index-heap.js';

/** How a node ended. */
export type NodeStatus = 'succeeded' | 'failed' | 'skipped' | 'cancelled';

/** A node's final status and, for anything but success, why. */
export interface NodeResult {
  readonly status: NodeStatus;
  /** One line: the failure, the reason for the skip or the cancellation. */
  readonly reason?: string;
}

/** What `run` may return: a bare status, or a status with a reason (e.g. `{status: 'skipped', reason: …}`). */
export type NodeOutcome = NodeStatus | NodeResult;

/** A node of the graph. */
export interface WalkNode {
  /** Unique among the nodes. */
  readonly id: string;
  /** Ids of the nodes this one depends on (which must exist). */
  readonly deps: readonly string[];
}

/** Options of `walkDag`. */
export interface WalkOptions {
  /** All nodes, in manifest order (the tie-breaker among ready nodes). */
  readonly nodes: readonly WalkNode[];
  /** `down`: dependencies before dependents (install). `up`: dependents before their dependencies (delete). */
  readonly direction: 'down' | 'up';
  /** The most nodes running at once (at least 1; `Infinity` for no limit). */
  readonly concurrency: number;
  /** After a failure, go on running every node that does not come after a failed one. */
  readonly keepGoing: boolean;
  /** Aborting it cancels the walk. */
  readonly signal: AbortSignal;
  /** Does a node's work. Its `signal` aborts when the walk is cancelled. */
  readonly run: (id: string, signal: AbortSignal) => Promise<NodeOutcome>;
  /** Called just before a node's `run`. */
  readonly onNodeStart?: (id: string) => void;
  /** Called once for every node when its status is final: as it finishes, or at the end for nodes never run. */
  readonly onNodeFinish?: (id: string, result: NodeResult) => void;
}

/** The outcome of a walk. */
export interface WalkResult {
  /** Every node's result, in manifest order. */
  readonly statuses: Map<string, NodeResult>;
}

/** Why the walk stopped starting nodes: a node failed (or cancelled itself), or the walk was cancelled. */
type StopCause = { kind: 'node'; id: string; cancelled: boolean } | { kind: 'cancel' };

/** The successors of each node in walk order, and how many nodes each one waits for. */
interface Graph {
  readonly ids: readonly string[];
  readonly next: readonly number[][];
  readonly waitingOn: number[];
}

/**
 * Walks the graph and resolves when every node has a final status. It rejects only for a broken invariant (a
 * duplicate id, an unknown dependency, a cycle, a concurrency below 1) or when a callback throws, and then only
 * after every running node has finished.
 */
export function walkDag(options: WalkOptions): Promise<WalkResult> {
  if (!(options.concurrency >= 1))
    throw new InternalError(`walk concurrency must be at least 1, got ${options.concurrency}`);
  return new Walk(options, buildGraph(options.nodes, options.direction)).run();
}

/** One walk over a graph: which nodes are ready, running and done, and why it stopped starting nodes. */
class Walk {
  readonly #options: WalkOptions;
  readonly #graph: Graph;
  readonly #results: (NodeResult | undefined)[];
  readonly #ready = new IndexHeap();
  readonly #running = new Map<number, AbortController>();
  /** Nodes that reported `cancelled` while the walk itself was not cancelled: their followers are skipped. */
  readonly #selfCancelled = new Set<number>();
  /** Why the walk stopped starting nodes, once it has. */
  #stoppedBy: StopCause | undefined;
  #callbackError: unknown;
  #settle: { resolve: (result: WalkResult) => void; reject: (error: Error) => void } | undefined;
  readonly #onAbort = (): void => {
    this.#stoppedBy ??= { kind: 'cancel' };
    for (const controller of this.#running.values()) controller.abort(this.#options.signal.reason);
  };

  constructor(options: WalkOptions, graph: Graph) {
    this.#options = options;
    this.#graph = graph;
    this.#results = new Array<NodeResult | undefined>(graph.ids.length);
    graph.waitingOn.forEach((count, i) => count === 0 && this.#ready.push(i));
  }

  run(): Promise<WalkResult> {
    return new Promise<WalkResult>((resolve, reject) => {
      this.#settle = { resolve, reject };
      const { signal } = this.#options;
      if (signal.aborted) this.#stoppedBy = { kind: 'cancel' };
      else signal.addEventListener('abort', this.#onAbort, { once: true });
      this.#pump();
    });
  }

  #call(fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.#callbackError ??= error;
    }
  }

  #pump(): void {
    while (this.#stoppedBy === undefined && this.#running.size < this.#options.concurrency && this.#ready.size > 0) {
      this.#start(this.#ready.pop() as number);
    }
    if (this.#running.size === 0) this.#finish();
  }

  #start(i: number): void {
    const id = this.#graph.ids[i] as string;
    const controller = new AbortController();
    this.#running.set(i, controller);
    this.#call(() => this.#options.onNodeStart?.(id));
    let outcome: Promise<NodeOutcome>;
    try {
      outcome = Promise.resolve(this.#options.run(id, controller.signal));
    } catch (error) {
      outcome = Promise.reject(error instanceof Error ? error : new Error(message(error)));
    }
    outcome.then(
      (value) => this.#complete(i, normalize(value)),
      (error: unknown) =>
        this.#complete(i, { status: controller.signal.aborted ? 'cancelled' : 'failed', reason: message(error) }),
    );
  }

  #complete(i: number, result: NodeResult): void {
    const { ids, next, waitingOn } = this.#graph;
    this.#running.delete(i);
    this.#results[i] = result;
    this.#call(() => this.#options.onNodeFinish?.(ids[i] as string, result));
    if (result.status === 'succeeded' || result.status === 'skipped') {
      for (const n of next[i] as number[]) {
        if (--(waitingOn[n] as number) === 0) this.#ready.push(n);
      }
    } else if (!this.#options.signal.aborted) {
      // A failure, or a node that cancelled itself while the walk was not cancelled.
      if (result.status === 'cancelled') this.#selfCancelled.add(i);
      if (!this.#options.keepGoing)
        this.#stoppedBy ??= { kind: 'node', id: ids[i] as string, cancelled: result.status === 'cancelled' };
    }
    this.#pump();
  }

  #finish(): void {
    const { ids } = this.#graph;
    const results = this.#results;
    this.#options.signal.removeEventListener('abort', this.#onAbort);
    const late = settleUnstarted(this.#graph, results, this.#selfCancelled, this.#options.direction, this.#stoppedBy);
    for (const i of late) this.#call(() => this.#options.onNodeFinish?.(ids[i] as string, results[i] as NodeResult));
    const error = this.#callbackError;
    if (error !== undefined) {
      this.#settle?.reject(error instanceof Error ? error : new InternalError(message(error)));
      return;
    }
    const statuses = new Map<string, NodeResult>();
    ids.forEach((id, i) => statuses.set(id, results[i] as NodeResult));
    this.#settle?.resolve({ statuses });
  }
}

/**
 * Gives every node that never ran its `skipped` result and returns their indices in manifest order. Nodes after
 * a failed (or self-cancelled) node name the nearest one: a breadth-first search from all of them at once, in
 * manifest order, so each node is claimed by the closest failure and ties go to the earliest in the manifest.
 * Nodes cancelled by the walk's own cancellation are no such source: what follows them was simply not started.
 */
function settleUnstarted(
  graph: Graph,
  results: (NodeResult | undefined)[],
  selfCancelled: ReadonlySet<number>,
  direction: 'down' | 'up',
  stoppedBy: StopCause | undefined,
): number[] {
  const { ids, next } = graph;
  const relation = direction === 'down' ? 'dependency' : 'dependent';
  const queue: number[] = [];
  const source: number[] = [];
  results.forEach((result, i) => {
    if (result && (result.status === 'failed' || selfCancelled.has(i))) {
      queue.push(i);
      source[i] = i;
    }
  });
  for (let head = 0; head < queue.length; head++) {
    const from = queue[head] as number;
    for (const n of next[from] as number[]) {
      if (results[n] !== undefined || source[n] !== undefined) continue;
      source[n] = source[from] as number;
      queue.push(n);
    }
  }
  const late: number[] = [];
  for (let i = 0; i < ids.length; i++) {
    if (results[i] !== undefined) continue;
    late.push(i);
    const cause = source[i];
    if (cause !== undefined) {
      const verb = results[cause]?.status === 'cancelled' ? 'was cancelled' : 'failed';
      results[i] = { status: 'skipped', reason: `${relation} ${ids[cause] as string} ${verb}` };
    } else if (stoppedBy?.kind === 'node') {
      const verb = stoppedBy.cancelled ? 'was cancelled' : 'failed';
      results[i] = { status: 'skipped', reason: `not started: the run stopped after ${stoppedBy.id} ${verb}` };
    } else {
      // Only a cancellation leaves other nodes unstarted (a cycle was excluded up front).
      results[i] = { status: 'skipped', reason: 'not started: the run was cancelled' };
    }
  }
  return late;
}

/** Indexes the nodes and orients the edges in walk order; throws on duplicates, unknown ids and cycles. */
function buildGraph(nodes: readonly WalkNode[], direction: 'down' | 'up'): Graph {
  const index = new Map<string, number>();
  const ids = nodes.map((node, i) => {
    if (index.has(node.id)) throw new InternalError(`walk: duplicate node id ${node.id}`);
    index.set(node.id, i);
    return node.id;
  });
  const next: number[][] = nodes.map(() => []);
  const waitingOn: number[] = nodes.map(() => 0);
  nodes.forEach((node, i) => {
    for (const dep of node.deps) {
      const d = index.get(dep);
      if (d === undefined) throw new InternalError(`walk: ${node.id} depends on unknown node ${dep}`);
      const [before, after] = direction === 'down' ? [d, i] : [i, d];
      (next[before] as number[]).push(after);
      (waitingOn[after] as number)++;
    }
  });
  assertAcyclic(ids, next, waitingOn);
  return { ids, next, waitingOn };
}

/** Kahn's algorithm on a copy of the counts: every node must become ready at some point. */
function assertAcyclic(ids: readonly string[], next: readonly number[][], waitingOn: readonly number[]): void {
  const left = [...waitingOn];
  const queue: number[] = [];
  left.forEach((count, i) => count === 0 && queue.push(i));
  for (let head = 0; head < queue.length; head++) {
    for (const n of next[queue[head] as number] as number[]) {
      if (--(left[n] as number) === 0) queue.push(n);
    }
  }
  if (queue.length < ids.length) {
    const stuck = ids.filter((_, i) => (left[i] as number) > 0);
    throw new InternalError(`walk: the graph has a cycle through ${stuck.slice(0, 5).join(', ')}`);
  }
}

function normalize(outcome: NodeOutcome): NodeResult {
  const result = typeof outcome === 'string' ? { status: outcome } : outcome;
  switch (result?.status) {
    case 'succeeded':
    case 'failed':
    case 'skipped':
    case 'cancelled':
      return result;
    default:
      return { status: 'failed', reason: `internal error: run returned ${JSON.stringify(outcome)}` };
  }
}

function message(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : (JSON.stringify(error) ?? 'undefined');
}
