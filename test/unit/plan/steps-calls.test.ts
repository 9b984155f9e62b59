import { describe, expect, it } from 'vitest';
import { setLocation } from '../../../src/config/locations.js';
import type { RunStepConfig, RunUnitConfig } from '../../../src/config/types.js';
import { indexRunUnits, resolveCall } from '../../../src/plan/step-checks.js';
import type { PlannedStep } from '../../../src/plan/steps.js';
import type { Phase } from '../../../src/vocabulary.js';
import { CACHE, diagnosticsOf, names, plan } from './step-helpers.js';

/** Sugarkube's shared fixture for its run-unit tests (§10.1 "F"). */
function fixtureF(): RunUnitConfig[] {
  return [
    {
      name: 'helm',
      working_dir: 'helm/dir',
      plan_install: [{ name: 'plan-inst-3', command: 'plan-inst-comm3', merge_priority: 10 }],
      plan_delete: [{ call: 'plan_install', merge_priority: 10 }],
      clean: [{ call: 'apply_delete' }],
    },
    {
      name: 'terraform',
      working_dir: 'terraform/dir',
      plan_install: [
        { name: 'st-1', command: 'plan-inst-1', merge_priority: 0 },
        { name: 'st-2', command: 'plan-inst-2', merge_priority: 5 },
      ],
      apply_install: [{ call: 'plan_install' }],
      apply_delete: [
        { name: 'del-step-1', command: 'del-command1', merge_priority: 5 },
        { call: 'plan_install/plan-inst-3', merge_priority: 10 },
      ],
    },
  ];
}

function summary(steps: readonly PlannedStep[]): [string, string, number, string][] {
  return steps.map((s) => [s.name, s.command, s.mergePriority, s.workingDir]);
}

