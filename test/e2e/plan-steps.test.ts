/**
 * Run units to ordered run steps, end to end through `kapps generate`: unit conditions, unit defaults, calls,
 * ordering, names, typed fields, conditions and argument tokenising, with the exact text of each error.
 * Includes Sugarkube's rununit_test cases.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  generate,
  kapps,
  project,
  removeProjects,
  stepLines,
  text,
  type GeneratedSpec,
} from '../fixtures/plan/project.js';

afterAll(removeProjects);

const STACK = text`
  dev:
    provider: local
    provisioner: none
    cluster: c1
    manifests:
      - uri: m.yaml
`;

/** A project with one kapp `m:k` made of `kappYaml` (a manifest entry without its id). */
function oneKapp(kappYaml: string, extra: Record<string, string> = {}): string {
  const indented = kappYaml
    .split('\n')
    .map((l) => (l ? `    ${l}` : l))
    .join('\n');
  return project({ 'stacks.yaml': STACK, 'm.yaml': `kapps:\n  - id: k\n${indented}`, ...extra });
}

function steps(spec: GeneratedSpec, phase: string): { name: string; workingDir: string; mergePriority: unknown }[] {
  return (spec.kapps.find((k) => k.id === 'm:k')?.phases[phase] ?? []).map((s) => ({
    name: s.name,
    workingDir: s.workingDir,
    mergePriority: s.mergePriority,
  }));
}

async function failure(dir: string, args: string[] = []): Promise<string> {
  const r = await kapps(dir, ['generate', 'stacks.yaml', 'dev', ...args]);
  expect(r.code).toBe(1);
  expect(r.stdout).toBe('');
  return r.stderr;
}

