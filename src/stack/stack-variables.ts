/**
 * A stack's variables: each kapp's rendered variable map, and the parts of its descriptor rendered against it.
 *
 * Work is done lazily and cached: a kapp's variables are rendered only when something reads them, once per distinct
 * set of inputs (outputs view, rendered templates, phase extras), so a stack of 10,000 kapps renders each kapp's
 * variables at most a few times.
 */
import path from 'node:path';
import { copyLocations, locationOf } from '../config/locations.js';
import type { KappDescriptor, StackConfig, TemplateConfig } from '../config/types.js';
import { evaluateConditions } from '../plan/go-bool.js';
import { isTemplate } from '../template/index.js';
import { isGoMap, newGoMap, type GoMap, type GoValue } from '../go-value/value.js';
import { mergeMaps } from '../vars/merge.js';
import { renderOnce, renderVariables, type RenderContext, type VariableSite } from '../vars/render.js';
import { assembleVariables, stackVariables, type StepExtras } from '../vars/variables.js';
import type { KappModel } from './kapp-model.js';

/** The value at `keys` inside `root` (maps and lists), with the container holding it. */
function leafAt(
  root: unknown,
  keys: readonly (string | number)[],
): { container: object; key: string | number; value: unknown } | undefined {
  let container: unknown = root;
  for (let i = 0; i < keys.length; i++) {
    if (container === null || typeof container !== 'object') return undefined;
    const key = keys[i] as string | number;
    const value: unknown = Array.isArray(container)
      ? typeof key === 'number'
        ? container[key]
        : undefined
      : Object.hasOwn(container, key)
        ? (container as Record<string, unknown>)[key]
        : undefined;
    if (i === keys.length - 1) return value === undefined ? undefined : { container, key, value };
    container = value;
  }
  return undefined;
}

/** `prefix` followed by `keys` as a field path: `dev.vars.db.hosts[1]`. */
function fieldPath(prefix: string, keys: readonly (string | number)[]): string {
  return keys.reduce<string>((p, k) => (typeof k === 'number' ? `${p}[${k}]` : `${p}.${k}`), prefix);
}

/** How many rendered variable maps per kapp are kept for reuse. */
const VARS_MEMO_SIZE = 4;

interface VarsMemoEntry {
  readonly outputs?: GoMap;
  readonly templates?: ReadonlyMap<string, string>;
  readonly extras?: string;
  readonly vars: GoMap;
}

/** Whether a map has any key (without listing them). */
export function hasKeys(m: GoMap): boolean {
  for (const _ in m) return true;
  return false;
}

/** True when some template string inside `value` mentions `needle` (cheaply false when the text has neither). */
function templatesMention(value: unknown, needle: string): boolean {
  try {
    const text = JSON.stringify(value);
    if (text !== undefined && !(text.includes('{{') && text.includes(needle))) return false;
  } catch {
    // Values JSON cannot hold: walk them.
  }
  return walkMentions(value, needle);
}

function walkMentions(value: unknown, needle: string): boolean {
  if (typeof value === 'string') return isTemplate(value) && value.includes(needle);
  if (Array.isArray(value)) return value.some((v) => walkMentions(v, needle));
  if (value && typeof value === 'object' && !(value instanceof Map)) {
    for (const v of Object.values(value)) if (walkMentions(v, needle)) return true;
  }
  return false;
}

/** Per-kapp state that changes while a run goes: outputs loaded, templates rendered. */
export interface KappRuntime {
  /** The kapp's view of `.outputs`. */
  readonly outputs?: GoMap;
  /** Template id → absolute path it was rendered to. */
  readonly renderedTemplates?: ReadonlyMap<string, string>;
  /**
   * Planning without a run (`generate`, `vars`, `validate`, a release's spec): a template that reads an output only
   * a run produces, and fails on its placeholder, renders `<no value>` instead of failing.
   */
  readonly planOnly?: boolean;
}

/** What the variables are rendered from, besides each kapp's own layers. */
export interface VariablesInit {
  readonly stack: StackConfig;
  readonly providerVars: GoMap;
  readonly kubeconfig: string;
}

/** The variables of a stack's kapps: see the module comment. */
export class StackVariables {
  readonly #config: StackConfig;
  readonly #providerVars: GoMap;
  readonly #kubeconfig: string;
  /** Each kapp's variables without outputs, rendered templates or extras. */
  readonly #baseVars = new Map<string, GoMap>();
  /** Recently rendered variable maps per kapp, by the identity of their inputs. */
  readonly #varsMemo = new Map<string, VarsMemoEntry[]>();
  readonly #targetsFor = new WeakMap<GoMap, Map<string, string>>();
  readonly #phaseDependent = new Map<string, boolean>();
  /** Whether provider vars or stack vars read `.sugarkube` (then every kapp renders each phase apart). */
  #stackMentionsSugarkube: boolean | undefined;
  /** The stack-wide fragments of every variable map, merged once. */
  #stackVars: GoMap | undefined;
  /** Each kapp's vars files merged with its descriptor's `vars` (the unrendered `.kapp.vars`). */
  readonly #kappVars = new Map<string, GoMap>();

