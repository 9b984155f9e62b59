/**
 * The executor: claims queued runs (up to `maxRuns` at once), runs each in-process as a `RunAttempt` (its own
 * AbortController, its feed written in batches, its ending recorded), renews the leases, fences and reaps them, and
 * prunes the history. What a run does by its type is its plan (`run-plan.ts`); the engine work is the `RunEngine`'s.
 *
 * - cancel (a `cancel` notice for a run it owns) aborts that run: the same stop as Ctrl-C; the run ends `cancelled`;
 * - an exception out of a run (a bug anywhere in kapps, the step-spawning child dying) ends that run `failed` with
 *   the stack trace in its log and one line in `error`; the other runs and the server go on;
 * - `stop(graceMs)` (SIGTERM) claims nothing more, lets the running runs finish within the grace, then cancels them.
 *
 * Leases are fenced: the owner renews every third of the lease (sooner again after a failure) and measures each
 * lease by its own clock from the moment it asked for it. A run whose lease could not be renewed is stopped (its
 * steps too) `marginMs` before the lease can expire, and ends `failed` saying why; another instance reaps it only
 * `reapGraceMs` after the lease expired (the margin plus the time a step is given to stop), after closing its
 * release. Every write of the run's state carries its owner (instance and lease generation) and is refused once the
 * run was reaped. Feed writes retry transient failures in the store; a run whose feed could not be written ends
 * `failed` with the cause.
 */
import type { LogLine } from '../../api/index.js';
import type { LogLimits } from '../../release/log-budget.js';
import type { RunEvent } from '../../report/events.js';
import type { CheckResult } from '../../api/index.js';
import type { AwaitApproval, RunResult, RunStore, StoredRun } from '../queue/run-store.js';
import { oneLine, OwnerStopError } from './errors.js';
import { LEASE_LOST, RunAttempt } from './run-attempt.js';
import { runPlan } from './run-plan.js';

/** What a run gets to report through. */
export interface RunIO {
  emit(event: RunEvent): void;
  log(line: LogLine): void;
  /** A line of the run's own log (`stream: 'kapps'`). */
  message(text: string): void;
  readonly signal: AbortSignal;
  /** The release the run took, as soon as it is known. */
  onRelease(revision: number): void;
  /** Record results of run checks in the run (as they are known). */
  addChecks(results: readonly CheckResult[]): Promise<void>;
}

/** A run the engine executed: how it ended (as the store records it) and its result. */
export interface ExecutedRun {
  /**
   * `stale`: the preview it was to apply no longer holds (nothing applied); `needs-approval`: its preview is done and
   * it waits for approvals (`waiting`), its slot freed.
   */
  readonly status: 'succeeded' | 'failed' | 'cancelled' | 'stale' | 'needs-approval';
  readonly error?: string | null;
  readonly releaseRevision?: number | null;
  readonly result?: RunResult;
  /** With `needs-approval`: the preview the approvals bind to, and until when it waits. */
  readonly waiting?: AwaitApproval;
}

/** Runs one run (src/engine behind it). */
export interface RunEngine {
  execute(run: StoredRun, io: RunIO): Promise<ExecutedRun>;
}

