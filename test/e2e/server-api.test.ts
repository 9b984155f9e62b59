/**
 * `kapps serve` over real HTTP: start-up (flags, configuration, its diagnostics, the loopback rule, one instance per
 * file backend), tokens and roles, and the error answers of the API. Runs themselves are in server-runs.test.ts.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { cleanupProjects, fixtureProject } from '../support/project.js';
import { api, startServer, stopAllServers } from '../support/server.js';

interface OpenApi {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      { requestBody?: { content: Record<string, { schema: { properties: Record<string, { enum?: string[] }> } }> } }
    >
  >;
}

const sha = (token: string): string => createHash('sha256').update(token).digest('hex');

afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});

function project() {
  return fixtureProject({
    stacks: {
      // Shared settings without manifests (Sugarkube's `defaults: &defaults` anchor): not listed as a stack.
      defaults: { provider: 'local' },
      dev: { provider: 'local', manifests: [] },
      prod: { provider: 'local', manifests: [] },
    },
  });
}

/** A server configuration with one token per role. */
function tokenConfig(dir: string, extra = ''): string {
  const file = join(dir, 'kapps-server.yaml');
  writeFileSync(
    file,
    `projects:\n  - name: shop\n    stack_file: stacks.yaml\ntokens:\n` +
      ['read', 'plan', 'apply', 'admin']
        .map((role) => `  - name: ${role}-bot\n    role: ${role}\n    sha256: ${sha(`${role}-secret`)}\n`)
        .join('') +
      extra,
  );
  return file;
}

