/**
 * An opened stack and everything derived from it without running anything: each kapp's variables and rendered
 * descriptor, the DAG, the selection, and the planned run steps of every phase. Results that do not depend on
 * outputs are cached, so a stack of thousands of kapps renders each kapp's variables once.
 */
import path from 'node:path';
import { copyLocations, locationOf } from '../config/locations.js';
import type {
  DependsOnConfig,
  KappDescriptor,
  ManifestConfig,
  ProjectConfig,
  RunUnitConfig,
  StackConfig,
  TemplateConfig,
} from '../config/types.js';
import {
  error as diagnosticError,
  warning as diagnosticWarning,
  type Diagnostic,
  type SourceLocation,
} from '../diagnostics/diagnostic.js';
import { ConfigError } from '../diagnostics/errors.js';
import { buildDag, type DagManifestInput, type KappDag } from '../plan/dag.js';
import { evaluateConditions } from '../plan/go-bool.js';
import { selectKapps, type PlanNode, type Selection } from '../plan/select.js';
import { toSpecStep, type SpecKapp, type StackSpec } from '../plan/spec.js';
import { planSteps, type PlannedStep } from '../plan/steps.js';
import { PHASES, type Phase } from '../report/events.js';
import { isTemplate } from '../template/index.js';
import { isGoMap, newGoMap, type GoMap, type GoValue } from '../template/value.js';
import { mergeMaps } from '../vars/merge.js';
import { outputsView, withPlaceholders } from '../vars/outputs.js';
import { containsTemplate, renderOnce, renderVariables, type RenderContext } from '../vars/render.js';
import { assembleVariables, stackVariables, type StepExtras } from '../vars/variables.js';
import type { KappModel } from './kapp-model.js';

const NO_VALUE = '<no value>';

/** How many rendered variable maps per kapp are kept for reuse. */
const VARS_MEMO_SIZE = 4;

interface VarsMemoEntry {
  readonly outputs?: GoMap;
  readonly templates?: ReadonlyMap<string, string>;
  readonly extras?: string;
  readonly vars: GoMap;
}

/**
 * Diagnostics without repeats: planning the six phases of a kapp meets the same broken step up to six times, and
 * it must be reported once.
 */
