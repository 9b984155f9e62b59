/**
 * What planning a kapp's run steps needs to know besides the run units, and how steps are named in messages.
 */
import type { SourceLocation } from '../diagnostics/diagnostic.js';
import type { RunStepConfig, RunUnitConfig } from '../config/types.js';
import type { Phase } from '../vocabulary.js';
import type { ConditionSite } from './go-bool.js';
import type { PreparedUnitsCache } from './steps.js';

/** Looks up where a configuration object (or one of its fields) was written; `locationOf` fits. */
export type Locate = (obj: object | undefined, key?: string | number) => SourceLocation | undefined;

/** The kapp-level inputs of step planning. */
export interface StepPlanContext {
  /** Fully-qualified kapp id, `manifest:kapp`, for messages. */
  readonly kappId: string;
  /** Absolute directory of the kapp in the workspace; relative working dirs are joined to it. */
  readonly cacheRoot: string;
  /** Location lookup for diagnostics; defaults to `locationOf` from `src/config/locations.ts`. */
  readonly locate?: Locate;
  /**
   * Where the phase-independent part of planning a kapp's run units is kept between the phases planned one after
   * another (see `PreparedUnitsCache` in ./steps.ts); without it, each call works it out.
   */
  readonly prepared?: PreparedUnitsCache;
}

/** One step as declared: which unit and phase list it is in, and where. */
export interface StepRef {
  readonly unit: RunUnitConfig;
  /** Position of the unit in the list given to the planner. */
  readonly unitIndex: number;
  readonly phase: Phase;
  /** Position of the step in its phase list. */
  readonly index: number;
  readonly step: RunStepConfig;
}

/** Whether the step replaces itself by other steps (`call` set and not empty). */
export function isCall(step: RunStepConfig): step is RunStepConfig & { call: string } {
  return typeof step.call === 'string' && step.call !== '';
}

/** `step 'x' of run unit 'u' (phase)`, or `step #2 of …` for a step without a name. */
export function stepLabel(ref: StepRef): string {
  const which = ref.step.name ? `step '${ref.step.name}'` : `step #${ref.index + 1}`;
  return `${which} of run unit '${ref.unit.name}' (${ref.phase})`;
}

/** `step 'x' of run unit 'u' (phase) in kapp 'm:k'`. */
export function describeStep(ref: StepRef, kappId: string): string {
  return `${stepLabel(ref)} in kapp '${kappId}'`;
}

/** Where each element of `conditions` was written, falling back to the `conditions` field of `owner`. */
function conditionLocations(
  owner: object,
  conditions: readonly string[] | undefined,
  locate: Locate,
): (SourceLocation | undefined)[] {
  return (conditions ?? []).map((_, i) => locate(conditions, i) ?? locate(owner, 'conditions') ?? locate(owner));
}

/** The condition site of a run unit's own `conditions`. */
export function unitConditionSite(unit: RunUnitConfig, kappId: string, locate: Locate): ConditionSite {
  const location = locate(unit, 'conditions') ?? locate(unit);
  return {
    kapp: kappId,
    owner: `run unit '${unit.name}'`,
    conditionLocations: conditionLocations(unit, unit.conditions, locate),
    ...(location ? { location } : {}),
  };
}

/**
 * The condition site of a step's `conditions`, evaluated by the executor when the step is reached. Most steps have
 * none: their site is read only if a diagnostic needs it, so its label and location are made then.
 */
export function stepConditionSite(ref: StepRef, kappId: string, locate: Locate): ConditionSite {
  if (!ref.step.conditions?.length) return new NoConditionsSite(ref, kappId, locate);
  const location = locate(ref.step, 'conditions') ?? locate(ref.step);
  return {
    kapp: kappId,
    owner: stepLabel(ref),
    conditionLocations: conditionLocations(ref.step, ref.step.conditions, locate),
    ...(location ? { location } : {}),
  };
}

const NO_LOCATIONS: readonly (SourceLocation | undefined)[] = [];

class NoConditionsSite implements ConditionSite {
  readonly #ref: StepRef;
  readonly #locate: Locate;
  readonly conditionLocations = NO_LOCATIONS;
  constructor(
    ref: StepRef,
    readonly kapp: string,
    locate: Locate,
  ) {
    this.#ref = ref;
    this.#locate = locate;
  }
  get owner(): string {
    return stepLabel(this.#ref);
  }
  get location(): SourceLocation | undefined {
    return this.#locate(this.#ref.step);
  }
}

/** A configured value quoted for a message: text as a JSON string, numbers and booleans as their text in quotes. */
export function quoteValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return JSON.stringify(String(value));
  }
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
