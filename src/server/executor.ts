/**
 * The executor: claims queued runs (up to `maxRuns` at once), runs each in-process with its own AbortController,
 * writes its events and log lines to the run's feed in batches, renews the leases, and records how each run ended.
 *
 * - cancel (a `cancel` notice for a run it owns) aborts that run: the same stop as Ctrl-C; the run ends `cancelled`;
 * - an exception out of a run (a bug anywhere in kapps, the step-spawning child dying) ends that run `failed` with
 *   the stack trace in its log and one line in `error`; the other runs and the server go on;
 * - `stop(graceMs)` (SIGTERM) claims nothing more, lets the running runs finish within the grace, then cancels them.
 */
import type { LogLine } from './api-schema.js';
import { LogBudget, splitLongLine, type LogLimits } from '../release/log-budget.js';
import type { RunEvent } from '../report/events.js';
import type { FeedItem, RunEnding, RunResult, RunStore, StoredRun } from './run-store.js';

/** What a run gets to report through. */
export interface RunIO {
  emit(event: RunEvent): void;
  log(line: LogLine): void;
  /** A line of the run's own log (`stream: 'kapps'`). */
  message(text: string): void;
  readonly signal: AbortSignal;
  /** The release the run took, as soon as it is known. */
  onRelease(revision: number): void;
}

/** How a run ended, as the engine says it. */
export interface RunOutcome {
  readonly status: 'succeeded' | 'failed' | 'cancelled';
  readonly error?: string | null;
  readonly releaseRevision?: number | null;
  readonly result?: RunResult;
}

/** Runs one run (src/engine behind it). */
export interface RunEngine {
  execute(run: StoredRun, io: RunIO): Promise<RunOutcome>;
}

export interface ExecutorOptions {
  readonly store: RunStore;
  readonly engine: RunEngine;
  readonly instance: string;
  readonly maxRuns: number;
  readonly leaseMs: number;
  /** Runs another instance (or this one, before a restart) left: close their releases as failed. */
  readonly onReaped?: (run: StoredRun) => Promise<void>;
  /** Where the server's own messages go (stderr). */
  readonly say: (text: string) => void;
  /** Batching of the feed: flush after this many ms or items. */
  readonly flushMs?: number;
  readonly flushItems?: number;
  /** Bounds of each run's log (head and tail, long lines cut); unlimited when absent. */
  readonly logLimits?: LogLimits;
  /** History retention: finished runs older than `days` (0: no age limit) or beyond `perStack` per stack go. */
  readonly retention?: { readonly days: number; readonly perStack: number };
}

/** How often the history is pruned. */
const PRUNE_EVERY_MS = 10 * 60_000;

interface Active {
  readonly run: StoredRun;
  readonly controller: AbortController;
  readonly done: Promise<void>;
}

const time = (): string => new Date().toISOString();

/** One line for `error`: the first line of the message. */
function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split('\n')[0] ?? '').slice(0, 500) || 'unknown error';
}

/** A run's `error` is one line of at most 2,000 characters (the whole story is in its log). */
function boundedError(error: string | null): string | null {
  if (error === null) return null;
  const line = error.split('\n')[0] ?? '';
  return line.length > 2000 ? `${line.slice(0, 2000)}… (${line.length - 2000} more characters in the log)` : line;
}

export class Executor {
  readonly #o: ExecutorOptions;
  readonly #active = new Map<string, Active>();
  #stopping = false;
  #ticking = false;
  #again = false;
  #pruning = false;
  #timers: NodeJS.Timeout[] = [];
  #unsubscribe: (() => void) | undefined;

  constructor(options: ExecutorOptions) {
    this.#o = options;
  }

  get stopping(): boolean {
    return this.#stopping;
  }

