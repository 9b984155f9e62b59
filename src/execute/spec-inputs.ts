/**
 * What a kapp's complete spec is made from, read from the workspace: each source's commit and file-tree digest
 * (git through the injected runner), each template rendered as the run would render it before its first step (in
 * memory: nothing is written), and the kapp's resolved variables. The spec itself is `plan/complete-spec.ts`.
 */
import { access } from 'node:fs/promises';
import path from 'node:path';
import type { KappInputs, SourceInput, TemplateInput } from '../plan/complete-spec.js';
import type { SpecKapp } from '../plan/spec.js';
import type { KappModel } from '../stack/kapp-model.js';
import type { Stack } from '../stack/stack.js';
import { hasKeys } from '../stack/stack-variables.js';
import { isGoMap, newGoMap, toJS } from '../go-value/value.js';
import { renderTemplate } from '../template/index.js';
import type { CommandRunner } from '../workspace/git-source.js';
import { checkoutMarker, isCheckoutOf } from '../workspace/git-source.js';
import { readFileUpTo } from '../workspace/confine.js';
import { treeDigest } from '../workspace/tree-digest.js';
import { sourceDir, type ResolvedSource } from '../workspace/workspace.js';
import { MAX_TEMPLATE_SOURCE_BYTES, templateSourceCandidates } from './templates.js';

/** The inputs of each kapp of `specs` (by id), and the kapps whose configuration reads `.outputs`. */
export async function collectSpecInputs(
  stack: Stack,
  specs: readonly SpecKapp[],
  run: CommandRunner,
): Promise<{ inputs: Map<string, KappInputs>; readsOutputs: Set<string> }> {
  const views = stack.placeholderViews();
  const inputs = new Map<string, KappInputs>();
  const readsOutputs = new Set<string>();
  // A few kapps at a time: each may run git and read its file trees.
  const queue = [...specs];
  const worker = async (): Promise<void> => {
    for (let spec = queue.shift(); spec !== undefined; spec = queue.shift()) {
      const kapp = stack.kapp(spec.id);
      // A kapp with no variables of its own and no templates records none: its variable map is not worked out.
      const vars = hasOwnInputs(kapp)
        ? stack.variables(kapp, { outputs: views.get(kapp.id) ?? newGoMap(), planOnly: true })
        : undefined;
      const templates = vars ? await kappTemplates(stack, kapp, vars) : { list: [], reads: false, sources: [] };
      if (mentionsOutputs(kapp.descriptor) || templates.reads) readsOutputs.add(kapp.id);
      // Template sources are left out of the file digests: their rendered content is in the spec.
      const generated = generatedPaths(kapp, spec, templates.list);
      for (const file of templates.sources) generated.add(file);
      const sources = await Promise.all(kapp.sources.map((s) => sourceInput(stack, kapp, s, generated, run)));
      // Only `.kapp.vars` is recorded: the rest of the variables (the stack's, every kapp's) is not converted.
      const kappVars = !vars
        ? undefined
        : isGoMap(vars.kapp)
          ? (toJS(vars.kapp.vars ?? null) as Record<string, unknown> | null)
          : (toJS(vars) as { kapp?: { vars?: Record<string, unknown> } }).kapp?.vars;
      inputs.set(kapp.id, { sources, templates: templates.list, vars: kappVars ?? {} });
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, specs.length) }, worker));
  return { inputs, readsOutputs };
}

/** Whether the kapp has variables of its own (its descriptor's, its vars files') or templates. */
function hasOwnInputs(kapp: KappModel): boolean {
  return (
    (kapp.descriptor.templates?.length ?? 0) > 0 ||
    hasKeys(kapp.kappVarsFromFiles) ||
    (kapp.descriptor.vars !== undefined && hasKeys(kapp.descriptor.vars))
  );
}

/** Whether any text of a descriptor mentions `.outputs`. */
function mentionsOutputs(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('.outputs');
  if (Array.isArray(value)) return value.some(mentionsOutputs);
  if (value !== null && typeof value === 'object') return Object.values(value).some(mentionsOutputs);
  return false;
}

/** The templates whose conditions hold, rendered in memory (content null when they cannot be rendered yet). */
async function kappTemplates(
  stack: Stack,
  kapp: KappModel,
  vars: ReturnType<Stack['variables']>,
): Promise<{ list: TemplateInput[]; reads: boolean; sources: string[] }> {
  const list: TemplateInput[] = [];
  const sources: string[] = [];
  let reads = false;
  let targets;
  try {
    targets = stack.templateTargets(kapp, vars);
  } catch {
    // A template whose fields cannot be rendered fails the run itself, with its own message.
    return { list, reads, sources };
  }
  for (const [id, target] of targets) {
    const sensitive = target.template.sensitive ?? false;
    let file: string | undefined;
    for (const candidate of templateSourceCandidates(stack, kapp, target.source, true, true)) {
      if (await exists(candidate)) {
        file = candidate;
        break;
      }
    }
    let content: string | null = null;
    if (file) {
      sources.push(file);
      try {
        const text = await readFileUpTo(file, MAX_TEMPLATE_SOURCE_BYTES, 'the source');
        if (text?.includes('.outputs')) reads = true;
        content = text === undefined ? null : renderTemplate(text, vars, { name: path.basename(file) });
      } catch {
        content = null;
      }
    }
    list.push({ id, source: target.source, dest: target.dest, sensitive, content });
  }
  return { list, reads, sources };
}

