/**
 * Run overrides are data, never code: from the attacker's side, a token sends template code, shell metacharacters
 * and extra arguments as `overrides` on every kind of run (and the CLI as flags). Nothing is rendered, split or
 * run; no secret of the server comes back; an apply of a preview records the options it ran with.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupProjects, fake, fixtureProject, kapp, tempDir } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun } from '../support/server.js';

afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});

const SERVER_SECRET = 'aws-secret-Zq81-server-only';

/** Every file under `dir`, by path. */
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const f = path.join(dir, n);
    return statSync(f).isDirectory() ? files(f) : [f];
  });
}

function project(pwned: string) {
  return fixtureProject({
    manifests: {
      shop: {
        kapps: [
          kapp('web', {
            apply_install: [
              fake('deploy', 'web', [
                '--stdout',
                'region={{ .stack.region }}',
                '--stdout',
                'cluster={{ .stack.cluster }}',
              ]),
              // A step a careless author wrote through a shell: an override reaching it could run commands.
              { name: 'shell', command: 'sh', args: `-c 'echo in {{ .stack.region }} > ${pwned}.log'` },
            ],
          }),
        ],
      },
    },
  });
}

const PAYLOADS = [
  '{{ fail (env "AWS_SECRET_ACCESS_KEY") }}',
  '{{ env "AWS_SECRET_ACCESS_KEY" | b64enc }}',
  'eu-west-1; id > PWNED',
  'eu-west-1 --post-renderer /x/evil.sh',
  '--post-renderer=/x/evil.sh',
  'x{',
  'a'.repeat(129),
];