  /** The runs executing now. */
  get running(): string[] {
    return [...this.#active.keys()];
  }

  /** Reap what a dead instance left, then start claiming. */
  async start(): Promise<void> {
    await this.#reap('its server stopped while it ran (the run was not restarted)');
    this.#unsubscribe = this.#o.store.subscribe((notice) => {
      if (notice.type === 'queued' || notice.type === 'finished') this.wake();
      else if (notice.type === 'cancel') void this.#cancelIfAsked(notice.runId);
    });
    const renewEvery = Math.max(200, Math.floor(this.#o.leaseMs / 3));
    this.#timers.push(
      setInterval(() => void this.#renew(), renewEvery),
      // Runs submitted to another instance, expired leases of dead instances, missed notices.
      setInterval(() => {
        void this.#reap('its server stopped renewing its lease (the run was not restarted)').then(() => this.wake());
      }, renewEvery),
    );
    if (this.#o.retention) this.#timers.push(setInterval(() => void this.#prune(), PRUNE_EVERY_MS));
    for (const t of this.#timers) t.unref();
    await this.#prune();
    this.wake();
  }

  /** Delete the finished runs the retention does not keep, and say how many. */
  async #prune(): Promise<void> {
    const retention = this.#o.retention;
    if (!retention || this.#pruning) return;
    this.#pruning = true;
    try {
      const before = retention.days > 0 ? new Date(Date.now() - retention.days * 86_400_000).toISOString() : undefined;
      const deleted = await this.#o.store.prune({
        ...(before !== undefined ? { before } : {}),
        keepPerStack: retention.perStack,
      });
      if (deleted > 0)
        this.#o.say(
          `kapps serve: deleted ${deleted} finished run(s) beyond the history retention (limits.keep_runs_days ${retention.days}, keep_runs_per_stack ${retention.perStack}; releases are kept)`,
        );
    } catch (error) {
      this.#o.say(`kapps serve: could not delete old runs: ${oneLine(error)}`);
    } finally {
      this.#pruning = false;
    }
  }