describe('kapps serve: start-up', () => {
  it('prints one start line on stdout, answers /healthz and /readyz, and stops on SIGTERM with exit 0', async () => {
    const p = project();
    const server = await startServer({ args: ['--project', `shop=${p.stackFile}`] });
    expect(server.stdout()).toMatch(/^kapps serve: listening on http:\/\/127\.0\.0\.1:[0-9]+\n$/);
    expect(server.stderr()).toContain('no tokens configured: listening on loopback only');
    expect((await api(server.url).get('/healthz')).status).toBe(200);
    expect((await api(server.url).get('/readyz')).status).toBe(200);
    const projects = await api(server.url).get('/api/v1/projects');
    expect(projects.body).toEqual({ projects: [{ name: 'shop', repo: null, stacks: ['dev', 'prod'] }] });
    const who = await api(server.url).get('/api/v1/whoami');
    expect(who.body).toEqual({ name: 'anonymous', role: 'admin' });
    expect(await server.stop()).toEqual({ code: 0 });
  });

  it('refuses a non-loopback --listen without tokens (exit 2)', async () => {
    const p = project();
    const r = await runCli(['serve', '--listen', '0.0.0.0:0', '--project', `shop=${p.stackFile}`], {
      env: { KAPPS_HOME: p.kappsHome },
      killAfterMs: 20_000,
    });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('refusing to listen on 0.0.0.0 without tokens');
  });

  it('rejects bad flags as usage errors', async () => {
    const bad = await runCli(['serve', '--project', 'shop'], { killAfterMs: 20_000 });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--project takes NAME=STACK_FILE, got `shop`');
    const missing = await runCli(['serve', '--project', 'shop=nope.yaml'], { killAfterMs: 20_000 });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('the stack file `nope.yaml` does not exist');
    const listen = await runCli(['serve', '--listen', 'here'], { killAfterMs: 20_000 });
    expect(listen.code).toBe(2);
    expect(listen.stderr).toContain('--listen takes HOST:PORT');
    expect(`${bad.stderr}${missing.stderr}${listen.stderr}`).not.toMatch(/\n\s+at /);
  });

  it('says why it cannot listen, without a stack trace (exit 1)', async () => {
    const p = project();
    const first = await startServer({ args: ['--project', `shop=${p.stackFile}`] });
    const port = new URL(first.url).port;
    const r = await runCli(['serve', '--listen', `127.0.0.1:${port}`, '--backend', p.path('other')], {
      killAfterMs: 20_000,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot listen on 127.0.0.1:${port}: the address is in use`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('reports every problem of the configuration file with its line and field', async () => {
    const p = project();
    const file = p.write(
      'kapps-server.yaml',
      'projects:\n  - name: shop\n    stack_file: missing.yaml\n  - name: shop\n    stack_file: stacks.yaml\n' +
        'tokens:\n  - name: ci\n    role: boss\n    sha256: abc\nlimits:\n  max_runs: 0\n  colour: red\n',
    );
    const r = await runCli(['serve', '--config', file], { env: { KAPPS_HOME: p.kappsHome }, killAfterMs: 20_000 });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`${file}:8:`);
    expect(r.stderr).toMatch(/tokens\[0\]\.role/);
    expect(r.stderr).toMatch(/tokens\[0\]\.sha256/);
    expect(r.stderr).toMatch(/limits\.max_runs/);
    expect(r.stderr).toContain('unknown field `colour`');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    // Once the shape is right, the meaning is checked: a missing stack file, a name registered twice.
    p.write(
      'kapps-server.yaml',
      'projects:\n  - name: shop\n    stack_file: missing.yaml\n  - name: shop\n    stack_file: stacks.yaml\n',
    );
    const again = await runCli(['serve', '--config', file], { env: { KAPPS_HOME: p.kappsHome }, killAfterMs: 20_000 });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`${file}:3:`);
    expect(again.stderr).toContain('stack file `missing.yaml` does not exist');
    expect(again.stderr).toContain(`${file}:4:`);
    expect(again.stderr).toContain('project `shop` is registered twice');
  });

  it('prints the JSON Schema of the configuration and hashes a token', async () => {
    const schema = await runCli(['schema', 'server']);
    expect(schema.code).toBe(0);
    const parsed = JSON.parse(schema.stdout) as { properties: Record<string, unknown> };
    expect(Object.keys(parsed.properties).sort()).toEqual(['drift', 'limits', 'projects', 'tokens']);
    const hashed = await runCli(['serve', 'hash-token'], { input: 's3cret\n' });
    expect(hashed.code).toBe(0);
    expect(hashed.stdout).toBe(`${sha('s3cret')}\n`);
    const empty = await runCli(['serve', 'hash-token'], { input: '' });
    expect(empty.code).toBe(2);
  });

  it('refuses a second instance on the same backend directory, naming the first', async () => {
    const p = project();
    const backend = mkdtempSync(join(tmpdir(), 'kapps-serve-'));
    const first = await startServer({ args: ['--backend', backend, '--project', `shop=${p.stackFile}`] });
    const second = await runCli(['serve', '--listen', '127.0.0.1:0', '--backend', backend], { killAfterMs: 20_000 });
    expect(second.code).toBe(1);
    expect(second.stdout).toBe('');
    expect(second.stderr).toContain(`in use by another kapps serve (pid ${first.pid} on `);
    // Once the first is gone (even killed), the directory is free again.
    first.kill9();
    await first.exited;
    const third = await startServer({ args: ['--backend', backend, '--project', `shop=${p.stackFile}`] });
    expect((await api(third.url).get('/healthz')).status).toBe(200);
  });
});

describe('kapps serve: tokens and roles', () => {
  it('needs a valid bearer token on /api/v1, takes createdBy from it, and checks each role', async () => {
    const p = project();
    const config = tokenConfig(p.dir);
    const server = await startServer({ args: ['--config', config], cwd: p.dir });
    expect(server.stderr()).not.toContain('no tokens configured');
    const none = await api(server.url).get('/api/v1/runs');
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toContain('application/problem+json');
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expect(none.body).toMatchObject({ type: 'https://kapps.dev/problems/unauthorized', status: 401 });
    expect((await api(server.url, 'wrong').get('/api/v1/runs')).status).toBe(401);
    // No token needed for liveness.
    expect((await api(server.url).get('/healthz')).status).toBe(200);

    expect((await api(server.url, 'read-secret').get('/api/v1/whoami')).body).toEqual({
      name: 'read-bot',
      role: 'read',
    });
    const submit = (token: string, type: string) =>
      api(server.url, token).post(
        '/api/v1/runs',
        { type, project: 'shop', stack: 'dev' },
        // A client cannot choose its createdBy.
        { 'x-kapps-user': 'mallory' },
      );
    const readGen = await submit('read-secret', 'generate');
    expect(readGen.status).toBe(403);
    expect(readGen.body).toMatchObject({ type: 'https://kapps.dev/problems/forbidden' });
    const planGen = await submit('plan-secret', 'generate');
    expect(planGen.status).toBe(202);
    expect(planGen.body.createdBy).toBe('plan-bot');
    expect((await submit('plan-secret', 'apply')).status).toBe(403);
    expect((await submit('plan-secret', 'destroy')).status).toBe(403);
    const cancelByPlan = await api(server.url, 'plan-secret').post(`/api/v1/runs/${planGen.body.id}/cancel`);
    expect(cancelByPlan.status).toBe(403);
    const unlockByApply = await api(server.url, 'apply-secret').post('/api/v1/projects/shop/stacks/dev/unlock');
    expect(unlockByApply.status).toBe(403);
    // admin may unlock: nothing to unlock is a conflict, said as such.
    const unlock = await api(server.url, 'admin-secret').post('/api/v1/projects/shop/stacks/dev/unlock');
    expect(unlock.status).toBe(409);
    expect(unlock.body.detail).toContain('has no releases');
    const mine = await api(server.url, 'read-secret').get('/api/v1/runs?createdBy=plan-bot');
    expect(mine.body.runs?.map((r: { id: string }) => r.id)).toEqual([planGen.body.id]);
  });

  it('listens on a non-loopback address when tokens are configured', async () => {
    const p = project();
    const config = tokenConfig(p.dir);
    const server = await startServer({ args: ['--config', config, '--listen', '0.0.0.0:0'], cwd: p.dir });
    expect(server.url).toMatch(/^http:\/\/0\.0\.0\.0:[0-9]+$/);
    const port = new URL(server.url).port;
    expect((await api(`http://127.0.0.1:${port}`, 'read-secret').get('/api/v1/whoami')).status).toBe(200);
  });
});

describe('kapps serve: error answers', () => {
  it('answers problem documents with real status codes, the fields at fault, no stack traces', async () => {
    const p = project();
    const server = await startServer({ args: ['--project', `shop=${p.stackFile}`] });
    const c = api(server.url);
    const bad = await c.post('/api/v1/runs', { type: 'deploy', project: '../etc', stack: 'dev', extra: 1 });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
    expect(bad.body.type).toBe('https://kapps.dev/problems/invalid-request');
    expect(bad.body.errors?.map((e: { field: string }) => e.field).sort()).toEqual([
      'body',
      'body.project',
      'body.type',
    ]);
    const unknownProject = await c.post('/api/v1/runs', { type: 'generate', project: 'nope', stack: 'dev' });
    expect(unknownProject.status).toBe(400);
    expect(unknownProject.body.errors).toEqual([{ field: 'body.project', message: 'no project `nope` is registered' }]);
    const unknownStack = await c.post('/api/v1/runs', { type: 'generate', project: 'shop', stack: 'qa' });
    expect(unknownStack.body.errors).toEqual([{ field: 'body.stack', message: 'project `shop` has no stack `qa`' }]);
    const notJson = await fetch(`${server.url}/api/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"type":',
    });
    expect(notJson.status).toBe(400);
    expect(notJson.headers.get('content-type')).toContain('application/problem+json');
    const query = await c.get('/api/v1/runs?limit=0&status=done');
    expect(query.status).toBe(400);
    expect(query.body.errors?.map((e: { field: string }) => e.field).sort()).toEqual(['query.limit', 'query.status']);
    expect((await c.get('/api/v1/runs?cursor=abc')).status).toBe(400);
    for (const path of [
      '/api/v1/runs/nope',
      '/api/v1/runs/nope/result',
      '/api/v1/runs/nope/logs',
      '/api/v1/runs/nope/events',
      '/api/v1/projects/nope/stacks/dev',
      '/api/v1/projects/shop/stacks/qa/releases',
      '/api/v1/projects/shop/stacks/dev/releases/3',
      '/api/v1/nothing-here',
    ]) {
      const r = await c.get(path);
      expect({ path, status: r.status }).toEqual({ path, status: 404 });
      expect(r.body.type).toBe('https://kapps.dev/problems/not-found');
    }
    expect((await c.post('/api/v1/runs/nope/cancel')).status).toBe(404);
    const badId = await c.get('/api/v1/runs/..%2F..%2Fetc');
    expect(badId.status).toBe(400);
    const text = JSON.stringify([bad.body, query.body, badId.body]);
    expect(text).not.toMatch(/\n\s+at |\.ts:|\.js:/);
  });

  it('serves the OpenAPI document of every route', async () => {
    const p = project();
    const server = await startServer({ args: ['--project', `shop=${p.stackFile}`] });
    const doc = await api(server.url).get<OpenApi>('/api/v1/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.paths).sort()).toEqual([
      '/api/v1/fleet',
      '/api/v1/hooks/github',
      '/api/v1/hooks/gitlab',
      '/api/v1/projects',
      '/api/v1/projects/{p}/stacks/{s}',
      '/api/v1/projects/{p}/stacks/{s}/drift',
      '/api/v1/projects/{p}/stacks/{s}/releases',
      '/api/v1/projects/{p}/stacks/{s}/releases/{rev}',
      '/api/v1/projects/{p}/stacks/{s}/unlock',
      '/api/v1/runs',
      '/api/v1/runs/{id}',
      '/api/v1/runs/{id}/approve',
      '/api/v1/runs/{id}/cancel',
      '/api/v1/runs/{id}/events',
      '/api/v1/runs/{id}/logs',
      '/api/v1/runs/{id}/notifications',
      '/api/v1/runs/{id}/preview',
      '/api/v1/runs/{id}/reject',
      '/api/v1/runs/{id}/result',
      '/api/v1/whoami',
    ]);
    expect(
      doc.body.paths['/api/v1/runs']?.post?.requestBody?.content['application/json']?.schema.properties.type?.enum,
    ).toEqual(['generate', 'preview', 'apply', 'destroy', 'rollback', 'drift']);
  });
});

describe('kapps serve: the web page', () => {
  it('serves the built page with content types, index.html for unknown paths, nothing outside it', async () => {
    const p = project();
    p.write('web/index.html', '<!doctype html><title>kapps</title>');
    p.write('web/assets/app.js', 'console.log(1)');
    const server = await startServer({
      args: ['--project', `shop=${p.stackFile}`],
      env: { KAPPS_SERVE_WEB_DIR: p.path('web') },
    });
    const root = await fetch(`${server.url}/`);
    expect(root.status).toBe(200);
    expect(root.headers.get('content-type')).toContain('text/html');
    const deep = await fetch(`${server.url}/runs/abc`);
    expect(deep.headers.get('content-type')).toContain('text/html');
    const traversal = await fetch(`${server.url}/..%2F..%2Fpackage.json`);
    expect(traversal.headers.get('content-type')).toContain('text/html');
    expect(await traversal.text()).not.toContain('"devDependencies"');
    const js = await fetch(`${server.url}/assets/app.js`);
    expect(js.headers.get('content-type')).toContain('text/javascript');
    expect(await js.text()).toBe('console.log(1)');
    const apiMiss = await fetch(`${server.url}/api/v1/nothing`);
    expect(apiMiss.status).toBe(404);
  });
});
