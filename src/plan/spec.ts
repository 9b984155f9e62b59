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
  /**
   * Format 2 and later (absent in releases written before): each source as written and what was used. Together with
   * `templates` and `vars`, what a kapp's steps do not show of its desired state.
   */
  sources?: SpecSource[];
  /** Format 2: each template whose conditions hold, with a digest of its rendered content. */
  templates?: SpecTemplate[];
  /** Format 2: the kapp's resolved variables (`.kapp.vars`), sensitive values replaced by keyed masks. */
  vars?: Record<string, unknown>;
}

/** A source of a kapp in the spec. */
export interface SpecSource {
  id: string;
  kind: 'git' | 'file';
  /** The source as written (a path under a root of the spec as `${kapp_dir}`, `${workspace}` or `${stack_dir}`). */
  uri: string;
  /** Git: the ref the manifest names. */
  ref?: string;
  /** Git: the commit that ref resolved to; null when it could not be resolved. */
  commit?: string | null;
  /**
   * A keyed digest of the files the source yields (files kapps generates left out): for a file source, its file
   * tree; for git, the tree object of the path in the commit. Null when it could not be read.
   */
  digest?: string | null;
}

/** A template of a kapp in the spec. */
export interface SpecTemplate {
  id: string;
  /** As written. */
  source: string;
  /** Where it is written, relative to a root of the spec. */
  dest: string;
  sensitive: boolean;
  /** Keyed digest of the rendered content; `null` when it cannot be rendered before the run (it reads outputs). */
  digest: string | null;
  /** Lines of the rendered content. */
  lineCount: number;
  /** The rendered lines, for non-sensitive templates within the size bound; secrets replaced by keyed masks. */
  lines?: string[];
}

/** The format of the spec this kapps records: 2 (sources, templates, vars, relative paths, keyed secrets). */
export const SPEC_FORMAT = 2;

export interface StackSpec {
  stack: string;
  kapps: SpecKapp[];
  /** `SPEC_FORMAT` for the specs a release records; absent in releases written before (and in `kapps generate`). */
  format?: number;
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