/** Files kapps writes into a kapp's directory: template destinations, outputs, captured step output. */
function generatedPaths(kapp: KappModel, spec: SpecKapp, templates: readonly TemplateInput[]): Set<string> {
  const out = new Set<string>(templates.map((t) => t.dest));
  for (const o of kapp.descriptor.outputs ?? []) if (o.path) out.add(path.resolve(kapp.configDir, o.path));
  for (const steps of Object.values(spec.phases)) {
    for (const step of steps) {
      if (step.stdout) out.add(path.resolve(step.workingDir, step.stdout));
      if (step.stderr) out.add(path.resolve(step.workingDir, step.stderr));
    }
  }
  return out;
}

async function sourceInput(
  stack: Stack,
  kapp: KappModel,
  source: ResolvedSource,
  generated: ReadonlySet<string>,
  run: CommandRunner,
): Promise<SourceInput> {
  const inWorkspace = sourceDir(kapp.cacheRoot, source);
  if (source.kind === 'file') {
    // The kapp's sugarkube.yaml is left out too: what it says is in the spec already (steps, templates, variables).
    const config = kapp.configFile;
    const skip = (rel: string): boolean =>
      generated.has(path.join(inWorkspace, rel)) ||
      generated.has(path.join(source.path, rel)) ||
      (config !== undefined && (path.join(inWorkspace, rel) === config || path.join(source.path, rel) === config));
    return { id: source.id, kind: 'file', uri: source.uri ?? source.path, tree: await treeDigest(source.path, skip) };
  }
  const sub = source.path.replace(/^\/+|\/+$/g, '');
  // As written, less the ref (recorded on its own).
  const uri = source.uri?.replace(/#[^#]*$/, '') ?? (sub ? `${source.repo}//${sub}` : source.repo);
  const base: SourceInput = { id: source.id, kind: 'git', uri, ref: source.ref, commit: null, tree: null };
  const checkout = path.join(kapp.cacheRoot, '.sugarkube', source.fqId);
  const git = async (args: string[], cwd: string): Promise<string | undefined> => {
    const r = await run('git', args, { cwd, timeoutMs: 30_000 });
    return r.exitCode === 0 ? r.stdout.trim() : undefined;
  };
  const checkedOut = await exists(path.join(checkout, '.git'));
  if (checkedOut && isCheckoutOf(checkout, checkoutMarker(source))) {
    base.commit = (await git(['rev-parse', '--verify', 'HEAD^{commit}'], checkout)) ?? null;
    base.tree = (await git(['rev-parse', '--verify', sub ? `HEAD:${sub}` : 'HEAD^{tree}'], checkout)) ?? null;
    return base;
  }
  if (!checkedOut && (await exists(inWorkspace))) {
    // A source folder put in the workspace by hand: its files are what is used.
    base.tree = await treeDigest(inWorkspace, (rel) => generated.has(path.join(inWorkspace, rel)));
    return base;
  }
  // Not checked out at this ref yet: what the ref names in the repository now (a pinned source: its pin).
  if (source.pin !== undefined || /^[0-9a-f]{40}$/.test(source.ref)) {
    base.commit = source.pin ?? source.ref;
    return base;
  }
  const listed = await git(['ls-remote', '--end-of-options', source.repo, source.ref], stack.config.dir);
  if (listed) base.commit = pickRef(listed, source.ref);
  return base;
}

/** Whether `file` exists (as `existsSync` says, without blocking). */
async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/** The commit `ref` names in `git ls-remote` output: a peeled tag first, then a tag, a branch, anything else. */
function pickRef(listed: string, ref: string): string | null {
  const rows = listed
    .split('\n')
    .map((line) => line.split('\t'))
    .filter((r): r is [string, string] => r.length === 2 && /^[0-9a-f]{40}$/.test(r[0] ?? ''));
  const find = (name: string): string | undefined => rows.find((r) => r[1] === name)?.[0];
  return (
    find(`refs/tags/${ref}^{}`) ??
    find(`refs/tags/${ref}`) ??
    find(`refs/heads/${ref}`) ??
    find(ref) ??
    rows[0]?.[0] ??
    null
  );
}