describe('run overrides from requests', () => {
  it('are refused with a 400 problem on generate, preview, apply and apply-of-preview; nothing runs, nothing leaks', async () => {
    const dir = tempDir('kapps-pwned-');
    const pwned = path.join(dir, 'PWNED');
    const p = project(pwned);
    const server = await startServer({
      args: ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome],
      env: { ...p.env, AWS_SECRET_ACCESS_KEY: SERVER_SECRET },
      cwd: p.dir,
    });
    const c = api(server.url);
    const answers: string[] = [];
    for (const type of ['generate', 'preview', 'apply', 'destroy']) {
      for (const field of ['provider', 'provisioner', 'account', 'region', 'profile', 'cluster']) {
        for (const payload of PAYLOADS) {
          const r = await c.post('/api/v1/runs', {
            type,
            project: 'shop',
            stack: 'dev',
            overrides: { [field]: payload },
          });
          expect(r.status, `${type} ${field} ${payload}`).toBe(400);
          expect(r.headers.get('content-type')).toContain('application/problem+json');
          expect(JSON.stringify(r.body)).toContain(`overrides.${field}`);
          answers.push(JSON.stringify(r.body));
        }
      }
    }
    // A valid preview, then its apply with overrides of its own: refused too (the preview's are the ones applied).
    const preview = await c.post('/api/v1/runs', {
      type: 'preview',
      project: 'shop',
      stack: 'dev',
      overrides: { region: 'eu-west-1' },
    });
    expect((await waitForRun(c, preview.body.id!)).status).toBe('succeeded');
    for (const payload of PAYLOADS) {
      const r = await c.post('/api/v1/runs', {
        type: 'apply',
        project: 'shop',
        stack: 'dev',
        previewRunId: preview.body.id,
        overrides: { region: payload },
      });
      expect(r.status).toBe(400);
      answers.push(JSON.stringify(r.body));
    }
    const list = await c.get('/api/v1/runs');
    expect(list.body.runs?.map((r) => r.type)).toEqual(['preview']);
    const log = await c.get(`/api/v1/runs/${preview.body.id}/logs`);
    const all = [...answers, JSON.stringify(log.body), server.stdout(), server.stderr()].join('\n');
    expect(all).not.toContain(SERVER_SECRET);
    expect(all).not.toContain(Buffer.from(SERVER_SECRET).toString('base64'));
    expect(existsSync(pwned)).toBe(false);
    expect(existsSync(`${pwned}.log`)).toBe(false);
    expect(p.traceLines()).toEqual([]);
  });

  it('apply of a preview runs and records the preview options, each override one argument', async () => {
    const dir = tempDir('kapps-pwned-');
    const p = project(path.join(dir, 'PWNED'));
    const server = await startServer({
      args: ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome],
      env: p.env,
      cwd: p.dir,
    });
    const c = api(server.url);
    const overrides = { region: 'eu-west-1', cluster: 'blue.example_2' };
    const preview = await c.post('/api/v1/runs', { type: 'preview', project: 'shop', stack: 'dev', overrides });
    expect((await waitForRun(c, preview.body.id!)).status).toBe('succeeded');
    const apply = await c.post('/api/v1/runs', {
      type: 'apply',
      project: 'shop',
      stack: 'dev',
      previewRunId: preview.body.id,
    });
    expect(apply.status).toBe(202);
    expect(apply.body.options).toEqual({ previewRunId: preview.body.id, overrides });
    const done = await waitForRun(c, apply.body.id!);
    expect(done.status).toBe('succeeded');
    expect(done.options).toEqual({ previewRunId: preview.body.id, overrides });
    const deploy = p.traceLines().find((t) => t.tag === 'web' && t.event === 'start');
    expect(deploy?.args).toEqual([
      '--tag',
      'web',
      '--stdout',
      'region=eu-west-1',
      '--stdout',
      'cluster=blue.example_2',
    ]);
  });

  it('a stored preview holding what requests may not send is not applied', async () => {
    const dir = tempDir('kapps-pwned-');
    const pwned = path.join(dir, 'PWNED');
    const p = project(pwned);
    const args = ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome];
    let server = await startServer({ args, env: p.env, cwd: p.dir });
    let c = api(server.url);
    const preview = await c.post('/api/v1/runs', { type: 'preview', project: 'shop', stack: 'dev' });
    expect((await waitForRun(c, preview.body.id!)).status).toBe('succeeded');
    await server.stop();
    // As a server without these checks would have stored it.
    const runFile = files(p.kappsHome).find((f) => f.endsWith(path.join(preview.body.id!, 'run.json')));
    expect(runFile).toBeDefined();
    const stored = JSON.parse(readFileSync(runFile!, 'utf8')) as { run: { options: Record<string, unknown> } };
    stored.run.options = { overrides: { region: `eu-west-1; id > ${pwned}` } };
    writeFileSync(runFile!, JSON.stringify(stored));

    server = await startServer({ args, env: p.env, cwd: p.dir });
    c = api(server.url);
    const apply = await c.post('/api/v1/runs', {
      type: 'apply',
      project: 'shop',
      stack: 'dev',
      previewRunId: preview.body.id,
    });
    expect(apply.status).toBe(409);
    expect(apply.body.detail).toContain('options no request may send');
    expect(existsSync(pwned)).toBe(false);
    expect(existsSync(`${pwned}.log`)).toBe(false);
    expect(p.traceLines()).toEqual([]);
  });
});

describe('run overrides on the command line', () => {
  it('are values, never templates: template source is refused with a clear error and nothing is read', async () => {
    const p = project(path.join(tempDir('kapps-pwned-'), 'PWNED'));
    for (const flag of ['--region', '--cluster', '--account']) {
      const r = await p.run('generate', [flag, '{{ env "E2E_CLI_SECRET" }}'], {
        env: { E2E_CLI_SECRET: 'cli-s3cret' },
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${flag} "{{ env \\"E2E_CLI_SECRET\\" }}": an override is a value, not a template`);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stdout + r.stderr).not.toContain('cli-s3cret');
    }
    // Two overrides that would only make template source together.
    const split = await p.run('generate', ['--region', 'x{', '--cluster', '{ env "E2E_CLI_SECRET" }}'], {
      env: { E2E_CLI_SECRET: 'cli-s3cret' },
    });
    expect(split.code).toBe(2);
    expect(split.stdout + split.stderr).not.toContain('cli-s3cret');
    const ok = await p.run('generate', ['--region', 'eu-west-1']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('region=eu-west-1');
  });
});
