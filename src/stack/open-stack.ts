/**
 * Opening a stack: the project config, the stack, its manifests, each kapp's layered descriptor (with its
 * sugarkube.yaml from the workspace), provider and kapp vars files, the DAG and the selection. Everything the
 * commands need before they render a step. Reads files; runs nothing.
 */
import { existsSync, readdirSync, statSync, type Dirent } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  defaultProjectConfig,
  loadKappDescriptor,
  loadManifest,
  loadProjectConfig,
  loadStack,
  loadVarsFile,
} from '../config/index.js';
import type { StackOverrides } from '../config/index.js';
import type { SourceSubstitution } from '../config/source-substitution.js';
import { locationOf } from '../config/locations.js';
import type { ManifestConfig, ProjectConfig, StackConfig } from '../config/types.js';
import { parseSelector } from '../plan/select.js';
import { error as diagnosticError, warning as diagnosticWarning, type Diagnostic } from '../diagnostics/diagnostic.js';
import { ConfigError } from '../diagnostics/errors.js';
import { newGoMap, type GoMap } from '../go-value/value.js';
import { layerKapp, locateMerged } from '../vars/layers.js';
import { mergeAll } from '../vars/merge.js';
import { kappVarNames, providerVarNames, VarFileWalker } from '../vars/var-files.js';
import { findKappConfig, sourceDir, type ResolvedSource } from '../workspace/workspace.js';
import type { KappModel } from './kapp-model.js';
import { renderSourceRefs, resolveSources, type TemplatedRef } from './sources.js';
import { Stack } from './stack.js';

/** What to open and how. */
export interface OpenStackRequest {
  readonly stackFile: string;
  readonly stackName: string;
  /** Workspace directory; default `<stack dir>/.kapps-workspace/<stack name>`. */
  readonly workspace?: string;
  readonly configFile?: string;
  readonly cwd: string;
  readonly homeDir?: string;
  readonly overrides?: StackOverrides;
  readonly include?: readonly string[];
  readonly exclude?: readonly string[];
  readonly parents?: boolean;
  /** `$KUBECONFIG` (the `.kubeconfig` variable). */
  readonly kubeconfig?: string;
  /** `--strict-vars`: `<no value>` in a command, argument or condition is an error, not a warning. */
  readonly strict?: boolean;
  /** An install or delete that applies: `<no value>` in a command, argument, env value or condition is an error. */
  readonly applyNoValue?: boolean;
  /** `--no-actions`: no warning about the Sugarkube actions kapps does not run. */
  readonly quietActions?: boolean;
  /**
   * Warn about kapps whose git sources are not in the workspace (their sugarkube.yaml cannot be read): for the
   * planning commands, which never fetch anything.
   */
  readonly warnUnfetched?: boolean;
  /** `--source-sub` substitutions (tried before those of sugarkube-conf.yaml). */
  readonly sourceSubstitutions?: readonly SourceSubstitution[];
  /** Git sources pinned to a commit (a rollback): kapp id → source id → full SHA (see `GitSource.pin`). */
  readonly sourcePins?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** The default workspace of a stack. */
export function defaultWorkspace(stackFile: string, stackName: string): string {
  return path.join(path.dirname(path.resolve(stackFile)), '.kapps-workspace', stackName);
}

/**
 * Run `load`, collecting the diagnostics of a `ConfigError` it throws into `problems` (then the result is undefined)
 * so that one run reports the problems of every file. Other errors are thrown on.
 */
function collecting<T>(problems: Diagnostic[], load: () => T): T | undefined {
  try {
    return load();
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    problems.push(...e.diagnostics);
    return undefined;
  }
}

/** Parsed vars files, shared by every kapp that walks onto them; a file that cannot be read counts as empty. */
class VarsFileCache {
  readonly #files = new Map<string, GoMap>();
  constructor(private readonly problems: Diagnostic[]) {}
  load(file: string): GoMap {
    let m = this.#files.get(file);
    if (!m) {
      m = collecting(this.problems, () => loadVarsFile(file)) ?? newGoMap();
      this.#files.set(file, m);
    }
    return m;
  }
}

/** Memoised directory checks: 10,000 kapps share a handful of workspace directories. */
class DirCache {
  readonly #dirs = new Map<string, boolean>();
  /** Each listed directory's entries by name (null: it could not be listed). */
  readonly #listings = new Map<string, Map<string, Dirent> | null>();
  isDir(dir: string): boolean {
    let v = this.#dirs.get(dir);
    if (v === undefined) {
      try {
        v = statSync(dir).isDirectory();
      } catch {
        v = false;
      }
      this.#dirs.set(dir, v);
    }
    return v;
  }

