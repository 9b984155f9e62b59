/**
 * A stack's planner: the run steps each kapp's phases plan to (rendered against its variables), the `<no value>` and
 * condition checks a run would trip over, and the resolved spec of the selection's sub-graph.
 */
import type { RunUnitConfig } from '../config/types.js';
import { error as diagnosticError, warning as diagnosticWarning, type Diagnostic } from '../diagnostics/diagnostic.js';
import { ConfigError } from '../diagnostics/errors.js';
import { evaluateConditions, ordinal } from '../plan/go-bool.js';
import { toSpecStep, type SpecKapp, type SpecStep, type StackSpec } from '../plan/spec.js';
import { PreparedUnitsCache, planSteps, type PlannedStep } from '../plan/steps.js';
import { PHASES, type Phase } from '../vocabulary.js';
import { newGoMap, type GoMap } from '../go-value/value.js';
import { outputsView, withPlaceholders } from '../vars/outputs.js';
import { containsTemplate, locateRendered, renderOnce } from '../vars/render.js';
import type { KappModel } from './kapp-model.js';
import type { StackModel } from './stack-model.js';
import { hasKeys, type KappRuntime, type StackVariables } from './stack-variables.js';
import { uniqueDiagnostics } from './unique-diagnostics.js';

const NO_VALUE = '<no value>';

