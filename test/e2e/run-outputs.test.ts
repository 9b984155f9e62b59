/**
 * Outputs on the built CLI: the keys a kapp's outputs appear under, how they flow down the DAG, that an install
 * must produce them, placeholders in plan mode, unselected ancestors providing them, and sensitive values.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanupProjects,
  eventsOf,
  fake,
  fixtureProject,
  kapp,
  kappStatuses,
  waitFor,
  type TraceLine,
} from '../support/project.js';
import { markersKilledAfterEach } from '../support/processes.js';

const newMarker = markersKilledAfterEach();

afterAll(cleanupProjects);

const started = (trace: readonly TraceLine[]): string[] => trace.filter((l) => l.event === 'start').map((l) => l.tag);
const printed = (tag: string, text: string) => fake('show', tag, ['--stdout', text], { print: 'true' });

/**
 * ```
 *   data-layer:my-db ──► data-layer:cache ──► apps:web
 *                   └──────────────────────► apps:api
 * ```
 * my-db writes its output `conn-info` in apply_install and again in its output phase.
 */
function layered() {
  const write = ['--write-file', 'conn.json', '{"url":"db://prod"}'];
  return fixtureProject({
    manifests: {
      'data-layer': {
        kapps: [
          kapp(
            'my-db',
            {
              apply_install: [
                fake('apply', 'my-db', write, { load_outputs: true }),
                printed('my-db-this', 'this={{ .outputs.this.conn_info.url }}'),
              ],
              output: [fake('output', 'my-db-output', write)],
            },
            { outputs: [{ id: 'conn-info', path: 'conn.json', format: 'json' }] },
          ),
          kapp(
            'cache',
            {
              apply_install: [
                printed(
                  'cache',
                  'short={{ .outputs.my_db.conn_info.url }} fq={{ .outputs.data_layer__my_db.conn_info.url }}',
                ),
              ],
            },
            { depends_on: [{ id: 'my-db' }] },
          ),
        ],
      },
      apps: {
        kapps: [
          kapp(
            'web',
            {
              apply_install: [
                printed('web', 'fq={{ .outputs.data_layer__my_db.conn_info.url }} short={{ .outputs.my_db }}'),
              ],
            },
            { depends_on: [{ id: 'data-layer:cache' }] },
          ),
          kapp(
            'api',
            { apply_install: [printed('api', 'fq={{ .outputs.data_layer__my_db.conn_info.url }}')] },
            { depends_on: [{ id: 'data-layer:my-db' }] },
          ),
        ],
      },
    },
  });
}

const outputOf = (events: Parameters<typeof eventsOf>[0], kappId: string): string[] =>
  eventsOf(events, 'step-output')
    .filter((e) => e.kapp === kappId)
    .map((e) => e.text.trim());