  constructor(init: VariablesInit) {
    this.#config = init.stack;
    this.#providerVars = init.providerVars;
    this.#kubeconfig = init.kubeconfig;
  }

  /** Where a kapp's rendering errors point: the kapp and its manifest entry. */
  context(kapp: KappModel, planOnly = false): RenderContext {
    const location = locationOf(kapp.entry);
    return {
      subject: `kapp '${kapp.id}'`,
      ...(location ? { location } : {}),
      ...(planOnly ? { planOnly } : {}),
      locateVariable: (keys, text) => this.#variableSite(kapp, keys, text),
    };
  }

  /**
   * Where a variable of `kapp`'s map is written, found by its keys and its text in the layers it may come from,
   * highest first: `.kapp.vars` in the kapp's manifest entry, its descriptor (sugarkube.yaml, defaults) and its vars
   * files; anything else in the stack's `vars` and the provider vars files. Undefined when no layer records where.
   */
  #variableSite(kapp: KappModel, keys: readonly (string | number)[], text: string): VariableSite | undefined {
    const inKapp = keys[0] === 'kapp' && keys[1] === 'vars';
    const rest = inKapp ? keys.slice(2) : keys;
    const entry = kapp.manifest.kapps.indexOf(kapp.entry);
    const layers: { root: unknown; path?: string }[] = inKapp
      ? [
          { root: kapp.entry.vars, ...(entry >= 0 ? { path: `kapps[${entry}].vars` } : {}) },
          { root: kapp.descriptor.vars },
          { root: kapp.kappVarsFromFiles },
        ]
      : [{ root: this.#config.vars, path: `${this.#config.name}.vars` }, { root: this.#providerVars }];
    for (const layer of layers) {
      const found = leafAt(layer.root, rest);
      if (found?.value !== text) continue;
      const location = locationOf(found.container, found.key);
      if (location) return { location, ...(layer.path !== undefined ? { path: fieldPath(layer.path, rest) } : {}) };
    }
    return undefined;
  }

  /** `.kapp.templates`: each template's source, dest, sensitive flag and rendered path ('' until rendered). */
  #templatesVar(kapp: KappModel, rendered?: ReadonlyMap<string, string>): GoMap {
    const m = newGoMap();
    for (const t of kapp.descriptor.templates ?? []) {
      m[t.id] = newGoMap([
        ['source', t.source ?? ''],
        ['dest', t.dest ?? ''],
        ['sensitive', t.sensitive ?? false],
        ['rendered_path', rendered?.get(t.id) ?? ''],
      ]);
    }
    return m;
  }

