/**
 * One claimed run, from its claim to its end: it prepares what the run reports through (its feed, its release),
 * runs the engine, settles how the run ended (a cancel, a fence, a crash, a feed that could not be written), records
 * the ending under its owner's lease, and closes the run's release if the run's own last write of it failed.
 *
 * The executor keeps the attempts it runs and, through `abort`, stops one (a cancel, a lost or unrenewable lease,
 * the server stopping); `leaseAskedAt` is when the lease it holds now was asked for, by this process' clock.
 */
import {
  ownerOf,
  type AwaitApproval,
  RunLeaseLostError,
  type RunEnding,
  type RunOwner,
  type RunResult,
  type StoredRun,
} from '../queue/run-store.js';
import type { ExecutorOptions, RunIO, ExecutedRun } from './executor.js';
import { oneLine, OwnerStopError } from './errors.js';
import { RunFeed } from './run-feed.js';

/** What an attempt is given besides the executor's options. */
export interface AttemptHooks {
  /**
   * Close the release of `run`, which ended while its release may still be running (its last write of it failed),
   * if its plan records one; `first`: the first try (later ones come with the reaps).
   */
  readonly closeRelease: (run: StoredRun, first: boolean) => Promise<void>;
}

/** The reason a run stopped because its lease was lost: another instance errored it. */
export const LEASE_LOST = 'lease lost: the run was errored by another server';

export class RunAttempt {
  readonly run: StoredRun;
  readonly controller = new AbortController();
  /** When (this process' monotonic clock) the lease now held was asked for. */
  leaseAskedAt: number;
  readonly #o: ExecutorOptions;
  readonly #hooks: AttemptHooks;
  readonly #owner: RunOwner;
  readonly #feed: RunFeed;
  /** The release the run took, as soon as it is known, and the write that records it on the run. */
  #revision: number | null = null;
  #releaseWrite: Promise<unknown> = Promise.resolve();
  #done: Promise<void> | undefined;

