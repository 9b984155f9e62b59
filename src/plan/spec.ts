/**
 * The resolved spec of a stack: what `kapps generate -o json` prints, and what a release records as its spec.
 * A public interface: add optional fields only.
 */
import type { Phase } from '../report/events.js';

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
