/**
 * The resolved spec of a stack: what `kapps generate -o json` prints, and what a release records as its spec.
 * A public interface: add optional fields only.
 */
import type { Phase } from '../vocabulary.js';
import type { PlannedStep } from './planned-step.js';

export interface SpecStep {
  name: string;
  command: string;
  args: string[];
  /** Only the env_vars configured for the step (unit defaults included), never the inherited environment. */
  env: Record<string, string>;
  /** Absolute. */
  workingDir: string;
  /** Seconds. */
  timeout?: number;
  expectedExitCode?: number;
  ignoreErrors?: boolean;
  loadOutputs?: boolean;
  /** Absolute paths of the capture files. */
  stdout?: string;
  stderr?: string;
  /** `verbose`, `true`, `false` or other text, as configured. */
  print?: string;
  /** The run unit that declares the step. */
  unit?: string;
  /** Rendered condition texts, evaluated when the step is reached; absent when there are none. */
  conditions?: string[];
  /** 0–255 after call overrides (255 when unset); smaller runs earlier. */
  mergePriority?: number;
}

export interface SpecKapp {
  /** `manifest:kapp`. */
  id: string;
  dependsOn: string[];
  /** Selected by -i/-x (or an ancestor processed with --parents). */
  selected: boolean;
  /** The kapp's own conditions are all true. */
  conditionsOk: boolean;
  phases: Record<Phase, SpecStep[]>;
}

export interface StackSpec {
  stack: string;
  kapps: SpecKapp[];
}

/** The spec form of a planned step: what `kapps generate` prints and a release records. */
export function toSpecStep(step: PlannedStep): SpecStep {
  const spec: SpecStep = {
    name: step.name,
    unit: step.unit,
    command: step.command,
    args: [...step.args],
    env: { ...step.env },
    workingDir: step.workingDir,
  };
  // Keys in this order, optional ones only when set (assignments: this runs for every step of a big stack).
  if (step.timeout !== undefined) spec.timeout = step.timeout;
  spec.expectedExitCode = step.expectedExitCode;
  spec.ignoreErrors = step.ignoreErrors;
  spec.loadOutputs = step.loadOutputs;
  if (step.stdout !== undefined) spec.stdout = step.stdout;
  if (step.stderr !== undefined) spec.stderr = step.stderr;
  if (step.print !== undefined) spec.print = step.print;
  if (step.conditions.length > 0) spec.conditions = [...step.conditions];
  spec.mergePriority = step.mergePriority;
  return spec;
}