describe('Sugarkube rununit_test cases', () => {
  it('TestMergeRunUnits: steps are sorted by merge_priority (unset last); a unit whose conditions fail adds nothing', async () => {
    const dir = oneKapp(text`
      run_units:
        helm:
          conditions: ["true"]
          plan_install:
            - {name: should-be-penultimate, command: a, merge_priority: 10}
            - {name: should-be-first, command: a, merge_priority: 0}
            - {name: should-be-last, command: a}
            - {name: should-be-second, command: a, merge_priority: 5}
        terraform:
          conditions: ["true", "1", "True"]
          apply_install:
            - {name: first, command: a, merge_priority: 0}
            - {name: last, command: a}
        missing:
          conditions: ["true", "false", "true"]
          apply_install:
            - {name: should-be-missing, command: a, merge_priority: 0}
        more-helm:
          apply_install:
            - {name: penultimate, command: a, merge_priority: 10}
            - {name: second, command: a, merge_priority: 5}
    `);
    const spec = await generate(dir, ['stacks.yaml', 'dev']);
    expect(steps(spec, 'plan_install').map((s) => s.name)).toEqual([
      'should-be-first',
      'should-be-second',
      'should-be-penultimate',
      'should-be-last',
    ]);
    expect(steps(spec, 'apply_install').map((s) => [s.name, s.mergePriority])).toEqual([
      ['first', 0],
      ['second', 5],
      ['penultimate', 10],
      ['last', 255],
    ]);
  });

  it('TestFindStep…TestInterpolateCallsUnitRecursive: calls take the callee unit’s defaults and the caller’s priority', async () => {
    const dir = oneKapp(text`
      run_units:
        helm:
          working_dir: helm/dir
          plan_install:
            - {name: plan-inst-3, command: plan-inst-comm3, merge_priority: 10}
          plan_delete:
            - {call: plan_install, merge_priority: 10}
          clean:
            - {call: apply_delete}
        terraform:
          working_dir: terraform/dir
          plan_install:
            - {name: st-1, command: plan-inst-1, merge_priority: 0}
            - {name: st-2, command: plan-inst-2, merge_priority: 5}
          apply_install:
            - {call: plan_install}
          apply_delete:
            - {name: del-step-1, command: del-command1, merge_priority: 5}
            - {call: plan_install/plan-inst-3, merge_priority: 10}
    `);
    const spec = await generate(dir, ['stacks.yaml', 'dev']);
    // Working dirs lie inside the kapp's directory (Sugarkube's fixture has absolute ones, which kapps refuses).
    const root = path.join(dir, '.kapps-workspace/dev/m/k');
    const helm = { workingDir: path.join(root, 'helm/dir') };
    const tf = { workingDir: path.join(root, 'terraform/dir') };
    expect(steps(spec, 'plan_install')).toEqual([
      { name: 'st-1', ...tf, mergePriority: 0 },
      { name: 'st-2', ...tf, mergePriority: 5 },
      { name: 'plan-inst-3', ...helm, mergePriority: 10 },
    ]);
    // `call: plan_install` without a priority: every plan_install step of every unit, with its own priority.
    expect(steps(spec, 'apply_install')).toEqual(steps(spec, 'plan_install'));
    // With a priority: it replaces the callees' priorities; ties keep unit order, then declaration order.
    expect(steps(spec, 'plan_delete')).toEqual([
      { name: 'plan-inst-3', ...helm, mergePriority: 10 },
      { name: 'st-1', ...tf, mergePriority: 10 },
      { name: 'st-2', ...tf, mergePriority: 10 },
    ]);
    expect(steps(spec, 'apply_delete')).toEqual([
      { name: 'del-step-1', ...tf, mergePriority: 5 },
      { name: 'plan-inst-3', ...helm, mergePriority: 10 },
    ]);
    // Nested: clean calls apply_delete, which calls plan_install/plan-inst-3 with priority 10.
    expect(steps(spec, 'clean')).toEqual(steps(spec, 'apply_delete'));
    expect(steps(spec, 'output')).toEqual([]);
  });

  it('TestMergedRunStepsForKapp: programs (matched case-insensitively) and the global unit merge into the kapp', async () => {
    const dir = project({
      'stacks.yaml': STACK,
      'sugarkube-conf.yaml': text`
        programs:
          progA:
            vars:
              helm: /path/to/helm
            run_units:
              progA:
                working_dir: tmp
                env_vars:
                  USER: sk
                plan_install:
                  - {name: print-hi, command: echo, args: hi, merge_priority: 5}
                apply_install:
                  - {name: do-stuff-second, command: echo, args: second, merge_priority: 30}
          prog2:
            run_units:
              prog2:
                binaries: [cat]
                plan_install:
                  - {name: last-one, command: echo, args: last, merge_priority: 99}
                apply_install:
                  - name: do-stuff-first
                    command: echo
                    env_vars: {REGION: "{{ .stack.region }}", COLOUR: blue}
                    merge_priority: 20
                  - {name: x, command: echo, args: x, merge_priority: 10, env_vars: {KUBECONFIG: /tmp/kubeconfig}}
        run_units:
          clean:
            - {name: find1, command: find-stuff1}
            - {name: find2, command: find-stuff2}
      `,
      'm.yaml': 'kapps:\n  - id: sample-kapp\n    sources:\n      - uri: sample-kapp\n',
      'sample-kapp/sugarkube.yaml': text`
        requires: [prog2, proga, script]
        run_units:
          proga:
            env_vars:
              FOOD: carrots
            plan_install:
              - name: print-yo
                command: echo
                args: '"yo"'
                env_vars:
                  KUBECONFIG: '{{ .kubeconfig }}'
                merge_priority: 10
          script:
            plan_install:
              - {name: print-yes, command: echo, args: "yes", merge_priority: 20}
      `,
    });
    const spec = await generate(dir, ['stacks.yaml', 'dev'], { KUBECONFIG: '/home/me/.kube/config' });
    const kapp = spec.kapps[0];
    const brief = (phase: string) =>
      (kapp?.phases[phase] ?? []).map((s) => [s.name, s.mergePriority, s.workingDir, s.env]);
    const root = path.join(dir, '.kapps-workspace/dev/m/sample-kapp');
    expect(brief('plan_install')).toEqual([
      ['print-yo', 10, path.join(root, 'tmp'), { KUBECONFIG: '/home/me/.kube/config', USER: 'sk', FOOD: 'carrots' }],
      ['print-yes', 20, root, {}],
      ['last-one', 99, root, {}],
    ]);
    expect(brief('apply_install')).toEqual([
      ['x', 10, root, { KUBECONFIG: '/tmp/kubeconfig' }],
      ['do-stuff-first', 20, root, { REGION: '', COLOUR: 'blue' }],
      ['do-stuff-second', 30, path.join(root, 'tmp'), { USER: 'sk', FOOD: 'carrots' }],
    ]);
    expect(brief('clean')).toEqual([
      ['find1', 255, root, {}],
      ['find2', 255, root, {}],
    ]);
  });
});

