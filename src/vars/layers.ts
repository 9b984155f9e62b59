/**
 * Layering of kapp descriptor fragments into one descriptor (Sugarkube §3):
 *
 *   programs (in `requires` order) < global run unit < sugarkube.yaml < manifest defaults < manifest entry
 *     < versions < stack defaults < stack overrides
 *
 * Field rules follow Sugarkube, except where it lost information (these are fixed, see docs/variables.md):
 * an explicitly written `false` or empty list in a higher layer does override (Sugarkube could not switch a boolean
 * off or empty a list), and an output's `sensitive` flag is kept unless a higher layer sets it.
 */
import type {
  ActionConfig,
  KappDescriptor,
  OutputConfig,
  ProjectConfig,
  RunUnitConfig,
  SourceConfig,
  TemplateConfig,
} from '../config/types.js';
import { PHASES } from '../vocabulary.js';
import { copyLocations, locationOf, setLocation } from '../config/locations.js';
import { mergeMaps } from './merge.js';
import { newGoMap, type GoMap } from '../go-value/value.js';

/** Name of the global run unit from sugarkube-conf.yaml, as Sugarkube calls it. */
export const GLOBAL_UNIT_NAME = 'sugarkube_config_file';

function nonEmpty(s: string | undefined): s is string {
  return s !== undefined && s !== '';
}

/** Merge entries keyed by `keyOf`, keeping first-appearance order. */
function mergeKeyed<T extends object>(
  lower: readonly T[] | undefined,
  higher: readonly T[] | undefined,
  keyOf: (t: T) => string,
  merge: (l: T, h: T) => T,
): T[] | undefined {
  if (!higher) return lower ? [...lower] : undefined;
  if (!lower) return [...higher];
  const out = [...lower];
  const index = new Map<string, number>();
  out.forEach((t, i) => index.set(keyOf(t), i));
  for (const h of higher) {
    const i = index.get(keyOf(h));
    if (i === undefined) {
      index.set(keyOf(h), out.length);
      out.push(h);
    } else {
      out[i] = merge(out[i] as T, h);
    }
  }
  return out;
}

function mergeSource(l: SourceConfig, h: SourceConfig): SourceConfig {
  const merged: SourceConfig = {
    id: nonEmpty(h.id) ? h.id : l.id,
    explicitId: h.explicitId || l.explicitId,
    ...(nonEmpty(h.uri) ? { uri: h.uri } : l.uri !== undefined ? { uri: l.uri } : {}),
  };
  if (l.options || h.options) merged.options = mergeMaps(l.options ?? newGoMap(), h.options ?? newGoMap());
  copyLocations(h, merged);
  copyLocations(l, merged);
  return merged;
}

function mergeOutput(l: OutputConfig, h: OutputConfig): OutputConfig {
  const merged: OutputConfig = { id: l.id };
  const path = nonEmpty(h.path) ? h.path : l.path;
  const format = nonEmpty(h.format) ? h.format : l.format;
  const conditions = h.conditions ?? l.conditions;
  const sensitive = h.sensitive ?? l.sensitive;
  if (path !== undefined) merged.path = path;
  if (format !== undefined) merged.format = format;
  if (conditions !== undefined) merged.conditions = conditions;
  if (sensitive !== undefined) merged.sensitive = sensitive;
  copyLocations(h, merged);
  copyLocations(l, merged);
  return merged;
}

function mergeUnit(l: RunUnitConfig, h: RunUnitConfig): RunUnitConfig {
  const merged: RunUnitConfig = { name: l.name };
  const workingDir = nonEmpty(h.working_dir) ? h.working_dir : l.working_dir;
  if (workingDir !== undefined) merged.working_dir = workingDir;
  const conditions = h.conditions ?? l.conditions;
  if (conditions !== undefined) merged.conditions = conditions;
  const binaries = h.binaries ?? l.binaries;
  if (binaries !== undefined) merged.binaries = binaries;
  if (l.env_vars || h.env_vars) merged.env_vars = { ...l.env_vars, ...h.env_vars };
  for (const phase of PHASES) {
    const steps = h[phase] ?? l[phase];
    if (steps !== undefined) merged[phase] = steps;
  }
  copyLocations(h, merged);
  copyLocations(l, merged);
  return merged;
}

function replaceList<T>(l: T[] | undefined, h: T[] | undefined): T[] | undefined {
  return h ?? l;
}

/** Merge one higher layer over a lower one (neither is modified). */
export function mergeDescriptor(lower: KappDescriptor, higher: KappDescriptor): KappDescriptor {
  const out: KappDescriptor = {};
  const id = nonEmpty(higher.id) ? higher.id : lower.id;
  if (id !== undefined) out.id = id;
  const set = <K extends keyof KappDescriptor>(key: K, value: KappDescriptor[K] | undefined): void => {
    if (value !== undefined) out[key] = value;
  };
  set(
    'sources',
    mergeKeyed(lower.sources, higher.sources, (s) => s.id, mergeSource),
  );
  set(
    'outputs',
    mergeKeyed(lower.outputs, higher.outputs, (o) => o.id, mergeOutput),
  );
  set(
    'templates',
    mergeKeyed<TemplateConfig>(
      lower.templates,
      higher.templates,
      (t) => t.id,
      (_l, h) => h,
    ),
  );
  // Unit names match case-insensitively: Sugarkube lower-cased the names it read from sugarkube-conf.yaml, so kapps
  // wrote `helm` to extend a program's `Helm` unit.
  set(
    'run_units',
    mergeKeyed(lower.run_units, higher.run_units, (u) => u.name.toLowerCase(), mergeUnit),
  );
  set('requires', replaceList(lower.requires, higher.requires));
  set('conditions', replaceList(lower.conditions, higher.conditions));
  set('depends_on', replaceList(lower.depends_on, higher.depends_on));
  for (const key of [
    'pre_install_actions',
    'post_install_actions',
    'pre_delete_actions',
    'post_delete_actions',
  ] as const) {
    set(key, replaceList<ActionConfig>(lower[key], higher[key]));
  }
  const vars = mergeVars(lower.vars, higher.vars);
  if (vars) out.vars = vars;
  if (lower.metadata || higher.metadata) {
    out.metadata = mergeMaps(lower.metadata ?? newGoMap(), higher.metadata ?? newGoMap());
  }
  set('ignore_global_defaults', higher.ignore_global_defaults ?? lower.ignore_global_defaults);
  return out;
}

