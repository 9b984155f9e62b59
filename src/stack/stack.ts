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
import { renderOnce, renderVariables, type RenderContext } from '../vars/render.js';
import { assembleVariables, type StepExtras } from '../vars/variables.js';
import type { KappModel } from './kapp-model.js';

const NO_VALUE = '<no value>';

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
  readonly #phaseDependent = new Map<string, boolean>();

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

  /** The rendered variable map of a kapp. */
  variables(kapp: KappModel, runtime: KappRuntime = {}, extras?: StepExtras): GoMap {
    const cacheable = !runtime.outputs && !runtime.renderedTemplates && !extras;
    if (cacheable) {
      const cached = this.#baseVars.get(kapp.id);
      if (cached) return cached;
    }
    const assembled = assembleVariables({
      stack: this.config,
      providerVars: this.#providerVars,
      kubeconfig: this.#kubeconfig,
      kapp: {
        id: kapp.kappId,
        manifestId: kapp.manifestId,
        cacheRoot: kapp.cacheRoot,
        vars: mergeMaps(kapp.kappVarsFromFiles, kapp.descriptor.vars ?? newGoMap()),
        templates: this.#templatesVar(kapp, runtime.renderedTemplates),
      },
      ...(runtime.outputs ? { outputs: runtime.outputs } : {}),
      ...(extras ? { extras } : {}),
    });
    const vars = renderVariables(assembled, this.#context(kapp));
    if (cacheable) this.#baseVars.set(kapp.id, vars);
    return vars;
  }

  /** Whether a kapp's descriptor or variables read `.sugarkube` (action/dry-run), so each phase renders apart. */
  #dependsOnExtras(kapp: KappModel): boolean {
    let v = this.#phaseDependent.get(kapp.id);
    if (v === undefined) {
      v =
        templatesMention(kapp.descriptor, 'sugarkube') ||
        templatesMention(this.#providerVars, 'sugarkube') ||
        templatesMention(this.config.vars, 'sugarkube') ||
        templatesMention(kapp.kappVarsFromFiles, 'sugarkube');
      this.#phaseDependent.set(kapp.id, v);
    }
    return v;
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
          const vars = this.variables(kapp);
          const conds = this.render(kapp, kapp.descriptor.conditions ?? [], vars, 'conditions');
          conditionsOk = evaluateConditions(conds, {
            kapp: kapp.id,
            conditionLocations: conds.map((_, i) => locationOf(conds, i)),
            ...(locationOf(kapp.descriptor.conditions ?? kapp.entry) ? { location: locationOf(kapp.descriptor.conditions ?? kapp.entry) } : {}),
          });
          const deps: DependsOnConfig[] = this.render(kapp, kapp.descriptor.depends_on ?? [], vars, 'depends_on');
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
    const extras = this.#dependsOnExtras(kapp) ? { action: phase, dryRun } : undefined;
    let vars = this.variables(kapp, runtime, extras);
    if (!runtime.renderedTemplates && (kapp.descriptor.templates?.length ?? 0) > 0) {
      const targets = new Map([...this.templateTargets(kapp, vars)].map(([id, t]) => [id, t.dest] as const));
      vars = this.variables(kapp, { ...runtime, renderedTemplates: targets }, extras);
    }
    const units = this.render(kapp, kapp.descriptor.run_units ?? [], vars, 'run_units');
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
    const views = this.placeholderViews();
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
    if (problems.length) throw new ConfigError(problems);
    return { stack: this.config.name, kapps };
  }
}
