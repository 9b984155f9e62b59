/**
 * The sweep of the runs waiting for approval (every instance, every few seconds, and when a run finishes): a waiting
 * run whose stack's latest release moved off the one its preview compared with becomes `stale` (its approvals bound to
 * a preview that no longer holds); one past its `expiresAt` is discarded (`cancelled`). `endWaiting` is atomic: with
 * two instances sweeping at once, one ends each run and the other is told it was not waiting any more.
 */
import type { ReleaseStore } from '../../release/store-types.js';
import type { ProjectRegistry } from '../projects.js';
import type { RunStore, StoredRun } from '../queue/run-store.js';
import { oneLine } from './errors.js';
import { latestRevision, releaseMoved, waitedText } from './gate.js';

export interface SweepOptions {
  readonly store: RunStore;
  readonly releases: Pick<ReleaseStore, 'latest'>;
  readonly projects: ProjectRegistry;
  readonly intervalMs: number;
  readonly say: (text: string) => void;
}

export class ApprovalSweep {
  readonly #o: SweepOptions;
  #timer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #sweeping: Promise<void> | undefined;
  #again = false;
  #failing = false;

  constructor(options: SweepOptions) {
    this.#o = options;
  }

  start(): void {
    this.#timer = setInterval(() => this.sweep(), this.#o.intervalMs);
    this.#timer.unref();
    this.#unsubscribe = this.#o.store.subscribe((notice) => {
      if (notice.type === 'finished') this.sweep();
    });
    this.sweep();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#unsubscribe?.();
    this.#again = false;
    await this.#sweeping;
  }

  /** Sweep now (once more after the sweep under way, if one is). */
  sweep(): void {
    if (this.#sweeping) {
      this.#again = true;
      return;
    }
    this.#sweeping = this.#once().finally(() => {
      this.#sweeping = undefined;
      if (this.#again) {
        this.#again = false;
        this.sweep();
      }
    });
  }

  async #once(): Promise<void> {
    let waiting: StoredRun[];
    try {
      waiting = await this.#o.store.waiting();
    } catch (error) {
      if (!this.#failing) this.#o.say(`kapps serve: could not read the runs waiting for approval: ${oneLine(error)}`);
      this.#failing = true;
      return;
    }
    this.#failing = false;
    for (const run of waiting) {
      try {
        await this.#check(run);
      } catch (error) {
        this.#o.say(`kapps serve: could not check run ${run.id} waiting for approval: ${oneLine(error)}`);
      }
    }
  }

  async #check(run: StoredRun): Promise<void> {
    const approval = run.approval;
    if (!approval || !this.#o.projects.get(run.project)) return;
    const expires = approval.expiresAt === null ? NaN : Date.parse(approval.expiresAt);
    if (Date.now() >= expires) {
      const ended = await this.#o.store.endWaiting(
        run.id,
        'cancelled',
        `discarded: waited for approval longer than ${waitedText(approval)}`,
      );
      if (ended) this.#o.say(`kapps serve: run ${run.id} (${run.type} of ${run.project}/${run.stack}): ${ended.error}`);
      return;
    }
    const now = await latestRevision(this.#o.store, this.#o.releases, this.#o.projects, run);
    if (now === approval.basedOnRevision) return;
    const ended = await this.#o.store.endWaiting(run.id, 'stale', releaseMoved(approval.basedOnRevision, now));
    if (ended)
      this.#o.say(`kapps serve: run ${run.id} (${run.type} of ${run.project}/${run.stack}) is stale: ${ended.error}`);
  }
}