describe('step fields', () => {
  it('take the unit’s working_dir (relative to the kapp’s directory) and env_vars the step does not set', async () => {
    const dir = oneKapp(text`
      run_units:
        main:
          working_dir: chart
          env_vars: {A: unit, B: unit}
          apply_install:
            - name: one
              command: helm
              env_vars: {B: step}
              stdout: out.txt
              stderr: ../err.txt
            - name: two
              command: helm
              working_dir: "{{ .kapp.cacheRoot }}/abs/dir/"
              timeout: 30
              expected_exit_code: 3
              ignore_errors: true
              load_outputs: "{{ true }}"
              print: verbose
            - name: three
              command: helm
              working_dir: ./other/../dir/
    `);
    const spec = await generate(dir, ['stacks.yaml', 'dev']);
    const root = path.join(dir, '.kapps-workspace/dev/m/k');
    const [one, two, three] = spec.kapps[0]?.phases.apply_install ?? [];
    expect(one).toEqual({
      name: 'one',
      unit: 'main',
      command: 'helm',
      args: [],
      env: { B: 'step', A: 'unit' },
      workingDir: path.join(root, 'chart'),
      stdout: path.join(root, 'chart/out.txt'),
      stderr: path.join(root, 'err.txt'),
      expectedExitCode: 0,
      ignoreErrors: false,
      loadOutputs: false,
      mergePriority: 255,
    });
    expect(two).toEqual({
      name: 'two',
      unit: 'main',
      command: 'helm',
      args: [],
      env: { A: 'unit', B: 'unit' },
      workingDir: path.join(root, 'abs/dir'),
      timeout: 30,
      expectedExitCode: 3,
      ignoreErrors: true,
      loadOutputs: true,
      print: 'verbose',
      mergePriority: 255,
    });
    expect(three?.workingDir).toBe(path.join(root, 'dir'));
  });

  it('tokenise args like a shell without expanding anything; blank args and empty quoted words vanish', async () => {
    const dir = oneKapp(text`
      vars:
        empty: ""
      run_units:
        main:
          apply_install:
            - name: multi-line
              command: helm
              args: |
                lint
                  --kube-context=ctx  .
                  -f=a.yaml
            - name: quoting
              command: find
              args: /tmp -name "a b" -exec rm -rf {} ';' '' $HOME "\${X}" '$(pwd)' *.ts
            - name: blank
              command: ls
              args: "{{ .kapp.vars.empty }}  "
    `);
    const spec = await generate(dir, ['stacks.yaml', 'dev']);
    expect(stepLines(spec, 'm:k', 'apply_install')).toEqual([
      'multi-line: helm lint --kube-context=ctx . -f=a.yaml',
      'quoting: find /tmp -name a b -exec rm -rf {} ; $HOME ${X} $(pwd) *.ts',
      'blank: ls',
    ]);
    expect(spec.kapps[0]?.phases.apply_install?.[1]?.args).toEqual([
      '/tmp',
      '-name',
      'a b',
      '-exec',
      'rm',
      '-rf',
      '{}',
      ';',
      '$HOME',
      '${X}',
      '$(pwd)',
      '*.ts',
    ]);
  });
});