export function uniqueDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diagnostics.filter((d) => {
    const at = d.location ? `${d.location.file}:${d.location.line}:${d.location.column}` : '';
    const key = `${d.severity}\u0000${at}\u0000${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function hasKeys(m: GoMap): boolean {
  for (const _ in m) return true;
  return false;
}

export interface StackInit {
  readonly project: ProjectConfig;
  readonly stack: StackConfig;
  readonly manifests: readonly ManifestConfig[];
  readonly workspace: string;
  readonly kapps: readonly KappModel[];
  readonly providerVars: GoMap;
  readonly warnings: Diagnostic[];
  readonly kubeconfig: string;
  readonly strict: boolean;
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  readonly parents: boolean;
}

/** Per-kapp state that changes while a run goes: what templates were rendered to. */
export interface KappRuntime {
  /** The kapp's view of `.outputs`. */
  readonly outputs?: GoMap;
  /** Template id → absolute path it was rendered to. */
  readonly renderedTemplates?: ReadonlyMap<string, string>;
}

/** True when some template string inside `value` mentions `needle`. */
function templatesMention(value: unknown, needle: string): boolean {
  if (typeof value === 'string') return isTemplate(value) && value.includes(needle);
  if (Array.isArray(value)) return value.some((v) => templatesMention(v, needle));
  if (value && typeof value === 'object' && !(value instanceof Map)) {
    for (const v of Object.values(value)) if (templatesMention(v, needle)) return true;
  }
  return false;
}

export class Stack {
  readonly project: ProjectConfig;
  readonly config: StackConfig;
  readonly manifests: readonly ManifestConfig[];
  readonly workspace: string;
  readonly kapps: readonly KappModel[];
  readonly warnings: Diagnostic[];
  readonly dag: KappDag;
  readonly selection: Selection;
  readonly #byId = new Map<string, KappModel>();
  readonly #planNodes = new Map<string, PlanNode>();
  readonly #providerVars: GoMap;
  readonly #kubeconfig: string;
  /** `--strict-vars`: `<no value>` in a command, argument or condition is an error, not a warning. */
  readonly #strictVars: boolean;
  readonly #noValueSeen = new Set<string>();
  readonly #baseVars = new Map<string, GoMap>();
  /** Recently rendered variable maps per kapp, by the identity of their inputs (planning asks for the same ones repeatedly). */
  readonly #varsMemo = new Map<string, VarsMemoEntry[]>();
  /** Rendered run units and template targets per variable map. */
  readonly #unitsFor = new WeakMap<GoMap, RunUnitConfig[]>();
  readonly #targetsFor = new WeakMap<GoMap, Map<string, string>>();
  readonly #phaseDependent = new Map<string, boolean>();
  /** Whether provider vars or stack vars read `.sugarkube` (then every kapp plans each phase apart). */
  #stackMentionsSugarkube: boolean | undefined;
  /** The stack-wide fragments of every variable map, merged once. */
  #stackVars: GoMap | undefined;
  /** Each kapp's vars files merged with its descriptor's `vars` (the unrendered `.kapp.vars`). */
  readonly #kappVars = new Map<string, GoMap>();

  constructor(init: StackInit) {
    this.project = init.project;
    this.config = init.stack;
    this.manifests = init.manifests;
    this.workspace = init.workspace;
    this.kapps = init.kapps;
    this.warnings = init.warnings;
    this.#providerVars = init.providerVars;
    this.#kubeconfig = init.kubeconfig;
    this.#strictVars = init.strict;
    for (const k of init.kapps) this.#byId.set(k.id, k);
    this.dag = buildDag(this.#dagInputs());
    this.selection = selectKapps(this.dag, { include: init.include, exclude: init.exclude, parents: init.parents });
    this.warnings.push(...this.selection.warnings);
    for (const n of this.selection.nodes) this.#planNodes.set(n.id, n);
  }

  /** The kapp with this `manifest:kapp` id. */
  kapp(id: string): KappModel {
    const k = this.#byId.get(id);
    if (!k) throw new Error(`no kapp ${id}`);
    return k;
  }

  /** The node of the selection's sub-graph (selected kapps and their ancestors). */
  planNode(id: string): PlanNode | undefined {
    return this.#planNodes.get(id);
  }

  #context(kapp: KappModel): RenderContext {
    const location = locationOf(kapp.entry);
    return { subject: `kapp ${kapp.id}`, ...(location ? { location } : {}) };
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
   * `runtime.renderedTemplates` and the extras (an empty view or map counts as none), so treat them as read-only.
   */
  variables(kapp: KappModel, runtime: KappRuntime = {}, extras?: StepExtras): GoMap {
    const outputs = runtime.outputs && hasKeys(runtime.outputs) ? runtime.outputs : undefined;
    const templates = runtime.renderedTemplates?.size ? runtime.renderedTemplates : undefined;
    const extrasKey = extras ? `${extras.action}\u0000${String(extras.dryRun)}` : undefined;
    const cacheable = !outputs && !templates && !extras;
    if (cacheable) {
      const cached = this.#baseVars.get(kapp.id);
      if (cached) return cached;
    }
    const memo = cacheable ? undefined : (this.#varsMemo.get(kapp.id) ?? []);
    const hit = memo?.find((m) => m.outputs === outputs && m.templates === templates && m.extras === extrasKey);
    if (hit) return hit.vars;
    this.#stackVars ??= stackVariables(this.config, this.#providerVars);
    let kappVars = this.#kappVars.get(kapp.id);
    if (!kappVars) {
      kappVars = mergeMaps(kapp.kappVarsFromFiles, kapp.descriptor.vars ?? newGoMap());
      this.#kappVars.set(kapp.id, kappVars);
    }
    const assembled = assembleVariables({
      stack: this.config,
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
    const vars = renderVariables(assembled, this.#context(kapp));
    if (memo) {
      memo.unshift({ ...(outputs ? { outputs } : {}), ...(templates ? { templates } : {}), ...(extrasKey ? { extras: extrasKey } : {}), vars });
      if (memo.length > VARS_MEMO_SIZE) memo.pop();
      this.#varsMemo.set(kapp.id, memo);
    } else this.#baseVars.set(kapp.id, vars);
    return vars;
  }

  /** Whether a kapp's descriptor or variables read `.sugarkube` (action/dry-run), so each phase renders apart. */
  #dependsOnExtras(kapp: KappModel): boolean {
    let v = this.#phaseDependent.get(kapp.id);
    if (v === undefined) {
      this.#stackMentionsSugarkube ??=
        templatesMention(this.#providerVars, 'sugarkube') || templatesMention(this.config.vars, 'sugarkube');
      v =
        this.#stackMentionsSugarkube ||
        templatesMention(kapp.descriptor, 'sugarkube') ||
        templatesMention(kapp.kappVarsFromFiles, 'sugarkube');
      this.#phaseDependent.set(kapp.id, v);
    }
    return v;
  }

  /** Whether planning a kapp's steps reads variables at all (its run units hold templates). */
  #planNeedsVariables(kapp: KappModel): boolean {
    return containsTemplate(kapp.descriptor.run_units ?? []);
  }

  /** Render a part of a kapp's descriptor against its variables. */
  render<T>(kapp: KappModel, value: T, vars: GoValue, what: string): T {
    return renderOnce(value, vars, this.#context(kapp), what);
  }

  /** The whole descriptor rendered (vars and metadata are taken from the variables instead). */
  renderDescriptor(kapp: KappModel, vars: GoMap): KappDescriptor {
    const { vars: _v, metadata: _m, ...rest } = kapp.descriptor;
    const rendered: KappDescriptor = this.render(kapp, rest, vars, '');
    const kappVars = isGoMap(vars.kapp) ? vars.kapp.vars : undefined;
    if (isGoMap(kappVars)) rendered.vars = kappVars;
    return rendered;
  }

  #dagInputs(): DagManifestInput[] {
    const problems: Diagnostic[] = [];
    const inputs = this.manifests.map((manifest) => ({
      id: manifest.id,
      sequential: manifest.sequential,
      ...(locationOf(manifest) ? { location: locationOf(manifest) } : {}),
      kapps: manifest.kapps.map((entry) => {
        const kapp = this.kapp(`${manifest.id}:${entry.id}`);
        let conditionsOk = true;
        let dependsOn: { id: string; conditionsOk: boolean; location?: ReturnType<typeof locationOf> }[] = [];
        try {
          const rawConds = kapp.descriptor.conditions ?? [];
          const rawDeps = kapp.descriptor.depends_on ?? [];
          // Variables are rendered only when the conditions or dependencies need them.
          const vars = containsTemplate(rawConds) || containsTemplate(rawDeps) ? this.variables(kapp) : newGoMap();
          const conds = this.render(kapp, rawConds, vars, 'conditions');
          conditionsOk = evaluateConditions(conds, {
            kapp: kapp.id,
            conditionLocations: conds.map((_, i) => locationOf(conds, i)),
            ...(locationOf(kapp.descriptor.conditions ?? kapp.entry) ? { location: locationOf(kapp.descriptor.conditions ?? kapp.entry) } : {}),
          });
          const deps: DependsOnConfig[] = this.render(kapp, rawDeps, vars, 'depends_on');
          dependsOn = deps.map((d) => {
            const conds2 = d.conditions ?? [];
            const ok = evaluateConditions(conds2, {
              kapp: kapp.id,
              owner: `dependency '${d.id}'`,
              conditionLocations: conds2.map((_, i) => locationOf(conds2, i)),
              ...(locationOf(d) ? { location: locationOf(d) } : {}),
            });
            return { id: d.id, conditionsOk: ok, ...(locationOf(d) ? { location: locationOf(d) } : {}) };
          });
        } catch (e) {
          if (!(e instanceof ConfigError)) throw e;
          problems.push(...e.diagnostics);
        }
        return {
          kappId: entry.id,
          conditionsOk,
          dependsOn,
          ...(locationOf(entry) ? { location: locationOf(entry) } : {}),
        };
      }),
    }));
    if (problems.length) throw new ConfigError(problems);
    return inputs as DagManifestInput[];
  }

  /** The would-be (or actual) rendered path of each template whose conditions hold, for `.kapp.templates.*.rendered_path`. */
  templateTargets(kapp: KappModel, vars: GoMap): Map<string, { template: TemplateConfig; source: string; dest: string }> {
    const out = new Map<string, { template: TemplateConfig; source: string; dest: string }>();
    for (const t of kapp.descriptor.templates ?? []) {
      const rendered = this.render(kapp, t, vars, `templates.${t.id}`);
      copyLocations(t, rendered);
      const ok = evaluateConditions(rendered.conditions ?? [], {
        kapp: kapp.id,
        owner: `template '${t.id}'`,
        ...(locationOf(t) ? { location: locationOf(t) } : {}),
      });
      if (!ok) continue;
      const dest = path.resolve(kapp.configDir, rendered.dest ?? '');
      out.set(t.id, { template: rendered, source: rendered.source ?? '', dest });
    }
    return out;
  }

  /**
   * The planned steps of one phase. `runtime.outputs` is the kapp's `.outputs` view (plan mode: placeholders);
   * templates not yet rendered show the path they will be rendered to.
   */
  planPhase(kapp: KappModel, phase: Phase, runtime: KappRuntime, dryRun: boolean, checkNoValue = true): PlannedStep[] {
    if (!this.#planNeedsVariables(kapp)) {
      // Nothing to render: the run units are planned as written.
      const steps = planSteps(kapp.descriptor.run_units ?? [], phase, { kappId: kapp.id, cacheRoot: kapp.cacheRoot });
      if (checkNoValue) this.#checkNoValue(kapp, phase, steps);
      return steps;
    }
    const extras = this.#dependsOnExtras(kapp) ? { action: phase, dryRun } : undefined;
    let vars = this.variables(kapp, runtime, extras);
    if (!runtime.renderedTemplates && (kapp.descriptor.templates?.length ?? 0) > 0) {
      let targets = this.#targetsFor.get(vars);
      if (!targets) {
        targets = new Map([...this.templateTargets(kapp, vars)].map(([id, t]) => [id, t.dest] as const));
        this.#targetsFor.set(vars, targets);
      }
      vars = this.variables(kapp, { ...runtime, renderedTemplates: targets }, extras);
    }
    let units = this.#unitsFor.get(vars);
    if (!units) {
      units = this.render(kapp, kapp.descriptor.run_units ?? [], vars, 'run_units');
      this.#unitsFor.set(vars, units);
    }
    const steps = planSteps(units, phase, { kappId: kapp.id, cacheRoot: kapp.cacheRoot });
    if (checkNoValue) this.#checkNoValue(kapp, phase, steps);
    return steps;
  }

  /** `<no value>` (a missing variable) in a command, argument or condition: a warning, or an error with --strict-vars. */
  #checkNoValue(kapp: KappModel, phase: Phase, steps: readonly PlannedStep[]): void {
    const found: Diagnostic[] = [];
    for (const step of steps) {
      const fields: [string, string[], SourceLocation | undefined][] = [
        ['command', [step.command], step.locations.command],
        ['args', step.args, step.locations.args],
        ['conditions', step.conditions, step.locations.step],
      ];
      for (const [field, values, at] of fields) {
        if (!values.some((v) => v.includes(NO_VALUE))) continue;
        const message = `kapp ${kapp.id}, ${phase} step '${step.name}' (run unit '${step.unit}'): ${field} contain ${NO_VALUE}, a variable that is not set`;
        const hint = 'check the variable names in this field; `kapps vars` shows what is set';
        if (this.#strictVars) found.push(diagnosticError(message, at, { hint }));
        else if (!this.#noValueSeen.has(message)) {
          this.#noValueSeen.add(message);
          this.warnings.push(diagnosticWarning(message, at, { hint }));
        }
      }
    }
    if (found.length) throw new ConfigError(found);
  }

  /** The `.outputs` views of every kapp in the sub-graph when no output has been produced (plan mode). */
  placeholderViews(): Map<string, GoMap> {
    const views = new Map<string, GoMap>();
    for (const id of this.dag.topologicalOrder()) {
      const node = this.#planNodes.get(id);
      if (!node) continue;
      const kapp = this.kapp(id);
      const parents = node.dependsOn
        .map((p) => ({ manifestId: this.kapp(p).manifestId, view: views.get(p) }))
        .filter((p): p is { manifestId: string; view: GoMap } => p.view !== undefined);
      views.set(
        id,
        outputsView({ manifestId: kapp.manifestId, kappId: kapp.kappId, values: withPlaceholders(newGoMap(), kapp.outputIds) }, parents),
      );
    }
    return views;
  }

  /** The resolved spec (what `kapps generate` prints) of the selection's sub-graph, in stack order. */
  spec(options: { phases?: readonly Phase[]; onlyIds?: ReadonlySet<string>; checkNoValue?: boolean } = {}): StackSpec {
    const phases = options.phases ?? PHASES;
    // Outputs are only read through variables; skip building the views when no planned kapp renders any.
    const needViews = this.selection.nodes.some((n) => this.#planNeedsVariables(this.kapp(n.id)));
    const views = needViews ? this.placeholderViews() : new Map<string, GoMap>();
    const problems: Diagnostic[] = [];
    const kapps: SpecKapp[] = [];
    for (const node of this.selection.nodes) {
      if (options.onlyIds && !options.onlyIds.has(node.id)) continue;
      const kapp = this.kapp(node.id);
      const specPhases = Object.fromEntries(PHASES.map((p) => [p, []])) as unknown as Record<Phase, ReturnType<typeof toSpecStep>[]>;
      for (const phase of phases) {
        try {
          const runtime = { outputs: views.get(node.id) ?? newGoMap() };
          specPhases[phase] = this.planPhase(kapp, phase, runtime, false, options.checkNoValue ?? true).map(toSpecStep);
        } catch (e) {
          if (!(e instanceof ConfigError)) throw e;
          problems.push(...e.diagnostics);
        }
      }
      kapps.push({
        id: node.id,
        dependsOn: [...node.dependsOn],
        selected: node.selected,
        conditionsOk: node.conditionsOk,
        phases: specPhases,
      });
    }
    if (problems.length) throw new ConfigError(uniqueDiagnostics(problems));
    return { stack: this.config.name, kapps };
  }
}
