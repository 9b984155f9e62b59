/**
 * What the terminal shows of a run, on the built CLI: output written with carriage returns (progress bars) on the
 * live list.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupProjects, fixtureProject } from '../support/project.js';

afterAll(cleanupProjects);

describe('the live list', () => {
  it('shows the last state of a line written with carriage returns, as a terminal would', async () => {
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            {
              id: 'k',
              run_units: {
                main: {
                  plan_install: [
                    {
                      name: 'bar',
                      print: 'always',
                      command: 'printf',
                      args: "'10%%\\r50%%\\r100%%\\nstep 1/2\\rstep 2/2 done\\n'",
                    },
                  ],
                },
              },
            },
          ],
        },
      },
    });
    const r = await p.run('install', ['--reporter', 'listr', '-v']);
    expect(r.code, r.stderr).toBe(0);
    const out = r.stdout + r.stderr;
    expect(out).not.toContain('\r');
    expect(out).toContain('› [web:k] 100%\n› [web:k] step 2/2 done\n');
    // Plain mode keeps the output as the step wrote it.
    const plain = await p.run('install', ['--reporter', 'plain', '-v']);
    expect(plain.stdout + plain.stderr).toContain('[web:k] 10%\r50%\r100%\n');
  });
});

describe('kapps output', () => {
  it('prints the outputs its output phase produced after the run, sensitive ones masked', async () => {
    const tf = JSON.stringify({
      title: { sensitive: false, type: 'string', value: 'demo site' },
      db_password: { sensitive: true, type: 'string', value: 'hunter2-secret' },
    });
    const p = fixtureProject({
      manifests: {
        infra: {
          kapps: [
            {
              id: 'tf',
              run_units: {
                main: {
                  output: [
                    { name: 'tf-output', command: 'kapps-fake', args: `--write-file tf.json '${tf}'` },
                    { name: 'key', command: 'kapps-fake', args: '--write-file key.txt very-secret-key' },
                  ],
                },
              },
              outputs: [
                { id: 'terraform', path: 'tf.json', format: 'json' },
                { id: 'key', path: 'key.txt', format: 'text', sensitive: true },
              ],
            },
          ],
        },
      },
    });
    const r = await p.run('output', ['--reporter', 'plain']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      [
        'Outputs:',
        '  KAPP      OUTPUT                 VALUE',
        '  infra:tf  terraform.title        demo site',
        '  infra:tf  terraform.db_password  (sensitive)',
        '  infra:tf  key                    (sensitive)',
        '',
      ].join('\n'),
    );
    // (The test's steps write the values from their command lines, which plain mode prints.)
    const table = r.stdout.slice(r.stdout.indexOf('Outputs:'));
    expect(table).not.toContain('hunter2-secret');
    expect(table).not.toContain('very-secret-key');
  });
});

describe('the reasons a run gives', () => {
  it('a kapp whose own conditions are false is skipped for them, even after a dependency failed', async () => {
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            { id: 'site', run_units: { main: { plan_install: [{ name: 'lint', command: 'no-such-helm' }] } } },
            { id: 'smoke-public', depends_on: [{ id: 'site' }], conditions: [false] },
          ],
        },
      },
    });
    const r = await p.run('install', ['--reporter', 'plain', '--no-validate']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      [
        'Failed:',
        "  web:site: plan_install/lint: command 'no-such-helm' not found on PATH",
        'Skipped:',
        '  web:smoke-public: conditions failed',
      ].join('\n'),
    );
  });
});

describe('template errors', () => {
  /** Kapp web:a with one plan_install step `echo <args>`, written by hand so that the lines are known (line 8: args). */
  const oneStepProject = (step: string, args: string) => {
    const p = fixtureProject();
    p.write(
      'manifests/web.yaml',
      [
        'kapps:',
        '  - id: a',
        '    run_units:',
        '      main:',
        '        plan_install:',
        `          - name: ${step}`,
        '            command: echo',
        `            args: "${args}"`,
        '',
      ].join('\n'),
    );
    p.write('stacks.yaml', { dev: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/web.yaml' }] } });
    return p;
  };

  it('point at the line of the bad field and name the run unit by its name', async () => {
    const p = oneStepProject('lint', '{{ .x | nosuchfunc }}');
    const r = await p.run('generate');
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')[0]).toBe(
      `manifests/web.yaml:8:19: error: kapp 'web:a': cannot render run_units.main.plan_install[0].args: template: kapp:1: function "nosuchfunc" not defined`,
    );
  });

  it('say their level once when a run fails on them (--strict-vars)', async () => {
    const p = oneStepProject('s', '{{ .missing }}');
    const r = await p.run('install', ['--strict-vars', '--reporter', 'plain']);
    expect(r.code).toBe(1);
    const out = r.stdout + r.stderr;
    expect(out).toContain('[web:a] manifests/web.yaml:8:19: error: step ');
    expect(out).not.toMatch(/error: [^\n]*: error: /);
  });
});
