/**
 * Where notifications come from: a run store that, around the run store of the backend, puts one delivery per
 * matching `notify:` target of the run's project in the outbox whenever a run's status changes — `submit` (created:
 * `run.queued`), `claim` (`run.started`), `finish` and `reapExpired` (`run.finished` and `run.succeeded`,
 * `run.failed` for failed or errored, `run.cancelled`), `requestCancel` of a queued or waiting run (`run.cancelled`,
 * `run.finished`), `awaitApproval` (`run.needs_approval`), `decide` (`run.approved` when it is queued again,
 * `run.rejected`), `endWaiting` (stale: `run.failed`; discarded: `run.cancelled`), and a submission whose token
 * skipped the approvals (`run.break_glass`). The change only enqueues: a failure to do so is said and never fails the run's change; sending
 * is the deliverer's. `prune` takes the deliveries of the runs it deleted.
 */
import { randomUUID } from 'node:crypto';
import type { ApprovalDecision, NotificationEvent } from '../../api/index.js';
import type { ProjectEntry } from '../config.js';
import { ForwardingRunStore } from '../queue/forwarding-store.js';
import { runView } from '../queue/run-view.js';
import type {
  AwaitApproval,
  NewRun,
  ReapOptions,
  RetentionPolicy,
  RunEnding,
  RunOwner,
  RunStore,
  StoreNotice,
  StoredRun,
  SubmitLimits,
} from '../queue/run-store.js';
import type { NewDelivery, Outbox } from './outbox.js';

/** The events a run's new status stands for. */
export function eventsOf(run: StoredRun): NotificationEvent[] {
  switch (run.status) {
    case 'queued':
      return ['run.queued'];
    case 'running':
      return ['run.started'];
    case 'succeeded':
      return ['run.finished', 'run.succeeded'];
    case 'failed':
    case 'errored':
      return ['run.finished', 'run.failed'];
    case 'cancelled':
      return ['run.finished', 'run.cancelled'];
    case 'needs-approval':
      return ['run.needs_approval'];
    case 'rejected':
      return ['run.finished', 'run.rejected'];
    case 'stale':
      return ['run.finished', 'run.failed'];
  }
}

/** The body of a delivery: the event, its id and the run as `GET /runs/{id}` shows it (without queue position). */
export function notificationBody(event: NotificationEvent, deliveryId: string, run: StoredRun): string {
  return JSON.stringify({ event, deliveryId, run: runView(run) });
}

export interface NotifyingStoreOptions {
  readonly store: RunStore;
  readonly outbox: Outbox;
  /** The project's targets (undefined: not a configured project). */
  readonly targets: (project: string) => ProjectEntry['notify'] | undefined;
  /** Told when deliveries were put in the outbox (the deliverer looks at once). */
  readonly enqueued: () => void;
  /** Where messages go (a failure to enqueue). */
  readonly say: (text: string) => void;
}

export class NotifyingRunStore extends ForwardingRunStore {
  readonly #o: NotifyingStoreOptions;

  constructor(options: NotifyingStoreOptions) {
    super(options.store);
    this.#o = options;
  }

  /** Put the deliveries of `run`'s status (`events`) in the outbox; a failure is said, never thrown. */
  async #notify(
    run: StoredRun | undefined,
    events: readonly NotificationEvent[] = run ? eventsOf(run) : [],
  ): Promise<void> {
    if (!run) return;
    const deliveries: NewDelivery[] = [];
    for (const target of this.#o.targets(run.project) ?? []) {
      for (const event of events) {
        if (!target.events.includes(event)) continue;
        const id = randomUUID();
        deliveries.push({
          id,
          runId: run.id,
          event,
          url: target.url,
          secretEnv: target.secretEnv,
          body: notificationBody(event, id, run),
        });
      }
    }
    if (deliveries.length === 0) return;
    try {
      await this.#o.outbox.enqueue(deliveries);
      this.#o.enqueued();
    } catch (error) {
      this.#o.say(
        `kapps serve: the notifications of run ${run.id} (${events.join(', ')}) were not stored: ${(error as Error).message}`,
      );
    }
  }

  override async submit(run: NewRun, limits: SubmitLimits) {
    const outcome = await this.inner.submit(run, limits);
    if (outcome.kind === 'created')
      await this.#notify(outcome.run, [
        ...eventsOf(outcome.run),
        // A token of a `break_glass` role skipped the approvals: said as it is queued.
        ...(outcome.run.approval?.breakGlass ? (['run.break_glass'] as const) : []),
      ]);
    return outcome;
  }

  override async awaitApproval(id: string, owner: RunOwner, waiting: AwaitApproval) {
    const waits = await this.inner.awaitApproval(id, owner, waiting);
    if (waits) await this.#notify(await this.inner.get(id).catch(() => undefined));
    return waits;
  }

  override async decide(id: string, decision: ApprovalDecision) {
    const outcome = await this.inner.decide(id, decision);
    if (outcome?.kind === 'approved') await this.#notify(outcome.run, ['run.approved']);
    else if (outcome?.kind === 'rejected') await this.#notify(outcome.run);
    return outcome;
  }

  override async endWaiting(id: string, status: 'stale' | 'cancelled', error: string) {
    const ended = await this.inner.endWaiting(id, status, error);
    await this.#notify(ended);
    return ended;
  }

  override async claim(instance: string, leaseMs: number) {
    const run = await this.inner.claim(instance, leaseMs);
    await this.#notify(run);
    return run;
  }

  override async finish(id: string, owner: RunOwner, ending: RunEnding) {
    const finished = await this.inner.finish(id, owner, ending);
    if (finished) await this.#notify(await this.inner.get(id).catch(() => undefined));
    return finished;
  }

  override async reapExpired(reason: string, options?: ReapOptions) {
    const reaped = await this.inner.reapExpired(reason, options);
    for (const run of reaped) await this.#notify(run);
    return reaped;
  }

  override async requestCancel(id: string, by: string) {
    const before = await this.inner.get(id);
    const after = await this.inner.requestCancel(id, by);
    if ((before?.status === 'queued' || before?.status === 'needs-approval') && after?.status === 'cancelled')
      await this.#notify(after);
    return after;
  }

  override async prune(policy: RetentionPolicy) {
    const deleted = await this.inner.prune(policy);
    if (deleted === 0) return deleted;
    try {
      await this.#o.outbox.prune(async (runId) => (await this.inner.get(runId)) !== undefined);
    } catch (error) {
      this.#o.say(`kapps serve: the notifications of pruned runs were not removed: ${(error as Error).message}`);
    }
    return deleted;
  }

  override subscribe(listener: (notice: StoreNotice) => void) {
    return this.inner.subscribe(listener);
  }
}
