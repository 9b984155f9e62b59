/**
 * The runs server as a trust boundary, tried from the attacker's side on real `kapps serve` processes: a browser
 * page on another origin (DNS rebinding, cross-origin forms and `no-cors` fetches, framing), ill-formed Unicode and
 * out-of-range cursors, a forged NOTIFY from a database role without table rights, a reused Idempotency-Key, tokens
 * limited to projects, and applies of a preview that must not do engine work in the request.
 */
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freshDatabases, pgUrl, sql } from '../support/pg.js';
import type { Run } from '../../src/api/index.js';
import { cleanupProjects, fake, fixtureProject, kapp, waitFor, type FixtureProject } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun, type TestServer } from '../support/server.js';

const databases = freshDatabases('kapps_trust');

afterEach(async () => {
  await stopAllServers();
});

afterAll(async () => {
  cleanupProjects();
  await databases.dropAll();
  await sql(pgUrl(), 'DROP ROLE IF EXISTS kapps_forger');
});

const BACKENDS = ['file', 'postgres'] as const;
type Backend = (typeof BACKENDS)[number];

/** Stack `dev` (and `prod`): one kapp `db` whose step runs `kapps-fake --tag db <args>`. */
function project(args: string[] = []): FixtureProject {
  return fixtureProject({
    stacks: {
      dev: { provider: 'local', manifests: [{ uri: 'manifests/shop.yaml' }] },
      prod: { provider: 'local', manifests: [{ uri: 'manifests/shop.yaml' }] },
    },
    manifests: {
      shop: { kapps: [kapp('db', { apply_install: [fake('migrate', 'db', args)], apply_delete: [] })] },
    },
  });
}

async function serve(p: FixtureProject, options: { backend?: Backend; args?: string[] } = {}): Promise<TestServer> {
  const backend = options.backend === 'postgres' ? await databases.create() : p.kappsHome;
  return startServer({
    args: ['--project', `shop=${p.stackFile}`, '--backend', backend, ...(options.args ?? [])],
    env: p.env,
    cwd: p.dir,
  });
}

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  readonly json: Record<string, unknown> | undefined;
}

