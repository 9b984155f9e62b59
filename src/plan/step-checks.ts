/**
 * The structure of a kapp's run units, checked as a whole before any phase is planned: step names, `call`
 * syntax and targets, and `merge_priority` ranges. Checking every phase (not only the one being planned) means a
 * broken `clean` step is reported by `install` too, instead of surfacing the day someone cleans.
 */
import { error, type Diagnostic } from '../diagnostics/diagnostic.js';
import type { RunStepConfig, RunUnitConfig } from '../config/types.js';
import { PHASES, type Phase } from '../vocabulary.js';
import { didYouMean } from '../diagnostics/did-you-mean.js';
import { describeStep, isCall, quoteValue, type Locate, type StepRef } from './step-context.js';

/** Every declared step of each phase, in unit order then declaration order. */
export type StepIndex = ReadonlyMap<Phase, readonly StepRef[]>;

/** Index the steps of `units` (given in layer order, then declaration order) by phase. */
export function indexRunUnits(units: readonly RunUnitConfig[]): StepIndex {
  const index = new Map<Phase, StepRef[]>();
  for (const phase of PHASES) {
    const list: StepRef[] = [];
    for (let unitIndex = 0; unitIndex < units.length; unitIndex++) {
      const unit = units[unitIndex] as RunUnitConfig;
      const steps = unit[phase];
      if (steps)
        for (let i = 0; i < steps.length; i++)
          list.push({ unit, unitIndex, phase, index: i, step: steps[i] as RunStepConfig });
    }
    index.set(phase, list);
  }
  return index;
}

function isPhase(text: string): text is Phase {
  return (PHASES as readonly string[]).includes(text);
}

/** A `call:` value split into its phase and optional step name; `parts` counts the `/`-separated pieces. */
export interface ParsedCall {
  readonly phase: string;
  readonly stepName?: string;
  readonly parts: number;
}

/** Split a `call:` value: `PHASE` or `PHASE/STEP`. */
export function parseCall(call: string): ParsedCall {
  const parts = call.split('/');
  const [phase = '', stepName] = parts;
  return stepName === undefined ? { phase, parts: parts.length } : { phase, stepName, parts: parts.length };
}

/**
 * The steps a `call:` value stands for: every step of the phase across all units (whatever their conditions),
 * or the first step of that phase with the given name. Undefined when the value is invalid (see `checkRunUnits`).
 */
export function resolveCall(index: StepIndex, call: string): readonly StepRef[] | undefined {
  const parsed = parseCall(call);
  if (parsed.parts > 2 || !isPhase(parsed.phase)) return undefined;
  const steps = index.get(parsed.phase) ?? [];
  if (parsed.stepName === undefined) return steps;
  const found = steps.find((ref) => ref.step.name === parsed.stepName);
  return found ? [found] : undefined;
}

function checkCall(ref: StepRef & { step: { call: string } }, index: StepIndex, kappId: string, locate: Locate) {
  const problems: Diagnostic[] = [];
  const { call } = ref.step;
  const where = describeStep(ref, kappId);
  const location = locate(ref.step, 'call') ?? locate(ref.step);
  if (ref.step.command) {
    problems.push(
      error(`${where} has both 'call' and 'command'; a step either runs a command or calls other steps`, location),
    );
  }
  const parsed = parseCall(call);
  if (parsed.parts > 2) {
    problems.push(error(`${where} has the call '${call}'; a call is 'PHASE' or 'PHASE/STEP'`, location));
  } else if (!isPhase(parsed.phase)) {
    const hint = didYouMean(parsed.phase, PHASES) ?? `the phases are ${PHASES.join(', ')}`;
    problems.push(error(`${where} calls '${call}', but '${parsed.phase}' is not a phase`, location, { hint }));
  } else if (parsed.stepName !== undefined && !resolveCall(index, call)) {
    const names = (index.get(parsed.phase) ?? []).flatMap((r) => (r.step.name ? [r.step.name] : []));
    const hint = didYouMean(parsed.stepName, names);
    problems.push(
      error(
        `${where} calls '${call}', but no run unit has a ${parsed.phase} step named '${parsed.stepName}'`,
        location,
        hint ? { hint } : {},
      ),
    );
  }
  return problems;
}

/**
 * Diagnostics for the structure of `units`: a step with both `call` and `command`; a call that is not `PHASE` or
 * `PHASE/STEP`, names an unknown phase or a step that does not exist; a non-call step without a name or with a
 * name already used in the same unit and phase (both places are named); a `merge_priority` outside 0–255.
 */
export function checkRunUnits(index: StepIndex, kappId: string, locate: Locate): Diagnostic[] {
  const problems: Diagnostic[] = [];
  for (const phase of PHASES) {
    const refs = index.get(phase) ?? [];
    if (refs.length === 0) continue;
    const seen = new Map<string, StepRef>();
    for (const ref of refs) {
      const { step } = ref;
      const priority: unknown = step.merge_priority;
      if (
        priority !== undefined &&
        !(typeof priority === 'number' && Number.isInteger(priority) && priority >= 0 && priority <= 255)
      ) {
        problems.push(
          error(
            `${describeStep(ref, kappId)}: 'merge_priority' must be a whole number from 0 to 255, but it is ${quoteValue(priority)}`,
            locate(step, 'merge_priority') ?? locate(step),
          ),
        );
      }
      if (isCall(step)) {
        problems.push(...checkCall({ ...ref, step }, index, kappId, locate));
        continue;
      }
      if (!step.name) {
        problems.push(
          error(
            `${describeStep(ref, kappId)} has no name; every step that runs a command needs one`,
            locate(step, 'name') ?? locate(step),
          ),
        );
        continue;
      }
      const key = `${ref.unitIndex}\u0000${step.name}`;
      const first = seen.get(key);
      if (first) {
        const firstLocation = locate(first.step, 'name') ?? locate(first.step);
        problems.push(
          error(
            `step name '${step.name}' is used twice in run unit '${ref.unit.name}' (${phase}) of kapp '${kappId}'`,
            locate(step, 'name') ?? locate(step),
            {
              related: [
                {
                  message: `'${step.name}' is first defined here`,
                  ...(firstLocation ? { location: firstLocation } : {}),
                },
              ],
            },
          ),
        );
      } else {
        seen.set(key, ref);
      }
    }
  }
  return problems;
}
