/**
 * An opened stack and everything derived from it without running anything: each kapp's variables and rendered
 * descriptor, the DAG, the selection, and the planned run steps of every phase.
 *
 * Work is done lazily and cached: a kapp's variables are rendered only when something it plans reads them, once
 * per distinct set of inputs (outputs view, rendered templates, phase extras), so a stack of 10,000 kapps renders
 * each kapp's variables at most a few times.
 */
import path from 'node:path';
import { copyLocations, locationOf } from '../config/locations.js';
import type {
  KappDescriptor,
  ManifestConfig,
  ProjectConfig,
  RunUnitConfig,
  StackConfig,
  TemplateConfig,
} from '../config/types.js';
import { error as diagnosticError, warning as diagnosticWarning, type Diagnostic } from '../diagnostics/diagnostic.js';
import { ConfigError, InternalError } from '../diagnostics/errors.js';
import { buildDag, type KappDag } from '../plan/dag.js';
import { evaluateConditions, ordinal } from '../plan/go-bool.js';
import { selectKapps, type PlanNode, type Selection } from '../plan/select.js';
import { toSpecStep, type SpecKapp, type SpecStep, type StackSpec } from '../plan/spec.js';
import { planSteps, type PlannedStep } from '../plan/steps.js';
import { PHASES, type Phase } from '../vocabulary.js';
import { isTemplate } from '../template/index.js';
import { isGoMap, newGoMap, type GoMap, type GoValue } from '../go-value/value.js';
import { mergeMaps } from '../vars/merge.js';
import { outputsView, withPlaceholders } from '../vars/outputs.js';
import { containsTemplate, locateRendered, renderOnce, renderVariables, type RenderContext } from '../vars/render.js';
import { assembleVariables, stackVariables, type StepExtras } from '../vars/variables.js';
import { dagInputs } from './dag-inputs.js';
import type { KappModel } from './kapp-model.js';
import { uniqueDiagnostics } from './unique-diagnostics.js';

const NO_VALUE = '<no value>';

/** How many rendered variable maps per kapp are kept for reuse. */
const VARS_MEMO_SIZE = 4;

interface VarsMemoEntry {
  readonly outputs?: GoMap;
  readonly templates?: ReadonlyMap<string, string>;
  readonly extras?: string;
  readonly vars: GoMap;
}