  /**
   * `isDir` for one of many siblings (each kapp's directory in its manifest's workspace directory): their parent is
   * listed once, with each entry's type, instead of a `stat` of each. A link is followed, as `stat` does.
   */
  isSubDir(dir: string): boolean {
    const parent = path.dirname(dir);
    let listing = this.#listings.get(parent);
    if (listing === undefined) {
      try {
        listing = new Map(readdirSync(parent, { withFileTypes: true }).map((e) => [e.name, e] as const));
      } catch {
        listing = null;
      }
      this.#listings.set(parent, listing);
    }
    const entry = listing?.get(path.basename(dir));
    if (!entry) return false;
    return entry.isSymbolicLink() ? this.isDir(dir) : entry.isDirectory();
  }
}

/** Where a kapp's sugarkube.yaml is read from, and the directory it stands for in the workspace. */
interface KappConfigPlace {
  readonly file: string;
  /** Base of the kapp's relative template and output paths: always inside the workspace. */
  readonly dir: string;
}

/**
 * Find a kapp's sugarkube.yaml. A file source is read in place (the workspace holds an exact copy of it, so planning
 * needs no workspace and diagnostics point at the user's file), a git source from its checkout in the workspace;
 * sources are tried in declaration order. Otherwise the kapp's workspace directory is searched, as Sugarkube did.
 */
function findKappConfigPlace(
  cacheRoot: string,
  sources: readonly ResolvedSource[],
  fqId: string,
  dirs: DirCache,
): KappConfigPlace | undefined {
  for (const source of sources) {
    const inWorkspace = sourceDir(cacheRoot, source);
    if (source.kind === 'file') {
      const candidate = path.join(source.path, 'sugarkube.yaml');
      if (dirs.isDir(source.path) && existsSync(candidate)) return { file: candidate, dir: inWorkspace };
    } else if (dirs.isDir(path.dirname(cacheRoot)) && existsSync(path.join(inWorkspace, 'sugarkube.yaml'))) {
      return { file: path.join(inWorkspace, 'sugarkube.yaml'), dir: inWorkspace };
    }
  }
  if (!dirs.isSubDir(cacheRoot)) return undefined;
  const file = findKappConfig(cacheRoot, sources, fqId);
  return file ? { file, dir: path.dirname(file) } : undefined;
}

/** Load the manifests of a stack, collecting the problems of every file; duplicate ids are reported by the DAG. */
function loadManifests(
  stackManifests: Parameters<typeof loadManifest>[0][],
  warnings: Diagnostic[],
  problems: Diagnostic[],
): ManifestConfig[] {
  const out: ManifestConfig[] = [];
  for (const ref of stackManifests) {
    const loaded = collecting(problems, () => loadManifest(ref));
    if (!loaded) continue;
    warnings.push(...loaded.warnings);
    out.push(loaded.manifest);
  }
  return out;
}

/** A diagnostic per configured vars directory that does not exist. */
function missingVarsDirs(stack: StackConfig, dirs: DirCache): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const key of ['provider_vars_dirs', 'kapp_vars_dirs'] as const) {
    stack[key].forEach((dir, i) => {
      if (dirs.isDir(dir)) return;
      const what = existsSync(dir) ? 'is not a directory' : 'does not exist';
      out.push(
        diagnosticError(`${key}: ${dir} ${what}`, locationOf(stack[key], i) ?? locationOf(stack, key), {
          path: `${stack.name}.${key}[${i}]`,
        }),
      );
    });
  }
  return out;
}

/**
 * Diagnostics grouped by file, the stack file first and the others in the order they were first met, each file's
 * in line order (diagnostics without a location last).
 */
