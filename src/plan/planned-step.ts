/**
 * A run step ready to execute: calls expanded, unit defaults applied, typed fields converted, paths absolute and
 * `args` tokenised. Only its `conditions` are still text: the executor evaluates them when the step is reached.
 */
import type { SourceLocation } from '../diagnostics/diagnostic.js';
import type { Phase } from '../vocabulary.js';
import type { ConditionSite } from './go-bool.js';

/** Where a planned step came from, for diagnostics (looked up when read: a run reads none of them). */
export interface PlannedStepLocations {
  /** The step's declaration. */
  readonly step?: SourceLocation | undefined;
  readonly command?: SourceLocation | undefined;
  readonly args?: SourceLocation | undefined;
  /** The `call:` values that produced this step, outermost first; empty when the phase lists it directly. */
  readonly via: readonly (SourceLocation | undefined)[];
}

/** One step of a kapp's phase, in run order. */
export interface PlannedStep {
  /** Name of the run unit that declares the step. */
  readonly unit: string;
  /** The phase list that declares the step (differs from the planned phase when the step was called). */
  readonly declaredIn: Phase;
  readonly name: string;
  /** The executable, looked up on PATH when not a path; empty when the step sets none (it then fails to run). */
  readonly command: string;
  readonly args: string[];
  /** Only the variables configured for the step, then its unit's for names the step does not set. */
  readonly env: Record<string, string>;
  /** Absolute. */
  readonly workingDir: string;
  /** Absolute path the captured stdout is written to, if configured. */
  readonly stdout?: string;
  /** Absolute path the captured stderr is written to, if configured. */
  readonly stderr?: string;
  /** `verbose`, or any other non-empty text (echo always); undefined never echoes. */
  readonly print?: string;
  /** The exit status that counts as success (default 0). */
  readonly expectedExitCode: number;
  readonly ignoreErrors: boolean;
  /** Load the kapp's outputs after this step succeeds. */
  readonly loadOutputs: boolean;
  /** Seconds; undefined (configured as 0 or not at all) means no timeout. */
  readonly timeout?: number;
  /** Rendered condition texts; all must be Go booleans and true for the step to run. */
  readonly conditions: string[];
  /** Pass to `evaluateConditions` with `conditions`. */
  readonly conditionSite: ConditionSite;
  /** 0–255 after call overrides; 255 when unset. Smaller runs earlier. */
  readonly mergePriority: number;
  /** Executables the step needs besides `command` (its own `binaries`, then its unit's), for validation. */
  readonly binaries: string[];
  readonly locations: PlannedStepLocations;
}