/** One HTTP request with exactly these headers (a browser's `Host`, `Origin` and body type included). */
function raw(
  server: TestServer,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawAnswer> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers: { host: url.host, ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let json: Record<string, unknown> | undefined;
          try {
            json = JSON.parse(text) as Record<string, unknown>;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

const GENERATE = JSON.stringify({ type: 'generate', project: 'shop', stack: 'dev' });

async function runCount(server: TestServer): Promise<number> {
  return ((await api(server.url).get('/api/v1/runs')).body.runs ?? []).length;
}

describe('kapps serve: a browser cannot be turned against it', () => {
  it('a server without tokens answers only loopback Host names: DNS rebinding gets 421 and changes nothing', async () => {
    const p = project();
    const server = await serve(p);
    const port = new URL(server.url).port;
    for (const path of ['/healthz', '/', '/api/v1/whoami', '/api/v1/runs']) {
      const refused = await raw(server, 'GET', path, { host: `attacker.example:${port}` });
      expect(refused.status, path).toBe(421);
      expect(refused.headers['content-type']).toContain('application/problem+json');
      expect(refused.json?.type).toBe('https://kapps.dev/problems/misdirected');
      expect(refused.text).not.toContain('anonymous');
    }
    const submitted = await raw(
      server,
      'POST',
      '/api/v1/runs',
      { host: 'attacker.example', 'content-type': 'application/json' },
      GENERATE,
    );
    expect(submitted.status).toBe(421);
    // Another port of a loopback name, or a loopback name with no port, is not this server either.
    expect((await raw(server, 'GET', '/api/v1/whoami', { host: `localhost:1` })).status).toBe(421);
    expect((await raw(server, 'GET', '/api/v1/whoami', { host: 'localhost' })).status).toBe(421);
    expect(await runCount(server)).toBe(0);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`]) {
      const ok = await raw(server, 'GET', '/api/v1/whoami', { host });
      expect(ok.status, host).toBe(200);
      expect(ok.json).toEqual({ name: 'anonymous', role: 'admin' });
    }
  });

  it('a cross-origin text/plain POST to /unlock or /runs changes nothing; the server’s own origin and no origin work', async () => {
    const p = project();
    const go = p.path('go');
    p.write('manifests/shop.yaml', {
      kapps: [kapp('db', { apply_install: [fake('migrate', 'db', ['--wait-file', go])], apply_delete: [] })],
    });
    const server = await serve(p);
    const c = api(server.url);
    const apply = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    await waitForRun(c, apply.body.id!, (r) => r.status === 'running' && r.releaseRevision !== null);
    const lockOf = async () => (await c.get('/api/v1/projects/shop/stacks/dev')).body.lock;
    expect(await lockOf()).toMatchObject({ revision: 1, phase: 'applying' });
    const evil = { origin: 'http://attacker.example' };
    const attempts: [string, Record<string, string>, string | undefined][] = [
      // fetch(url, {mode: 'no-cors', method: 'POST', body: '…'}): a text/plain body, the attacker's Origin.
      ['/api/v1/projects/shop/stacks/dev/unlock', { ...evil, 'content-type': 'text/plain;charset=UTF-8' }, '{}'],
      ['/api/v1/projects/shop/stacks/dev/unlock', { ...evil }, undefined],
      ['/api/v1/projects/shop/stacks/dev/unlock', { origin: 'null', 'content-type': 'application/json' }, '{}'],
      // A form post (no Origin check would be enough alone: a text/plain or form body is refused as such too).
      ['/api/v1/projects/shop/stacks/dev/unlock', { 'content-type': 'text/plain' }, 'x=1'],
      ['/api/v1/runs', { ...evil, 'content-type': 'text/plain' }, GENERATE],
      ['/api/v1/runs', { 'content-type': 'application/x-www-form-urlencoded' }, 'type=generate'],
      ['/api/v1/runs', { 'content-type': 'multipart/form-data; boundary=x' }, '--x--'],
      ['/api/v1/runs', { ...evil, 'content-type': 'application/json' }, GENERATE],
      [`/api/v1/runs/${apply.body.id}/cancel`, { ...evil }, undefined],
    ];
    for (const [path, headers, body] of attempts) {
      const r = await raw(server, 'POST', path, headers, body);
      expect([403, 415], `${path} ${JSON.stringify(headers)}`).toContain(r.status);
      expect(r.headers['content-type']).toContain('application/problem+json');
    }
    expect(await lockOf()).toMatchObject({ revision: 1, phase: 'applying' });
    expect(await runCount(server)).toBe(1);
    expect((await c.get(`/api/v1/runs/${apply.body.id}`)).body.status).toBe('running');
    // The server's own page (Origin = the server) and a client without Origin (curl, the CLI) are answered.
    const own = await raw(
      server,
      'POST',
      '/api/v1/runs',
      { origin: server.url, 'content-type': 'application/json' },
      GENERATE,
    );
    expect(own.status).toBe(202);
    expect((await raw(server, 'POST', '/api/v1/runs', { 'content-type': 'application/json' }, GENERATE)).status).toBe(
      202,
    );
    writeFileSync(go, 'x');
    expect((await waitForRun(c, apply.body.id!)).status).toBe('succeeded');
  });

  it('every answer carries the security headers: the page, the API, problems and the event stream', async () => {
    const p = project();
    const server = await serve(p);
    const c = api(server.url);
    const run = await c.post('/api/v1/runs', { type: 'generate', project: 'shop', stack: 'dev' });
    await waitForRun(c, run.body.id!);
    const stream = await fetch(`${server.url}/api/v1/runs/${run.body.id}/events`);
    await stream.body?.cancel();
    const answers: [string, Headers | Record<string, string | string[] | undefined>][] = [
      ['/', (await raw(server, 'GET', '/')).headers],
      ['/index.html', (await raw(server, 'GET', '/index.html')).headers],
      ['/api/v1/runs', (await c.get('/api/v1/runs')).headers],
      ['404', (await c.get('/api/v1/runs/nope')).headers],
      ['400', (await c.post('/api/v1/runs', { type: 'nope' })).headers],
      ['421', (await raw(server, 'GET', '/', { host: 'attacker.example' })).headers],
      ['events', stream.headers],
    ];
    expect((await raw(server, 'GET', '/')).text).toContain('<html');
    for (const [what, headers] of answers) {
      const get = (name: string): unknown =>
        headers instanceof Headers ? headers.get(name) : (headers as Record<string, unknown>)[name];
      const csp = String(get('content-security-policy'));
      expect(csp, what).toContain("default-src 'self'");
      expect(csp, what).toContain("frame-ancestors 'none'");
      expect(get('x-frame-options'), what).toBe('DENY');
      expect(get('referrer-policy'), what).toBe('no-referrer');
    }
  });
});

describe.each(BACKENDS)(
  'kapps serve (%s backend): requests it cannot store are refused, what runs print is kept',
  (backend) => {
    it('one cursor rule: 1 to 15 digits; 16–19 digits and anything else are 400, never a 500', async () => {
      const p = project();
      const server = await serve(p, { backend });
      const c = api(server.url);
      for (let i = 0; i < 3; i++) await c.post('/api/v1/runs', { type: 'generate', project: 'shop', stack: 'dev' });
      const first = await c.get('/api/v1/runs?limit=2');
      expect(first.body.runs).toHaveLength(2);
      const next = await c.get(`/api/v1/runs?limit=2&cursor=${first.body.nextCursor}`);
      expect(next.status).toBe(200);
      expect(next.body.runs).toHaveLength(1);
      expect((await c.get('/api/v1/runs?cursor=999999999999999')).status).toBe(200);
      for (const cursor of [
        '1234567890123456',
        '99999999999999999',
        '999999999999999999',
        '9223372036854775808',
        'abc',
        '-1',
        '1e3',
      ]) {
        const r = await c.get(`/api/v1/runs?cursor=${cursor}`);
        expect(r.status, cursor).toBe(400);
        expect(r.body.errors).toEqual([expect.objectContaining({ field: 'query.cursor' })]);
      }
    });

    it('a lone surrogate or NUL in any request field is a 400 naming it; nothing is queued', async () => {
      const p = project();
      const server = await serve(p, { backend });
      const send = (body: string) => raw(server, 'POST', '/api/v1/runs', { 'content-type': 'application/json' }, body);
      const cases: [string, string][] = [
        ['{"type":"generate","project":"shop","stack":"dev","include":["web:\\ud800"]}', 'body.include.0'],
        [
          '{"type":"generate","project":"shop","stack":"dev","overrides":{"region":"eu\\udc00"}}',
          'body.overrides.region',
        ],
        ['{"type":"generate","project":"shop","stack":"dev","exclude":["a\\u0000b"]}', 'body.exclude.0'],
        ['{"type":"generate","project":"shop","stack":"dev\\ud83d"}', 'body.stack'],
      ];
      for (const [body, field] of cases) {
        const r = await send(body);
        expect(r.status, body).toBe(400);
        expect(r.json?.errors, body).toEqual([expect.objectContaining({ field })]);
      }
      const query = await api(server.url).get(`/api/v1/runs?createdBy=${encodeURIComponent('x')}%00`);
      expect(query.status).toBe(400);
      expect(await runCount(server)).toBe(0);
      // A well-formed pair (an emoji) is fine where the field allows it.
      const ok = await send('{"type":"generate","project":"shop","stack":"dev","include":["web:\\ud83d\\ude00"]}');
      expect(ok.status).toBe(202);
    });

    it('a step named with a lone surrogate keeps its whole log (U+FFFD in its name)', async () => {
      const p = fixtureProject({
        stacks: { dev: { provider: 'local', manifests: [{ uri: 'manifests/shop.yaml' }] } },
        files: {
          'manifests/shop.yaml':
            'kapps:\n  - id: db\n    run_units:\n      main:\n        apply_install:\n' +
            '          - name: "step\\ud800x"\n            command: kapps-fake\n' +
            '            args: "--tag db --lines 300 stdout"\n',
        },
      });
      const server = await serve(p, { backend });
      const c = api(server.url);
      const run = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
      expect((await waitForRun(c, run.body.id!)).status).toBe('succeeded');
      const lines: { text: string; step?: string }[] = [];
      let offset = 0;
      for (;;) {
        const chunk = await c.get(`/api/v1/runs/${run.body.id}/logs?offset=${offset}`);
        expect(chunk.status).toBe(200);
        lines.push(...(chunk.body.lines ?? []));
        if (chunk.body.complete) break;
        offset = chunk.body.nextOffset!;
      }
      const printed = lines.filter((l) => l.step !== undefined);
      expect(printed.map((l) => l.text)).toEqual(Array.from({ length: 300 }, (_, i) => `line ${i + 1}`));
      expect(printed.every((l) => l.step === 'step\uFFFDx')).toBe(true);
      expect(lines.some((l) => l.text.includes('Apply of shop/dev succeeded') || l.text.includes('succeeded'))).toBe(
        true,
      );
    });

    it('empty JSON bodies are accepted on actions; a reused Idempotency-Key with another body is a 409', async () => {
      const p = project();
      const server = await serve(p, { backend, args: ['--max-runs', '1'] });
      const c = api(server.url);
      const go = p.path('go');
      p.write('manifests/shop.yaml', {
        kapps: [kapp('db', { apply_install: [fake('migrate', 'db', ['--wait-file', go])], apply_delete: [] })],
      });
      const blocker = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
      const queued = await c.post('/api/v1/runs', { type: 'generate', project: 'shop', stack: 'dev' });
      const cancel = await raw(server, 'POST', `/api/v1/runs/${queued.body.id}/cancel`, {
        'content-type': 'application/json',
        'content-length': '0',
      });
      expect(cancel.status).toBe(200);
      expect(cancel.json?.status).toBe('cancelled');
      const key = { 'idempotency-key': 'deploy-42' };
      const body = { type: 'generate', project: 'shop', stack: 'dev', include: ['shop:db'] };
      const once = await c.post('/api/v1/runs', body, key);
      expect(once.status).toBe(202);
      const again = await c.post('/api/v1/runs', body, key);
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(once.body.id);
      for (const other of [
        { ...body, include: ['shop:*'] },
        { ...body, type: 'preview' },
        { ...body, stack: 'prod' },
        { ...body, overrides: { region: 'eu-west-1' } },
      ]) {
        const r = await c.post('/api/v1/runs', other, key);
        expect(r.status, JSON.stringify(other)).toBe(409);
        expect(r.body.detail).toContain(once.body.id);
      }
      expect(await runCount(server)).toBe(3);
      writeFileSync(go, 'x');
      await waitForRun(c, blocker.body.id!);
    });
  },
);

/** An apply on a fresh PostgreSQL backend, running (its release begun) with its one step waiting for the file `go`. */
async function applyWaitingOnGate(serveArgs: readonly string[]) {
  const p = project();
  const go = p.path('go');
  p.write('manifests/shop.yaml', {
    kapps: [kapp('db', { apply_install: [fake('migrate', 'db', ['--wait-file', go])], apply_delete: [] })],
  });
  const backend = await databases.create();
  const server = await startServer({
    args: ['--project', `shop=${p.stackFile}`, '--backend', backend, ...serveArgs],
    env: p.env,
    cwd: p.dir,
  });
  const c = api(server.url);
  const run = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
  await waitForRun(c, run.body.id!, (r) => r.status === 'running' && r.releaseRevision !== null);
  return { p, go, backend, c, run };
}

describe('kapps serve (postgres backend): a NOTIFY is only a wake-up', () => {
  it('a forged cancel NOTIFY from a role without table rights cancels nothing', async () => {
    const { go, backend, c, run } = await applyWaitingOnGate([]);
    const admin = new pg.Client({ connectionString: backend });
    await admin.connect();
    await admin.query('DROP ROLE IF EXISTS kapps_forger');
    await admin.query('CREATE ROLE kapps_forger LOGIN');
    await admin.end();
    const forgerUrl = new URL(backend);
    forgerUrl.username = 'kapps_forger';
    const forger = new pg.Client({ connectionString: forgerUrl.toString() });
    await forger.connect();
    // The role can read nothing…
    await expect(forger.query('SELECT id FROM kapps_runs')).rejects.toThrow(/permission denied/);
    // …but anyone may NOTIFY.
    await forger.query(`SELECT pg_notify('kapps_runs', $1)`, [JSON.stringify({ type: 'cancel', runId: run.body.id })]);
    await forger.query(`NOTIFY kapps_runs, '${JSON.stringify({ type: 'finished', runId: run.body.id })}'`);
    await forger.end();
    // Give the server time to hear them (a forged cancel used to stop the run at once), then let the step end.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await c.get(`/api/v1/runs/${run.body.id}`)).body.status).toBe('running');
    writeFileSync(go, 'x');
    const ended = await waitForRun(c, run.body.id!);
    expect(ended.status).toBe('succeeded');
    expect(ended.error).toBeNull();
  });
});

describe('kapps serve (postgres backend): cancels are read from the table', () => {
  it('a cancel recorded in the table without its notification still stops the run (at the next lease renewal)', async () => {
    const { p, backend, c, run } = await applyWaitingOnGate(['--lease', '1']);
    // As if the notification had been lost: the flag only, no NOTIFY.
    const admin = new pg.Client({ connectionString: backend });
    await admin.connect();
    await admin.query('UPDATE kapps_runs SET cancel_requested = true WHERE id = $1', [run.body.id]);
    await admin.end();
    const ended = await waitForRun(c, run.body.id!);
    expect(ended.status).toBe('cancelled');
    expect(p.traceLines().filter((t) => t.tag === 'db' && t.event === 'end')).toEqual([]);
  });
});

const sha = (token: string): string => createHash('sha256').update(token).digest('hex');

describe.each(BACKENDS)('kapps serve (%s backend): tokens limited to projects', (backend) => {
  it('a token with projects: [shop, "team-*"] reaches only those: others are 403/404 and never listed', async () => {
    const p = project();
    const config = join(p.dir, 'kapps-server.yaml');
    writeFileSync(
      config,
      `projects:\n` +
        ['shop', 'team-a', 'team-b', 'other', 'teamx']
          .map((name) => `  - name: ${name}\n    stack_file: stacks.yaml\n`)
          .join('') +
        `tokens:\n` +
        `  - name: root\n    role: admin\n    sha256: ${sha('root-secret')}\n` +
        `  - name: team\n    role: admin\n    sha256: ${sha('team-secret')}\n    projects: [shop, "team-*"]\n`,
    );
    const store = backend === 'postgres' ? await databases.create() : p.kappsHome;
    const server = await startServer({ args: ['--config', config, '--backend', store], env: p.env, cwd: p.dir });
    const root = api(server.url, 'root-secret');
    const team = api(server.url, 'team-secret');
    const otherRun = await root.post('/api/v1/runs', { type: 'generate', project: 'other', stack: 'dev' });
    expect(otherRun.status).toBe(202);
    await waitForRun(root, otherRun.body.id!);
    const teamRun = await team.post('/api/v1/runs', { type: 'generate', project: 'team-a', stack: 'dev' });
    expect(teamRun.status).toBe(202);
    await waitForRun(team, teamRun.body.id!);
    expect((await team.get('/api/v1/whoami')).body).toEqual({
      name: 'team',
      role: 'admin',
      projects: ['shop', 'team-*'],
    });
    expect(((await team.get('/api/v1/projects')).body.projects as { name: string }[]).map((x) => x.name)).toEqual([
      'shop',
      'team-a',
      'team-b',
    ]);
    // Submitting, reading a stack, its releases, unlocking: 403 for a project outside the token, existing or not.
    for (const project of ['other', 'teamx', 'nonexistent']) {
      const submitted = await team.post('/api/v1/runs', { type: 'generate', project, stack: 'dev' });
      expect(submitted.status, project).toBe(403);
      expect((await team.get(`/api/v1/projects/${project}/stacks/dev`)).status).toBe(403);
      expect((await team.get(`/api/v1/projects/${project}/stacks/dev/releases`)).status).toBe(403);
      expect((await team.post(`/api/v1/projects/${project}/stacks/dev/unlock`)).status).toBe(403);
      expect((await team.get(`/api/v1/runs?project=${project}`)).status).toBe(403);
    }
    // The other project's run is not listed, and not found by id.
    const listed = (await team.get('/api/v1/runs')).body.runs!.map((r: Run) => r.id);
    expect(listed).toEqual([teamRun.body.id]);
    for (const path of ['', '/logs', '/result', '/events', '/cancel']) {
      const r =
        path === '/cancel'
          ? await team.post(`/api/v1/runs/${otherRun.body.id}${path}`)
          : await team.get(`/api/v1/runs/${otherRun.body.id}${path}`);
      expect(r.status, path).toBe(404);
      expect(JSON.stringify(r.body)).not.toContain('other');
    }
    // The unlimited token sees both.
    expect((await root.get('/api/v1/runs')).body.runs).toHaveLength(2);
  });
});

describe('kapps serve: the request only validates and queues an apply of a preview', () => {
  it('an apply of a stale preview is queued (202) and fails in its turn with the reason; nothing is applied', async () => {
    const p = project(['--stdout', 'v1']);
    const server = await serve(p);
    const c = api(server.url);
    const preview = await c.post('/api/v1/runs', { type: 'preview', project: 'shop', stack: 'dev' });
    expect((await waitForRun(c, preview.body.id!)).status).toBe('succeeded');
    p.write('manifests/shop.yaml', {
      kapps: [kapp('db', { apply_install: [fake('migrate', 'db', ['--stdout', 'v2'])], apply_delete: [] })],
    });
    const apply = await c.post('/api/v1/runs', {
      type: 'apply',
      project: 'shop',
      stack: 'dev',
      previewRunId: preview.body.id,
    });
    expect(apply.status).toBe(202);
    const ended = await waitForRun(c, apply.body.id!);
    expect(ended.status).toBe('failed');
    expect(ended.error).toContain(`stale preview: the spec of shop/dev changed since preview run ${preview.body.id}`);
    expect(p.traceLines().filter((t) => t.tag === 'db')).toEqual([]);
  });

  it('the request does not open the stack: a broken stack file still queues, the run says why', async () => {
    const p = project(['--stdout', 'v1']);
    const server = await serve(p);
    const c = api(server.url);
    const preview = await c.post('/api/v1/runs', { type: 'preview', project: 'shop', stack: 'dev' });
    expect((await waitForRun(c, preview.body.id!)).status).toBe('succeeded');
    // The stack file still names stack dev, but its manifest is now unreadable YAML.
    p.write('manifests/shop.yaml', 'kapps: [\n');
    const apply = await c.post('/api/v1/runs', {
      type: 'apply',
      project: 'shop',
      stack: 'dev',
      previewRunId: preview.body.id,
    });
    expect(apply.status).toBe(202);
    const ended = await waitForRun(c, apply.body.id!);
    expect(ended.status).toBe('failed');
    expect(ended.error).toMatch(/shop\.yaml/);
    expect(p.traceLines().filter((t) => t.tag === 'db')).toEqual([]);
    // Cheap facts are still checked in the request: a preview that is not one, of another stack, not succeeded.
    expect(
      (await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'prod', previewRunId: preview.body.id }))
        .status,
    ).toBe(400);
    expect(
      (await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev', previewRunId: apply.body.id }))
        .status,
    ).toBe(400);
    expect(
      (await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev', previewRunId: 'nope' })).status,
    ).toBe(400);
  });
});

/** A server with these `limits:` (and `tokens:` when given), on a fresh backend of the kind. */
async function serveWithLimits(
  p: FixtureProject,
  backend: Backend,
  limits: Record<string, number>,
  tokens = '',
): Promise<TestServer> {
  const config = join(p.dir, 'kapps-server.yaml');
  writeFileSync(
    config,
    `projects:\n  - name: shop\n    stack_file: stacks.yaml\n${tokens}limits:\n` +
      Object.entries(limits)
        .map(([k, v]) => `  ${k}: ${v}\n`)
        .join(''),
  );
  const store = backend === 'postgres' ? await databases.create() : p.kappsHome;
  return startServer({ args: ['--config', config, '--backend', store], env: p.env, cwd: p.dir });
}

describe.each(BACKENDS)('kapps serve (%s backend): what a caller can make it hold is bounded', (backend) => {
  it('selectors per run and their length; one list answer in bytes (cut, with a cursor to go on)', async () => {
    const p = project();
    const server = await serveWithLimits(p, backend, {
      max_selectors: 100,
      max_selector_length: 200,
      max_list_bytes: 65_536,
    });
    const c = api(server.url);
    const many = await c.post('/api/v1/runs', {
      type: 'generate',
      project: 'shop',
      stack: 'dev',
      include: Array.from({ length: 60 }, (_, i) => `shop:a${i}`),
      exclude: Array.from({ length: 41 }, (_, i) => `shop:b${i}`),
    });
    expect(many.status).toBe(400);
    expect(many.body.detail).toContain('101 selectors; a run takes at most 100 (limits.max_selectors)');
    const long = await c.post('/api/v1/runs', {
      type: 'generate',
      project: 'shop',
      stack: 'dev',
      exclude: [`shop:${'x'.repeat(196)}`],
    });
    expect(long.status).toBe(400);
    expect(long.body.errors).toEqual([expect.objectContaining({ field: 'body.exclude.0' })]);
    expect(await runCount(server)).toBe(0);
    // Five runs of 100 × 200 characters of selectors each: more than 64 KiB in one answer, so the page is cut.
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await c.post('/api/v1/runs', {
        type: 'generate',
        project: 'shop',
        stack: 'dev',
        exclude: Array.from({ length: 100 }, (_, j) => `shop:${String(i * 1000 + j).padStart(195, 'z')}`),
      });
      expect(r.status).toBe(202);
      ids.push(r.body.id!);
    }
    const seen: string[] = [];
    let cursor: string | null | undefined;
    let pages = 0;
    do {
      const page = await raw(server, 'GET', `/api/v1/runs?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(Buffer.byteLength(page.text)).toBeLessThanOrEqual(65_536);
      const body = page.json as { runs: { id: string }[]; nextCursor: string | null };
      seen.push(...body.runs.map((r) => r.id));
      cursor = body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBeGreaterThan(1);
    expect(seen).toEqual([...ids].reverse());
  });

  it('history retention: only the newest keep_runs_per_stack finished runs stay, releases are all kept', async () => {
    const p = project(['--stdout', 'applied']);
    const server = await serveWithLimits(p, backend, { keep_runs_per_stack: 2 });
    const c = api(server.url);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
      expect((await waitForRun(c, r.body.id!)).status).toBe('succeeded');
      ids.push(r.body.id!);
    }
    // The retention runs after each run ends: wait until it has deleted the oldest.
    for (let i = 0; (await c.get(`/api/v1/runs/${ids[0]}`)).status !== 404; i++) {
      if (i > 200) throw new Error('the oldest run was never deleted');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await c.get('/api/v1/runs')).body.runs!.map((r: Run) => r.id)).toEqual([ids[2], ids[1]]);
    expect((await c.get(`/api/v1/runs/${ids[0]}/logs`)).status).toBe(404);
    const releases = await c.get<{ revision: number }[]>('/api/v1/projects/shop/stacks/dev/releases');
    expect(releases.body.map((r) => r.revision).sort()).toEqual([1, 2, 3]);
    // The server says so once the deletion is done: the run may be gone a moment before the line is written.
    await waitFor('the retention message', () =>
      server.stderr().includes('deleted 1 finished run(s) beyond the history retention'),
    );
  });
});

describe('kapps serve: requests per token', () => {
  it('beyond requests_per_minute a token gets 429 with Retry-After; other tokens are not affected', async () => {
    const p = project();
    const tokens =
      `tokens:\n  - name: noisy\n    role: read\n    sha256: ${sha('noisy-secret')}\n` +
      `  - name: calm\n    role: read\n    sha256: ${sha('calm-secret')}\n`;
    const server = await serveWithLimits(p, 'file', { requests_per_minute: 5 }, tokens);
    const noisy = api(server.url, 'noisy-secret');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await noisy.get('/api/v1/runs')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const refused = await noisy.get('/api/v1/whoami');
    expect(refused.status).toBe(429);
    expect(refused.body.type).toBe('https://kapps.dev/problems/rate-limited');
    expect(refused.body.detail).toContain('more than 5 requests in a minute (limits.requests_per_minute)');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await api(server.url, 'calm-secret').get('/api/v1/whoami')).status).toBe(200);
    // Health checks need no token and are not counted.
    expect((await api(server.url).get('/healthz')).status).toBe(200);
  });
});