describe('keys and flow', () => {
  it('this.<id>, <kapp>.<id> and <manifest>__<kapp>.<id>, hyphens as underscores; short keys stay in the manifest', async () => {
    const p = layered();
    const r = await p.runJson('install', ['-y', '--allow-no-value']);
    expect(r.code, r.stderr).toBe(0);
    expect(outputOf(r.events, 'data-layer:my-db')).toEqual(['this=db://prod']);
    expect(outputOf(r.events, 'data-layer:cache')).toEqual(['short=db://prod fq=db://prod']);
    // web gets my-db's outputs through cache (transitively) by fq key only: across manifests short keys are dropped.
    expect(outputOf(r.events, 'apps:web')).toEqual(['fq=db://prod short=<no value>']);
    expect(outputOf(r.events, 'apps:api')).toEqual(['fq=db://prod']);
  });

  it('unselected ancestors provide their outputs: their output phase runs, nothing else of theirs', async () => {
    const p = layered();
    const r = await p.runJson('install', ['-y', '--allow-no-value', '-i', 'apps:web']);
    expect(r.code, r.stderr).toBe(0);
    expect(started(r.trace)).toEqual(['my-db-output', 'web']);
    expect(outputOf(r.events, 'apps:web')).toEqual(['fq=db://prod short=<no value>']);
    const roles = eventsOf(r.events, 'kapp-started').map((e) => `${e.kapp} ${e.role}`);
    expect(roles).toEqual(['data-layer:my-db outputs', 'apps:web selected']);
  });

  it('in plan mode a missing output is an empty map, never null', async () => {
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'db',
              { plan_install: [fake('plan', 'db')] },
              { outputs: [{ id: 'conn', path: 'conn.json', format: 'json' }] },
            ),
            kapp(
              'api',
              {
                plan_install: [
                  printed(
                    'api',
                    'len={{ len .outputs.db.conn }} url={{ .outputs.db.conn.url }} this={{ len .outputs.this.own }}',
                  ),
                ],
              },
              { depends_on: [{ id: 'db' }], outputs: [{ id: 'own', path: 'own.yaml', format: 'yaml' }] },
            ),
          ],
        },
      },
    });
    const r = await p.runJson('install');
    expect(r.code, r.stderr).toBe(0);
    expect(outputOf(r.events, 'web:api')).toEqual(['len=0 url=<no value> this=0']);
  });

  it('after an install, a declared output must exist', async () => {
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'db',
              { apply_install: [fake('apply', 'db')] },
              { outputs: [{ id: 'conn', path: 'conn.json', format: 'json' }] },
            ),
            kapp('api', { apply_install: [fake('apply', 'api')] }, { depends_on: [{ id: 'db' }] }),
          ],
        },
      },
    });
    const r = await p.runJson('install', ['-y']);
    expect(r.code).toBe(1);
    expect(started(r.trace)).toEqual(['db']);
    const statuses = kappStatuses(r.events);
    expect(statuses['web:db']).toMatch(
      /^failed: kapp web:db: output 'conn' was not produced: .*conn\.json does not exist after the install$/,
    );
    expect(statuses['web:api']).toBe('skipped: dependency web:db failed');
  });
});

