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
import { ForwardingRunStore } from '../queue/forwarding-store.js';
import { gatedRun } from '../runs/gate.js';
import { runView } from '../queue/run-view.js';
import type {
  ReapOptions,
  RunEnding,
  RunOwner,
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

export class DriftRecordingStore extends ForwardingRunStore {
  readonly #o: DriftRecordingOptions;

  constructor(options: DriftRecordingOptions) {
    super(options.store);
    this.#o = options;
  }

  /** Record the check of a finished drift run and act on its episode; a failure is said, never thrown. */
  async #recorded(id: string): Promise<void> {
    let run: StoredRun | undefined;
    try {
      run = await this.inner.get(id);
      if (run?.type !== 'drift') return;
      const report = await reportOf(this.inner, run);
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
    // The server starts this run itself: the stack's approvals hold (and no break glass).
    const outcome = await this.inner.submit(
      gatedRun(this.#o.project(run.project), {
        type,
        project: run.project,
        stack: run.stack,
        createdBy: 'drift',
        options: { include: [...kapps], ...(type === 'preview' ? { refresh: true } : {}) },
        ...(run.commit ? { commit: run.commit } : {}),
        trigger: DRIFT_TRIGGER,
      }),
      this.#o.limits,
    );
    if (outcome.kind === 'full') {
      this.#o.say(`kapps serve: the ${type} remediating ${run.project}/${run.stack} was not queued: the queue is full`);
      return;
    }
    await this.#o.drift.addRemediation(run.project, run.stack, episodeId, { runId: outcome.run.id, type });
  }

  override async finish(id: string, owner: RunOwner, ending: RunEnding) {
    const finished = await this.inner.finish(id, owner, ending);
    if (finished) await this.#recorded(id);
    return finished;
  }

  override async reapExpired(reason: string, options?: ReapOptions) {
    const reaped = await this.inner.reapExpired(reason, options);
    for (const run of reaped) if (run.type === 'drift') await this.#recorded(run.id);
    return reaped;
  }

  override subscribe(listener: (notice: StoreNotice) => void) {
    return this.inner.subscribe(listener);
  }
}