function hasKeys(m: GoMap): boolean {
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

/** What `openStack` gives the `Stack` constructor. */
export interface StackInit {
  readonly project: ProjectConfig;
  readonly stack: StackConfig;
  readonly manifests: readonly ManifestConfig[];
  readonly workspace: string;
  readonly kapps: readonly KappModel[];
  readonly providerVars: GoMap;
  readonly warnings: Diagnostic[];
  readonly kubeconfig: string;
  /** `--strict-vars`: `<no value>` in a command, argument or condition is an error, not a warning. */
  readonly strict: boolean;
  /**
   * An install or delete that applies (`-y`, `--one-shot`) without `--allow-no-value`: `<no value>` in a command,
   * argument, env value or condition is an error, as with --strict-vars.
   */
  readonly applyNoValue?: boolean;
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  readonly parents: boolean;
  /** Kapps whose git sources are not in the workspace (their sugarkube.yaml was not read), in stack order. */
  readonly unfetched?: readonly string[];
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

/** Options of `Stack.spec`. */
export interface SpecOptions {
  /** Phases to plan (the others are empty lists); default all six. */
  readonly phases?: readonly Phase[];
  /** Only these kapps of the sub-graph. */
  readonly onlyIds?: ReadonlySet<string>;
  /**
   * Report what a run would trip over: `<no value>` in commands, arguments and conditions (a warning, an error with
   * --strict-vars) and step conditions that are not booleans; default true. Off when recording a release's spec.
   */
  readonly checkNoValue?: boolean;
}

/** A stack opened by `openStack`: see the module comment. */
export class Stack {
  readonly project: ProjectConfig;
  readonly config: StackConfig;
  readonly manifests: readonly ManifestConfig[];
  /** Absolute workspace directory. */
  readonly workspace: string;
  /** Every kapp of every manifest, in stack order. */
  readonly kapps: readonly KappModel[];
  /** Warnings found so far (loading, selection, planning); printed by the commands. */
  readonly warnings: Diagnostic[];
  readonly dag: KappDag;
  readonly selection: Selection;
  /** Kapps whose git sources are not in the workspace: their sugarkube.yaml was not read. */
  readonly unfetched: readonly string[];
  readonly #byId = new Map<string, KappModel>();
  readonly #planNodes = new Map<string, PlanNode>();
  readonly #providerVars: GoMap;
  readonly #kubeconfig: string;
  readonly #strictVars: boolean;
  readonly #applyNoValue: boolean;
  readonly #noValueSeen = new Set<string>();
  /** Each kapp's variables without outputs, rendered templates or extras. */
  readonly #baseVars = new Map<string, GoMap>();
  /** Recently rendered variable maps per kapp, by the identity of their inputs. */
  readonly #varsMemo = new Map<string, VarsMemoEntry[]>();
  /** Rendered run units and template targets per variable map. */
  readonly #unitsFor = new WeakMap<GoMap, RunUnitConfig[]>();
  readonly #targetsFor = new WeakMap<GoMap, Map<string, string>>();
  readonly #phaseDependent = new Map<string, boolean>();
  /** Whether provider vars or stack vars read `.sugarkube` (then every kapp renders each phase apart). */
  #stackMentionsSugarkube: boolean | undefined;
  /** The stack-wide fragments of every variable map, merged once. */
  #stackVars: GoMap | undefined;
  /** Each kapp's vars files merged with its descriptor's `vars` (the unrendered `.kapp.vars`). */
  readonly #kappVars = new Map<string, GoMap>();
  #placeholderViews: Map<string, GoMap> | undefined;

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
    this.#applyNoValue = init.applyNoValue ?? false;
    this.unfetched = init.unfetched ?? [];
    for (const k of init.kapps) this.#byId.set(k.id, k);
    this.dag = buildDag(dagInputs(this, this.manifests));
    this.selection = selectKapps(this.dag, { include: init.include, exclude: init.exclude, parents: init.parents });
    this.warnings.push(...this.selection.warnings);
    for (const n of this.selection.nodes) this.#planNodes.set(n.id, n);
  }

  /** The kapp with this `manifest:kapp` id (it must exist). */
  kapp(id: string): KappModel {
    const k = this.#byId.get(id);
    if (!k) throw new InternalError(`no kapp ${id} in stack ${this.config.name}`);
    return k;
  }

  /** The node of the selection's sub-graph (selected kapps and their ancestors). */
  planNode(id: string): PlanNode | undefined {
    return this.#planNodes.get(id);
  }

  #context(kapp: KappModel, planOnly = false): RenderContext {
    const location = locationOf(kapp.entry);
    return { subject: `kapp '${kapp.id}'`, ...(location ? { location } : {}), ...(planOnly ? { planOnly } : {}) };
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
    const vars = renderVariables(assembled, this.#context(kapp, planOnly));
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
  #dependsOnExtras(kapp: KappModel): boolean {
    let v = this.#phaseDependent.get(kapp.id);
    if (v === undefined) {
      this.#stackMentionsSugarkube ??=
        walkMentions(this.#providerVars, 'sugarkube') || walkMentions(this.config.vars, 'sugarkube');
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

  /** Whether planning a kapp's steps reads variables at all (its run units hold templates). */
  #planNeedsVariables(kapp: KappModel): boolean {
    return containsTemplate(kapp.descriptor.run_units ?? []);
  }

  /** Render a part of a kapp's descriptor against its variables (the result may share unrendered parts). */
  render<T>(kapp: KappModel, value: T, vars: GoValue, what: string): T {
    return renderOnce(value, vars, this.#context(kapp), what);
  }

  /**
   * The whole descriptor rendered; its `vars` are the rendered `.kapp.vars` of `vars`. `planOnly`: see
   * `KappRuntime.planOnly`.
   */
  renderDescriptor(kapp: KappModel, vars: GoMap, planOnly = false): KappDescriptor {
    const { vars: _v, ...rest } = kapp.descriptor;
    const rendered: KappDescriptor = { ...renderOnce(rest, vars, this.#context(kapp, planOnly)) };
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

  /** The kapp's run units rendered as `planPhase` renders them (`phase` matters only to kapps that read `.sugarkube`). */
  renderedRunUnits(kapp: KappModel, runtime: KappRuntime, phase: Phase, dryRun: boolean): RunUnitConfig[] {
    if (!this.#planNeedsVariables(kapp)) return kapp.descriptor.run_units ?? [];
    const extras = this.#dependsOnExtras(kapp) ? { action: phase, dryRun } : undefined;
    const vars = this.planningVariables(kapp, runtime, extras);
    let rendered = this.#unitsFor.get(vars);
    if (!rendered) {
      // Rendered run units are only planned: link them to their origins rather than copying locations.
      rendered = renderOnce(kapp.descriptor.run_units ?? [], vars, this.#context(kapp, runtime.planOnly), 'run_units', {
        origins: true,
      });
      this.#unitsFor.set(vars, rendered);
    }
    return rendered;
  }

  /**
   * The planned steps of one phase. `runtime.outputs` is the kapp's `.outputs` view (plan mode: placeholders);
   * templates not yet rendered show the path they will be rendered to.
   */
  planPhase(kapp: KappModel, phase: Phase, runtime: KappRuntime, dryRun: boolean, checkNoValue = true): PlannedStep[] {
    const context = { kappId: kapp.id, cacheRoot: kapp.cacheRoot, locate: locateRendered };
    const units = this.renderedRunUnits(kapp, runtime, phase, dryRun);
    const steps = planSteps(units, phase, context);
    if (checkNoValue) this.#checkNoValue(kapp, phase, steps);
    return steps;
  }

  /**
   * `<no value>` (a missing variable) in a command, argument, env value or condition: a warning, or an error with
   * --strict-vars or when `errors` is set (an apply checking the steps it is about to run).
   */
  #checkNoValue(kapp: KappModel, phase: Phase, steps: readonly PlannedStep[], errors = false): void {
    const found: Diagnostic[] = [];
    for (const step of steps) {
      const report = (field: string, at: Diagnostic['location']): void => {
        const message = `step '${step.name}' of run unit '${step.unit}' (${phase}) in kapp '${kapp.id}': ${field} ${NO_VALUE}, so a variable it reads is not set`;
        const hint = '`kapps vars` shows the variables that are set';
        if (this.#strictVars || errors) {
          found.push(
            diagnosticError(message, at, { hint: errors ? `${hint}; --allow-no-value runs it anyway` : hint }),
          );
        } else if (!this.#noValueSeen.has(message)) {
          this.#noValueSeen.add(message);
          this.warnings.push(diagnosticWarning(message, at, { hint }));
        }
      };
      if (step.command.includes(NO_VALUE)) report('its command renders', step.locations.command ?? step.locations.step);
      if (step.args.some((a) => a.includes(NO_VALUE)))
        report('its args render', step.locations.args ?? step.locations.step);
      for (const [name, value] of Object.entries(step.env)) {
        if (value.includes(NO_VALUE)) report(`its env ${name} renders`, step.locations.step);
      }
      step.conditions.forEach((c, i) => {
        if (!c.includes(NO_VALUE)) return;
        const at = step.conditionSite.conditionLocations?.[i] ?? step.conditionSite.location;
        report(`its ${ordinal(i + 1)} condition renders`, at);
      });
    }
    if (found.length) throw new ConfigError(found);
  }

  /** An install or delete that applies (without --allow-no-value): `<no value>` in a step stops it. */
  get applyNoValue(): boolean {
    return this.#applyNoValue;
  }

  /**
   * In an apply: the errors for `<no value>` in these steps (command, args, env values, conditions), without
   * throwing. Checked for each step just before it runs (its outputs are then loaded) and before the run starts.
   */
  noValueErrors(kapp: KappModel, phase: Phase, steps: readonly PlannedStep[]): Diagnostic[] {
    try {
      this.#checkNoValue(kapp, phase, steps, true);
    } catch (e) {
      if (e instanceof ConfigError) return [...e.diagnostics];
      throw e;
    }
    return [];
  }

  /**
   * Step conditions that will not be Go booleans when the step is reached: those that render something else now,
   * unless they read something only a run provides (`<no value>`, or `map[]`: an output not produced yet).
   */
  stepConditionProblems(steps: readonly PlannedStep[]): Diagnostic[] {
    const out: Diagnostic[] = [];
    for (const step of steps) {
      if (step.conditions.length === 0 || step.conditions.some((c) => c.includes(NO_VALUE) || c.includes('map['))) {
        continue;
      }
      try {
        evaluateConditions(step.conditions, step.conditionSite);
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        out.push(...e.diagnostics);
      }
    }
    return out;
  }

  /**
   * The `.outputs` views of every kapp in the sub-graph when no output has been produced (plan mode): each declared
   * output is an empty map, passed down the DAG as a run passes real outputs. Computed once.
   */
  placeholderViews(): Map<string, GoMap> {
    if (this.#placeholderViews) return this.#placeholderViews;
    const views = new Map<string, GoMap>();
    for (const id of this.dag.topologicalOrder()) {
      const node = this.#planNodes.get(id);
      if (!node) continue;
      const kapp = this.kapp(id);
      const parents: { manifestId: string; view: GoMap }[] = [];
      for (const p of node.dependsOn) {
        const view = views.get(p);
        if (view && hasKeys(view)) parents.push({ manifestId: this.kapp(p).manifestId, view });
      }
      const values = kapp.outputIds.length ? withPlaceholders(newGoMap(), kapp.outputIds) : undefined;
      views.set(
        id,
        outputsView({ manifestId: kapp.manifestId, kappId: kapp.kappId, ...(values ? { values } : {}) }, parents),
      );
    }
    this.#placeholderViews = views;
    return views;
  }

  /** The resolved spec (what `kapps generate` prints) of the selection's sub-graph, in stack order. */
  spec(options: SpecOptions = {}): StackSpec {
    const phases = options.phases ?? PHASES;
    // Outputs are only read through variables; skip building the views when no planned kapp renders any.
    const needViews = this.selection.nodes.some((n) => this.#planNeedsVariables(this.kapp(n.id)));
    const views = needViews ? this.placeholderViews() : new Map<string, GoMap>();
    const problems: Diagnostic[] = [];
    const kapps: SpecKapp[] = [];
    for (const node of this.selection.nodes) {
      if (options.onlyIds && !options.onlyIds.has(node.id)) continue;
      const kapp = this.kapp(node.id);
      const runtime = { outputs: views.get(node.id) ?? newGoMap(), planOnly: true };
      const specPhases = {} as Record<Phase, SpecStep[]>;
      for (const phase of PHASES) specPhases[phase] = [];
      for (const phase of phases) {
        try {
          const planned = this.planPhase(kapp, phase, runtime, false, options.checkNoValue ?? true);
          if (options.checkNoValue ?? true) problems.push(...this.stepConditionProblems(planned));
          specPhases[phase] = planned.map(toSpecStep);
        } catch (e) {
          if (!(e instanceof ConfigError)) throw e;
          problems.push(...e.diagnostics);
        }
      }
      kapps.push({
        id: node.id,
        dependsOn: [...node.dependsOn],
        // What will run: an ancestor processed with --parents counts as selected.
        selected: node.selected || node.processed,
        conditionsOk: node.conditionsOk,
        phases: specPhases,
      });
    }
    if (problems.length) throw new ConfigError(uniqueDiagnostics(problems));
    return { stack: this.config.name, kapps };
  }
}