export interface ExecutorOptions {
  readonly store: RunStore;
  readonly engine: RunEngine;
  readonly instance: string;
  readonly maxRuns: number;
  readonly leaseMs: number;
  /**
   * Close the release of `run` as failed if it is still running: runs another instance (or this one, before a
   * restart) left, and runs whose own last release write failed (a full disk).
   */
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

/** The time a step of a server run is given between SIGTERM and SIGKILL when its run is stopped. */
export const STEP_STOP_MS = 5_000;

/** How long before its lease can expire an owner that cannot renew it stops its run: a quarter of the lease. */
export function leaseMarginMs(leaseMs: number): number {
  return Math.max(100, Math.floor(leaseMs / 4));
}

/** How long after a lease expired another instance reaps its run: the margin plus the time its steps take to stop. */
export function reapGraceMs(leaseMs: number): number {
  return leaseMarginMs(leaseMs) + STEP_STOP_MS;
}

export class Executor {
  readonly #o: ExecutorOptions;
  readonly #active = new Map<string, RunAttempt>();
  #stopping = false;
  #ticking = false;
  #again = false;
  #pruning = false;
  /** A prune was asked for while one ran: it runs again when that one ends (a run that ended meanwhile counts). */
  #pruneAgain = false;
  #timers: NodeJS.Timeout[] = [];
  #unsubscribe: (() => void) | undefined;
  #renewing = false;
  /** A renewal was asked for while one was in flight: renew again when it is done. */
  #renewAgain = false;
  #lastRenewAt = 0;
  /** Why the last renewal failed (undefined after a success). */
  #renewError: string | undefined;
  /** What failed on the backend and was said, until it works again (said once per outage, not per attempt). */
  readonly #failing = new Set<'claim' | 'reap'>();
  /** Ended runs whose release could not be closed yet (the store failed): tried again at each reap. */
  #leftOpen: StoredRun[] = [];

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
    const beat = Math.max(50, Math.min(250, Math.floor(renewEvery / 4)));
    this.#timers.push(
      setInterval(() => {
        const since = performance.now() - this.#lastRenewAt;
        if (since >= renewEvery || (this.#renewError !== undefined && since >= beat)) void this.#renew();
        this.#fence();
      }, beat),
      // Runs submitted to another instance, expired leases of dead instances, missed notices.
      setInterval(() => {
        void this.#reap(
          'its lease expired: its server stopped renewing it (the server stopped or lost the backend); the run was ' +
            'not restarted',
        ).then(() => this.wake());
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
    if (!retention) return;
    if (this.#pruning) {
      this.#pruneAgain = true;
      return;
    }
    this.#pruning = true;
    this.#pruneAgain = false;
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
      if (this.#pruneAgain && !this.#stopping) void this.#prune();
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
      const askedAt = performance.now();
      try {
        run = await this.#o.store.claim(this.#o.instance, this.#o.leaseMs);
      } catch (error) {
        this.#sayOnce('claim', `kapps serve: could not claim a run: ${oneLine(error)}`);
        return;
      }
      this.#failing.delete('claim');
      if (!run) return;
      this.#launch(run, askedAt);
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
    if (run?.cancelRequested) active.abort(new Error('cancelled'));
  }

  async #reap(reason: string): Promise<void> {
    let reaped: StoredRun[];
    const { onReaped } = this.#o;
    try {
      reaped = await this.#o.store.reapExpired(reason, {
        graceMs: reapGraceMs(this.#o.leaseMs),
        // The release is closed before the run is announced errored: the next run never meets its lock.
        ...(onReaped
          ? {
              beforeErrored: async (run: StoredRun) => {
                try {
                  await onReaped(run);
                } catch (error) {
                  this.#o.say(`kapps serve: could not close the release of run ${run.id}: ${oneLine(error)}`);
                  throw error;
                }
              },
            }
          : {}),
      });
    } catch (error) {
      this.#sayOnce('reap', `kapps serve: could not check the leases of running runs: ${oneLine(error)}`);
      return;
    }
    this.#failing.delete('reap');
    for (const run of reaped) {
      this.#o.say(`kapps serve: run ${run.id} (${run.type} of ${run.project}/${run.stack}) errored: ${reason}`);
    }
    const left = this.#leftOpen;
    this.#leftOpen = [];
    for (const run of left) await this.#closeRelease(run, false);
  }

  /** Close the release of an ended run if its own last write left it running; else try again at the next reap. */
  async #closeRelease(run: StoredRun, first: boolean): Promise<void> {
    if (!this.#o.onReaped || !runPlan(run.type).records) return;
    try {
      await this.#o.onReaped(run);
      if (!first) this.#o.say(`kapps serve: run ${run.id}: its release is closed`);
    } catch (error) {
      if (first) this.#o.say(`kapps serve: run ${run.id}: could not close its release yet: ${oneLine(error)}`);
      this.#leftOpen.push(run);
    }
  }

  async #renew(): Promise<void> {
    if (this.#renewing) {
      this.#renewAgain = true;
      return;
    }
    const active = [...this.#active.values()];
    this.#lastRenewAt = performance.now();
    if (active.length === 0) {
      this.#renewError = undefined;
      return;
    }
    this.#renewing = true;
    const askedAt = performance.now();
    let renewed = false;
    try {
      const lost = await this.#o.store.renew(
        this.#o.instance,
        active.map((a) => a.run.id),
        this.#o.leaseMs,
      );
      if (this.#renewError !== undefined) this.#o.say(`kapps serve: the leases are renewed again`);
      this.#renewError = undefined;
      for (const a of active) if (!lost.includes(a.run.id)) a.leaseAskedAt = askedAt;
      for (const id of lost) {
        this.#o.say(`kapps serve: run ${id} is no longer ours (its lease expired): stopping it`);
        this.#active.get(id)?.abort(new Error(LEASE_LOST));
      }
      renewed = true;
    } catch (error) {
      // Said once per outage; the fence stops the runs before their leases can expire.
      if (this.#renewError === undefined) this.#o.say(`kapps serve: could not renew the leases: ${oneLine(error)}`);
      this.#renewError = oneLine(error);
    } finally {
      this.#renewing = false;
      if (this.#renewAgain) {
        this.#renewAgain = false;
        void this.#renew();
      }
    }
    if (!renewed) return;
    // A cancel whose notice was missed (the listening connection was down) is found in the table.
    for (const { run } of active) {
      const still = this.#active.get(run.id);
      if (still && !still.controller.signal.aborted) await this.#cancelIfAsked(run.id);
    }
  }

  #sayOnce(what: 'claim' | 'reap', text: string): void {
    if (this.#failing.has(what)) return;
    this.#failing.add(what);
    this.#o.say(text);
  }

  /** Stop each run whose lease could not be renewed, `leaseMarginMs` before it can expire by this clock. */
  #fence(): void {
    const now = performance.now();
    const limit = this.#o.leaseMs - leaseMarginMs(this.#o.leaseMs);
    for (const a of this.#active.values()) {
      if (a.controller.signal.aborted || now - a.leaseAskedAt < limit) continue;
      const why =
        `its lease could not be renewed for ${((now - a.leaseAskedAt) / 1000).toFixed(1)} s ` +
        `(${this.#renewError ?? 'no answer from the backend'}): stopped before the lease could expire`;
      this.#o.say(`kapps serve: run ${a.run.id} (${a.run.type} of ${a.run.project}/${a.run.stack}): ${why}`);
      a.abort(new OwnerStopError(why));
    }
  }

  #launch(run: StoredRun, leaseAskedAt: number): void {
    const attempt = new RunAttempt(run, leaseAskedAt, this.#o, {
      closeRelease: (ended, first) => this.#closeRelease(ended, first),
    });
    this.#active.set(run.id, attempt);
    void attempt.start().finally(() => {
      this.#active.delete(run.id);
      this.wake();
      void this.#prune();
    });
    // A claim that waited (a busy database) used up part of the lease: renew it now rather than at the next beat.
    if (performance.now() - leaseAskedAt > leaseMarginMs(this.#o.leaseMs) / 2) void this.#renew();
  }

  /** Cancel every running run now (a second SIGTERM). */
  hurry(): void {
    this.#stopping = true;
    for (const a of this.#active.values()) a.abort(new Error('cancelled: the server stopped'));
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
        a.abort(new Error('cancelled: the server stopped'));
      }
      await all();
    }
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
  }
}
