/**
 * What a run of `kapps serve` shares with the runs beside it and with the server: nothing. Tried as an attacker
 * would: two runs at once with values derived from their secrets, a stack whose templates ask for the server's
 * own environment and files.
 */
import { readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { cleanupProjects, fake, fixtureProject, kapp, tempDir } from '../support/project.js';
import { api, readEvents, startServer, stopAllServers, waitForRun } from '../support/server.js';

afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});

/** Every file under `dir`, read as text. */
function allText(dir: string): string {
  let text = '';
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    text += statSync(file).isDirectory() ? allText(file) : readFileSync(file, 'utf8');
  }
  return text;
}

const SECRET = 'run-secret-7fq2-zx9w';

describe('two runs at once', () => {
  it('each keeps its own sensitivity watch: a value derived from a secret never reaches a log', async () => {
    const gates = tempDir('kapps-gates-');
    // Stack `one` waits until `two` is running its kapps; `two` then waits until the test saw `one` finish, so the
    // derived values of `two` are rendered after `one` ended.
    const p = fixtureProject({
      stacks: {
        one: {
          provider: 'local',
          cluster: 'c',
          vars: { wait: 'two-started' },
          manifests: [{ uri: 'manifests/m.yaml' }],
        },
        two: { provider: 'local', cluster: 'c', vars: { wait: 'go' }, manifests: [{ uri: 'manifests/m.yaml' }] },
      },
      manifests: {
        m: {
          kapps: [
            kapp('gate', {
              apply_install: [
                {
                  name: 'gate',
                  command: 'kapps-fake',
                  args: `--write-file ${gates}/{{ .stack.name }}-started x --wait-file ${gates}/{{ .wait }} 60000`,
                },
              ],
            }),
            kapp(
              'db',
              {
                output: [
                  {
                    name: 'output',
                    command: 'sh',
                    args: `-c 'printf "{\\"token\\": \\"%s-%s\\"}" "$E2E_SECRET" "$1" > out.json' sh '{{ .stack.name }}'`,
                  },
                ],
              },
              {
                depends_on: [{ id: 'gate' }],
                outputs: [{ id: 'creds', path: 'out.json', format: 'json', sensitive: true }],
              },
            ),
            kapp(
              'api',
              {
                apply_install: [
                  {
                    name: 'echo',
                    command: 'sh',
                    args: `-c 'echo "got $1"; echo "b64 $2"' sh '{{ .outputs.db.creds.token | upper }}' '{{ b64enc .outputs.db.creds.token }}'`,
                  },
                ],
              },
              { depends_on: [{ id: 'db' }] },
            ),
          ],
        },
      },
    });
    const server = await startServer({
      args: ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome],
      env: { ...p.env, E2E_SECRET: SECRET },
      cwd: p.dir,
    });
    const c = api(server.url);
    const one = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'one' });
    const two = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'two' });
    expect([one.status, two.status]).toEqual([202, 202]);
    const first = await waitForRun(c, one.body.id!, undefined, 60_000);
    expect(first.status).toBe('succeeded');
    // `one` is over; `two` is still waiting at its gate with its watch set before `one` ended.
    expect((await c.get(`/api/v1/runs/${two.body.id}`)).body.status).toBe('running');
    writeFileSync(path.join(gates, 'go'), 'x');
    const second = await waitForRun(c, two.body.id!, undefined, 60_000);
    expect(second.status).toBe('succeeded');

    const forms = ['one', 'two'].flatMap((stack) => {
      const token = `${SECRET}-${stack}`;
      return [token, token.toUpperCase(), Buffer.from(token).toString('base64')];
    });
    for (const run of [first, second]) {
      const log = await c.get(`/api/v1/runs/${run.id}/logs`);
      const text = JSON.stringify(log.body);
      // The steps printed the derived values: the log shows them redacted.
      expect(text).toContain('got <sensitive>');
      expect(text).toContain('b64 <sensitive>');
      for (const form of forms) expect(text, form).not.toContain(form);
    }
    const stored = allText(p.kappsHome);
    for (const form of forms) expect(stored, form).not.toContain(form);
  });
});