/** Whether a command, argument, env value or condition of the step holds `<no value>`. */
function holdsNoValue(step: PlannedStep): boolean {
  if (step.command.includes(NO_VALUE)) return true;
  for (const a of step.args) if (a.includes(NO_VALUE)) return true;
  for (const name in step.env) if (Object.hasOwn(step.env, name) && step.env[name]?.includes(NO_VALUE)) return true;
  for (const c of step.conditions) if (c.includes(NO_VALUE)) return true;
  return false;
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

/** How the planner reports `<no value>`. */
export interface PlannerInit {
  /** `--strict-vars`: `<no value>` in a command, argument or condition is an error, not a warning. */
  readonly strict: boolean;
  /** An install or delete that applies without `--allow-no-value`: `<no value>` in a step stops it. */
  readonly applyNoValue?: boolean;
}

/** The planner of an opened stack: see the module comment. */
export class StackPlanner {
  readonly #model: StackModel;
  readonly #vars: StackVariables;
  readonly #strictVars: boolean;
  readonly #applyNoValue: boolean;
  readonly #noValueSeen = new Set<string>();
  /** The run units of the kapp planned last, checked once for all its phases. */
  readonly #prepared: PreparedUnitsCache;
  /** Rendered run units per variable map. */
  readonly #unitsFor = new WeakMap<GoMap, RunUnitConfig[]>();
  /**
   * An apply's planned steps of each kapp whose run units hold no template, per phase: it plans each kapp's phases
   * several times (the `<no value>` checks before and after the workspace is filled, the release's spec, the visit),
   * and such a kapp's steps are the same every time (`planSteps` is pure). Other commands plan once: they keep
   * nothing, so that a big stack's planned steps die as they are written out.
   */
  readonly #planned: Map<KappModel, Partial<Record<Phase, readonly PlannedStep[]>>> | undefined;
  #placeholderViews: Map<string, GoMap> | undefined;
  /** Whether each kapp's run units hold a template: asked each time one of its phases is planned. */
  readonly #templated = new Map<string, boolean>();

  constructor(model: StackModel, vars: StackVariables, init: PlannerInit) {
    this.#model = model;
    this.#vars = vars;
    this.#strictVars = init.strict;
    this.#applyNoValue = init.applyNoValue ?? false;
    if (this.#applyNoValue) this.#planned = new Map();
    this.#prepared = new PreparedUnitsCache({ keepAll: this.#applyNoValue });
  }

  /** Whether planning a kapp's steps reads variables at all (its run units hold templates). */
  #planNeedsVariables(kapp: KappModel): boolean {
    let templated = this.#templated.get(kapp.id);
    if (templated === undefined) {
      templated = containsTemplate(kapp.descriptor.run_units ?? []);
      this.#templated.set(kapp.id, templated);
    }
    return templated;
  }

  /** The kapp's run units rendered as `planPhase` renders them (`phase` matters only to kapps that read `.sugarkube`). */
  renderedRunUnits(kapp: KappModel, runtime: KappRuntime, phase: Phase, dryRun: boolean): RunUnitConfig[] {
    if (!this.#planNeedsVariables(kapp)) return kapp.descriptor.run_units ?? [];
    const extras = this.#vars.readsSugarkube(kapp) ? { action: phase, dryRun } : undefined;
    const vars = this.#vars.planningVariables(kapp, runtime, extras);
    let rendered = this.#unitsFor.get(vars);
    if (!rendered) {
      // Rendered run units are only planned: link them to their origins rather than copying locations.
      rendered = renderOnce(
        kapp.descriptor.run_units ?? [],
        vars,
        this.#vars.context(kapp, runtime.planOnly),
        'run_units',
        {
          origins: true,
        },
      );
      this.#unitsFor.set(vars, rendered);
    }
    return rendered;
  }

  /**
   * The planned steps of one phase. `runtime.outputs` is the kapp's `.outputs` view (plan mode: placeholders);
   * templates not yet rendered show the path they will be rendered to.
   */
  planPhase(kapp: KappModel, phase: Phase, runtime: KappRuntime, dryRun: boolean, checkNoValue = true): PlannedStep[] {
    const context = { kappId: kapp.id, cacheRoot: kapp.cacheRoot, locate: locateRendered, prepared: this.#prepared };
    const units = this.renderedRunUnits(kapp, runtime, phase, dryRun);
    // Units not rendered (no template in them) plan to the same steps every time.
    const kept = units === kapp.descriptor.run_units ? this.#planned : undefined;
    let steps = kept?.get(kapp)?.[phase];
    if (!steps) {
      steps = planSteps(units, phase, context);
      if (kept) {
        const byPhase = kept.get(kapp);
        if (byPhase) byPhase[phase] = steps;
        else kept.set(kapp, { [phase]: steps });
      }
    }
    if (checkNoValue) this.#checkNoValue(kapp, phase, steps);
    // A list of the caller's own: the steps are shared, never changed.
    return [...steps];
  }

  /**
   * `<no value>` (a missing variable) in a command, argument, env value or condition: a warning, or an error with
   * --strict-vars or when `errors` is set (an apply checking the steps it is about to run).
   */
  #checkNoValue(kapp: KappModel, phase: Phase, steps: readonly PlannedStep[], errors = false): void {
    const found: Diagnostic[] = [];
    for (const step of steps) {
      // Most steps hold no `<no value>`: they are passed over without making anything.
      if (!holdsNoValue(step)) continue;
      const report = (field: string, at: Diagnostic['location']): void => {
        const message = `step '${step.name}' of run unit '${step.unit}' (${phase}) in kapp '${kapp.id}': ${field} ${NO_VALUE}, so a variable it reads is not set`;
        const hint = '`kapps vars` shows the variables that are set';
        if (this.#strictVars || errors) {
          found.push(
            diagnosticError(message, at, { hint: errors ? `${hint}; --allow-no-value runs it anyway` : hint }),
          );
        } else if (!this.#noValueSeen.has(message)) {
          this.#noValueSeen.add(message);
          this.#model.warnings.push(diagnosticWarning(message, at, { hint }));
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
    for (const id of this.#model.dag.topologicalOrder()) {
      const node = this.#model.planNode(id);
      if (!node) continue;
      const kapp = this.#model.kapp(id);
      const parents: { manifestId: string; view: GoMap }[] = [];
      for (const p of node.dependsOn) {
        const view = views.get(p);
        if (view && hasKeys(view)) parents.push({ manifestId: this.#model.kapp(p).manifestId, view });
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
    const kapps: SpecKapp[] = [];
    this.eachSpecKapp(options, (kapp) => kapps.push(kapp));
    return { stack: this.#model.config.name, kapps };
  }

  /**
   * The kapps of `spec`, handed to `each` one by one in stack order, so that a caller that writes them out need not
   * hold every kapp's spec at once. Throws the same `ConfigError` as `spec`, after the last kapp.
   */
  eachSpecKapp(options: SpecOptions, each: (kapp: SpecKapp) => void): void {
    const phases = options.phases ?? PHASES;
    // Outputs are only read through variables; skip building the views when no planned kapp renders any.
    const needViews = this.#model.selection.nodes.some((n) => this.#planNeedsVariables(this.#model.kapp(n.id)));
    const views = needViews ? this.placeholderViews() : new Map<string, GoMap>();
    const problems: Diagnostic[] = [];
    for (const node of this.#model.selection.nodes) {
      if (options.onlyIds && !options.onlyIds.has(node.id)) continue;
      const kapp = this.#model.kapp(node.id);
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
      each({
        id: node.id,
        dependsOn: [...node.dependsOn],
        // What will run: an ancestor processed with --parents counts as selected.
        selected: node.selected || node.processed,
        conditionsOk: node.conditionsOk,
        phases: specPhases,
      });
    }
    if (problems.length) throw new ConfigError(uniqueDiagnostics(problems));
  }
}