describe('planSteps: Sugarkube run-unit cases', () => {
  it('TestMergeRunUnits #1: sorts one unit by merge_priority, unset last', () => {
    const units: RunUnitConfig[] = [
      {
        name: 'helm',
        conditions: ['true'],
        plan_install: [
          { name: 'should-be-penultimate', command: 'x', merge_priority: 10 },
          { name: 'should-be-first', command: 'x', merge_priority: 0 },
          { name: 'should-be-last', command: 'x' },
          { name: 'should-be-second', command: 'x', merge_priority: 5 },
        ],
      },
    ];
    expect(names(plan(units, 'plan_install'))).toEqual([
      'should-be-first',
      'should-be-second',
      'should-be-penultimate',
      'should-be-last',
    ]);
  });

  it('TestMergeRunUnits #2: merges units; a unit whose conditions are false contributes nothing', () => {
    const units: RunUnitConfig[] = [
      {
        name: 'helm',
        conditions: ['true'],
        plan_install: [
          { name: 'should-be-penultimate', command: 'x', merge_priority: 10 },
          { name: 'should-be-second', command: 'x', merge_priority: 5 },
        ],
      },
      {
        name: 'terraform',
        conditions: ['true'],
        plan_install: [
          { name: 'should-be-first', command: 'x', merge_priority: 0 },
          { name: 'should-be-last', command: 'x' },
        ],
      },
      {
        name: 'missing',
        conditions: ['false'],
        plan_install: [{ name: 'should-be-missing', command: 'x', merge_priority: 0 }],
      },
    ];
    expect(names(plan(units, 'plan_install'))).toEqual([
      'should-be-first',
      'should-be-second',
      'should-be-penultimate',
      'should-be-last',
    ]);
  });

  it('TestFindStep / TestFindStepInRunUnits: a PHASE/STEP call finds the step and applies its unit defaults', () => {
    const units = fixtureF();
    const found = resolveCall(indexRunUnits(units), 'plan_install/plan-inst-3');
    expect(found?.map((r) => [r.unit.name, r.step.command, r.step.merge_priority])).toEqual([
      ['helm', 'plan-inst-comm3', 10],
    ]);
    const viaCall = plan(units, 'apply_delete').find((s) => s.name === 'plan-inst-3');
    expect(viaCall).toMatchObject({ command: 'plan-inst-comm3', mergePriority: 10, workingDir: `${CACHE}/helm/dir` });
  });

  it('TestGetStepsInRunUnit: a PHASE call takes that phase from every unit, each with its own defaults', () => {
    const units = fixtureF();
    expect(resolveCall(indexRunUnits(units), 'plan_install')?.map((r) => r.step.name)).toEqual([
      'plan-inst-3',
      'st-1',
      'st-2',
    ]);
    expect(summary(plan(units, 'apply_install'))).toEqual([
      ['st-1', 'plan-inst-1', 0, `${CACHE}/terraform/dir`],
      ['st-2', 'plan-inst-2', 5, `${CACHE}/terraform/dir`],
      ['plan-inst-3', 'plan-inst-comm3', 10, `${CACHE}/helm/dir`],
    ]);
  });

  it('TestInterpolateCallsSingleStep: a single-step call next to a plain step', () => {
    expect(summary(plan(fixtureF(), 'apply_delete'))).toEqual([
      ['del-step-1', 'del-command1', 5, `${CACHE}/terraform/dir`],
      ['plan-inst-3', 'plan-inst-comm3', 10, `${CACHE}/helm/dir`],
    ]);
  });

  it("TestInterpolateCallsUnit: the calling step's priority overrides every callee's", () => {
    expect(summary(plan(fixtureF(), 'plan_delete'))).toEqual([
      ['plan-inst-3', 'plan-inst-comm3', 10, `${CACHE}/helm/dir`],
      ['st-1', 'plan-inst-1', 10, `${CACHE}/terraform/dir`],
      ['st-2', 'plan-inst-2', 10, `${CACHE}/terraform/dir`],
    ]);
  });

  it('TestInterpolateCallsUnitRecursive: nested calls resolve; a call without priority keeps the inner ones', () => {
    expect(summary(plan(fixtureF(), 'clean'))).toEqual([
      ['del-step-1', 'del-command1', 5, `${CACHE}/terraform/dir`],
      ['plan-inst-3', 'plan-inst-comm3', 10, `${CACHE}/helm/dir`],
    ]);
  });

  it('TestMergedRunStepsForKapp: programs, the kapp layer and the global unit, already merged', () => {
    // Layer order: the global unit, then programs in `requires` order (prog2, proga, script) merged with the
    // kapp's own sugarkube.yaml, whose plan_install lists replace the programs'.
    const units: RunUnitConfig[] = [
      {
        name: 'sugarkube_config_file',
        clean: [
          { name: 'find1', command: 'find-stuff1' },
          { name: 'find2', command: 'find-stuff2' },
        ],
      },
      {
        name: 'prog2',
        binaries: ['cat'],
        plan_install: [{ name: 'last-one', merge_priority: 99 }],
        apply_install: [
          {
            name: 'do-stuff-first',
            command: '/path/to/prog2',
            args: 'do-stuff-zzz eu-west-1',
            env_vars: { REGION: 'eu-west-1', COLOUR: 'blue' },
            merge_priority: 20,
          },
          { name: 'x', command: '/path/to/x', merge_priority: 10 },
        ],
      },
      {
        name: 'proga',
        env_vars: { USER: 'sk', FOOD: 'carrots' },
        working_dir: 'tmp',
        plan_install: [
          { name: 'print-yo', command: 'echo', args: 'yo', env_vars: { KUBECONFIG: '' }, merge_priority: 10 },
        ],
        apply_install: [
          {
            name: 'do-stuff-second',
            command: '/path/to/helm',
            args: 'do-stuff nginx',
            env_vars: { KUBECONFIG: '' },
            merge_priority: 30,
          },
        ],
      },
      { name: 'script', plan_install: [{ name: 'print-yes', command: 'echo', args: 'yes', merge_priority: 20 }] },
    ];
    const planInstall = plan(units, 'plan_install');
    expect(planInstall.map((s) => [s.name, s.mergePriority])).toEqual([
      ['print-yo', 10],
      ['print-yes', 20],
      ['last-one', 99],
    ]);
    expect(planInstall[0]).toMatchObject({
      workingDir: `${CACHE}/tmp`,
      env: { KUBECONFIG: '', USER: 'sk', FOOD: 'carrots' },
      args: ['yo'],
    });
    expect(planInstall[2]).toMatchObject({ command: '', binaries: ['cat'] });
    expect(plan(units, 'apply_install').map((s) => [s.name, s.mergePriority])).toEqual([
      ['x', 10],
      ['do-stuff-first', 20],
      ['do-stuff-second', 30],
    ]);
    expect(names(plan(units, 'clean'))).toEqual(['find1', 'find2']);
  });
});

