/**
 * The plan tells the truth about a stack file: a misspelled stack key is reported with "did you mean" before the
 * error it causes, a top-level key holding no manifests (a YAML anchor of defaults) is said to have no kapps, and a
 * variable that reads outputs but does not parse fails `validate` rather than the apply; a step reads an output
 * loaded by a step before it (sensitive or not) once its turn comes.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupProjects, fake, fixtureProject, kapp } from '../support/project.js';

afterAll(cleanupProjects);

describe('a stack file with a mistake', () => {
  it('prints the unknown-field warning, with did you mean, before the error it causes', async () => {
    const p = fixtureProject({
      stacks: [
        'defaults: &defaults',
        '  provider: local',
        'dev:',
        '  <<: *defaults',
        '  manifets:',
        '    - uri: manifests/web.yaml',
        '',
      ].join('\n'),
      manifests: { web: { kapps: [{ id: 'api' }] } },
    });
    const r = await p.run('generate', []);
    expect(r.code).toBe(1);
    const warning = r.stderr.indexOf('warning: unknown field `manifets` (at dev.manifets)');
    const hint = r.stderr.indexOf("hint: did you mean 'manifests'?");
    const error = r.stderr.indexOf('error: `dev` has no `manifests`, so it is not a stack');
    expect(warning, r.stderr).toBeGreaterThanOrEqual(0);
    expect(hint).toBeGreaterThan(warning);
    expect(error).toBeGreaterThan(hint);
    expect(r.stderr).not.toContain('nothing was matched');

    // The anchor key is not a stack, and is said to be so when named.
    const anchor = await p.run('generate', [], { stack: 'defaults' });
    expect(anchor.code).toBe(1);
    expect(anchor.stderr).toContain('error: `defaults` has no `manifests`, so it is not a stack');
  });
});

describe('a variable that reads outputs', () => {
  const project = (token: string) =>
    fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'db',
              { apply_install: [fake('apply', 'db')] },
              { outputs: [{ id: 'token', path: 't.txt', format: 'text' }] },
            ),
            kapp(
              'api',
              { apply_install: [fake('apply', 'api', ['{{ .kapp.vars.token }}'])] },
              {
                depends_on: [{ id: 'db' }],
                vars: { token: token },
              },
            ),
          ],
        },
      },
    });

  it('fails validate and generate when it does not parse, before anything runs', async () => {
    const p = project('{{ .outputs.db.token | upper ');
    for (const command of ['validate', 'generate']) {
      const r = await p.run(command, []);
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stderr).toContain('cannot render variable kapp.vars.token: template: vars:1: unclosed action');
    }
    const install = await p.run('install', ['-y']);
    expect(install.code).toBe(1);
    expect(install.trace).toEqual([]);
  });

  it('still waits for the outputs when it parses', async () => {
    const r = await project('{{ .outputs.db.token | upper }}').run('validate', []);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });
});

describe('an output loaded by a step (load_outputs)', () => {
  it('is read by a later step that applies a function to it, and a sensitive one is not required again', async () => {
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'db',
              {
                apply_install: [
                  fake('write', 'db-write', ['--write-file', 'out.json', '{"token":"Pa55word-4711"}'], {
                    load_outputs: true,
                  }),
                  fake('length', 'db-length', ['--stdout', '{{ len .outputs.this.out.token }}']),
                  fake('upper', 'db-upper', ['--stdout', '{{ .outputs.this.out.token | upper | len }}']),
                ],
              },
              { outputs: [{ id: 'out', path: 'out.json', format: 'json', sensitive: true }] },
            ),
          ],
        },
      },
    });
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.trace.filter((t) => t.event === 'start').map((t) => `${t.tag} ${t.args.slice(2).join(' ')}`)).toEqual([
      'db-write --write-file out.json {"token":"Pa55word-4711"}',
      'db-length --stdout 13',
      'db-upper --stdout 13',
    ]);
    expect(p.exists('.kapps-workspace/dev/web/db/out.json')).toBe(false);
  });
});
