/**
 * Expanding `call:` steps. A call step is replaced, in place, by the steps it names; a callee that is itself a
 * call is expanded in turn. The priority of the outermost calling step that sets `merge_priority` wins over the
 * callees' own, as in Sugarkube (the override is copied onto each produced step and so propagates inwards).
 */
import { error, type Diagnostic, type RelatedInformation } from '../diagnostics/diagnostic.js';
import { ConfigError } from '../diagnostics/errors.js';
import { resolveCall, type StepIndex } from './step-checks.js';
import { isCall, stepLabel, type Locate, type StepRef } from './step-context.js';

/** Calls nest at most this deep: Sugarkube's initial expansion pass plus five more. */
export const MAX_CALL_DEPTH = 6;

/** A step produced for a phase: the declared step, its effective priority, and the calls that led to it. */
export interface ProducedStep {
  readonly ref: StepRef;
  /** `merge_priority` after call overrides; undefined when neither the step nor a caller sets one. */
  readonly priority: number | undefined;
  /** The call steps that produced this one, outermost first; empty for a step listed in the phase itself. */
  readonly via: readonly StepRef[];
}

function nestingError(chain: readonly StepRef[], kappId: string, locate: Locate): Diagnostic {
  const path = chain.map((ref) => ref.step.call ?? '').join(' → ');
  // Each call of the chain once (a step that calls itself would otherwise be listed at every level).
  const related: RelatedInformation[] = [...new Set(chain)].map((ref) => {
    const location = locate(ref.step, 'call') ?? locate(ref.step);
    return { message: `${stepLabel(ref)} calls '${ref.step.call ?? ''}'`, ...(location ? { location } : {}) };
  });
  const last = chain[chain.length - 1];
  return error(
    `call nesting deeper than ${MAX_CALL_DEPTH} levels in kapp '${kappId}': ${path}`,
    last ? (locate(last.step, 'call') ?? locate(last.step)) : undefined,
    { related, hint: 'a step that calls itself, directly or through other calls, never ends' },
  );
}

/**
 * Expand the calls in `initial` (the steps listed for the phase by units whose conditions hold) into the steps
 * that run, keeping their order. Throws a `ConfigError` when calls nest deeper than `MAX_CALL_DEPTH`. Calls whose
 * value is invalid produce nothing here; `checkRunUnits` reports them.
 */
export function expandCalls(
  initial: readonly StepRef[],
  index: StepIndex,
  kappId: string,
  locate: Locate,
): ProducedStep[] {
  const out: ProducedStep[] = [];
  const visit = (ref: StepRef, override: number | undefined, via: readonly StepRef[]): void => {
    const priority = override ?? ref.step.merge_priority;
    if (!isCall(ref.step)) {
      out.push({ ref, priority, via });
      return;
    }
    const chain = [...via, ref];
    if (chain.length > MAX_CALL_DEPTH) throw new ConfigError([nestingError(chain, kappId, locate)]);
    for (const target of resolveCall(index, ref.step.call) ?? []) visit(target, priority, chain);
  };
  for (const ref of initial) visit(ref, undefined, []);
  return out;
}
