/**
 * The events of a run. The executor emits these; every reporter (listr2, plain, JSON) and the
 * release recorder consume them. `--reporter json` prints them as NDJSON, so they are a public interface:
 * add fields, never rename or remove them. The names they use (phases, statuses) are the run's vocabulary.
 */
import type { KappRole, KappStatus, Phase, RunStatus, StepStatus } from '../vocabulary.js';

interface Base {
  /** ISO timestamp. */
  readonly time: string;
}

export interface RunStartedEvent extends Base {
  readonly type: 'run-started';
  /** `install`, `delete`, `output`, `clean`, `template`. */
  readonly command: string;
  readonly stack: string;
  /** Phases run for each processed kapp, in order (e.g. `['plan_install', 'apply_install']` for `--one-shot`). */
  readonly phases: readonly Phase[];
  /** Ids (`manifest:kapp`) of the kapps this run will process, in manifest order. */
  readonly kapps: readonly string[];
  readonly workers: number;
  readonly dryRun: boolean;
  /** Dependencies of each kapp in `kapps` (ids), for "waiting on" displays. */
  readonly dependsOn?: Readonly<Record<string, readonly string[]>>;
}

export interface KappStartedEvent extends Base {
  readonly type: 'kapp-started';
  readonly kapp: string;
  /** Why it runs: `selected`, or `outputs` for an unselected ancestor that only provides its outputs. */
  readonly role: KappRole;
}

export interface StepStartedEvent extends Base {
  readonly type: 'step-started';
  readonly kapp: string;
  readonly phase: Phase;
  readonly step: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly workingDir: string;
}

export interface StepOutputEvent extends Base {
  readonly type: 'step-output';
  readonly kapp: string;
  readonly phase: Phase;
  readonly step: string;
  readonly stream: 'stdout' | 'stderr';
  /** A chunk of output, already decided to be shown (see the step's `print`), unless `hidden`. */
  readonly text: string;
  /** Output the step's `print` does not show, passed on only for a run's log (displays skip it). */
  readonly hidden?: boolean;
}

export interface StepFinishedEvent extends Base {
  readonly type: 'step-finished';
  readonly kapp: string;
  readonly phase: Phase;
  readonly step: string;
  readonly status: StepStatus;
  /** Exit code, or null when the process did not exit normally (signal, spawn error, skipped). */
  readonly exitCode: number | null;
  readonly signal?: string;
  readonly durationMs: number;
  readonly timedOut?: boolean;
  /** The step's configured timeout in milliseconds, when it has one (shown as "timed out after N s"). */
  readonly timeoutMs?: number;
  /** For failed/ignored/skipped steps: why, in one line. */
  readonly reason?: string;
  /** Last lines of the step's combined output (failed steps only). */
  readonly outputTail?: readonly string[];
}

export interface KappFinishedEvent extends Base {
  readonly type: 'kapp-finished';
  readonly kapp: string;
  readonly status: KappStatus;
  /** For failed/skipped/cancelled: why (e.g. `dependency bootstrap:db failed`, `conditions failed`). */
  readonly reason?: string;
  readonly durationMs: number;
}

export interface LogEvent extends Base {
  readonly type: 'log';
  readonly level: 'info' | 'warn' | 'error';
  readonly message: string;
  readonly kapp?: string;
  /** An info message shown without --verbose (e.g. what a dry run would write). */
  readonly shown?: boolean;
}

export interface RunFinishedEvent extends Base {
  readonly type: 'run-finished';
  readonly status: RunStatus;
  readonly counts: {
    readonly succeeded: number;
    readonly failed: number;
    readonly skipped: number;
    readonly cancelled: number;
  };
  readonly durationMs: number;
}

export type RunEvent =
  | RunStartedEvent
  | KappStartedEvent
  | StepStartedEvent
  | StepOutputEvent
  | StepFinishedEvent
  | KappFinishedEvent
  | LogEvent
  | RunFinishedEvent;

/** Something that consumes the event stream. */
export interface Reporter {
  onEvent(event: RunEvent): void;
  /** Flush and release the terminal; called once after `run-finished` (or on abort). */
  close(): Promise<void>;
  /**
   * Show a message about the whole run at once (Ctrl-C: the run is stopping and what it waits for). Returns true
   * when the reporter showed it (a live display); otherwise the caller prints it on stderr.
   */
  notice?(text: string): boolean;
}
