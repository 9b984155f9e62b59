/**
 * What each type of run does, row by row: a change to a row (an apply that stops recording a release, a preview that
 * starts taking the lock) fails here and has to be made on purpose.
 */
import { describe, expect, it } from 'vitest';
import { RUN_TYPES } from '../../../src/api/index.js';
import { RunRefused } from '../../../src/server/runs/errors.js';
import { RUN_KINDS, runPlan } from '../../../src/server/runs/run-plan.js';

describe('run plan', () => {
  it('has one row per run type, each saying what that run does', () => {
    expect(Object.keys(RUN_KINDS).sort()).toEqual([...RUN_TYPES].sort());
    const table = RUN_TYPES.map((type) => {
      const k = RUN_KINDS[type];
      return [type, k.engine, k.label, k.role, k.readOnly, k.records, k.takesLock, k.mayApplyPreview, k.resultType];
    });
    expect(table).toEqual([
      // type      engine      label       role     readOnly records takesLock mayApplyPreview resultType
      ['generate', 'generate', 'Generate', 'plan', true, false, false, false, 'application/yaml'],
      ['preview', 'preview', 'Preview', 'plan', true, false, false, false, 'application/json'],
      ['apply', 'install', 'Apply', 'apply', false, true, true, true, 'application/json'],
      ['destroy', 'delete', 'Destroy', 'apply', false, true, true, false, 'application/json'],
      ['rollback', 'rollback', 'Rollback', 'apply', false, true, true, true, 'application/json'],
      ['drift', 'drift', 'Drift check', 'plan', true, false, false, false, 'application/json'],
    ]);
  });

  it('has no field the table above does not check', () => {
    for (const type of RUN_TYPES) {
      expect(Object.keys(RUN_KINDS[type]).sort()).toEqual(
        ['engine', 'label', 'role', 'readOnly', 'records', 'takesLock', 'mayApplyPreview', 'resultType'].sort(),
      );
    }
  });

  it('approves an apply by the preview it names; without one nothing is approved', () => {
    expect(runPlan('apply', { previewRunId: 'r-7' })).toEqual({ ...RUN_KINDS.apply, type: 'apply', approvedBy: 'r-7' });
    expect(runPlan('apply', {}).approvedBy).toBeUndefined();
    expect(runPlan('destroy').approvedBy).toBeUndefined();
    expect(runPlan('preview', {}).records).toBe(false);
  });

  it('refuses a preview named by a run that may not apply one, saying which', () => {
    for (const type of ['generate', 'preview', 'destroy'] as const) {
      expect(() => runPlan(type, { previewRunId: 'r-7' })).toThrow(RunRefused);
      expect(() => runPlan(type, { previewRunId: 'r-7' })).toThrow(
        `a ${type} run may not name a preview run (r-7); nothing was run`,
      );
    }
  });
});
