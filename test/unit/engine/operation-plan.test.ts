/**
 * What each run command does, as its plan says before anything runs: which commands take the release lock and
 * record a release, fill the workspace, show a preview, and how `--changed-only` picks its kapps.
 */
import { describe, expect, it } from 'vitest';
import { operationPlan, type PlanParams } from '../../../src/engine/operation-plan.js';
import type { RunCommand } from '../../../src/execute/types.js';

const base: PlanParams = { dryRun: false, validate: true };

/** The plan's answers as one line per command, easy to read in a failure. */
function summary(command: RunCommand, params: Partial<PlanParams>): Record<string, unknown> {
  const plan = operationPlan(command, { ...base, ...params });
  return {
    mode: plan.mode,
    operation: plan.operation ?? null,
    takesLock: plan.takesLock,
    fillsWorkspace: plan.fillsWorkspace,
    planning: plan.planning,
    applyNoValue: plan.applyNoValue,
    allOutput: plan.allOutput,
    showsPreview: plan.showsPreview,
    changed: plan.changed,
  };
}

describe('the operation plan', () => {
  it.each([
    // command, options, mode, operation, takesLock, fillsWorkspace, planning, applyNoValue, allOutput, showsPreview
    ['install', {}, 'plan', 'install', false, true, false, false, false, true],
    ['install', { yes: true }, 'apply', 'install', true, true, false, true, true, false],
    ['install', { oneShot: true }, 'one-shot', 'install', true, true, false, true, true, false],
    ['install', { yes: true, dryRun: true }, 'apply', 'install', false, false, true, false, false, false],
    ['install', { yes: true, allowNoValue: true }, 'apply', 'install', true, true, false, false, true, false],
    ['install', { dryRun: true }, 'plan', 'install', false, false, true, false, false, false],
    ['delete', {}, 'plan', 'delete', false, true, false, false, false, false],
    ['delete', { yes: true }, 'apply', 'delete', true, true, false, true, true, false],
    ['output', { yes: true }, 'apply', null, false, true, false, false, false, false],
    ['clean', { oneShot: true }, 'one-shot', null, false, true, false, false, false, false],
    ['template', { allOutput: true }, 'plan', null, false, true, false, false, true, false],
  ] as const)(
    '%s %j',
    (command, params, mode, operation, takesLock, fillsWorkspace, planning, applyNoValue, allOutput, showsPreview) => {
      expect(summary(command, params)).toEqual({
        mode,
        operation,
        takesLock,
        fillsWorkspace,
        planning,
        applyNoValue,
        allOutput,
        showsPreview,
        changed: 'all',
      });
    },
  );

  it('picks --changed-only kapps against the lock, with a refresh, or against the latest release in a dry run', () => {
    expect(operationPlan('install', { ...base, yes: true, changedOnly: true }).changed).toBe('lock');
    expect(operationPlan('delete', { ...base, oneShot: true, changedOnly: true, refresh: true }).changed).toBe(
      'lock-refresh',
    );
    expect(operationPlan('install', { ...base, yes: true, dryRun: true, changedOnly: true }).changed).toBe('latest');
    // Commands that record no release have nothing to compare with.
    expect(operationPlan('output', { ...base, yes: true, changedOnly: true }).changed).toBe('all');
  });

  it('refuses --changed-only in a plan', () => {
    expect(() => operationPlan('install', { ...base, changedOnly: true })).toThrow(
      '--changed-only needs --yes or --one-shot',
    );
  });

  it('checks the commands unless told not to', () => {
    expect(operationPlan('install', base).checksCommands).toBe(true);
    expect(operationPlan('install', { ...base, validate: false }).checksCommands).toBe(false);
  });
});
