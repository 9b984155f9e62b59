/**
 * What follows a drift run: a run store around the server's (as the notifying store wraps the backend's) that, when a
 * `drift` run finishes, records its check in the drift store — the report a succeeded run left as its result, or an
 * `unknown` check saying why a failed one failed — and acts on the episode the check opened or closed:
 *
 * - a newly opened episode puts one `drift.detected` delivery per subscribing `notify:` target in the outbox, and
 *   queues what the project's `remediate:` asks (a preview, or an apply of the drifted kapps; once per episode);
 * - a closed episode puts `drift.resolved` deliveries in the outbox.
 *
 * A failure here is said and never fails the run's finish.
 */
import { randomUUID } from 'node:crypto';
import { driftReportSchema, type DriftReport, type NotificationEvent, type RunTrigger } from '../../api/index.js';
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
import type { NewDelivery, Outbox } from '../notify/outbox.js';
import type { CheckOutcome, DriftStore } from './drift-store.js';

/** What started a run `remediate:` queued. */
export const DRIFT_TRIGGER: RunTrigger = { kind: 'drift', delivery: null, ref: null };

export interface DriftRecordingOptions {
  /** The run store it wraps (the notifying store: the runs it queues are notified as any). */
  readonly store: RunStore;
  readonly drift: DriftStore;
  readonly outbox: Outbox;
  /** The configured project (undefined: no longer registered). */
  readonly project: (name: string) => ProjectEntry | undefined;
  readonly limits: Pick<SubmitLimits, 'maxQueuedPerStack' | 'maxQueuedTotal'>;
  /** Told when deliveries were put in the outbox. */
  readonly enqueued: () => void;
  readonly say: (text: string) => void;
}

/** The report a finished drift run stands for: its result, or an `unknown` check naming why it failed. */
async function reportOf(store: RunStore, run: StoredRun): Promise<DriftReport | undefined> {
  if (run.status === 'succeeded') {
    const result = await store.getResult(run.id);
    const parsed = result ? driftReportSchema.safeParse(JSON.parse(result.body)) : undefined;
    if (parsed?.success) return parsed.data;
  }
  if (run.status !== 'failed' && run.status !== 'errored' && run.status !== 'succeeded') return undefined;
  return {
    project: run.project,
    stack: run.stack,
    state: 'unknown',
    checkedAt: run.finishedAt ?? new Date().toISOString(),
    basedOnRevision: null,
    kapps: [],
    pending: [],
    read: [],
    reason: `the check failed: ${run.error ?? 'no result'}`,
    readDigests: {},
  };
}

export class DriftRecordingStore implements RunStore {
  readonly #o: DriftRecordingOptions;
  readonly #store: RunStore;

  constructor(options: DriftRecordingOptions) {
    this.#o = options;
    this.#store = options.store;
  }

  get description(): string {
    return this.#store.description;
  }

  /** Record the check of a finished drift run and act on its episode; a failure is said, never thrown. */
  async #recorded(id: string): Promise<void> {
    let run: StoredRun | undefined;
    try {
      run = await this.#store.get(id);
      if (run?.type !== 'drift') return;
      const report = await reportOf(this.#store, run);
      if (!report) return;
      const outcome = await this.#o.drift.recordCheck(run.project, run.stack, run.id, report);
      if (outcome.opened && outcome.episode) {
        await this.#notify(run, 'drift.detected', report, outcome);
        await this.#remediate(run, outcome.episode.id, outcome.episode.kapps);
      }
      if (outcome.resolved) await this.#notify(run, 'drift.resolved', report, outcome);
    } catch (error) {
      this.#o.say(`kapps serve: the drift check of run ${id} was not recorded: ${(error as Error).message}`);
    }
  }

  /** Put one delivery of `event` per subscribing target of the run's project in the outbox. */
  async #notify(run: StoredRun, event: NotificationEvent, report: DriftReport, outcome: CheckOutcome): Promise<void> {
    const episode = outcome.episode ?? outcome.resolved;
    const kapps = event === 'drift.detected' ? report.kapps.filter((k) => k.state === 'drifted').map((k) => k.id) : [];
    const deliveries: NewDelivery[] = [];
    for (const target of this.#o.project(run.project)?.notify ?? []) {
      if (!target.events.includes(event)) continue;
      const deliveryId = randomUUID();
      const drift = { state: report.state, kapps, episode };
      deliveries.push({
        id: deliveryId,
        runId: run.id,
        event,
        url: target.url,
        secretEnv: target.secretEnv,
        body: JSON.stringify({ event, deliveryId, run: runView(run), drift }),
      });
    }
    if (deliveries.length === 0) return;
    await this.#o.outbox.enqueue(deliveries);
    this.#o.enqueued();
  }

  /** Queue what the project's `remediate:` asks for the episode: a preview, or an apply of the drifted kapps. */
  async #remediate(run: StoredRun, episodeId: string, kapps: readonly string[]): Promise<void> {
    const remediate = this.#o.project(run.project)?.drift?.remediate ?? 'none';
    if (remediate === 'none' || kapps.length === 0) return;
    const type = remediate === 'apply' ? 'apply' : 'preview';
    const outcome = await this.#store.submit(
      {
        type,
        project: run.project,
        stack: run.stack,
        createdBy: 'drift',
        options: { include: [...kapps], ...(type === 'preview' ? { refresh: true } : {}) },
        ...(run.commit ? { commit: run.commit } : {}),
        trigger: DRIFT_TRIGGER,
      },
      this.#o.limits,
    );
    if (outcome.kind === 'full') {
      this.#o.say(`kapps serve: the ${type} remediating ${run.project}/${run.stack} was not queued: the queue is full`);
      return;
    }
    await this.#o.drift.addRemediation(run.project, run.stack, episodeId, { runId: outcome.run.id, type });
  }

  open(instance: string): Promise<void> {
    return this.#store.open(instance);
  }

  close(): Promise<void> {
    return this.#store.close();
  }

  submit(run: NewRun, limits: SubmitLimits) {
    return this.#store.submit(run, limits);
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

  claim(instance: string, leaseMs: number) {
    return this.#store.claim(instance, leaseMs);
  }

  renew(instance: string, runIds: readonly string[], leaseMs: number) {
    return this.#store.renew(instance, runIds, leaseMs);
  }

  setRelease(id: string, owner: RunOwner, revision: number) {
    return this.#store.setRelease(id, owner, revision);
  }

  async finish(id: string, owner: RunOwner, ending: RunEnding) {
    const finished = await this.#store.finish(id, owner, ending);
    if (finished) await this.#recorded(id);
    return finished;
  }

  async reapExpired(reason: string, options?: ReapOptions) {
    const reaped = await this.#store.reapExpired(reason, options);
    for (const run of reaped) if (run.type === 'drift') await this.#recorded(run.id);
    return reaped;
  }

  requestCancel(id: string, by: string) {
    return this.#store.requestCancel(id, by);
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

  prune(policy: RetentionPolicy) {
    return this.#store.prune(policy);
  }

  subscribe(listener: (notice: StoreNotice) => void) {
    return this.#store.subscribe(listener);
  }
}
