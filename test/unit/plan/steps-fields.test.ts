import { describe, expect, it } from 'vitest';
import { setLocation } from '../../../src/config/locations.js';
import type { RunStepConfig, RunUnitConfig } from '../../../src/config/types.js';
import { planSteps } from '../../../src/plan/steps.js';
import { toSpecStep } from '../../../src/plan/spec.js';
import { CACHE, diagnosticsOf, names, plan } from './step-helpers.js';

describe('planSteps: structural errors', () => {
  it('reports every problem of every phase at once', () => {
    const units: RunUnitConfig[] = [
      {
        name: 'helm',
        apply_install: [
          { name: 'both', call: 'output', command: 'helm' },
          { name: 'typo', call: 'plan_instal/x' },
          { name: 'slashes', call: 'output/a/b' },
          { name: 'missing', call: 'output/tf-outptu' },
          { command: 'helm' },
          { name: 'dup', command: 'a' },
          { name: 'dup', command: 'b' },
          { name: 'prio', command: 'c', merge_priority: 256 },
        ],
        output: [{ name: 'tf-output', command: 'terraform' }],
      },
      { name: 'other', apply_install: [{ name: 'dup', command: 'fine-in-another-unit' }] },
    ];
    expect(diagnosticsOf(() => plan(units, 'clean'))).toBe(
      [
        "error: step 'both' of run unit 'helm' (apply_install) in kapp 'web:nginx' has both 'call' and 'command'; a step either runs a command or calls other steps",
        '',
        "error: step 'typo' of run unit 'helm' (apply_install) in kapp 'web:nginx' calls 'plan_instal/x', but 'plan_instal' is not a phase",
        "  hint: did you mean 'plan_install'?",
        '',
        "error: step 'slashes' of run unit 'helm' (apply_install) in kapp 'web:nginx' has the call 'output/a/b'; a call is 'PHASE' or 'PHASE/STEP'",
        '',
        "error: step 'missing' of run unit 'helm' (apply_install) in kapp 'web:nginx' calls 'output/tf-outptu', but no run unit has a output step named 'tf-outptu'",
        "  hint: did you mean 'tf-output'?",
        '',
        "error: step #5 of run unit 'helm' (apply_install) in kapp 'web:nginx' has no name; every step that runs a command needs one",
        '',
        "error: step name 'dup' is used twice in run unit 'helm' (apply_install) of kapp 'web:nginx'",
        "  'dup' is first defined here",
        '',
        "error: step 'prio' of run unit 'helm' (apply_install) in kapp 'web:nginx': 'merge_priority' must be a whole number from 0 to 255, but it is \"256\"",
      ].join('\n'),
    );
  });

  it('names both places of a duplicate step name', () => {
    const first: RunStepConfig = { name: 'install', command: 'helm' };
    const second: RunStepConfig = { name: 'install', command: 'helm' };
    const file = '/stack/kapps/nginx/sugarkube.yaml';
    setLocation(first, { file, line: 4, column: 15, endLine: 4, endColumn: 22 }, 'name');
    setLocation(second, { file, line: 6, column: 15, endLine: 6, endColumn: 22 }, 'name');
    const source = {
      [file]: [
        'run_units:',
        '  helm:',
        '    apply_install:',
        '      - name: install',
        '        command: helm',
        '      - name: install',
        '        command: helm',
      ].join('\n'),
    };
    expect(diagnosticsOf(() => plan([{ name: 'helm', apply_install: [first, second] }], 'output'), source)).toBe(
      [
        "kapps/nginx/sugarkube.yaml:6:15: error: step name 'install' is used twice in run unit 'helm' (apply_install) of kapp 'web:nginx'",
        '  |',
        '6 |       - name: install',
        '  |               ^^^^^^^',
        "  kapps/nginx/sugarkube.yaml:4:15: 'install' is first defined here",
      ].join('\n'),
    );
  });

  it('rejects run-unit conditions that are not Go booleans', () => {
    const units: RunUnitConfig[] = [{ name: 'helm', conditions: ['true', 'yes', '<no value>'], clean: [] }];
    expect(diagnosticsOf(() => plan(units, 'clean'))).toBe(
      [
        "error: the 2nd condition of run unit 'helm' of kapp 'web:nginx' is not true or false: it rendered as \"yes\"",
        '  hint: a condition must render to exactly one of 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False',
        '',
        "error: the 3rd condition of run unit 'helm' of kapp 'web:nginx' is not true or false: it rendered as \"<no value>\"",
        '  hint: a condition must render to exactly one of 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False',
      ].join('\n'),
    );
  });
});

