import { describe, expect, it } from 'vitest';
import type { RunUnitConfig } from '../../../src/config/types.js';
import type { PlannedStep } from '../../../src/plan/steps.js';
import { StepQueue } from '../../../src/execute/step-queue.js';
import { names, plan } from '../plan/step-helpers.js';

/** Take every step left in the queue. */
function drain(queue: StepQueue): PlannedStep[] {
  const out: PlannedStep[] = [];
  for (let s = queue.take(); s !== undefined; s = queue.take()) out.push(s);
  return out;
}

const unit = (name: string, steps: string[]): RunUnitConfig => ({
  name,
  apply_install: steps.map((s) => ({ name: s, command: s })),
});

describe('StepQueue', () => {
  it('gives the planned steps in order, then nothing', () => {
    const queue = new StepQueue(plan([unit('u', ['a', 'b', 'c'])], 'apply_install'));
    expect(names(drain(queue))).toEqual(['a', 'b', 'c']);
    expect(queue.take()).toBeUndefined();
  });

  it('after a re-plan that still holds the last step, goes on after it in the new list', () => {
    const queue = new StepQueue(plan([unit('u', ['a', 'load', 'b'])], 'apply_install'));
    queue.take();
    const load = queue.take() as PlannedStep;
    // The new list has a step before and after `load` that were not there before.
    queue.replan(plan([unit('u', ['a', 'early', 'load', 'b', 'late'])], 'apply_install'), load);
    expect(names(drain(queue))).toEqual(['b', 'late']);
  });

  it('after a re-plan that no longer holds the last step, neither repeats nor skips a step', () => {
    const before = [unit('first', ['load']), unit('second', ['b1', 'b2'])];
    const queue = new StepQueue(plan(before, 'apply_install'));
    const load = queue.take() as PlannedStep;
    // Unit `first` turned off: the new list starts with steps of `second`, none reached yet.
    queue.replan(plan([unit('second', ['b1', 'b2'])], 'apply_install'), load);
    expect(names(drain(queue))).toEqual(['b1', 'b2']);
  });

  it('leaves out the steps already reached when the last step is gone from the new list', () => {
    const queue = new StepQueue(plan([unit('u', ['a', 'b', 'load', 'c'])], 'apply_install'));
    queue.take();
    queue.take();
    const load = queue.take() as PlannedStep;
    queue.replan(plan([unit('u', ['a', 'b', 'c', 'd'])], 'apply_install'), load);
    expect(names(drain(queue))).toEqual(['c', 'd']);
  });

  it('tells steps of the same name in different units apart', () => {
    const queue = new StepQueue(plan([unit('one', ['x']), unit('two', ['x', 'y'])], 'apply_install'));
    const first = queue.take() as PlannedStep;
    expect(first.unit).toBe('one');
    queue.replan(plan([unit('one', ['x']), unit('two', ['x', 'y'])], 'apply_install'), first);
    const rest = drain(queue);
    expect(rest.map((s) => `${s.unit}/${s.name}`)).toEqual(['two/x', 'two/y']);
  });
});