describe('output steps that fail', () => {
  /** db ◄── api; db's output step fails. */
  const broken = () =>
    fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'db',
              {
                apply_install: [fake('apply', 'db')],
                apply_delete: [fake('delete', 'db-delete')],
                output: [fake('output', 'db-output', ['--stderr', 'no state', '--exit', '2'])],
              },
              { outputs: [{ id: 'o', path: 'o.json', format: 'json' }] },
            ),
            kapp(
              'api',
              { apply_install: [fake('apply', 'api')], apply_delete: [fake('delete', 'api-delete')] },
              { depends_on: [{ id: 'db' }] },
            ),
          ],
        },
      },
    });

  it('stop a delete before anything is deleted (the outputs are needed)', async () => {
    const p = broken();
    const r = await p.runJson('delete', ['-y']);
    expect(r.code).toBe(1);
    expect(started(r.trace)).toEqual(['db-output']);
    expect(kappStatuses(r.events)).toEqual({
      'web:db': "failed: output step 'output' exited with code 2",
      'web:api': 'skipped: not started: the outputs of web:db could not be loaded',
    });
  });

  it('fail an unselected ancestor when installing, and the kapps after it are skipped', async () => {
    const p = broken();
    const r = await p.runJson('install', ['-y', '-i', 'web:api']);
    expect(r.code).toBe(1);
    expect(started(r.trace)).toEqual(['db-output']);
    expect(kappStatuses(r.events)).toEqual({
      'web:db': "failed: output step 'output' exited with code 2",
      'web:api': 'skipped: dependency web:db failed',
    });
  });

  it('an output file a plan cannot read is a warning; after an install it is an error', async () => {
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'db',
              { output: [fake('output', 'db-output', ['--write-file', 'o.json', 'not json at all'])] },
              { outputs: [{ id: 'o', path: 'o.json', format: 'json' }] },
            ),
            kapp(
              'api',
              { plan_install: [fake('plan', 'api')], apply_install: [fake('apply', 'api')] },
              { depends_on: [{ id: 'db' }] },
            ),
          ],
        },
      },
    });
    const plan = await p.runJson('install');
    expect(plan.code, plan.stderr).toBe(0);
    const warning = eventsOf(plan.events, 'log').find((e) => e.kapp === 'web:db');
    expect(warning?.level).toBe('warn');
    expect(warning?.message).toContain('o.json');
    const apply = await p.runJson('install', ['-y']);
    expect(apply.code).toBe(1);
    expect(kappStatuses(apply.events)['web:db']).toContain('o.json');
  });

  it('a kapp whose outputs cannot be read: its steps, then the located error, then its end', async () => {
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'db',
              {
                apply_install: [fake('apply', 'db-apply', [], { conditions: ['false'] }), fake('also', 'db-also')],
                output: [fake('output', 'db-output', ['--write-file', 'o.json', '{"broken":'])],
              },
              { outputs: [{ id: 'o', path: 'o.json', format: 'json' }] },
            ),
          ],
        },
      },
    });
    const r = await p.runJson('install', ['-y']);
    expect(r.code).toBe(1);
    const course = r.events
      .filter((e) => 'kapp' in e && e.kapp === 'web:db' && e.type !== 'step-output')
      .map((e) => {
        if (e.type === 'step-started') return `started ${e.phase}/${e.step}`;
        if (e.type === 'step-finished') return `finished ${e.phase}/${e.step} ${e.status}`;
        if (e.type === 'log') return `${e.level} ${e.message.split('\n')[0]}`;
        return e.type;
      });
    expect(course).toEqual([
      'kapp-started',
      'finished apply_install/apply skipped',
      'started apply_install/also',
      'finished apply_install/also succeeded',
      'started output/output',
      'finished output/output succeeded',
      'kapp-finished',
    ]);
    const finished = eventsOf(r.events, 'kapp-finished')[0];
    expect(finished).toMatchObject({ kapp: 'web:db', status: 'failed' });
    expect(finished?.reason).toMatch(/^kapp web:db: cannot read output 'o' from .*o\.json: invalid JSON/);
  });

  it('a step condition that is not a boolean once outputs are loaded: the located error, then the kapp’s end', async () => {
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'db',
              {
                apply_install: [
                  fake('write', 'db-write', ['--write-file', 'o.json', '{"flag":"maybe"}'], { load_outputs: true }),
                  fake('gated', 'db-gated', [], { conditions: ['{{ .outputs.this.o.flag }}'] }),
                  fake('after', 'db-after'),
                ],
              },
              { outputs: [{ id: 'o', path: 'o.json', format: 'json' }] },
            ),
          ],
        },
      },
    });
    const r = await p.runJson('install', ['-y', '--allow-no-value']);
    expect(r.code).toBe(1);
    expect(started(r.trace)).toEqual(['db-write']);
    const course = r.events
      .filter((e) => 'kapp' in e && e.kapp === 'web:db' && e.type !== 'step-output')
      .map((e) => (e.type === 'log' ? `${e.level} ${e.message}` : 'step' in e ? `${e.type} ${e.step}` : e.type));
    const problem =
      "the 1st condition of step 'gated' of run unit 'main' (apply_install) of kapp 'web:db' is not true or false: it rendered as \"maybe\"";
    expect(course.map((line) => line.split('\n')[0])).toEqual([
      'kapp-started',
      'step-started write',
      'step-finished write',
      `error manifests/web.yaml:18:17: error: ${problem}`,
      'kapp-finished',
    ]);
    expect(kappStatuses(r.events)).toEqual({ 'web:db': `failed: ${problem}` });
  });

  it('are reported and passed over when only planning', async () => {
    const p = broken();
    const r = await p.runJson('install', ['-i', 'web:api']);
    expect(r.code).toBe(0);
    expect(eventsOf(r.events, 'step-finished').find((e) => e.kapp === 'web:db')).toMatchObject({
      step: 'output',
      status: 'ignored',
      exitCode: 2,
    });
  });
});