describe('errors in run units', () => {
  it('call targets that do not exist and step names used twice: all at once', async () => {
    const dir = oneKapp(text`
      run_units:
        main:
          plan_install:
            - {name: lint, command: helm}
            - {name: lint, command: helm}
          apply_install:
            - {call: plan_instal/lint}
            - {call: plan_install/lnt}
            - {call: a/b/c}
    `);
    expect(await failure(dir)).toMatchInlineSnapshot(`
      "m.yaml:7:20: error: step name 'lint' is used twice in run unit 'main' (plan_install) of kapp 'm:k'
        |
      7 |           - {name: lint, command: helm}
        |                    ^^^^
        m.yaml:6:20: 'lint' is first defined here

      m.yaml:9:20: error: step #1 of run unit 'main' (apply_install) in kapp 'm:k' calls 'plan_instal/lint', but 'plan_instal' is not a phase
        |
      9 |           - {call: plan_instal/lint}
        |                    ^^^^^^^^^^^^^^^^
        hint: did you mean 'plan_install'?

      m.yaml:10:20: error: step #2 of run unit 'main' (apply_install) in kapp 'm:k' calls 'plan_install/lnt', but no run unit has a plan_install step named 'lnt'
         |
      10 |           - {call: plan_install/lnt}
         |                    ^^^^^^^^^^^^^^^^
        hint: did you mean 'lint'?

      m.yaml:11:20: error: step #3 of run unit 'main' (apply_install) in kapp 'm:k' has the call 'a/b/c'; a call is 'PHASE' or 'PHASE/STEP'
         |
      11 |           - {call: a/b/c}
         |                    ^^^^^

      4 errors
      "
    `);
  });

  it('typed fields written as templates must render to their type', async () => {
    const dir = oneKapp(text`
      vars:
        wait: soon
      run_units:
        main:
          apply_install:
            - {name: bad-timeout, command: x, timeout: "{{ .kapp.vars.wait }}"}
            - {name: bad-flag, command: x, ignore_errors: "{{ \"maybe\" }}"}
            - {name: bad-code, command: x, expected_exit_code: "{{ sub 1 3 }}"}
            - {name: fine, command: x, timeout: "{{ 2 | add 3 }}", load_outputs: "{{ \"yes\" }}"}
    `);
    expect(await failure(dir)).toMatchInlineSnapshot(`
      "m.yaml:8:54: error: step 'bad-timeout' of run unit 'main' (apply_install) in kapp 'm:k': 'timeout' must be a whole number of seconds (0 or more), but it is "soon"
        |
      8 |           - {name: bad-timeout, command: x, timeout: "{{ .kapp.vars.wait }}"}
        |                                                      ^^^^^^^^^^^^^^^^^^^^^^^

      m.yaml:9:57: error: step 'bad-flag' of run unit 'main' (apply_install) in kapp 'm:k': 'ignore_errors' must be true or false, but it is "maybe"
        |
      9 |           - {name: bad-flag, command: x, ignore_errors: "{{ \\"maybe\\" }}"}
        |                                                         ^^^^^^^^^^^^^^^^^

      m.yaml:10:62: error: step 'bad-code' of run unit 'main' (apply_install) in kapp 'm:k': 'expected_exit_code' must be a whole number (0 or more), but it is "-2"
         |
      10 |           - {name: bad-code, command: x, expected_exit_code: "{{ sub 1 3 }}"}
         |                                                              ^^^^^^^^^^^^^^^

      3 errors
      "
    `);
  });

  it('calls nested more than 6 deep (a step that calls itself)', async () => {
    const dir = oneKapp(text`
      run_units:
        main:
          clean:
            - {call: clean}
    `);
    expect(await failure(dir)).toMatchInlineSnapshot(`
      "m.yaml:6:20: error: call nesting deeper than 6 levels in kapp 'm:k': clean → clean → clean → clean → clean → clean → clean
        |
      6 |           - {call: clean}
        |                    ^^^^^
        hint: a step that calls itself, directly or through other calls, never ends
        m.yaml:6:20: step #1 of run unit 'main' (clean) calls 'clean'
      "
    `);
  });

  it('conditions that are not Go booleans name the kapp, the unit or step, and what they rendered', async () => {
    const dir = project({
      'stacks.yaml': STACK,
      'm.yaml': text`
        kapps:
          - id: k
            vars:
              on: "yes"
            run_units:
              main:
                conditions: ["{{ .kapp.vars.on }}"]
                apply_install:
                  - {name: a, command: x}
          - id: other
            run_units:
              main:
                apply_install:
                  - name: b
                    command: x
                    conditions: ["true", " false", "{{ .outputs.this.x.enabled }}"]
                  - name: c
                    command: x
                    conditions: ["True", " false"]
      `,
    });
    expect(await failure(dir)).toMatchInlineSnapshot(`
      "m.yaml:7:22: error: the 1st condition of run unit 'main' of kapp 'm:k' is not true or false: it rendered as "yes"
        |
      7 |         conditions: ["{{ .kapp.vars.on }}"]
        |                      ^^^^^^^^^^^^^^^^^^^^^
        hint: a condition must render to exactly one of 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False

      m.yaml:19:34: error: the 2nd condition of step 'c' of run unit 'main' (apply_install) of kapp 'm:other' is not true or false: it rendered as " false"
         |
      19 |             conditions: ["True", " false"]
         |                                  ^^^^^^^^
        hint: a condition must render to exactly one of 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False

      2 errors
      "
    `);
  });

  it('unquoted shell operators and unterminated quotes in args', async () => {
    const dir = oneKapp(text`
      run_units:
        main:
          apply_install:
            - {name: pipe, command: helm, args: "list | grep web"}
            - {name: redirect, command: helm, args: "list 2>&1"}
            - {name: quote, command: helm, args: "list 'web"}
            - {name: fine, command: sh, args: "-c 'helm list | grep web'"}
    `);
    expect(await failure(dir)).toMatchInlineSnapshot(`
      "m.yaml:6:47: error: step 'pipe' of run unit 'main' (apply_install) in kapp 'm:k': args contain the unquoted shell operator '|'; steps run without a shell, so it would not act as one (args: "list | grep web")
        |
      6 |           - {name: pipe, command: helm, args: "list | grep web"}
        |                                               ^^^^^^^^^^^^^^^^^
        hint: quote it (e.g. '|' or "2>&1") to pass it as an argument, or run a shell yourself (command: sh, args: -c '…')

      m.yaml:7:51: error: step 'redirect' of run unit 'main' (apply_install) in kapp 'm:k': args contain the unquoted shell operator '2>&1'; steps run without a shell, so it would not act as one (args: "list 2>&1")
        |
      7 |           - {name: redirect, command: helm, args: "list 2>&1"}
        |                                                   ^^^^^^^^^^^
        hint: quote it (e.g. '|' or "2>&1") to pass it as an argument, or run a shell yourself (command: sh, args: -c '…')

      m.yaml:8:48: error: step 'quote' of run unit 'main' (apply_install) in kapp 'm:k': args have an unterminated single quote (args: "list 'web")
        |
      8 |           - {name: quote, command: helm, args: "list 'web"}
        |                                                ^^^^^^^^^^^

      3 errors
      "
    `);
  });

  it('<no value> in a command, args or condition is a warning naming kapp, step and field; an error with --strict-vars', async () => {
    const dir = oneKapp(text`
      run_units:
        main:
          apply_install:
            - name: deploy
              command: "{{ .kapp.vars.helm }}"
              args: install {{ .kapp.vars.release }}
              conditions: ["{{ .kapp.vars.enabled }}"]
    `);
    const ok = await kapps(dir, ['generate', 'stacks.yaml', 'dev', '-o', 'json']);
    expect(ok.code).toBe(0);
    expect(ok.stderr).toMatchInlineSnapshot(`
      "m.yaml:7:22: warning: step 'deploy' of run unit 'main' (apply_install) in kapp 'm:k': its command renders <no value>, so a variable it reads is not set
        |
      7 |             command: "{{ .kapp.vars.helm }}"
        |                      ^^^^^^^^^^^^^^^^^^^^^^^
        hint: \`kapps vars\` shows the variables that are set

      m.yaml:8:19: warning: step 'deploy' of run unit 'main' (apply_install) in kapp 'm:k': its args render <no value>, so a variable it reads is not set
        |
      8 |             args: install {{ .kapp.vars.release }}
        |                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
        hint: \`kapps vars\` shows the variables that are set

      m.yaml:9:26: warning: step 'deploy' of run unit 'main' (apply_install) in kapp 'm:k': its 1st condition renders <no value>, so a variable it reads is not set
        |
      9 |             conditions: ["{{ .kapp.vars.enabled }}"]
        |                          ^^^^^^^^^^^^^^^^^^^^^^^^^^
        hint: \`kapps vars\` shows the variables that are set
      "
    `);
    expect(await failure(dir, ['--strict-vars'])).toMatchInlineSnapshot(`
      "m.yaml:7:22: error: step 'deploy' of run unit 'main' (apply_install) in kapp 'm:k': its command renders <no value>, so a variable it reads is not set
        |
      7 |             command: "{{ .kapp.vars.helm }}"
        |                      ^^^^^^^^^^^^^^^^^^^^^^^
        hint: \`kapps vars\` shows the variables that are set

      m.yaml:8:19: error: step 'deploy' of run unit 'main' (apply_install) in kapp 'm:k': its args render <no value>, so a variable it reads is not set
        |
      8 |             args: install {{ .kapp.vars.release }}
        |                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
        hint: \`kapps vars\` shows the variables that are set

      m.yaml:9:26: error: step 'deploy' of run unit 'main' (apply_install) in kapp 'm:k': its 1st condition renders <no value>, so a variable it reads is not set
        |
      9 |             conditions: ["{{ .kapp.vars.enabled }}"]
        |                          ^^^^^^^^^^^^^^^^^^^^^^^^^^
        hint: \`kapps vars\` shows the variables that are set

      3 errors
      "
    `);
  });
});
