/**
 * What the reporters know about a run, rebuilt from its events alone: each kapp's state, its current step, the
 * step that failed it, and the run's start and end. It does not render anything, and it never trusts the order of
 * events beyond what the executor guarantees (a kapp's events arrive in order).
 */
import type {
  KappFinishedEvent,
  KappStartedEvent,
  RunEvent,
  RunFinishedEvent,
  RunStartedEvent,
  StepFinishedEvent,
  StepStartedEvent,
} from './events.js';
import type { Phase } from '../vocabulary.js';

/** Where a kapp is: not started yet, running, or one of the final statuses of `kapp-finished`. */
export type KappState = 'pending' | 'running' | KappFinishedEvent['status'];

/** Everything the reporters keep about one kapp. */
export interface KappRecord {
  /** The kapp's id, `manifest:kapp`. */
  readonly id: string;
  /** Ids of the kapps it depends on (from `run-started.dependsOn`), in the order given. */
  readonly deps: readonly string[];
  state: KappState;
  /** The `kapp-started` event, once it arrived. */
  started?: KappStartedEvent;
  /** `Date.parse` of `started.time`, in ms since the epoch. */
  startedAtMs?: number;
  /** The step running now (cleared when it finishes). */
  currentStep?: StepStartedEvent;
  /** The most recent step that finished `failed` (the one that failed the kapp). */
  failedStep?: StepFinishedEvent;
  /** The most recent step that finished `cancelled`. */
  cancelledStep?: StepFinishedEvent;
  /** Steps that failed but whose failure was ignored, in order. */
  readonly ignoredSteps: StepFinishedEvent[];
  /** The `kapp-finished` event, once it arrived. */
  finished?: KappFinishedEvent;
}

/** Number of kapps per final status. */
export interface StatusCounts {
  succeeded: number;
  failed: number;
  skipped: number;
  cancelled: number;
}

/** The state of one run, fed event by event. */
export class RunTally {
  /** The `run-started` event, once it arrived. */
  started?: RunStartedEvent;
  /** The `run-finished` event, once it arrived. */
  finished?: RunFinishedEvent;
  readonly #kapps = new Map<string, KappRecord>();

  /** Update the state with one event; returns the kapp record the event concerns, if any. */
  apply(event: RunEvent): KappRecord | undefined {
    switch (event.type) {
      case 'run-started':
        this.started = event;
        for (const id of event.kapps) this.#record(id);
        return undefined;
      case 'run-finished':
        this.finished = event;
        return undefined;
      case 'kapp-started': {
        const record = this.#record(event.kapp);
        record.state = 'running';
        record.started = event;
        const at = Date.parse(event.time);
        if (Number.isFinite(at)) record.startedAtMs = at;
        return record;
      }
      case 'step-started': {
        const record = this.#record(event.kapp);
        if (record.state === 'pending') record.state = 'running';
        record.currentStep = event;
        return record;
      }
      case 'step-finished': {
        const record = this.#record(event.kapp);
        if (record.currentStep?.phase === event.phase && record.currentStep.step === event.step) {
          record.currentStep = undefined;
        }
        if (event.status === 'failed') record.failedStep = event;
        else if (event.status === 'cancelled') record.cancelledStep = event;
        else if (event.status === 'ignored') record.ignoredSteps.push(event);
        return record;
      }
      case 'kapp-finished': {
        const record = this.#record(event.kapp);
        record.state = event.status;
        record.finished = event;
        record.currentStep = undefined;
        return record;
      }
      case 'step-output':
        return this.#record(event.kapp);
      case 'log':
        return event.kapp === undefined ? undefined : this.#kapps.get(event.kapp);
    }
  }

  /** The record of a kapp, if the run knows it. */
  get(id: string): KappRecord | undefined {
    return this.#kapps.get(id);
  }

  /** Every kapp in the run's order (manifest order of `run-started.kapps`, then any others as they appeared). */
  records(): KappRecord[] {
    return [...this.#kapps.values()];
  }

  /**
   * The dependencies of a kapp that have not finished yet, in the order `dependsOn` lists them. A dependency this
   * run does not process is not waited on.
   */
  waitingOn(record: KappRecord): string[] {
    return record.deps.filter((dep) => {
      const state = this.#kapps.get(dep)?.state;
      return state === 'pending' || state === 'running';
    });
  }

  /** The dependencies of a kapp that failed or were cancelled, in the order `dependsOn` lists them. */
  blockedBy(record: KappRecord): string[] {
    return record.deps.filter((dep) => {
      const state = this.#kapps.get(dep)?.state;
      return state === 'failed' || state === 'cancelled';
    });
  }

  /** The command of the run (`install`, `delete`, …), once known. */
  get command(): string | undefined {
    return this.started?.command;
  }

  /** Whether the run is a dry run (nothing executed). */
  get dryRun(): boolean {
    return this.started?.dryRun ?? false;
  }

  /** The phases the run goes through, once known. */
  get phases(): readonly Phase[] {
    return this.started?.phases ?? [];
  }

  /** Kapps per final status, counted from `kapp-finished` events. */
  counts(): StatusCounts {
    const counts: StatusCounts = { succeeded: 0, failed: 0, skipped: 0, cancelled: 0 };
    for (const record of this.#kapps.values()) {
      if (record.finished) counts[record.finished.status] += 1;
    }
    return counts;
  }

  #record(id: string): KappRecord {
    let record = this.#kapps.get(id);
    if (!record) {
      record = { id, deps: this.started?.dependsOn?.[id] ?? [], state: 'pending', ignoredSteps: [] };
      this.#kapps.set(id, record);
    }
    return record;
  }
}