function byFile(diagnostics: readonly Diagnostic[], stackFile: string): Diagnostic[] {
  const rank = new Map<string, number>([[stackFile, 0]]);
  for (const d of diagnostics) if (d.location && !rank.has(d.location.file)) rank.set(d.location.file, rank.size);
  const key = (d: Diagnostic): number => (d.location ? (rank.get(d.location.file) ?? 0) : rank.size);
  return [...diagnostics].sort(
    (a, b) =>
      key(a) - key(b) ||
      (a.location?.line ?? 0) - (b.location?.line ?? 0) ||
      (a.location?.column ?? 0) - (b.location?.column ?? 0),
  );
}

function unfetchedWarning(ids: readonly string[], workspace: string): Diagnostic {
  const shown = ids.length > 5 ? [...ids.slice(0, 5), `${ids.length - 5} more`] : [...ids];
  const last = shown.pop() ?? '';
  const list = shown.length ? `${shown.join(', ')} and ${last}` : last;
  const message =
    ids.length === 1
      ? `kapp ${list} has git sources that are not in the workspace ${workspace}; its sugarkube.yaml is not read`
      : `kapps ${list} have git sources that are not in the workspace ${workspace}; their sugarkube.yaml files are not read`;
  return diagnosticWarning(message, undefined, {
    hint: 'fetch them with `kapps workspace create` (same arguments), or pass the workspace directory',
  });
}

/** The project config (sugarkube-conf.yaml), or the defaults when there is none or it cannot be read. */
function loadProject(
  request: OpenStackRequest,
  stack: StackConfig,
  warnings: Diagnostic[],
  problems: Diagnostic[],
): ProjectConfig {
  const loaded = collecting(problems, () =>
    loadProjectConfig({
      ...(request.configFile !== undefined ? { configFile: request.configFile } : {}),
      cwd: request.cwd,
      stackFile: stack.file,
      homeDir: request.homeDir ?? os.homedir(),
    }),
  );
  if (!loaded) return defaultProjectConfig();
  warnings.push(...loaded.warnings);
  return loaded.config;
}

/** A manifest as the stack lists it (with its versions and overrides). */
type ManifestRef = StackConfig['manifests'][number];
/** A kapp as its manifest lists it. */
type KappEntry = ManifestConfig['kapps'][number];

/** What loading the kapps of a stack shares: the files loaded before, caches, and where problems go. */
interface KappLoading {
  readonly project: ProjectConfig;
  readonly stack: StackConfig;
  readonly workspace: string;
  readonly substitutions: readonly SourceSubstitution[];
  /** Git sources pinned to a commit: kapp id → source id → SHA. */
  readonly pins?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly walker: VarFileWalker;
  readonly dirs: DirCache;
  readonly files: VarsFileCache;
  readonly warnings: Diagnostic[];
  readonly problems: Diagnostic[];
  /** Kapps with a git source missing from the workspace and no sugarkube.yaml found elsewhere. */
  readonly unfetched: string[];
  /** Git sources whose ref is a template, rendered once the stack can compute the kapp's variables. */
  readonly templated: { id: string; sources: ResolvedSource[]; refs: TemplatedRef[] }[];
}

/** The layers of a kapp's descriptor other than its own sugarkube.yaml. */
function kappLayers(stack: StackConfig, manifest: ManifestConfig, ref: ManifestRef | undefined, entry: KappEntry) {
  const versions = new Map<string, string>();
  for (const [key, version] of ref?.versions ?? []) {
    const slash = key.indexOf('/');
    if (key.slice(0, slash) === entry.id) versions.set(key.slice(slash + 1), version);
  }
  const stackOverride = ref?.overrides.get(entry.id);
  return {
    manifestDefaults: manifest.defaults,
    manifestEntry: entry,
    versions,
    stackDefaults: stack.defaults,
    ...(stackOverride ? { stackOverride } : {}),
  };
}

/** Where the kapp's sugarkube.yaml is; a source that cannot be looked in is a problem at the kapp's entry. */
function locateKappConfig(
  loading: KappLoading,
  cacheRoot: string,
  sources: readonly ResolvedSource[],
  id: string,
  entry: KappEntry,
): KappConfigPlace | undefined {
  try {
    return findKappConfigPlace(cacheRoot, sources, id, loading.dirs);
  } catch (e) {
    if (!(e instanceof Error)) throw e;
    loading.problems.push(diagnosticError(e.message, locationOf(entry)));
    return undefined;
  }
}