describe('string functions on outputs', () => {
  it('install -y runs a step that applies a string function to a parent’s output', async () => {
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'db',
              { output: [fake('output', 'db-output', ['--write-file', 'token.txt', 'hello-there\n'])] },
              { outputs: [{ id: 'token', path: 'token.txt', format: 'text' }] },
            ),
            kapp(
              'api',
              { apply_install: [printed('api', '{{ .outputs.db.token | trim | upper }}')] },
              { depends_on: [{ id: 'db' }] },
            ),
          ],
        },
      },
    });
    const r = await p.runJson('install', ['-y']);
    // Nothing but the summary (the JSON reporter writes human text to stderr): no warning, no error.
    expect(r.stderr.trim()).toBe(
      'install succeeded in ' + /in (\S+):/.exec(r.stderr)?.[1] + ': 2 succeeded, 0 failed, 0 skipped, 0 cancelled',
    );
    expect(r.code).toBe(0);
    expect(outputOf(r.events, 'web:api')).toEqual(['HELLO-THERE']);
  });
});

describe('sensitive outputs', () => {
  const SECRET = 'hunter2-very-secret';

  /** db's output `token` is sensitive; api passes it as an argument, prints it, and fails. */
  const secretive = () =>
    fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'db',
              {
                // The secret comes from the environment: it is written nowhere in the stack's files.
                apply_install: [
                  { name: 'apply', command: 'sh', args: `-c 'printf %s "$E2E_SECRET" > token.txt'` },
                  fake('plain', 'db', ['--write-file', 'plain.txt', 'not-secret']),
                ],
                output: [{ name: 'output', command: 'sh', args: `-c 'printf %s "$E2E_SECRET" > token.txt'` }],
              },
              {
                outputs: [
                  { id: 'token', path: 'token.txt', format: 'text', sensitive: true },
                  { id: 'plain', path: 'plain.txt', format: 'text' },
                ],
              },
            ),
            kapp(
              'api',
              {
                apply_install: [
                  fake(
                    'use',
                    'api',
                    [
                      '--stdout',
                      'token is {{ .outputs.db.token }}',
                      '--stderr',
                      'failing with {{ .outputs.db.token }}',
                      '--exit',
                      '1',
                    ],
                    {
                      print: 'true',
                    },
                  ),
                ],
              },
              { depends_on: [{ id: 'db' }] },
            ),
          ],
        },
      },
    });

  /** Every file under `dir`, read as text. */
  const allText = (dir: string): string => {
    let text = '';
    for (const name of readdirSync(dir)) {
      const file = path.join(dir, name);
      text += statSync(file).isDirectory() ? allText(file) : readFileSync(file, 'utf8');
    }
    return text;
  };

  it('never appear in the NDJSON events or the release state, and their files are deleted', async () => {
    const p = secretive();
    const r = await p.runJson('install', ['-y'], { env: { E2E_SECRET: SECRET } });
    expect(r.code).toBe(1);
    // The step really got the value...
    expect(r.trace.find((l) => l.tag === 'api')?.args.join(' ')).toContain(`token is ${SECRET}`);
    // ...but nothing kapps printed or recorded has it.
    expect(r.stdout).toContain('<sensitive>');
    expect(r.stdout + r.stderr).not.toContain(SECRET);
    expect(eventsOf(r.events, 'step-started').find((e) => e.kapp === 'web:api')?.args).toContain(
      'token is <sensitive>',
    );
    expect(allText(p.kappsHome)).not.toContain(SECRET);
    expect(allText(p.kappsHome)).toContain('not-secret');
    expect(p.exists('.kapps-workspace/dev/web/db/token.txt')).toBe(false);
    expect(p.exists('.kapps-workspace/dev/web/db/plain.txt')).toBe(true);
  });

  it('never appear in the plain output, including the failed step’s output lines in the summary', async () => {
    const p = secretive();
    const r = await p.run('install', ['-y', '-v'], { env: { E2E_SECRET: SECRET } });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('[web:api] token is <sensitive>');
    expect(r.stdout).toContain('| failing with <sensitive>');
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });
});