/**
 * The `vars` of two layers merged. Each key of the result is located where the layer its value comes from writes it
 * (`locateMerged`), so that a variable that cannot be rendered is reported at its own line. A lower
 * layer's map alone is kept as it is (the merge would copy it unchanged; like every merged part, it is read-only).
 */
function mergeVars(lower: GoMap | undefined, higher: GoMap | undefined): GoMap | undefined {
  if (higher === undefined) return lower;
  const merged = mergeMaps(lower ?? newGoMap(), higher);
  locateMerged(merged, [lower, higher]);
  return merged;
}

/**
 * Locate each key of `merged`, the merge of `maps` (lowest first), where the map its value comes from writes it:
 * the highest map that sets the key, unless the merge kept a lower one's value (above it a `null`, or a map over a
 * value that is not empty: Sugarkube's merge keeps the lower value in both cases). A key whose maps were merged
 * together is located in the highest.
 */
export function locateMerged(merged: GoMap, maps: readonly (GoMap | undefined)[]): void {
  for (let i = maps.length - 1; i >= 0; i--) {
    const map = maps[i];
    if (map) copyLocations(map, merged);
  }
  for (const key in merged) {
    const value = merged[key];
    let highest = -1;
    for (let i = maps.length - 1; i >= 0; i--) {
      const map = maps[i];
      if (!map || !Object.hasOwn(map, key)) continue;
      if (highest < 0) highest = i;
      if (map[key] !== value) continue;
      const at = i === highest ? undefined : locationOf(map, key);
      if (at) setLocation(merged, at, key);
      break;
    }
  }
}

function isEmptyLayer(d: KappDescriptor): boolean {
  for (const k in d) if (d[k as keyof KappDescriptor] !== undefined) return false;
  return true;
}

/**
 * Fold layers, lowest precedence first. When a single layer sets anything, it is returned itself: treat the result
 * as read-only.
 */
export function mergeDescriptors(layers: readonly (KappDescriptor | undefined)[]): KappDescriptor {
  const set = layers.filter((l): l is KappDescriptor => l !== undefined && !isEmptyLayer(l));
  if (set.length === 1) return set[0] as KappDescriptor;
  let out: KappDescriptor = {};
  for (const layer of set) out = mergeDescriptor(out, layer);
  return out;
}

/** The layers of one kapp that come from its own files, the manifest and the stack (§3.1 layers 3–8). */
export interface KappLayers {
  /** The kapp's sugarkube.yaml, when the workspace has it. */
  readonly kappFile?: KappDescriptor;
  readonly manifestDefaults?: KappDescriptor;
  readonly manifestEntry: KappDescriptor;
  /** `versions` of the stack's manifest entry that name this kapp: sourceId → version. */
  readonly versions?: ReadonlyMap<string, string>;
  readonly stackDefaults?: KappDescriptor;
  readonly stackOverride?: KappDescriptor;
}

/** Look a program up by name, case-insensitively (Sugarkube lower-cased program names when it read its config). */
export function findProgram(project: ProjectConfig, name: string): KappDescriptor | undefined {
  const exact = project.programs.get(name);
  if (exact) return exact;
  const lower = name.toLowerCase();
  for (const [key, program] of project.programs) if (key.toLowerCase() === lower) return program;
  return undefined;
}

/**
 * The merged descriptor of a kapp: programs named by the merged `requires` (in that order) and the global run unit
 * are prepended unless the merged descriptor says `ignore_global_defaults: true`.
 */
export function layerKapp(project: ProjectConfig, layers: KappLayers): KappDescriptor {
  const versionLayer: KappDescriptor | undefined = layers.versions?.size
    ? {
        sources: [...layers.versions].map(([id, version]) => ({
          id,
          explicitId: true,
          options: Object.assign(newGoMap(), { branch: version }),
        })),
      }
    : undefined;
  const own = [
    layers.kappFile,
    layers.manifestDefaults,
    layers.manifestEntry,
    versionLayer,
    layers.stackDefaults,
    layers.stackOverride,
  ];
  const upper = mergeDescriptors(own);
  if (upper.ignore_global_defaults === true) return upper;
  const lower: KappDescriptor[] = [];
  for (const name of upper.requires ?? []) {
    const program = findProgram(project, name);
    if (program) lower.push(program);
  }
  if (project.run_units) lower.push({ run_units: [{ ...project.run_units, name: GLOBAL_UNIT_NAME }] });
  if (lower.length === 0) return upper;
  return mergeDescriptors([...lower, ...own]);
}