/** The kapp's vars files (`kapp_vars_dirs`) merged. */
function kappVarsFiles(loading: KappLoading, kappId: string, sources: readonly ResolvedSource[]): GoMap {
  const { stack, walker, files } = loading;
  if (!stack.kapp_vars_dirs.length) return newGoMap();
  const names = kappVarNames(
    kappId,
    stack,
    sources.map((s) => ({ id: s.id, ...(s.kind === 'git' ? { fqId: s.fqId } : {}) })),
  );
  return mergeVarsFiles(stack.kapp_vars_dirs.flatMap((d) => walker.walk(d, names)).map((f) => files.load(f)));
}

/**
 * Vars files merged in order (later wins). The merged map's keys are located where the last file that sets each one
 * writes it: the files' locations are given to it, the last file's first (a key found in a later file wins).
 */
function mergeVarsFiles(maps: readonly GoMap[]): GoMap {
  const merged = mergeAll(maps);
  locateMerged(merged, maps);
  return merged;
}

/** One kapp of a manifest: its layered descriptor (with its sugarkube.yaml, when found), sources and vars files. */
function loadKapp(
  loading: KappLoading,
  manifest: ManifestConfig,
  ref: ManifestRef | undefined,
  entry: KappEntry,
  index: number,
): KappModel {
  const { project, problems } = loading;
  const id = `${manifest.id}:${entry.id}`;
  const cacheRoot = path.join(loading.workspace, manifest.id, entry.id);
  const layers = kappLayers(loading.stack, manifest, ref, entry);
  // Sources can come from any layer but the kapp's own sugarkube.yaml (which lives inside a source).
  const withoutKappFile = layerKapp(project, layers);
  const templatedRefs: TemplatedRef[] = [];
  const manifestDir = path.dirname(manifest.file);
  const pins = loading.pins?.[id];
  const sources = resolveSources(
    withoutKappFile.sources ?? [],
    manifestDir,
    id,
    problems,
    loading.substitutions,
    templatedRefs,
  ).map((source) => {
    const pin = source.kind === 'git' && pins && Object.hasOwn(pins, source.id) ? pins[source.id] : undefined;
    return pin !== undefined ? { ...source, pin } : source;
  });
  if (templatedRefs.length) loading.templated.push({ id, sources, refs: templatedRefs });
  const place = locateKappConfig(loading, cacheRoot, sources, id, entry);
  const configFile = place?.file;
  if (!place && sources.some((src) => src.kind === 'git' && !loading.dirs.isDir(sourceDir(cacheRoot, src)))) {
    loading.unfetched.push(id);
  }
  const kappFile = configFile ? collecting(problems, () => loadKappDescriptor(configFile)) : undefined;
  if (kappFile) loading.warnings.push(...kappFile.warnings);
  const descriptor = kappFile ? layerKapp(project, { ...layers, kappFile: kappFile.descriptor }) : withoutKappFile;
  return {
    id,
    manifestId: manifest.id,
    kappId: entry.id,
    index,
    manifest,
    entry,
    cacheRoot,
    ...(configFile ? { configFile } : {}),
    configDir: place?.dir ?? cacheRoot,
    sources,
    descriptor,
    kappVarsFromFiles: kappVarsFiles(loading, entry.id, sources),
    outputIds: (descriptor.outputs ?? []).map((o) => o.id),
  };
}

/**
 * Render the templated refs of git sources with the kapp's variables (as Sugarkube renders the whole descriptor);
 * what each renders to is checked before git ever sees it.
 */
function renderTemplatedRefs(opened: Stack, templated: KappLoading['templated'], problems: Diagnostic[]): void {
  for (const t of templated) {
    const kapp = opened.kapp(t.id);
    let vars: GoMap | undefined;
    renderSourceRefs(
      t.sources,
      t.refs,
      t.id,
      (text, field) => {
        vars ??= opened.variables(kapp, { planOnly: true });
        return String(opened.render(kapp, text, vars, field));
      },
      problems,
    );
  }
}

/**
 * Open a stack (see the module doc). A malformed selector is a `UsageError`, found before any file is read; every
 * problem of the files is collected into one `ConfigError`.
 */
