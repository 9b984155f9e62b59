/** Opening the stack a command names: the request, fetching missing sources for planning, and its warnings. */
import { parseSubstitutionFlags } from '../config/source-substitution.js';
import { UsageError } from '../diagnostics/errors.js';
import type * as OpenStackModule from '../stack/open-stack.js';
import type { OpenStackRequest } from '../stack/open-stack.js';
import type * as MissingSourcesModule from './missing-sources.js';
import type { Stack } from '../stack/stack.js';
import type { EngineContext, StackParams } from './context.js';
import { inRunContext, runEnvOf } from './scope.js';
import { viewOf } from './view.js';

/** How a command uses the stack it opens. */
export interface OpenOptions {
  /**
   * A command that reports on the kapps without running them (generate, graph, vars, validate, preview, a dry
   * run): git sources missing from the workspace are fetched first, or with --no-fetch the command fails.
   */
  readonly planning?: boolean;
  /** An install or delete that applies without --allow-no-value: `<no value>` in a step is an error. */
  readonly applyNoValue?: boolean;
  /** Stop fetching sources when this is aborted. */
  readonly signal?: AbortSignal;
}

/** The request to open the stack the parameters name. */
export function stackRequest(params: StackParams, options: OpenOptions, ctx: EngineContext): OpenStackRequest {
  const subs = parseSubstitutionFlags(params.sourceSub ?? [], ctx.cwd);
  if (typeof subs === 'string') throw new UsageError(subs);
  const overrides: Record<string, string> = {};
  for (const key of ['provider', 'provisioner', 'account', 'region', 'profile', 'cluster'] as const) {
    const v = params[key];
    if (!v) continue;
    // An override is a value, never template source: templates render it as text, and a rendered text holding `{{`
    // would be rendered again (also when two overrides meet, `x{` and `{ env "A" }}`), so braces are refused.
    if (/[{}]/.test(v))
      throw new UsageError(
        `--${key} ${JSON.stringify(v)}: an override is a value, not a template; "{" and "}" are not allowed`,
      );
    overrides[key] = v;
  }
  return {
    stackFile: params.stackFile,
    stackName: params.stackName,
    ...(params.workspaceDir ? { workspace: params.workspaceDir } : {}),
    ...(params.config ? { configFile: params.config } : {}),
    cwd: ctx.cwd,
    overrides,
    include: params.include,
    exclude: params.exclude,
    parents: params.parents ?? false,
    ...(runEnvOf(ctx).KUBECONFIG ? { kubeconfig: runEnvOf(ctx).KUBECONFIG } : {}),
    strict: params.strictVars,
    ...(options.applyNoValue ? { applyNoValue: true } : {}),
    ...(params.actions === false ? { quietActions: true } : {}),
    ...(subs.length ? { sourceSubstitutions: subs } : {}),
    ...(params.sourcePins ? { sourcePins: params.sourcePins } : {}),
  };
}

/** Per context: how many of each stack's warnings were said, and which warnings (a stack reopened after a fetch repeats them). */
const said = new WeakMap<EngineContext, { counts: WeakMap<Stack, number>; keys: Set<string> }>();

/** Say the stack's warnings not said yet in this context. */
export function flushWarnings(stack: Stack, ctx: EngineContext): void {
  let memory = said.get(ctx);
  if (!memory) said.set(ctx, (memory = { counts: new WeakMap(), keys: new Set() }));
  const from = memory.counts.get(stack) ?? 0;
  if (stack.warnings.length <= from) return;
  memory.counts.set(stack, stack.warnings.length);
  const keys = memory.keys;
  const fresh = stack.warnings.slice(from).filter((w) => {
    const key = `${w.location?.file ?? ''}:${w.location?.line ?? ''}:${w.message}`;
    if (keys.has(key)) return false;
    keys.add(key);
    return true;
  });
  if (fresh.length === 0) return;
  viewOf(ctx).stackWarnings({ diagnostics: fresh, cwd: ctx.cwd });
}

/** The modules that open a stack, and those that fetch its missing sources when the command does. */
interface OpeningModules {
  readonly open: typeof OpenStackModule;
  readonly missing: typeof MissingSourcesModule | undefined;
}

/**
 * Load the modules that open the stack `params` names. Done before the run's render context is entered
 * (`inRunContext`) where the caller can: from then on Node 20 follows every promise of the process (the hooks of
 * AsyncLocalStorage), and loading modules makes thousands of them (a tenth of `kapps generate`'s CPU time).
 */
export async function loadOpening(params: StackParams, options: OpenOptions): Promise<OpeningModules> {
  const open = await import('../stack/open-stack.js');
  const missing = options.planning || params.fetch === false ? await import('./missing-sources.js') : undefined;
  return { open, missing };
}

/** Open the stack (fetching the sources a planning command needs) and say its warnings so far. */
export async function openStackFor(params: StackParams, options: OpenOptions, ctx: EngineContext): Promise<Stack> {
  const modules = await loadOpening(params, options);
  return inRunContext(ctx, () => openInContext(modules, params, options, ctx));
}

async function openInContext(
  modules: OpeningModules,
  params: StackParams,
  options: OpenOptions,
  ctx: EngineContext,
): Promise<Stack> {
  const { openStack } = modules.open;
  let stack = openStack(stackRequest(params, options, ctx));
  if (modules.missing) {
    const { fetchMissingSources, missingKapps, missingSourcesError } = modules.missing;
    // A fetched kapp's sugarkube.yaml can add dependencies, hence sources of new ancestors: fetch until none is missing.
    const tried = new Set<string>();
    for (let missing = missingKapps(stack); missing.length > 0; missing = missingKapps(stack)) {
      if (params.fetch === false) throw missingSourcesError(stack, missing, params);
      const fresh = missing.filter((id) => !tried.has(id));
      if (fresh.length === 0) throw missingSourcesError(stack, missing, params);
      for (const id of fresh) tried.add(id);
      await fetchMissingSources(stack, fresh, ctx, options.signal);
      stack = openStack(stackRequest(params, options, ctx));
    }
  }
  flushWarnings(stack, ctx);
  return stack;
}