describe('sensitive values in other places', () => {
  const SECRET = 'correct-horse-battery-staple';
  const withSecret = (apiSteps: unknown[]) =>
    fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'db',
              { output: [{ name: 'output', command: 'sh', args: `-c 'printf "%s\\n" "$E2E_SECRET" > token.txt'` }] },
              { outputs: [{ id: 'token', path: 'token.txt', format: 'text', sensitive: true }] },
            ),
            kapp('api', { apply_install: apiSteps }, { depends_on: [{ id: 'db' }] }),
          ],
        },
      },
    });

  it('output that prints a secret in pieces still shows <sensitive>', async () => {
    // The first half, a pause, then the rest: two chunks of output that each hold half of the secret.
    const p = withSecret([
      {
        name: 'split',
        command: 'sh',
        args: `-c 'printf %s "$(printf %s "$0" | cut -c1-12)"; sleep 0.3; printf "%s\\n" "$(printf %s "$0" | cut -c13-)"' '{{ .outputs.db.token }}'`,
        print: 'true',
      },
    ]);
    const r = await p.runJson('install', ['-y'], { env: { E2E_SECRET: SECRET } });
    expect(r.code, r.stderr).toBe(0);
    expect(
      eventsOf(r.events, 'step-output')
        .map((e) => e.text)
        .join(''),
    ).toBe('<sensitive>\n');
    expect(r.stdout).not.toContain(SECRET.slice(0, 12));
  });

  it('errors that quote a secret show <sensitive>', async () => {
    // A working directory named after the secret does not exist: the error names it.
    const p = withSecret([{ name: 'in-dir', command: 'true', working_dir: 'x-{{ .outputs.db.token }}' }]);
    const r = await p.runJson('install', ['-y'], { env: { E2E_SECRET: SECRET } });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('<sensitive>');
    expect(r.stdout + r.stderr).not.toContain(SECRET);
  });
});

describe('sensitive templates', () => {
  /** Kapp web:k with the given phases, a sensitive template secret.conf and a plain one plain.conf. */
  const withTemplates = (phases: Record<string, unknown[]>) =>
    fixtureProject({
      stacks: {
        dev: {
          provider: 'local',
          cluster: 'c',
          template_dirs: ['templates'],
          manifests: [{ uri: 'manifests/web.yaml' }],
        },
      },
      manifests: {
        web: {
          kapps: [
            kapp('k', phases, {
              vars: { password: 'pw-123456' },
              templates: {
                secret: { source: 'secret.tpl', dest: 'secret.conf', sensitive: true },
                plain: { source: 'plain.tpl', dest: 'plain.conf' },
              },
            }),
          ],
        },
      },
      files: { 'templates/secret.tpl': 'password={{ .kapp.vars.password }}\n', 'templates/plain.tpl': 'user=admin\n' },
    });

  it('are there while the kapp runs and deleted after its run', async () => {
    const p = withTemplates({
      apply_install: [{ name: 'copy', command: 'cp', args: 'secret.conf copy-of-secret.conf' }],
    });
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(p.exists('.kapps-workspace/dev/web/k/secret.conf')).toBe(false);
    expect(p.read('.kapps-workspace/dev/web/k/plain.conf')).toBe('user=admin\n');
    expect(p.read('.kapps-workspace/dev/web/k/copy-of-secret.conf')).toBe('password=pw-123456\n');
  });

  it('are deleted when a second Ctrl-C ends kapps at once', async () => {
    const marker = newMarker();
    // Ignores SIGTERM: only the second signal's SIGKILL ends it. A plan records no release, so kapps exits at
    // once and the kapp never gets to clean up.
    const p = withTemplates({
      plan_install: [fake('hang', 'k', ['--ignore-term', '--fork-sleep', '60', marker, '--hang'])],
    });
    const cli = p.start('install', ['--kill-grace', '600']);
    await waitFor('the step to start', () => p.traceLines().some((l) => l.event === 'start'));
    expect(p.read('.kapps-workspace/dev/web/k/secret.conf')).toBe('password=pw-123456\n');
    cli.child.kill('SIGINT');
    await waitFor('the first signal to be taken', () => cli.stderr().includes('SIGINT: stopping'));
    cli.child.kill('SIGINT');
    const r = await cli.done;
    expect(r.code).toBe(130);
    expect(p.exists('.kapps-workspace/dev/web/k/secret.conf')).toBe(false);
  });
});
