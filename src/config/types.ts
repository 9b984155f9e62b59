/**
 * Configuration as written by the user, after YAML parsing and schema validation, before any templating.
 * Every string may still contain Go-template actions. Shapes are normalised: lists of sources, outputs and
 * templates and maps of run units all become arrays of named entries in declaration order, whichever shape the
 * file used (Sugarkube's "descriptor with lists" vs "with maps").
 *
 * Locations of every object and field are kept in a side table (`./locations.ts`), not in these objects, so they
 * can be printed and serialised as they are.
 */
import type { GoMap, GoValue } from '../go-value/value.js';
import type { SourceSubstitution } from './source-substitution.js';
import type { Phase } from '../vocabulary.js';

/** A run step (`run_units.<unit>.<phase>[i]`). Typed fields may be written as templates (strings) and are converted after rendering. */
export interface RunStepConfig {
  name?: string;
  command?: string;
  /** A shell-like command line; tokenised after rendering. */
  args?: string;
  env_vars?: Record<string, string>;
  working_dir?: string;
  stdout?: string;
  stderr?: string;
  /** `verbose`, `true`, `false`, or any text (shown always). YAML `true`/`false` are kept as their text. */
  print?: string;
  expected_exit_code?: number | string;
  ignore_errors?: boolean | string;
  conditions?: string[];
  /** 0–255; absent counts as 255. */
  merge_priority?: number;
  /** `PHASE` or `PHASE/STEP`. */
  call?: string;
  load_outputs?: boolean | string;
  /** Seconds; 0 or absent: no timeout. */
  timeout?: number | string;
  binaries?: string[];
}

/** A run unit (`run_units.<name>`): its settings and, under each phase's name (`plan_install`, …), its steps. */
export interface RunUnitConfig extends Partial<Record<Phase, RunStepConfig[]>> {
  /** The unit's name (its key under `run_units`). */
  name: string;
  working_dir?: string;
  conditions?: string[];
  binaries?: string[];
  env_vars?: Record<string, string>;
}

export interface SourceConfig {
  /** Explicit id, or derived from the uri's path basename (see config/sources). */
  id: string;
  /** Whether `id` was written explicitly. */
  explicitId: boolean;
  uri?: string;
  options?: GoMap;
}

export interface OutputConfig {
  id: string;
  path?: string;
  /** `json`, `yaml` or `text` (case-insensitive). */
  format?: string;
  sensitive?: boolean;
  conditions?: string[];
}

export interface TemplateConfig {
  id: string;
  source?: string;
  dest?: string;
  sensitive?: boolean;
  conditions?: string[];
}

export interface DependsOnConfig {
  /** `kapp` (same manifest) or `manifest:kapp`. */
  id: string;
  conditions?: string[];
}

/** One action item: `{cluster_update: {params: [...]}}` or `{none: null}`. */
export interface ActionConfig {
  id: string;
  params?: GoValue[];
}

/**
 * A kapp descriptor fragment: a program in sugarkube-conf.yaml, a kapp's sugarkube.yaml, a manifest's defaults or
 * kapp entry, a stack's defaults or overrides. Absent fields are `undefined` (they do not override lower layers).
 */
export interface KappDescriptor {
  id?: string;
  sources?: SourceConfig[];
  outputs?: OutputConfig[];
  requires?: string[];
  vars?: GoMap;
  templates?: TemplateConfig[];
  run_units?: RunUnitConfig[];
  depends_on?: DependsOnConfig[];
  conditions?: string[];
  pre_install_actions?: ActionConfig[];
  post_install_actions?: ActionConfig[];
  pre_delete_actions?: ActionConfig[];
  post_delete_actions?: ActionConfig[];
  ignore_global_defaults?: boolean;
  metadata?: GoMap;
}

/** `sugarkube-conf.yaml` (optional; defaults when absent). */
export interface ProjectConfig {
  /** Absolute path of the file, or undefined when no file was found (defaults). */
  file?: string;
  /** Project name for releases (`project:`), if set. */
  project?: string;
  /** Release backend URL or path (`backend:`), if set. */
  backend?: string;
  /** Worker pool size; default 5. */
  num_workers: number;
  log_level?: string;
  json_logs?: boolean;
  no_color?: boolean;
  verbose?: boolean;
  /** Programs by name, in file order. */
  programs: Map<string, KappDescriptor>;
  /** The global run unit (named `sugarkube_config_file`), if any. */
  run_units?: RunUnitConfig;
  /** `source_substitutions:`, replacements made absolute (relative to the file). */
  source_substitutions?: SourceSubstitution[];
}

export interface ManifestRefConfig {
  /** Absolute path of the manifest file. */
  uri: string;
  /** Explicit id, or the basename of uri without extension. */
  id: string;
  /** Stack overrides per kapp id (descriptor "with maps" normalised). */
  overrides: Map<string, KappDescriptor>;
  /** `"<kappId>/<sourceId>" → version` (sets `sources.<sourceId>.options.branch`). */
  versions: Map<string, string>;
}

/** One named stack of a stack file, with CLI overrides applied. */
export interface StackConfig {
  /** The stack name (the map key, or `name:`). */
  name: string;
  /** Absolute path of the stack file. */
  file: string;
  /** Directory of the stack file (base for relative paths). */
  dir: string;
  provider: string;
  provisioner: string;
  account: string;
  region: string;
  profile: string;
  cluster: string;
  manifests: ManifestRefConfig[];
  /** Absolute directories. */
  provider_vars_dirs: string[];
  kapp_vars_dirs: string[];
  template_dirs: string[];
  /** Stack-level variables (top level of the variable map, above provider vars). */
  vars: GoMap;
  defaults: KappDescriptor;
}

/** A manifest file. */
export interface ManifestConfig {
  id: string;
  /** Absolute path. */
  file: string;
  sequential: boolean;
  defaults: KappDescriptor;
  /** Kapp entries in file order; each has an `id`. */
  kapps: (KappDescriptor & { id: string })[];
}