/** The server's own environment: its credentials and configuration beside what a project may be given. */
const SERVER_ENV = {
  AWS_REGION: 'eu-west-3',
  AWS_SECRET_ACCESS_KEY: 'server-aws-s3cret-9d8c',
  PGPASSWORD: 'server-pg-s3cret-1b2a',
  KAPPS_TOKEN: 'server-token-s3cret-77aa',
  KAPPS_EXTRA: 'server-extra-s3cret-5e5e',
};

const NAMES = ['AWS_REGION', 'AWS_SECRET_ACCESS_KEY', 'PGPASSWORD', 'KAPPS_TOKEN', 'KAPPS_EXTRA', 'TEAM'];

/** A kapp whose step shows what its templates read of the environment, and prints its own environment. */
function envProject() {
  return fixtureProject({
    manifests: {
      shop: {
        kapps: [
          kapp('web', {
            apply_install: [
              fake('show', 'web', [
                '--stdout',
                NAMES.map((n) => `tpl ${n}={{ env "${n}" }}`).join(' '),
                '--stdout',
                'expand={{ expandenv "$PGPASSWORD/$KAPPS_TOKEN" }}',
                ...NAMES.flatMap((n) => ['--print-env', n]),
              ]),
            ],
          }),
        ],
      },
    },
  });
}

async function applyLog(url: string): Promise<string> {
  const c = api(url);
  const run = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
  expect(run.status).toBe(202);
  const done = await waitForRun(c, run.body.id!);
  expect(done.status, JSON.stringify(done)).toBe('succeeded');
  const log = await c.get(`/api/v1/runs/${run.body.id}/logs`);
  return (log.body.lines ?? []).map((l) => l.text).join('\n');
}