  /**
   * The rendered variable map of a kapp. Results are cached by the identity of `runtime.outputs`,
   * `runtime.renderedTemplates` and the extras (an empty view or map counts as none): treat all of them, and the
   * result, as read-only.
   */
  variables(kapp: KappModel, runtime: KappRuntime = {}, extras?: StepExtras): GoMap {
    const outputs = runtime.outputs && hasKeys(runtime.outputs) ? runtime.outputs : undefined;
    const templates = runtime.renderedTemplates?.size ? runtime.renderedTemplates : undefined;
    const planOnly = runtime.planOnly === true;
    const extrasKey =
      extras || planOnly
        ? `${extras?.action ?? ''}\u0000${String(extras?.dryRun)}\u0000${String(planOnly)}`
        : undefined;
    const cacheable = !outputs && !templates && !extrasKey;
    if (cacheable) {
      const cached = this.#baseVars.get(kapp.id);
      if (cached) return cached;
    }
    const memo = cacheable ? undefined : (this.#varsMemo.get(kapp.id) ?? []);
    const hit = memo?.find((m) => m.outputs === outputs && m.templates === templates && m.extras === extrasKey);
    if (hit) return hit.vars;

    this.#stackVars ??= stackVariables(this.#config, this.#providerVars);
    let kappVars = this.#kappVars.get(kapp.id);
    if (!kappVars) {
      kappVars = mergeMaps(kapp.kappVarsFromFiles, kapp.descriptor.vars ?? newGoMap());
      this.#kappVars.set(kapp.id, kappVars);
    }
    const assembled = assembleVariables({
      stack: this.#config,
      base: this.#stackVars,
      providerVars: this.#providerVars,
      kubeconfig: this.#kubeconfig,
      kapp: {
        id: kapp.kappId,
        manifestId: kapp.manifestId,
        cacheRoot: kapp.cacheRoot,
        vars: kappVars,
        templates: this.#templatesVar(kapp, templates),
      },
      ...(outputs ? { outputs } : {}),
      ...(extras ? { extras } : {}),
    });
    const vars = renderVariables(assembled, this.context(kapp, planOnly));
    if (memo) {
      memo.unshift({
        ...(outputs ? { outputs } : {}),
        ...(templates ? { templates } : {}),
        ...(extrasKey ? { extras: extrasKey } : {}),
        vars,
      });
      if (memo.length > VARS_MEMO_SIZE) memo.pop();
      this.#varsMemo.set(kapp.id, memo);
    } else {
      this.#baseVars.set(kapp.id, vars);
    }
    return vars;
  }

  /**
   * The variables run steps are planned with: as `variables`, and when the kapp's templates have not been rendered
   * yet (`runtime.renderedTemplates` absent), `.kapp.templates.<id>.rendered_path` is the path each template whose
   * conditions hold will be rendered to.
   */
  planningVariables(kapp: KappModel, runtime: KappRuntime = {}, extras?: StepExtras): GoMap {
    const vars = this.variables(kapp, runtime, extras);
    if (runtime.renderedTemplates || (kapp.descriptor.templates?.length ?? 0) === 0) return vars;
    let targets = this.#targetsFor.get(vars);
    if (!targets) {
      targets = new Map([...this.templateTargets(kapp, vars)].map(([id, t]) => [id, t.dest] as const));
      this.#targetsFor.set(vars, targets);
    }
    return this.variables(kapp, { ...runtime, renderedTemplates: targets }, extras);
  }

  /** Whether a kapp's descriptor or variables read `.sugarkube` (action/dry-run), so each phase renders apart. */
  /** Whether a kapp's descriptor or variables read `.sugarkube` (action/dry-run), so each phase renders apart. */
  readsSugarkube(kapp: KappModel): boolean {
    let v = this.#phaseDependent.get(kapp.id);
    if (v === undefined) {
      this.#stackMentionsSugarkube ??=
        walkMentions(this.#providerVars, 'sugarkube') || walkMentions(this.#config.vars, 'sugarkube');
      // Free maps (vars, metadata) may hold big integers, which JSON cannot: they are walked.
      const { vars, metadata, ...rest } = kapp.descriptor;
      v =
        this.#stackMentionsSugarkube ||
        templatesMention(rest, 'sugarkube') ||
        walkMentions(vars, 'sugarkube') ||
        walkMentions(metadata, 'sugarkube') ||
        walkMentions(kapp.kappVarsFromFiles, 'sugarkube');
      this.#phaseDependent.set(kapp.id, v);
    }
    return v;
  }

  /** Render a part of a kapp's descriptor against its variables (the result may share unrendered parts). */
  render<T>(kapp: KappModel, value: T, vars: GoValue, what: string): T {
    return renderOnce(value, vars, this.context(kapp), what);
  }

  /**
   * The whole descriptor rendered; its `vars` are the rendered `.kapp.vars` of `vars`. `planOnly`: see
   * `KappRuntime.planOnly`.
   */
  renderDescriptor(kapp: KappModel, vars: GoMap, planOnly = false): KappDescriptor {
    const { vars: _v, ...rest } = kapp.descriptor;
    const rendered: KappDescriptor = { ...renderOnce(rest, vars, this.context(kapp, planOnly)) };
    const kappVars = isGoMap(vars.kapp) ? vars.kapp.vars : undefined;
    if (isGoMap(kappVars)) rendered.vars = kappVars;
    return rendered;
  }

  /** The would-be (or actual) rendered path of each template whose conditions hold, for `.kapp.templates.*.rendered_path`. */
  templateTargets(
    kapp: KappModel,
    vars: GoMap,
  ): Map<string, { template: TemplateConfig; source: string; dest: string }> {
    const out = new Map<string, { template: TemplateConfig; source: string; dest: string }>();
    for (const t of kapp.descriptor.templates ?? []) {
      const rendered = this.render(kapp, t, vars, `templates.${t.id}`);
      copyLocations(t, rendered);
      const conditions = rendered.conditions ?? [];
      const ok = evaluateConditions(conditions, {
        kapp: kapp.id,
        owner: `template '${t.id}'`,
        conditionLocations: conditions.map((_, i) => locationOf(conditions, i)),
        ...(locationOf(t) ? { location: locationOf(t) } : {}),
      });
      if (!ok) continue;
      const dest = path.resolve(kapp.configDir, rendered.dest ?? '');
      out.set(t.id, { template: rendered, source: rendered.source ?? '', dest });
    }
    return out;
  }
}