  /** Claim runs now (a run was queued or finished). */
  wake(): void {
    if (this.#stopping) return;
    if (this.#ticking) {
      this.#again = true;
      return;
    }
    this.#ticking = true;
    void this.#tick().finally(() => {
      this.#ticking = false;
      if (this.#again) {
        this.#again = false;
        this.wake();
      }
    });
  }

  async #tick(): Promise<void> {
    while (!this.#stopping && this.#active.size < this.#o.maxRuns) {
      let run: StoredRun | undefined;
      try {
        run = await this.#o.store.claim(this.#o.instance, this.#o.leaseMs);
      } catch (error) {
        this.#o.say(`kapps serve: could not claim a run: ${oneLine(error)}`);
        return;
      }
      if (!run) return;
      this.#launch(run);
    }
  }

  /**
   * A `cancel` notice is only a wake-up (anyone who may NOTIFY can send one): the run is stopped only when its row
   * says a cancel was asked for.
   */
  async #cancelIfAsked(runId: string): Promise<void> {
    const active = this.#active.get(runId);
    if (!active) return;
    let run: StoredRun | undefined;
    try {
      run = await this.#o.store.get(runId);
    } catch (error) {
      this.#o.say(`kapps serve: could not read run ${runId} to cancel it: ${oneLine(error)}`);
      return;
    }
    if (run?.cancelRequested) active.controller.abort(new Error('cancelled'));
  }

  async #reap(reason: string): Promise<void> {
    let reaped: StoredRun[];
    try {
      reaped = await this.#o.store.reapExpired(reason);
    } catch (error) {
      this.#o.say(`kapps serve: could not check the leases of running runs: ${oneLine(error)}`);
      return;
    }
    for (const run of reaped) {
      this.#o.say(`kapps serve: run ${run.id} (${run.type} of ${run.project}/${run.stack}) errored: ${reason}`);
      try {
        await this.#o.onReaped?.(run);
      } catch (error) {
        this.#o.say(`kapps serve: could not close the release of run ${run.id}: ${oneLine(error)}`);
      }
    }
  }

  async #renew(): Promise<void> {
    const ids = this.running;
    if (ids.length === 0) return;
    try {
      const lost = await this.#o.store.renew(this.#o.instance, ids, this.#o.leaseMs);
      for (const id of lost) {
        this.#o.say(`kapps serve: run ${id} is no longer ours (its lease expired): stopping it`);
        this.#active.get(id)?.controller.abort(new Error('lease lost'));
      }
    } catch (error) {
      this.#o.say(`kapps serve: could not renew the leases: ${oneLine(error)}`);
    }
    // A cancel whose notice was missed (the listening connection was down) is found in the table.
    for (const id of ids) {
      const active = this.#active.get(id);
      if (active && !active.controller.signal.aborted) await this.#cancelIfAsked(id);
    }
  }

  #launch(run: StoredRun): void {
    const controller = new AbortController();
    const done = this.#execute(run, controller).finally(() => {
      this.#active.delete(run.id);
      this.wake();
      void this.#prune();
    });
    this.#active.set(run.id, { run, controller, done });
  }

  async #execute(run: StoredRun, controller: AbortController): Promise<void> {
    const { store } = this.#o;
    const flushMs = this.#o.flushMs ?? 100;
    const flushItems = this.#o.flushItems ?? 200;
    let pending: FeedItem[] = [];
    let writing: Promise<unknown> = Promise.resolve();
    let timer: NodeJS.Timeout | undefined;
    const flush = (): Promise<unknown> => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (pending.length > 0) {
        const batch = pending;
        pending = [];
        writing = writing
          .then(() => store.appendFeed(run.id, batch))
          .catch((error: unknown) =>
            this.#o.say(`kapps serve: run ${run.id}: could not write its log: ${oneLine(error)}`),
          );
      }
      return writing;
    };
    const push = (item: FeedItem): void => {
      pending.push(item);
      if (pending.length >= flushItems) void flush();
      else timer ??= setTimeout(() => void flush(), flushMs);
    };
    // The log keeps its head as it comes and, past the budget, only its tail (written at the end); a step's output
    // events stop with the head (their lines are in the log's tail).
    const limits = this.#o.logLimits;
    const budget = limits ? new LogBudget<LogLine>(limits) : undefined;
    const log = (line: LogLine): void => {
      if (!budget || !limits) return push({ kind: 'log', data: line });
      for (const piece of splitLongLine(line, limits.maxLineLength)) {
        const tailing = budget.tailing;
        if (budget.admit(piece)) push({ kind: 'log', data: piece });
        else if (!tailing) push({ kind: 'log', data: budget.startNotice(piece) });
      }
    };
    const message = (text: string): void => {
      for (const line of text.replace(/\n$/, '').split('\n')) log({ time: time(), stream: 'kapps', text: line });
    };
    let revision: number | null = null;
    let releaseWrite: Promise<unknown> = Promise.resolve();
    const io: RunIO = {
      emit: (event) => {
        if (event.type === 'step-output' && budget?.tailing) return;
        push({ kind: 'run-event', data: event });
      },
      log,
      message,
      signal: controller.signal,
      onRelease: (rev) => {
        revision = rev;
        releaseWrite = store.setRelease(run.id, this.#o.instance, rev).catch(() => undefined);
      },
    };
    let ending: RunEnding;
    let result: RunResult | undefined;
    try {
      const outcome = await this.#o.engine.execute(run, io);
      result = outcome.result;
      const status = controller.signal.aborted && outcome.status !== 'failed' ? 'cancelled' : outcome.status;
      ending = {
        status,
        error:
          status === 'cancelled' && controller.signal.aborted
            ? this.#cancelReason(controller)
            : boundedError(outcome.error ?? (status === 'cancelled' ? 'cancelled' : null)),
        releaseRevision: outcome.releaseRevision ?? revision,
      };
    } catch (error) {
      // A crash inside the run: its stack goes to the run's log, one line to `error`; the server goes on.
      const stack = error instanceof Error ? (error.stack ?? error.message) : String(error);
      message(`kapps: the run stopped on an internal error:\n${stack}`);
      ending = { status: 'failed', error: `internal error: ${oneLine(error)}`, releaseRevision: revision };
      this.#o.say(`kapps serve: run ${run.id} failed on an internal error: ${oneLine(error)}`);
    }
    if (budget) for (const line of budget.drain(time())) push({ kind: 'log', data: line });
    await flush();
    await releaseWrite;
    try {
      if (result) await store.setResult(run.id, result);
      const owned = await store.finish(run.id, this.#o.instance, ending);
      if (!owned) this.#o.say(`kapps serve: run ${run.id} ended ${ending.status}, but another instance had errored it`);
    } catch (error) {
      this.#o.say(`kapps serve: could not record the end of run ${run.id}: ${oneLine(error)}`);
    }
  }

  #cancelReason(controller: AbortController): string {
    const reason: unknown = controller.signal.reason;
    const text = reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'cancelled';
    return text === 'cancelled' ? 'cancelled on request' : text;
  }

  /** Cancel every running run now (a second SIGTERM). */
  hurry(): void {
    this.#stopping = true;
    for (const a of this.#active.values()) a.controller.abort(new Error('cancelled: the server stopped'));
  }

  /**
   * Stop: claim nothing more; let running runs finish for `graceMs`, then cancel them and wait for them to end
   * (each records `cancelled`).
   */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true;
    this.#unsubscribe?.();
    const all = (): Promise<unknown> => Promise.all([...this.#active.values()].map((a) => a.done));
    if (this.#active.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([all(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
      for (const a of this.#active.values()) {
        this.#o.say(`kapps serve: cancelling run ${a.run.id}: the server is stopping`);
        a.controller.abort(new Error('cancelled: the server stopped'));
      }
      await all();
    }
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
  }
}
