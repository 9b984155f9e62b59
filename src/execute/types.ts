/** The vocabulary of running a stack: commands, modes, per-kapp results. */
import type { Timings } from '../diagnostics/timings.js';
import type { GoMap } from '../go-value/value.js';
import type { RunEvent } from '../report/events.js';
import type { StepRecord } from '../release/types.js';
import type { KappRole, KappStatus, RunStatus } from '../vocabulary.js';

/** What a run does. */
export type RunCommand = 'install' | 'delete' | 'output' | 'clean' | 'template';

/** Plan only, apply only, or plan then apply in one visit (install/delete). */
export type RunMode = 'plan' | 'apply' | 'one-shot';

export interface RunOptions {
  readonly command: RunCommand;
  /** For install and delete. */
  readonly mode: RunMode;
  /** Print what would run; run nothing, write nothing. */
  readonly dryRun: boolean;
  /** Kapps processed at once. */
  readonly workers: number;
  /** After a failure, go on with every kapp not downstream of it. */
  readonly keepGoing: boolean;
  /** `delete --ignore-errors`: a failing step does not stop the kapp. */
  readonly ignoreErrors: boolean;
  /** Show `print: verbose` output. */
  readonly verbose: boolean;
  /** The environment steps start from (their `env_vars` are added on top). */
  readonly env: Readonly<Record<string, string>>;
  /** Texts to redact from the start (kapps' own credentials: the backend URL and its password). */
  readonly secrets?: readonly string[];
  /** Milliseconds between SIGTERM and SIGKILL when a step is stopped. */
  readonly killGraceMs?: number;
  /** Process only these of the selected kapps (`--changed-only`); the others only provide their outputs. */
  readonly only?: ReadonlySet<string>;
  /**
   * With `output`: after the output phase, load the declared outputs (missing files tolerated) into the kapp's
   * result, as a refresh reads the live state. Templates are not rendered.
   */
  readonly readOutputs?: boolean;
  /**
   * Emit every line steps print, also what their `print` does not show (as `hidden` step-output events): a run's
   * log keeps everything, displays show what `print` says.
   */
  readonly allOutput?: boolean;
  /** Where each kapp's visit says where its time went (`KAPPS_TIMINGS`); unset: nothing is measured. */
  readonly timings?: Timings;
}

/** How a kapp's visit ended. */
export interface KappResult {
  readonly id: string;
  readonly status: KappStatus;
  readonly reason?: string;
  /** Whether the kapp was processed (selected) or only provided outputs. */
  readonly role: KappRole;
  /** Each step as it ran: the record the release state keeps of it. */
  readonly steps: readonly StepRecord[];
  /** Non-sensitive outputs loaded in this run, by output id. */
  readonly outputs?: GoMap;
}

/** The outcome of a run. */
export interface RunSummary {
  readonly status: RunStatus;
  readonly results: ReadonlyMap<string, KappResult>;
  /** Why the run's release could not be recorded (the first save that failed, redacted), when one failed. */
  readonly recordError?: string;
}

/** Where events go. */
export type EmitEvent = (event: RunEvent) => void;