describe('planSteps: calls', () => {
  it('searches units whose conditions are false when expanding calls', () => {
    const units: RunUnitConfig[] = [
      {
        name: 'off',
        conditions: ['false'],
        output: [{ name: 'tf-output', command: 'terraform', args: 'output -json' }],
      },
      {
        name: 'on',
        apply_install: [
          { name: 'apply', command: 'terraform', merge_priority: 10 },
          { call: 'output', merge_priority: 15 },
        ],
      },
    ];
    expect(plan(units, 'apply_install').map((s) => [s.unit, s.name, s.declaredIn, s.mergePriority])).toEqual([
      ['on', 'apply', 'apply_install', 10],
      ['off', 'tf-output', 'output', 15],
    ]);
    expect(plan(units, 'output')).toEqual([]);
  });

  it('expands calls in place, keeping the caller position among equal priorities', () => {
    const units: RunUnitConfig[] = [
      { name: 'a', clean: [{ name: 'first', command: 'x' }, { call: 'output' }, { name: 'last', command: 'x' }] },
      {
        name: 'b',
        output: [
          { name: 'o1', command: 'x' },
          { name: 'o2', command: 'x' },
        ],
      },
    ];
    expect(names(plan(units, 'clean'))).toEqual(['first', 'o1', 'o2', 'last']);
  });

  it('propagates the outermost set priority through nested calls', () => {
    const units: RunUnitConfig[] = [
      {
        name: 'u',
        clean: [
          { call: 'output/o-call', merge_priority: 7 },
          { name: 'c', command: 'x', merge_priority: 8 },
        ],
        output: [{ name: 'o-call', call: 'plan_install/p', merge_priority: 200 }],
        plan_install: [{ name: 'p', command: 'x', merge_priority: 100 }],
      },
    ];
    expect(plan(units, 'clean').map((s) => [s.name, s.mergePriority, s.declaredIn])).toEqual([
      ['p', 7, 'plan_install'],
      ['c', 8, 'clean'],
    ]);
    expect(plan(units, 'output').map((s) => [s.name, s.mergePriority])).toEqual([['p', 200]]);
  });

  /** Phases chained by single calls: clean → output → plan_delete → apply_delete → plan_install → apply_install. */
  function chain(levels: number): RunUnitConfig[] {
    const order: Phase[] = ['clean', 'output', 'plan_delete', 'apply_delete', 'plan_install', 'apply_install'];
    const unit: RunUnitConfig = { name: 'u' };
    order.forEach((phase, i) => {
      const next = order[i + 1];
      unit[phase] = [i < levels && next ? { name: `to-${next}`, call: next } : { name: `end-${phase}`, command: 'x' }];
    });
    return [unit];
  }

  it('resolves calls nested 5 deep, and 6 deep through a second unit', () => {
    expect(names(plan(chain(5), 'clean'))).toEqual(['end-apply_install']);
    const units = chain(5);
    const last = units[0];
    if (last?.apply_install) last.apply_install = [{ call: 'clean/z' }];
    units.push({ name: 'v', clean: [{ name: 'z', command: 'x' }] });
    // Unit v's own clean list contributes z directly, after the 6-deep chain from unit u has produced it.
    expect(plan(units, 'clean').map((s) => [s.name, s.locations.via.length])).toEqual([
      ['z', 6],
      ['z', 0],
    ]);
  });

  it('rejects a 7th level of calls, listing the chain', () => {
    const units = chain(5);
    const unit = units[0];
    if (unit) unit.apply_install = [{ call: 'clean/z' }];
    units.push({ name: 'v', clean: [{ name: 'z', call: 'output/y' }], output: [{ name: 'y', command: 'x' }] });
    expect(diagnosticsOf(() => plan(units, 'clean'))).toBe(
      [
        "error: call nesting deeper than 6 levels in kapp 'web:nginx': output → plan_delete → apply_delete → plan_install → apply_install → clean/z → output/y",
        '  hint: a step that calls itself, directly or through other calls, never ends',
        "  step 'to-output' of run unit 'u' (clean) calls 'output'",
        "  step 'to-plan_delete' of run unit 'u' (output) calls 'plan_delete'",
        "  step 'to-apply_delete' of run unit 'u' (plan_delete) calls 'apply_delete'",
        "  step 'to-plan_install' of run unit 'u' (apply_delete) calls 'plan_install'",
        "  step 'to-apply_install' of run unit 'u' (plan_install) calls 'apply_install'",
        "  step #1 of run unit 'u' (apply_install) calls 'clean/z'",
        "  step 'z' of run unit 'v' (clean) calls 'output/y'",
      ].join('\n'),
    );
  });

  it('rejects a step that calls itself, pointing at the call', () => {
    const step: RunStepConfig = { name: 'loop', call: 'clean/loop' };
    setLocation(
      step,
      { file: '/stack/kapps/nginx/sugarkube.yaml', line: 4, column: 13, endLine: 4, endColumn: 23 },
      'call',
    );
    const source = {
      '/stack/kapps/nginx/sugarkube.yaml':
        'run_units:\n  helm:\n    clean:\n      - call: clean/loop\n        name: loop\n',
    };
    const text = diagnosticsOf(() => plan([{ name: 'helm', clean: [step] }], 'clean'), source);
    expect(text.split('\n').slice(0, 5)).toEqual([
      "kapps/nginx/sugarkube.yaml:4:13: error: call nesting deeper than 6 levels in kapp 'web:nginx': clean/loop → clean/loop → clean/loop → clean/loop → clean/loop → clean/loop → clean/loop",
      '  |',
      '4 |       - call: clean/loop',
      '  |             ^^^^^^^^^^',
      '  hint: a step that calls itself, directly or through other calls, never ends',
    ]);
    // The step calling itself is listed once as related information, not once per level.
    expect(text.split('\n').slice(5)).toEqual([
      "  kapps/nginx/sugarkube.yaml:4:13: step 'loop' of run unit 'helm' (clean) calls 'clean/loop'",
    ]);
  });
});