export function openStack(request: OpenStackRequest): Stack {
  for (const selector of [...(request.include ?? []), ...(request.exclude ?? [])]) parseSelector(selector);
  const warnings: Diagnostic[] = [];
  try {
    return openLoaded(request, warnings);
  } catch (e) {
    // The warnings found so far come first: an unknown field (`manifets:`) is often why the error happens.
    if (!(e instanceof ConfigError) || warnings.length === 0) throw e;
    const shown = new Set(e.diagnostics);
    throw new ConfigError([...warnings.filter((w) => !shown.has(w)), ...e.diagnostics], e.message);
  }
}

function openLoaded(request: OpenStackRequest, warnings: Diagnostic[]): Stack {
  const problems: Diagnostic[] = [];
  const { stack, warnings: stackWarnings } = loadStack(request.stackFile, request.stackName, request.overrides ?? {});
  warnings.push(...stackWarnings);
  const project = loadProject(request, stack, warnings, problems);
  const manifests = loadManifests(stack.manifests, warnings, problems);
  const dirs = new DirCache();
  const loading: KappLoading = {
    project,
    stack,
    workspace: path.resolve(request.cwd, request.workspace ?? defaultWorkspace(stack.file, stack.name)),
    substitutions: [...(request.sourceSubstitutions ?? []), ...(project.source_substitutions ?? [])],
    ...(request.sourcePins ? { pins: request.sourcePins } : {}),
    walker: new VarFileWalker(),
    dirs,
    files: new VarsFileCache(problems),
    warnings,
    problems,
    unfetched: [],
    templated: [],
  };
  problems.push(...missingVarsDirs(stack, dirs));
  const providerNames = providerVarNames(stack);
  const providerVars = mergeVarsFiles(
    stack.provider_vars_dirs.flatMap((d) => loading.walker.walk(d, providerNames)).map((f) => loading.files.load(f)),
  );
  const refById = new Map(stack.manifests.map((m) => [m.id, m] as const));
  const kapps: KappModel[] = [];
  for (const manifest of manifests) {
    const ref = refById.get(manifest.id);
    for (const entry of manifest.kapps) kapps.push(loadKapp(loading, manifest, ref, entry, kapps.length));
  }
  if (problems.length) throw new ConfigError(byFile(problems, stack.file));
  const { workspace, unfetched } = loading;
  if (unfetched.length && request.warnUnfetched) warnings.push(unfetchedWarning(unfetched, workspace));
  const opened = new Stack({
    project,
    stack,
    manifests,
    workspace,
    kapps,
    providerVars,
    warnings,
    kubeconfig: request.kubeconfig ?? '',
    strict: request.strict ?? false,
    ...(request.applyNoValue ? { applyNoValue: true } : {}),
    include: request.include ?? [],
    exclude: request.exclude ?? [],
    parents: request.parents ?? false,
    unfetched,
  });
  renderTemplatedRefs(opened, loading.templated, problems);
  if (problems.length) throw new ConfigError(byFile(problems, stack.file));
  if (!request.quietActions) opened.warnings.push(...actionWarnings(opened));
  return opened;
}

const ACTION_FIELDS = [
  'pre_install_actions',
  'post_install_actions',
  'pre_delete_actions',
  'post_delete_actions',
] as const;

/**
 * Sugarkube's actions (e.g. `cluster_update` in `post_install_actions`) are loaded but never run: one warning per
 * kapp of the selection's sub-graph, field and action.
 */
function actionWarnings(stack: Stack): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const node of stack.selection.nodes) {
    const kapp = stack.kapp(node.id);
    const seen = new Set<string>();
    for (const field of ACTION_FIELDS) {
      const list = kapp.descriptor[field] ?? [];
      for (const action of list) {
        const key = `${field} ${action.id}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(
          diagnosticWarning(
            `kapp ${kapp.id}: ${field} '${action.id}' is not run: kapps runs no Sugarkube actions`,
            locationOf(list, list.indexOf(action)) ?? locationOf(kapp.descriptor, field) ?? locationOf(kapp.entry),
            { hint: '--no-actions silences this warning' },
          ),
        );
      }
    }
  }
  return out;
}