  constructor(run: StoredRun, leaseAskedAt: number, options: ExecutorOptions, hooks: AttemptHooks) {
    this.run = run;
    this.leaseAskedAt = leaseAskedAt;
    this.#o = options;
    this.#hooks = hooks;
    this.#owner = ownerOf(run, options.instance);
    this.#feed = new RunFeed({
      store: options.store,
      runId: run.id,
      owner: this.#owner,
      flushMs: options.flushMs ?? 100,
      flushItems: options.flushItems ?? 200,
      logLimits: options.logLimits,
      onWriteError: (error, text) => this.#onFeedError(error, text),
    });
  }

  /** Stop the run (its steps too): it ends `cancelled`, or `failed` for an `OwnerStopError`. */
  abort(reason: Error): void {
    this.controller.abort(reason);
  }

  /** Start the run (once): run the engine, then record how the run ended. Never rejects. */
  start(): Promise<void> {
    return (this.#done ??= this.#perform());
  }

  /** Resolves once the run ended and its end is recorded. */
  get done(): Promise<void> {
    return this.#done ?? Promise.resolve();
  }

  async #perform(): Promise<void> {
    const { ending, result, waiting } = await this.#runEngine();
    await this.#feed.close();
    await this.#releaseWrite;
    const recorded = this.#withFeedError(ending);
    if (waiting && recorded.status === 'succeeded') await this.#wait(waiting);
    else await this.#record(recorded, result);
  }

  /** The preview is done and approvals are needed: the run waits (`needs-approval`), its slot freed. */
  async #wait(waiting: AwaitApproval): Promise<void> {
    try {
      const owned = await this.#o.store.awaitApproval(this.run.id, this.#owner, waiting);
      if (!owned)
        this.#o.say(`kapps serve: run ${this.run.id} was to wait for approval, but another instance had errored it`);
    } catch (error) {
      this.#o.say(`kapps serve: could not record that run ${this.run.id} waits for approval: ${oneLine(error)}`);
    }
  }

  /** What the run reports through: its feed, its own log lines, its release. */
  #io(): RunIO {
    const feed = this.#feed;
    return {
      emit: (event) => feed.emit(event),
      log: (line) => feed.log(line),
      message: (text) => feed.message(text),
      signal: this.controller.signal,
      addChecks: (results) => this.#o.store.addChecks(this.run.id, this.#owner, results),
      onRelease: (rev) => {
        this.#revision = rev;
        this.#releaseWrite = this.#o.store.setRelease(this.run.id, this.#owner, rev).catch((error: unknown) => {
          this.#o.say(`kapps serve: run ${this.run.id}: could not record its release ${rev}: ${oneLine(error)}`);
        });
      },
    };
  }

  async #runEngine(): Promise<{ ending: RunEnding; result?: RunResult; waiting?: AwaitApproval }> {
    try {
      const outcome = await this.#o.engine.execute(this.run, this.#io());
      if (outcome.status === 'needs-approval') {
        // Waiting is the preview phase's success; a cancel or a fence meanwhile ends the run as for any other.
        const ending = this.#endingOf({ ...outcome, status: 'succeeded' });
        if (!outcome.waiting || ending.status !== 'succeeded')
          return { ending: outcome.waiting ? ending : this.#crashed(new Error('a run waits with no preview')) };
        return { ending, waiting: outcome.waiting };
      }
      return {
        ending: this.#endingOf({ ...outcome, status: outcome.status }),
        ...(outcome.result ? { result: outcome.result } : {}),
      };
    } catch (error) {
      return { ending: this.#crashed(error) };
    }
  }

  /** How the run ended: as the engine says, unless it was stopped (cancelled, or failed when its owner stopped it). */
  #endingOf(outcome: ExecutedRun & { status: RunEnding['status'] }): RunEnding {
    const signal = this.controller.signal;
    const fenced = signal.reason instanceof OwnerStopError;
    const status = fenced ? 'failed' : signal.aborted && outcome.status !== 'failed' ? 'cancelled' : outcome.status;
    return {
      status,
      error:
        (status === 'cancelled' || fenced) && signal.aborted
          ? this.#stopReason()
          : boundedError(outcome.error ?? (status === 'cancelled' ? 'cancelled' : null)),
      releaseRevision: outcome.releaseRevision ?? this.#revision,
    };
  }

  /** A crash inside the run: its stack goes to the run's log, one line to `error`; the server goes on. */
  #crashed(error: unknown): RunEnding {
    const stack = error instanceof Error ? (error.stack ?? error.message) : String(error);
    this.#feed.message(`kapps: the run stopped on an internal error:\n${stack}`);
    this.#o.say(`kapps serve: run ${this.run.id} failed on an internal error: ${oneLine(error)}`);
    return { status: 'failed', error: `internal error: ${oneLine(error)}`, releaseRevision: this.#revision };
  }

  /** A run whose feed could not be written did not succeed, whatever its kapps did. */
  #withFeedError(ending: RunEnding): RunEnding {
    const writeError = this.#feed.writeError;
    if (writeError === undefined || ending.status !== 'succeeded') return ending;
    return { ...ending, status: 'failed', error: `its log could not be recorded: ${writeError}` };
  }

  /** Nothing the run prints may be dropped while it goes on: a feed that cannot be written stops the run. */
  #onFeedError(error: unknown, text: string): void {
    if (error instanceof RunLeaseLostError) {
      this.#o.say(`kapps serve: run ${this.run.id} is no longer ours (its lease expired): stopping it`);
      this.abort(new Error(LEASE_LOST));
    } else {
      this.#o.say(`kapps serve: run ${this.run.id}: could not write its log, stopping it: ${text}`);
      this.abort(new OwnerStopError(`its log could not be recorded: ${text}`));
    }
  }

  /** Record the result and the ending under the owner's lease; then close the release the run left running. */
  async #record(ending: RunEnding, result: RunResult | undefined): Promise<void> {
    const { store } = this.#o;
    try {
      if (result) await store.setResult(this.run.id, result);
      const owned = await store.finish(this.run.id, this.#owner, ending);
      if (!owned)
        this.#o.say(`kapps serve: run ${this.run.id} ended ${ending.status}, but another instance had errored it`);
    } catch (error) {
      this.#o.say(`kapps serve: could not record the end of run ${this.run.id}: ${oneLine(error)}`);
    }
    // Its release, if the run's last write of it failed, is still running: close it so the stack is not left locked.
    const releaseRevision = ending.releaseRevision ?? this.#revision;
    if (releaseRevision !== null && ending.status !== 'succeeded') {
      await this.#hooks.closeRelease(
        { ...this.run, status: ending.status, error: ending.error ?? ending.status, releaseRevision },
        true,
      );
    }
  }

  #stopReason(): string {
    const reason: unknown = this.controller.signal.reason;
    const text = reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'cancelled';
    return text === 'cancelled' ? 'cancelled on request' : text;
  }
}

/** A run's `error` is one line of at most 2,000 characters (the whole story is in its log). */
function boundedError(error: string | null): string | null {
  if (error === null) return null;
  const line = error.split('\n')[0] ?? '';
  return line.length > 2000 ? `${line.slice(0, 2000)}… (${line.length - 2000} more characters in the log)` : line;
}