describe('planSteps: fields', () => {
  it('applies unit defaults; the step wins', () => {
    const units: RunUnitConfig[] = [
      {
        name: 'helm',
        working_dir: 'charts',
        env_vars: { A: 'unit', B: 'unit' },
        binaries: ['kubectl'],
        clean: [
          {
            name: 'own',
            command: 'x',
            working_dir: `${CACHE}/abs/dir/`,
            env_vars: { B: 'step', C: 'step' },
            binaries: ['helm', 'kubectl'],
          },
          { name: 'inherit', command: 'x', working_dir: '' },
        ],
      },
    ];
    const [own, inherit] = plan(units, 'clean');
    expect(own).toMatchObject({
      workingDir: `${CACHE}/abs/dir`,
      env: { B: 'step', C: 'step', A: 'unit' },
      binaries: ['helm', 'kubectl'],
    });
    expect(Object.keys(own?.env ?? {})).toEqual(['B', 'C', 'A']);
    expect(inherit).toMatchObject({
      workingDir: `${CACHE}/charts`,
      env: { A: 'unit', B: 'unit' },
      binaries: ['kubectl'],
    });
  });

  it('resolves working dirs against the cache root and capture files against the working dir', () => {
    const units: RunUnitConfig[] = [
      {
        name: 'tf',
        clean: [
          { name: 'root', command: 'x', stdout: 'out.json', stderr: `${CACHE}/logs/err.txt` },
          { name: 'rel', command: 'x', working_dir: './terraform/../tf', stdout: '../out.json' },
        ],
      },
    ];
    const [root, rel] = plan(units, 'clean');
    expect([root?.workingDir, root?.stdout, root?.stderr]).toEqual([
      CACHE,
      `${CACHE}/out.json`,
      `${CACHE}/logs/err.txt`,
    ]);
    expect([rel?.workingDir, rel?.stdout, rel?.stderr]).toEqual([`${CACHE}/tf`, `${CACHE}/out.json`, undefined]);
  });

  it('refuses capture files outside the kapp directory, naming step, field and path', () => {
    const units: RunUnitConfig[] = [
      {
        name: 'tf',
        clean: [
          { name: 'up', command: 'x', working_dir: 'tf', stdout: '../../out.json' },
          { name: 'abs', command: 'x', stderr: '/var/log/err.txt' },
          { name: 'wd', command: 'x', working_dir: 'tf', stdout: '/tmp/out.json' },
        ],
      },
    ];
    const text = diagnosticsOf(() => plan(units, 'clean'));
    expect(text).toContain(
      `step 'up' of run unit 'tf' (clean) in kapp 'web:nginx': 'stdout' file /work/cache/web/out.json is outside the kapp's directory ${CACHE}`,
    );
    expect(text).toContain(
      `step 'abs' of run unit 'tf' (clean) in kapp 'web:nginx': 'stderr' file /var/log/err.txt is outside`,
    );
    expect(text).toContain(
      `step 'wd' of run unit 'tf' (clean) in kapp 'web:nginx': 'stdout' file /tmp/out.json is outside`,
    );
  });

  it('refuses working dirs outside the kapp directory, naming step, field and path', () => {
    const units: RunUnitConfig[] = [
      {
        name: 'tf',
        working_dir: '/etc',
        clean: [
          { name: 'up', command: 'x', working_dir: '../../..' },
          { name: 'unit', command: 'x' },
          { name: 'inside', command: 'x', working_dir: 'a/../b' },
        ],
      },
    ];
    const text = diagnosticsOf(() => plan(units, 'clean'));
    expect(text).toContain(
      `step 'up' of run unit 'tf' (clean) in kapp 'web:nginx': 'working_dir' /work is outside the kapp's directory ${CACHE}`,
    );
    expect(text).toContain(`step 'unit' of run unit 'tf' (clean) in kapp 'web:nginx': 'working_dir' /etc is outside`);
    expect(text).not.toContain("step 'inside'");
  });

  it('converts typed fields written as templates', () => {
    const units: RunUnitConfig[] = [
      {
        name: 'u',
        clean: [
          {
            name: 'typed',
            command: 'x',
            timeout: ' 30 ',
            expected_exit_code: '3',
            ignore_errors: 'True',
            load_outputs: 'yes',
            print: 'verbose',
          },
          { name: 'yaml', command: 'x', timeout: 0, expected_exit_code: 2, ignore_errors: false, load_outputs: true },
          { name: 'defaults', command: 'x', timeout: '0', ignore_errors: 'f', load_outputs: '0' },
        ],
      },
    ];
    const [typed, yaml, defaults] = plan(units, 'clean');
    expect(typed).toMatchObject({
      timeout: 30,
      expectedExitCode: 3,
      ignoreErrors: true,
      loadOutputs: true,
      print: 'verbose',
    });
    expect(yaml).toMatchObject({ expectedExitCode: 2, ignoreErrors: false, loadOutputs: true });
    expect(yaml?.timeout).toBeUndefined();
    expect(defaults).toMatchObject({ expectedExitCode: 0, ignoreErrors: false, loadOutputs: false });
    expect(defaults && 'timeout' in defaults).toBe(false);
    expect(defaults && 'print' in defaults).toBe(false);
  });

  it('names kapp, unit, step, field and rendered text for a bad typed field, once per declared step', () => {
    const units: RunUnitConfig[] = [
      {
        name: 'u',
        clean: [{ call: 'output/o' }, { call: 'output/o' }],
        output: [
          {
            name: 'o',
            command: 'x',
            timeout: '1.5',
            expected_exit_code: '-1',
            ignore_errors: 'on',
            load_outputs: 'maybe',
          },
        ],
      },
    ];
    expect(diagnosticsOf(() => plan(units, 'clean'))).toBe(
      [
        "error: step 'o' of run unit 'u' (output) in kapp 'web:nginx': 'timeout' must be a whole number of seconds (0 or more), but it is \"1.5\"",
        '',
        "error: step 'o' of run unit 'u' (output) in kapp 'web:nginx': 'expected_exit_code' must be a whole number (0 or more), but it is \"-1\"",
        '',
        "error: step 'o' of run unit 'u' (output) in kapp 'web:nginx': 'ignore_errors' must be true or false, but it is \"on\"",
        '',
        "error: step 'o' of run unit 'u' (output) in kapp 'web:nginx': 'load_outputs' must be true or false, but it is \"maybe\"",
      ].join('\n'),
    );
  });

  it('tokenises args and reports an unquoted operator with the step and its location', () => {
    const step: RunStepConfig = { name: 'install', command: 'helm', args: 'upgrade --install nginx . 2>&1' };
    const file = '/stack/kapps/nginx/sugarkube.yaml';
    setLocation(step, { file, line: 5, column: 15, endLine: 5, endColumn: 45 }, 'args');
    const source = {
      [file]:
        'run_units:\n  helm:\n    apply_install:\n      - name: install\n        args: upgrade --install nginx . 2>&1\n',
    };
    expect(
      plan(
        [{ name: 'helm', apply_install: [{ name: 'ok', command: 'helm', args: "a 'b c' $HOME" }] }],
        'apply_install',
      )[0]?.args,
    ).toEqual(['a', 'b c', '$HOME']);
    expect(diagnosticsOf(() => plan([{ name: 'helm', apply_install: [step] }], 'apply_install'), source)).toBe(
      [
        "kapps/nginx/sugarkube.yaml:5:15: error: step 'install' of run unit 'helm' (apply_install) in kapp 'web:nginx': args contain the unquoted shell operator '2>&1'; steps run without a shell, so it would not act as one (args: \"upgrade --install nginx . 2>&1\")",
        '  |',
        '5 |         args: upgrade --install nginx . 2>&1',
        '  |               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
        "  hint: quote it (e.g. '|' or \"2>&1\") to pass it as an argument, or run a shell yourself (command: sh, args: -c '…')",
      ].join('\n'),
    );
  });

  it('keeps conditions as text with a site naming the step', () => {
    const units: RunUnitConfig[] = [{ name: 'u', clean: [{ name: 's', command: 'x', conditions: ['true', 'false'] }] }];
    const [step] = plan(units, 'clean');
    expect(step?.conditions).toEqual(['true', 'false']);
    expect(step?.conditionSite).toMatchObject({ kapp: 'web:nginx', owner: "step 's' of run unit 'u' (clean)" });
  });
});

