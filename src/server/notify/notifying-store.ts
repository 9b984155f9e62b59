/**
 * Where notifications come from: a run store that, around the run store of the backend, puts one delivery per
 * matching `notify:` target of the run's project in the outbox whenever a run's status changes — `submit` (created:
 * `run.queued`), `claim` (`run.started`), `finish` and `reapExpired` (`run.finished` and `run.succeeded`,
 * `run.failed` for failed or errored, `run.cancelled`), `requestCancel` of a queued run (`run.cancelled`,
 * `run.finished`). The change only enqueues: a failure to do so is said and never fails the run's change; sending
 * is the deliverer's. `prune` takes the deliveries of the runs it deleted.
 */
import { randomUUID } from 'node:crypto';
import type { NotificationEvent } from '../../api/index.js';
import type { ProjectEntry } from '../config.js';
import { runView } from '../queue/run-view.js';
import type {
  FeedItem,
  NewRun,
  ReapOptions,
  RetentionPolicy,
  RunEnding,
  RunListFilter,
  RunOwner,
  RunResult,
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

export class NotifyingRunStore implements RunStore {
  readonly #o: NotifyingStoreOptions;
  readonly #store: RunStore;

  constructor(options: NotifyingStoreOptions) {
    this.#o = options;
    this.#store = options.store;
  }

  get description(): string {
    return this.#store.description;
  }

  /** The store it decorates. */
  get inner(): RunStore {
    return this.#store;
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

  open(instance: string): Promise<void> {
    return this.#store.open(instance);
  }

  close(): Promise<void> {
    return this.#store.close();
  }

  async submit(run: NewRun, limits: SubmitLimits) {
    const outcome = await this.#store.submit(run, limits);
    if (outcome.kind === 'created') await this.#notify(outcome.run);
    return outcome;
  }

  get(id: string) {
    return this.#store.get(id);
  }

  queueInfo(run: StoredRun) {
    return this.#store.queueInfo(run);
  }

  list(query: RunListFilter) {
    return this.#store.list(query);
  }

  active(project: string, stack: string) {
    return this.#store.active(project, stack);
  }

  async claim(instance: string, leaseMs: number) {
    const run = await this.#store.claim(instance, leaseMs);
    await this.#notify(run);
    return run;
  }

  renew(instance: string, runIds: readonly string[], leaseMs: number) {
    return this.#store.renew(instance, runIds, leaseMs);
  }

  setRelease(id: string, owner: RunOwner, revision: number) {
    return this.#store.setRelease(id, owner, revision);
  }

  async finish(id: string, owner: RunOwner, ending: RunEnding) {
    const finished = await this.#store.finish(id, owner, ending);
    if (finished) await this.#notify(await this.#store.get(id).catch(() => undefined));
    return finished;
  }

  async reapExpired(reason: string, options?: ReapOptions) {
    const reaped = await this.#store.reapExpired(reason, options);
    for (const run of reaped) await this.#notify(run);
    return reaped;
  }

  async requestCancel(id: string, by: string) {
    const before = await this.#store.get(id);
    const after = await this.#store.requestCancel(id, by);
    if (before?.status === 'queued' && after?.status === 'cancelled') await this.#notify(after);
    return after;
  }

  appendFeed(id: string, items: readonly FeedItem[], owner?: RunOwner) {
    return this.#store.appendFeed(id, items, owner);
  }

  readFeed(id: string, afterSeq: number, limit: number) {
    return this.#store.readFeed(id, afterSeq, limit);
  }

  readLog(id: string, offset: number, maxBytes: number) {
    return this.#store.readLog(id, offset, maxBytes);
  }

  setResult(id: string, result: RunResult) {
    return this.#store.setResult(id, result);
  }

  getResult(id: string) {
    return this.#store.getResult(id);
  }

  async prune(policy: RetentionPolicy) {
    const deleted = await this.#store.prune(policy);
    if (deleted === 0) return deleted;
    try {
      await this.#o.outbox.prune(async (runId) => (await this.#store.get(runId)) !== undefined);
    } catch (error) {
      this.#o.say(`kapps serve: the notifications of pruned runs were not removed: ${(error as Error).message}`);
    }
    return deleted;
  }

  subscribe(listener: (notice: StoreNotice) => void) {
    return this.#store.subscribe(listener);
  }
}
