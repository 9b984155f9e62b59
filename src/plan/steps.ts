/**
 * The ordered run steps of one phase of a kapp, from its merged and rendered run units.
 *
 * 1. The structure of all run units is checked (`checkRunUnits`).
 * 2. Each unit whose conditions all hold contributes its list for the phase, in the order the units are given.
 * 3. `call:` steps are replaced in place by the steps they name (`expandCalls`).
 * 4. Steps are stably sorted by `merge_priority` (unset = 255): ties keep unit order, then declaration order.
 * 5. Each step gets its unit's defaults, converted typed fields, absolute paths and tokenised args.
 *
 * All problems found are thrown together as one `ConfigError`.
 */
import path from 'node:path';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { ConfigError, InternalError } from '../diagnostics/errors.js';
import { locationOf } from '../config/locations.js';
import type { RunUnitConfig } from '../config/types.js';
import type { Phase } from '../vocabulary.js';
import { expandCalls } from './calls.js';
import { evaluateConditions } from './go-bool.js';
import type { PlannedStep } from './planned-step.js';
import { checkRunUnits, indexRunUnits, type StepIndex } from './step-checks.js';
import { unitConditionSite, type Locate, type StepPlanContext, type StepRef } from './step-context.js';
import { DEFAULT_MERGE_PRIORITY, StepConverter } from './step-fields.js';

export type { PlannedStep } from './planned-step.js';
export type { StepPlanContext } from './step-context.js';

/** Which units' conditions hold, by position; diagnostics for conditions that are not Go booleans. */
function unitsEnabled(units: readonly RunUnitConfig[], context: StepPlanContext, problems: Diagnostic[]): boolean[] {
  const locate = context.locate ?? locationOf;
  return units.map((unit) => {
    if (!unit.conditions?.length) return true;
    try {
      return evaluateConditions(unit.conditions ?? [], unitConditionSite(unit, context.kappId, locate));
    } catch (e) {
      if (!(e instanceof ConfigError)) throw e;
      problems.push(...e.diagnostics);
      return false;
    }
  });
}

/** The phase-independent part of planning: the step index, structure problems and which units are enabled. */
interface PreparedUnits {
  readonly kappId: string;
  readonly locate: Locate;
  readonly index: StepIndex;
  readonly problems: readonly Diagnostic[];
  readonly enabled: readonly boolean[];
}

/**
 * The prepared run units of the kapp planned last: planning a kapp's phases one after another checks its run units
 * once, not once per phase, and the same diagnostics (the same objects) are thrown for each of them. One entry, held
 * by its planner: a big stack's prepared units die as it moves on to the next kapp; planning the same units again
 * later works them out again (the same result).
 */
export class PreparedUnitsCache {
  last: { units: readonly RunUnitConfig[]; prepared: PreparedUnits } | undefined = undefined;
  /**
   * With `keepAll`, every kapp's prepared units, for as long as its units live: an apply plans each kapp several
   * times (its checks, its spec, its visit), a kapp after all the others.
   */
  readonly all: WeakMap<readonly RunUnitConfig[], PreparedUnits> | undefined;
  constructor(options: { keepAll?: boolean } = {}) {
    this.all = options.keepAll ? new WeakMap() : undefined;
  }
}

function prepare(units: readonly RunUnitConfig[], context: StepPlanContext): PreparedUnits {
  const locate = context.locate ?? locationOf;
  const cache = context.prepared;
  const cached = cache?.last?.units === units ? cache.last.prepared : cache?.all?.get(units);
  if (cached && cached.kappId === context.kappId && cached.locate === locate) return cached;
  const index = indexRunUnits(units);
  const problems = checkRunUnits(index, context.kappId, locate);
  const enabled = unitsEnabled(units, context, problems);
  const result = { kappId: context.kappId, locate, index, problems, enabled };
  if (cache) {
    cache.last = { units, prepared: result };
    cache.all?.set(units, result);
  }
  return result;
}

/**
 * The steps to run for `phase`, in order. `units` are the kapp's merged, rendered run units in layer order, then
 * declaration order; `context.cacheRoot` must be absolute. Throws a `ConfigError` listing every problem found.
 */
export function planSteps(units: readonly RunUnitConfig[], phase: Phase, context: StepPlanContext): PlannedStep[] {
  if (!path.isAbsolute(context.cacheRoot)) {
    throw new InternalError(`the cache root of kapp '${context.kappId}' is not absolute: ${context.cacheRoot}`);
  }
  const { locate, index, problems: structural, enabled } = prepare(units, context);
  if (structural.length > 0) throw new ConfigError(structural);
  const problems: Diagnostic[] = [];

  const declared = index.get(phase) ?? [];
  if (declared.length === 0) return [];
  const initial: StepRef[] = declared.filter((ref) => enabled[ref.unitIndex] === true);
  const produced = expandCalls(initial, index, context.kappId, locate);
  // Array.prototype.sort is stable, so equal priorities keep unit order, then declaration order.
  produced.sort((a, b) => (a.priority ?? DEFAULT_MERGE_PRIORITY) - (b.priority ?? DEFAULT_MERGE_PRIORITY));

  const converter = new StepConverter(context.kappId, context.cacheRoot, locate, problems);
  const planned: PlannedStep[] = [];
  for (const p of produced) {
    const step = converter.convert(p);
    if (step) planned.push(step);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return planned;
}
