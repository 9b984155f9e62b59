/**
 * The steps of one phase a kapp's visit has not reached yet, in run order. Steps are taken from the front; after a
 * `load_outputs` step the phase is planned again and the queue goes on from the new list.
 */
import type { PlannedStep } from '../plan/steps.js';

/** Identifies a planned step within its phase across re-plans. */
const stepKey = (s: PlannedStep): string => `${s.unit}\u0000${s.declaredIn}\u0000${s.name}`;

export class StepQueue {
  /** The steps not taken yet, the next one last (taking is a pop). */
  #remaining: PlannedStep[];
  /** Every step taken so far (run or skipped). */
  readonly #reached = new Set<string>();

  constructor(planned: readonly PlannedStep[]) {
    this.#remaining = [...planned].reverse();
  }

  /** The next step to reach, or undefined when the phase is done. */
  take(): PlannedStep | undefined {
    const step = this.#remaining.pop();
    if (step) this.#reached.add(stepKey(step));
    return step;
  }

  /**
   * The phase was planned again after `last` (the step just taken): go on with the steps after it in the new list.
   * Should the new list no longer hold it (its unit's conditions changed), go on with the steps of the new list not
   * reached yet, so that none is skipped or run twice.
   */
  replan(replanned: readonly PlannedStep[], last: PlannedStep): void {
    const key = stepKey(last);
    const at = replanned.findIndex((s) => stepKey(s) === key);
    const next = at >= 0 ? replanned.slice(at + 1) : replanned.filter((s) => !this.#reached.has(stepKey(s)));
    this.#remaining = next.reverse();
  }
}