describe('what a server run sees', () => {
  it("of the environment: only what its project passes and sets, never the server's own", async () => {
    const p = envProject();
    const config = p.write(
      'kapps-server.yaml',
      'projects:\n  - name: shop\n    stack_file: stacks.yaml\n    env:\n      pass: [AWS_REGION, FAKE_TRACE]\n' +
        '      set: {TEAM: shop-team}\n',
    );
    const server = await startServer({
      args: ['--config', config, '--backend', p.kappsHome],
      env: { ...p.env, ...SERVER_ENV },
      cwd: p.dir,
    });
    const text = await applyLog(server.url);
    expect(server.stderr()).not.toContain('have no `env`');
    expect(text).toContain(
      'tpl AWS_REGION=eu-west-3 tpl AWS_SECRET_ACCESS_KEY= tpl PGPASSWORD= tpl KAPPS_TOKEN= tpl KAPPS_EXTRA= tpl TEAM=shop-team',
    );
    expect(text).toContain('expand=/');
    for (const line of [
      'AWS_REGION=eu-west-3',
      'TEAM=shop-team',
      'AWS_SECRET_ACCESS_KEY=<unset>',
      'PGPASSWORD=<unset>',
    ])
      expect(text).toContain(line);
    expect(text).toContain('KAPPS_TOKEN=<unset>');
    expect(text).toContain('KAPPS_EXTRA=<unset>');
    for (const secret of Object.values(SERVER_ENV).slice(1)) expect(text).not.toContain(secret);
    // The server's own variables cannot be passed.
    p.write(
      'kapps-server.yaml',
      'projects:\n  - name: shop\n    stack_file: stacks.yaml\n    env:\n      pass: [PGPASSWORD, KAPPS_TOKEN]\n',
    );
    const refused = await runCli(['serve', '--config', config, '--backend', p.kappsHome], {
      env: { KAPPS_HOME: p.kappsHome },
      killAfterMs: 20_000,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${config}:5:`);
    expect(refused.stderr).toContain("`PGPASSWORD` is the server's own (KAPPS_*, PG*): a run never sees it");
    expect(refused.stderr).toContain('projects[0].env.pass[1]');
  });

  it("of the environment, without an env in its entry: the server's minus kapps' own variables", async () => {
    const p = envProject();
    const server = await startServer({
      args: ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome],
      env: { ...p.env, ...SERVER_ENV },
      cwd: p.dir,
    });
    const text = await applyLog(server.url);
    // The server says so when it starts.
    expect(server.stderr()).toContain(
      "kapps serve: project(s) shop have no `env` in the configuration: their runs see this server's environment (less KAPPS_* and PG*), cloud credentials included",
    );
    expect(text).toContain(
      'tpl AWS_REGION=eu-west-3 tpl AWS_SECRET_ACCESS_KEY=server-aws-s3cret-9d8c tpl PGPASSWORD= ',
    );
    expect(text).toContain('tpl KAPPS_TOKEN= tpl KAPPS_EXTRA= tpl TEAM=');
    expect(text).toContain('PGPASSWORD=<unset>');
    expect(text).toContain('KAPPS_TOKEN=<unset>');
    expect(text).toContain('KAPPS_EXTRA=<unset>');
    for (const secret of [SERVER_ENV.PGPASSWORD, SERVER_ENV.KAPPS_TOKEN, SERVER_ENV.KAPPS_EXTRA])
      expect(text).not.toContain(secret);
  });

  it('of the file system: the project and its workspace only, links resolved; the CLI reads anywhere', async () => {
    const outside = tempDir('kapps-outside-');
    writeFileSync(path.join(outside, 'id_rsa'), 'private');
    const p = fixtureProject({
      manifests: {
        shop: {
          kapps: [
            kapp('web', {
              apply_install: [
                fake('show', 'web', [
                  '--stdout',
                  'inside={{ exists "f" "stacks.yaml" }} {{ len (findFiles "manifests" (listString "shop")) }}',
                  '--stdout',
                  '{{ if .probe }}probe={{ .probe }}{{ end }}',
                ]),
              ],
            }),
          ],
        },
      },
    });
    symlinkSync(outside, p.path('escape'));
    const server = await startServer({
      args: ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome],
      env: p.env,
      cwd: p.dir,
    });
    const c = api(server.url);
    const generate = async (): Promise<{ status: string; error: string | null; body: string }> => {
      const run = await c.post('/api/v1/runs', { type: 'generate', project: 'shop', stack: 'dev' });
      const done = await waitForRun(c, run.body.id!);
      const result = await c.get<string>(`/api/v1/runs/${run.body.id}/result`);
      const log = await c.get(`/api/v1/runs/${run.body.id}/logs`);
      return { status: done.status, error: done.error, body: `${String(result.body)}${JSON.stringify(log.body)}` };
    };
    const ok = await generate();
    expect(ok.status, ok.error ?? '').toBe('succeeded');
    expect(ok.body).toContain('inside=true 1');
    const probes: [string, string][] = [
      ['{{ exists "f" "/etc/passwd" }}', 'exists: "/etc/passwd" is outside the project and its workspace'],
      [`{{ findFiles "${outside}" (listString "id") }}`, `findFiles: "${outside}" is outside the project`],
      ['{{ exists "f" "../../../../etc/passwd" }}', 'exists: "../../../../etc/passwd" is outside the project'],
      ['{{ exists "f" "escape/id_rsa" }}', 'exists: "escape/id_rsa" is outside the project'],
      ['{{ findFiles "escape" (listString "id") }}', 'findFiles: "escape" is outside the project'],
    ];
    for (const [probe, message] of probes) {
      p.write('stacks.yaml', {
        dev: { provider: 'local', cluster: 'c', vars: { probe }, manifests: [{ uri: 'manifests/shop.yaml' }] },
      });
      const r = await generate();
      expect(r.status, probe).toBe('failed');
      expect(r.error, probe).toContain(message);
      expect(r.body).not.toContain('private');
    }
    // The commands of the run's own PATH may be looked for (it may start them anyway): the sample finds terraform so.
    const pathDir = (p.env.PATH ?? '').split(':')[0] ?? '';
    p.write('stacks.yaml', {
      dev: {
        provider: 'local',
        cluster: 'c',
        vars: { probe: `{{ exists "f" "${pathDir}/kapps-fake" }} {{ exists "f" "${pathDir}/../../../etc/passwd" }}` },
        manifests: [{ uri: 'manifests/shop.yaml' }],
      },
    });
    const onPath = await generate();
    expect(onPath.status, onPath.error ?? '').toBe('failed');
    expect(onPath.error).toContain(`exists: "${pathDir}/../../../etc/passwd" is outside the project`);
    p.write('stacks.yaml', {
      dev: {
        provider: 'local',
        cluster: 'c',
        vars: { probe: `{{ exists "f" "${pathDir}/kapps-fake" }} {{ exists "f" "${pathDir}/no-such-command" }}` },
        manifests: [{ uri: 'manifests/shop.yaml' }],
      },
    });
    const found = await generate();
    expect(found.status, found.error ?? '').toBe('succeeded');
    expect(found.body).toContain('probe=true false');
    // The CLI's user owns its machine: the same template reads where it is told.
    p.write('stacks.yaml', {
      dev: {
        provider: 'local',
        cluster: 'c',
        vars: { probe: '{{ exists "f" "escape/id_rsa" }}' },
        manifests: [{ uri: 'manifests/shop.yaml' }],
      },
    });
    const cli = await p.run('generate');
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('probe=true');
  });
});

describe('a step printing the sensitive output it produces', () => {
  const PRINTED = 'printed-s3cret-4kq8-value';
  const printing = (fails: boolean) =>
    fixtureProject({
      manifests: {
        shop: {
          kapps: [
            kapp(
              'db',
              {
                output: [
                  {
                    name: 'make-token',
                    command: 'sh',
                    print: 'true',
                    // Like `terraform apply`: prints the value it writes to the output file, then (maybe) fails.
                    args: `-c 'echo "token is $E2E_PRINTED"; printf "{\\"token\\": \\"%s\\"}" "$E2E_PRINTED" > out.json; echo "again $E2E_PRINTED" >&2; exit ${fails ? 3 : 0}'`,
                  },
                ],
              },
              { outputs: [{ id: 'creds', path: 'out.json', format: 'json', sensitive: true }] },
            ),
          ],
        },
      },
    });

  it('has its lines held until the output is read: the run log, the events and the release log show it redacted', async () => {
    for (const fails of [false, true]) {
      const p = printing(fails);
      const server = await startServer({
        args: ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome],
        env: { ...p.env, E2E_PRINTED: PRINTED },
        cwd: p.dir,
      });
      const c = api(server.url);
      const run = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
      const events = await readEvents(`${server.url}/api/v1/runs/${run.body.id}/events`, { timeoutMs: 30_000 });
      const done = await waitForRun(c, run.body.id!);
      expect(done.status).toBe(fails ? 'failed' : 'succeeded');
      const log = await c.get(`/api/v1/runs/${run.body.id}/logs`);
      const logText = JSON.stringify(log.body);
      expect(logText).toContain('token is <sensitive>');
      expect(logText).toContain('again <sensitive>');
      const all = [logText, JSON.stringify(events.events), JSON.stringify(done), allText(p.kappsHome)].join('\n');
      expect(all).not.toContain(PRINTED);
      await server.stop();

      // The CLI, every reporter.
      for (const reporter of ['plain', 'json']) {
        const cli = await p.run('install', ['-y', '--reporter', reporter], { env: { E2E_PRINTED: PRINTED } });
        expect(cli.code).toBe(fails ? 1 : 0);
        expect(cli.stdout + cli.stderr).toContain('<sensitive>');
        expect(cli.stdout + cli.stderr).not.toContain(PRINTED);
      }
      expect(allText(p.kappsHome)).not.toContain(PRINTED);
    }
  });
});

describe('working_dir', () => {
  const withDir = (dir: string) =>
    fixtureProject({
      manifests: {
        shop: {
          kapps: [
            kapp('web', {
              apply_install: [
                { name: 'link', command: 'ln', args: '-sfn /etc escape' },
                fake('where', 'web', ['--print-cwd'], { working_dir: dir, print: 'true' }),
              ],
            }),
          ],
        },
      },
    });

  it('outside the kapp directory is a located error before anything runs, on the CLI and the server', async () => {
    for (const dir of ['../../..', '/etc']) {
      const p = withDir(dir);
      const cli = await p.run('install', ['-y']);
      expect(cli.code, dir).toBe(1);
      expect(cli.stderr).toMatch(
        /manifests\/shop\.yaml:\d+:\d+: error: .*'working_dir' \S+ is outside the kapp's directory/,
      );
      expect(cli.stderr).not.toMatch(/\n\s+at /);
      expect(p.traceLines()).toEqual([]);

      const server = await startServer({
        args: ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome],
        env: p.env,
        cwd: p.dir,
      });
      const c = api(server.url);
      const run = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
      const done = await waitForRun(c, run.body.id!);
      expect(done.status).toBe('failed');
      expect(done.error).toContain("is outside the kapp's directory");
      expect(p.traceLines()).toEqual([]);
      await server.stop();
    }
  });

  it('through a link in the kapp directory that leads out of it: the step does not run', async () => {
    const p = withDir('escape');
    const cli = await p.run('install', ['-y']);
    expect(cli.code).toBe(1);
    expect(cli.stdout + cli.stderr).toContain("leads to /etc, outside the kapp's directory");
    expect(p.traceLines()).toEqual([]);
  });
});

describe('values named as secrets', () => {
  it('are masked in the generate result and in the releases shown, on the CLI and the server, as in the preview', async () => {
    const p = fixtureProject({
      manifests: {
        shop: {
          kapps: [
            kapp('web', {
              apply_install: [
                {
                  name: 'deploy',
                  command: 'true',
                  args: '--tag web --password={{ env "E2E_DB_PASSWORD" }} --api-token {{ env "E2E_TOKEN" }} --region eu',
                  env_vars: { DB_PASSWORD: '{{ env "E2E_DB_PASSWORD" }}', LOG_LEVEL: 'debug' },
                },
              ],
            }),
          ],
        },
      },
    });
    const env = { E2E_DB_PASSWORD: 'db-pw-s3cret-31', E2E_TOKEN: 'api-token-s3cret-42' };
    const cli = await p.run('generate', [], { env });
    expect(cli.code, cli.stderr).toBe(0);
    const server = await startServer({
      args: ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome],
      env: { ...p.env, ...env },
      cwd: p.dir,
    });
    const c = api(server.url);
    const run = await c.post('/api/v1/runs', { type: 'generate', project: 'shop', stack: 'dev' });
    expect((await waitForRun(c, run.body.id!)).status).toBe('succeeded');
    const result = await c.get<string>(`/api/v1/runs/${run.body.id}/result`);
    // The release of an apply, as the API answers it and `release show` prints it.
    const apply = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    expect((await waitForRun(c, apply.body.id!)).status).toBe('succeeded');
    const release = await c.get('/api/v1/projects/shop/stacks/dev/releases/1');
    expect(release.status).toBe(200);
    const show = await p.run('release', ['show', p.stackFile, 'dev'], { bare: true });
    expect(show.code, show.stderr).toBe(0);
    for (const text of [cli.stdout, result.body, show.stdout]) {
      expect(text).toContain('DB_PASSWORD: (sensitive)');
      expect(text).toContain('--password=(sensitive)');
      expect(text).toContain('LOG_LEVEL: debug');
    }
    const api1 = JSON.stringify(release.body);
    expect(api1).toContain('"DB_PASSWORD":"(sensitive)"');
    for (const text of [cli.stdout, result.body, show.stdout, api1]) {
      expect(text).not.toContain(env.E2E_DB_PASSWORD);
      expect(text).not.toContain(env.E2E_TOKEN);
    }
  });
});