describe('planSteps: determinism and spec', () => {
  function many(): RunUnitConfig[] {
    return ['b', 'a', 'c'].map((unit) => ({
      name: unit,
      clean: Array.from({ length: 20 }, (_, i) => ({
        name: `${unit}${i}`,
        command: 'x',
        merge_priority: (i * 7) % 3 === 0 ? 1 : 2,
      })),
    }));
  }

  it('orders ties by unit order given, then declaration order, identically every time', () => {
    const first = plan(many(), 'clean');
    const second = plan(many(), 'clean');
    expect(second).toEqual(first);
    const expected = [1, 2].flatMap((p) =>
      ['b', 'a', 'c'].flatMap((u) =>
        Array.from({ length: 20 }, (_, i) => i)
          .filter((i) => ((i * 7) % 3 === 0 ? 1 : 2) === p)
          .map((i) => `${u}${i}`),
      ),
    );
    expect(names(first)).toEqual(expected);
  });

  it('converts a planned step to its spec form', () => {
    const [step] = plan(
      [
        {
          name: 'u',
          env_vars: { E: '1' },
          clean: [{ name: 's', command: 'rm', args: '-rf tmp', timeout: 5, conditions: ['true'] }],
        },
      ],
      'clean',
    );
    if (!step) throw new Error('no step');
    expect(toSpecStep(step)).toEqual({
      name: 's',
      unit: 'u',
      command: 'rm',
      args: ['-rf', 'tmp'],
      env: { E: '1' },
      workingDir: CACHE,
      timeout: 5,
      expectedExitCode: 0,
      ignoreErrors: false,
      loadOutputs: false,
      conditions: ['true'],
      mergePriority: 255,
    });
  });

  it('refuses a relative cache root as a bug in the caller', () => {
    expect(() => planSteps([], 'clean', { kappId: 'a:b', cacheRoot: 'relative' })).toThrow(
      "Internal error: the cache root of kapp 'a:b' is not absolute: relative",
    );
  });
});
