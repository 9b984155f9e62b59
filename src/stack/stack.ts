/**
 * An opened stack and everything derived from it without running anything: a thin facade over its model (the
 * configuration, kapps, DAG and selection: `stack-model.ts`), its variables (each kapp's rendered variables and
 * descriptor: `stack-variables.ts`) and its planner (the planned run steps of every phase and the spec:
 * `stack-planner.ts`), so that callers hold one object.
 */
import type { KappDescriptor, RunUnitConfig, TemplateConfig } from '../config/types.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type { SpecKapp, StackSpec } from '../plan/spec.js';
import type { PlannedStep } from '../plan/steps.js';
import type { Phase } from '../vocabulary.js';
import type { GoMap, GoValue } from '../go-value/value.js';
import type { StepExtras } from '../vars/variables.js';
import type { KappModel } from './kapp-model.js';
import { StackModel, type StackModelInit } from './stack-model.js';
import { StackPlanner, type SpecOptions } from './stack-planner.js';
import { StackVariables, type KappRuntime, type VariablesInit } from './stack-variables.js';

export type { KappRuntime } from './stack-variables.js';

/** What `openStack` gives the `Stack` constructor. */
export interface StackInit extends StackModelInit, VariablesInit {
  /** `--strict-vars`: `<no value>` in a command, argument or condition is an error, not a warning. */
  readonly strict: boolean;
  /**
   * An install or delete that applies (`-y`, `--one-shot`) without `--allow-no-value`: `<no value>` in a command,
   * argument, env value or condition is an error, as with --strict-vars.
   */
  readonly applyNoValue?: boolean;
}

/** A stack opened by `openStack`: see the module comment. */
export class Stack extends StackModel {
  readonly #vars: StackVariables;
  readonly #planner: StackPlanner;

  constructor(init: StackInit) {
    const vars = new StackVariables(init);
    super(init, vars);
    this.#vars = vars;
    this.#planner = new StackPlanner(this, vars, init);
  }

  /**
   * The rendered variable map of a kapp. Results are cached by the identity of `runtime.outputs`,
   * `runtime.renderedTemplates` and the extras (an empty view or map counts as none): treat all of them, and the
   * result, as read-only.
   */
  variables(kapp: KappModel, runtime: KappRuntime = {}, extras?: StepExtras): GoMap {
    return this.#vars.variables(kapp, runtime, extras);
  }

  /** The variables run steps are planned with (see `StackVariables.planningVariables`). */
  planningVariables(kapp: KappModel, runtime: KappRuntime = {}, extras?: StepExtras): GoMap {
    return this.#vars.planningVariables(kapp, runtime, extras);
  }

  /** Render a part of a kapp's descriptor against its variables (the result may share unrendered parts). */
  render<T>(kapp: KappModel, value: T, vars: GoValue, what: string): T {
    return this.#vars.render(kapp, value, vars, what);
  }

  /** The whole descriptor rendered; its `vars` are the rendered `.kapp.vars` of `vars`. */
  renderDescriptor(kapp: KappModel, vars: GoMap, planOnly = false): KappDescriptor {
    return this.#vars.renderDescriptor(kapp, vars, planOnly);
  }

  /** The would-be (or actual) rendered path of each template whose conditions hold. */
  templateTargets(
    kapp: KappModel,
    vars: GoMap,
  ): Map<string, { template: TemplateConfig; source: string; dest: string }> {
    return this.#vars.templateTargets(kapp, vars);
  }

  /** The kapp's run units rendered as `planPhase` renders them. */
  renderedRunUnits(kapp: KappModel, runtime: KappRuntime, phase: Phase, dryRun: boolean): RunUnitConfig[] {
    return this.#planner.renderedRunUnits(kapp, runtime, phase, dryRun);
  }

  /** The planned steps of one phase (see `StackPlanner.planPhase`). */
  planPhase(kapp: KappModel, phase: Phase, runtime: KappRuntime, dryRun: boolean, checkNoValue = true): PlannedStep[] {
    return this.#planner.planPhase(kapp, phase, runtime, dryRun, checkNoValue);
  }

  /** An install or delete that applies (without --allow-no-value): `<no value>` in a step stops it. */
  get applyNoValue(): boolean {
    return this.#planner.applyNoValue;
  }

  /** In an apply: the errors for `<no value>` in these steps, without throwing. */
  noValueErrors(kapp: KappModel, phase: Phase, steps: readonly PlannedStep[]): Diagnostic[] {
    return this.#planner.noValueErrors(kapp, phase, steps);
  }

  /** Step conditions that will not be Go booleans when the step is reached. */
  stepConditionProblems(steps: readonly PlannedStep[]): Diagnostic[] {
    return this.#planner.stepConditionProblems(steps);
  }

  /** The `.outputs` views of every kapp in the sub-graph when no output has been produced (plan mode). */
  placeholderViews(): Map<string, GoMap> {
    return this.#planner.placeholderViews();
  }

  /** The resolved spec (what `kapps generate` prints) of the selection's sub-graph, in stack order. */
  spec(options: SpecOptions = {}): StackSpec {
    return this.#planner.spec(options);
  }

  /** The kapps of `spec` one by one, in stack order (see `StackPlanner.eachSpecKapp`). */
  eachSpecKapp(options: SpecOptions, each: (kapp: SpecKapp) => void): void {
    this.#planner.eachSpecKapp(options, each);
  }
}
