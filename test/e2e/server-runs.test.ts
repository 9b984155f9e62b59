/**
 * Runs through a real `kapps serve`: the four run types end to end, their results (the same documents as the CLI
 * prints), logs by offset and by SSE with resume, history filters and paging, the stack summary and releases.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Run } from '../../src/api/index.js';
import { cleanupProjects, fake, fixtureProject, kapp } from '../support/project.js';
import { api, readEvents, startServer, stopAllServers, waitForRun } from '../support/server.js';

afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});

function shop(steps: { db?: string[]; web?: string[] } = {}) {
  return fixtureProject({
    manifests: {
      shop: {
        kapps: [
          kapp('db', {
            apply_install: [fake('migrate', 'db', steps.db ?? ['--stdout', 'db ready', '--stderr', 'db warns'])],
            apply_delete: [fake('drop', 'db-down', ['--stdout', 'db gone'])],
          }),
          kapp(
            'web',
            {
              apply_install: [fake('deploy', 'web', steps.web ?? ['--stdout', 'web up'])],
              apply_delete: [fake('undeploy', 'web-down')],
            },
            { depends_on: [{ id: 'db' }] },
          ),
        ],
      },
    },
  });
}

async function serve(p: ReturnType<typeof shop>, args: string[] = []) {
  return startServer({
    args: ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome, ...args],
    env: p.env,
    cwd: p.dir,
  });
}

describe('kapps serve: runs', () => {
  it('runs generate and preview; their results are the documents the CLI prints', async () => {
    const p = shop();
    const server = await serve(p);
    const c = api(server.url);
    const gen = await c.post('/api/v1/runs', { type: 'generate', project: 'shop', stack: 'dev' });
    expect(gen.status).toBe(202);
    expect(gen.headers.get('location')).toBe(`/api/v1/runs/${gen.body.id}`);
    expect(gen.body).toMatchObject({ type: 'generate', project: 'shop', stack: 'dev', createdBy: 'anonymous' });
    const done = await waitForRun(c, gen.body.id!);
    expect(done.status).toBe('succeeded');
    expect(done.startedAt).not.toBeNull();
    expect(done.finishedAt).not.toBeNull();
    const result = await c.get<string>(`/api/v1/runs/${gen.body.id}/result`);
    expect(result.status).toBe(200);
    expect(result.headers.get('content-type')).toContain('application/yaml');
    // The server's workspace of (shop, dev) is under its data directory.
    const workspace = `${p.kappsHome}/server/workspaces/shop/dev`;
    const cli = await p.run('generate', [workspace]);
    expect(cli.code).toBe(0);
    expect(parse(result.body)).toEqual(parse(cli.stdout));

    const preview = await c.post('/api/v1/runs', { type: 'preview', project: 'shop', stack: 'dev' });
    expect((await waitForRun(c, preview.body.id!)).status).toBe('succeeded');
    const doc = await c.get(`/api/v1/runs/${preview.body.id}/result`);
    expect(doc.headers.get('content-type')).toContain('application/json');
    const cliPreview = await p.run('preview', [workspace, '-o', 'json']);
    expect(doc.body).toEqual(JSON.parse(cliPreview.stdout));
    expect(doc.body).toMatchObject({ basedOnRevision: null, hasChanges: true });
  });

  it('applies and destroys: releases in the shared history, logs tagged by kapp and step, results', async () => {
    const p = shop();
    const server = await serve(p);
    const c = api(server.url);
    const apply = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    expect(apply.status).toBe(202);
    const run = await waitForRun(c, apply.body.id!);
    expect(run).toMatchObject({ status: 'succeeded', releaseRevision: 1, error: null });
    expect(
      p
        .traceLines()
        .filter((t) => t.event === 'start')
        .map((t) => t.tag),
    ).toEqual(['db', 'web']);
    const result = await c.get(`/api/v1/runs/${run.id}/result`);
    expect(result.body).toEqual({
      message: 'Apply of shop/dev succeeded: 2 succeeded, 0 failed, 0 skipped, 0 cancelled; release 1',
      releaseRevision: 1,
      kapps: { succeeded: 2, failed: 0, skipped: 0, cancelled: 0 },
    });
    // The log: the step's own lines tagged with kapp, phase and step; the plain reporter's lines.
    const log = await c.get(`/api/v1/runs/${run.id}/logs`);
    expect(log.body.complete).toBe(true);
    const lines = log.body.lines ?? [];
    expect(lines.filter((l) => l.stream !== 'kapps').map((l) => [l.stream, l.kapp, l.phase, l.step, l.text])).toEqual(
      expect.arrayContaining([
        ['stdout', 'shop:db', 'apply_install', 'migrate', 'db ready'],
        ['stderr', 'shop:db', 'apply_install', 'migrate', 'db warns'],
        ['stdout', 'shop:web', 'apply_install', 'deploy', 'web up'],
      ]),
    );
    expect(lines.some((l) => l.stream === 'kapps' && /succeeded/.test(l.text))).toBe(true);
    // Read in two pieces by offset: the same lines.
    const half = Math.floor((log.body.nextOffset ?? 0) / 2);
    const first = await c.get(`/api/v1/runs/${run.id}/logs?offset=0`);
    expect(first.body.offset).toBe(0);
    const tail = await c.get(`/api/v1/runs/${run.id}/logs?offset=${log.body.nextOffset}`);
    expect(tail.body).toMatchObject({ lines: [], complete: true, nextOffset: log.body.nextOffset });
    expect(half).toBeGreaterThan(0);

    // The release is in the history the CLI reads, and in the API.
    const cliList = await p.run('release', ['list', p.stackFile, 'dev', '-o', 'json'], { bare: true });
    expect(cliList.stderr).toBe('');
    expect(JSON.parse(cliList.stdout)).toMatchObject([{ revision: 1, operation: 'install', phase: 'succeeded' }]);
    const releases = await c.get<unknown[]>('/api/v1/projects/shop/stacks/dev/releases');
    expect(releases.body).toEqual(JSON.parse(cliList.stdout));
    const one = await c.get('/api/v1/projects/shop/stacks/dev/releases/1');
    expect(one.body).toMatchObject({ revision: 1, phase: 'succeeded', operation: 'install' });
    const summary = await c.get('/api/v1/projects/shop/stacks/dev');
    expect(summary.body).toMatchObject({
      project: 'shop',
      stack: 'dev',
      latestRelease: { revision: 1, phase: 'succeeded', operation: 'install' },
      lock: null,
      running: [],
      queued: [],
    });

    const destroy = await c.post('/api/v1/runs', { type: 'destroy', project: 'shop', stack: 'dev' });
    expect(await waitForRun(c, destroy.body.id!)).toMatchObject({ status: 'succeeded', releaseRevision: 2 });
    expect(
      p
        .traceLines()
        .filter((t) => t.event === 'start')
        .map((t) => t.tag),
    ).toEqual(['db', 'web', 'web-down', 'db-down']);
    const again = await p.run('release', ['list', p.stackFile, 'dev', '-o', 'json'], { bare: true });
    expect(JSON.parse(again.stdout)).toMatchObject([
      { revision: 2, operation: 'delete', phase: 'succeeded' },
      { revision: 1, operation: 'install' },
    ]);
  });

  it('ends a failing apply failed, with the reason, and a bad stack file as a failed run with its diagnostics', async () => {
    const p = shop({ db: ['--stderr', 'no database', '--exit', '3'] });
    const server = await serve(p);
    const c = api(server.url);
    const apply = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    const run = await waitForRun(c, apply.body.id!);
    expect(run).toMatchObject({ status: 'failed', releaseRevision: 1 });
    expect(run.error).toMatch(/^1 kapp\(s\) failed; shop:db: /);
    const result = await c.get(`/api/v1/runs/${run.id}/result`);
    expect(result.body.kapps).toEqual({ succeeded: 0, failed: 1, skipped: 1, cancelled: 0 });
    const log = await c.get(`/api/v1/runs/${run.id}/logs`);
    expect(log.body.lines?.map((l) => l.text)).toContain('no database');

    p.write('manifests/shop.yaml', 'kapps:\n  - id: db\n    run_units: 7\n');
    const gen = await c.post('/api/v1/runs', { type: 'generate', project: 'shop', stack: 'dev' });
    const broken = await waitForRun(c, gen.body.id!);
    expect(broken.status).toBe('failed');
    expect(broken.error).toContain('shop.yaml');
    const text = (await c.get(`/api/v1/runs/${broken.id}/logs`)).body.lines?.map((l) => l.text).join('\n') ?? '';
    expect(text).toMatch(/shop\.yaml:3:/);
    expect(text).not.toMatch(/\n\s+at /);
    expect((await c.get(`/api/v1/runs/${broken.id}/result`)).status).toBe(404);
  });

  it('streams events and log lines by SSE, resumes after Last-Event-ID, ends with the final status', async () => {
    const p = shop({ db: ['--stdout', 'one', '--sleep', '300', '--stdout', 'two'] });
    const server = await serve(p, ['--max-runs', '1']);
    const c = api(server.url);
    const apply = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    const id = apply.body.id!;
    const all = await readEvents(`${server.url}/api/v1/runs/${id}/events`);
    expect(all.status).toBe(200);
    expect(all.contentType).toContain('text/event-stream');
    expect(all.ended).toBe(true);
    const ids = all.events.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    const last = all.events.at(-1);
    expect(last?.event).toBe('status');
    expect((last?.data as Run).status).toBe('succeeded');
    const statuses = all.events.filter((e) => e.event === 'status').map((e) => (e.data as Run).status);
    expect(statuses[0]).toBe('queued');
    expect(statuses.slice(-2)).toEqual(['running', 'succeeded']);
    const kinds = new Set(all.events.map((e) => e.event));
    expect([...kinds].sort()).toEqual(['log', 'run-event', 'status']);
    const runEvents = all.events.filter((e) => e.event === 'run-event').map((e) => (e.data as { type: string }).type);
    expect(runEvents).toContain('kapp-finished');
    expect(runEvents.at(-1)).toBe('run-finished');
    const logTexts = all.events.filter((e) => e.event === 'log').map((e) => (e.data as { text: string }).text);
    expect(logTexts.indexOf('one')).toBeLessThan(logTexts.indexOf('two'));

    // Resume after the 3rd event: exactly the rest, by header and by query.
    const from = all.events[2]!.id!;
    const rest = await readEvents(`${server.url}/api/v1/runs/${id}/events`, { headers: { 'last-event-id': from } });
    expect(rest.events.map((e) => e.id)).toEqual(all.events.slice(3).map((e) => e.id));
    const byQuery = await readEvents(`${server.url}/api/v1/runs/${id}/events?after=${from}`);
    expect(byQuery.events.map((e) => e.id)).toEqual(all.events.slice(3).map((e) => e.id));
    // Resumed after the end: the final status once more, then the stream ends.
    const after = await readEvents(`${server.url}/api/v1/runs/${id}/events`, {
      headers: { 'last-event-id': all.events.at(-1)!.id! },
    });
    expect(after.events.map((e) => [e.event, (e.data as Run).status])).toEqual([['status', 'succeeded']]);
    expect(after.ended).toBe(true);
  });

  it('sends keep-alive comments while a run is quiet', async () => {
    const p = shop({ db: ['--sleep', '1200'] });
    const server = await startServer({
      args: ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome],
      env: { ...p.env, KAPPS_SERVE_KEEPALIVE_MS: '200' },
      cwd: p.dir,
    });
    const c = api(server.url);
    const apply = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    const stream = await readEvents(`${server.url}/api/v1/runs/${apply.body.id}/events`);
    expect(stream.comments).toContain('keep-alive');
    expect((stream.events.at(-1)?.data as Run).status).toBe('succeeded');
  });

  it('lists the history newest first, filtered and paged with a cursor', async () => {
    const p = shop();
    p.write('stacks.yaml', {
      dev: { provider: 'local', manifests: [{ uri: 'manifests/shop.yaml' }] },
      prod: { provider: 'local', manifests: [{ uri: 'manifests/shop.yaml' }] },
    });
    const server = await serve(p);
    const c = api(server.url);
    const ids: string[] = [];
    for (const [type, stack] of [
      ['generate', 'dev'],
      ['preview', 'prod'],
      ['generate', 'prod'],
      ['generate', 'dev'],
      ['preview', 'dev'],
    ] as const) {
      const r = await c.post('/api/v1/runs', { type, project: 'shop', stack });
      ids.push(r.body.id!);
    }
    for (const id of ids) await waitForRun(c, id);
    const page1 = await c.get('/api/v1/runs?limit=2');
    expect(page1.body.runs?.map((r) => r.id)).toEqual([ids[4], ids[3]]);
    const page2 = await c.get(`/api/v1/runs?limit=2&cursor=${page1.body.nextCursor}`);
    expect(page2.body.runs?.map((r) => r.id)).toEqual([ids[2], ids[1]]);
    const page3 = await c.get(`/api/v1/runs?limit=2&cursor=${page2.body.nextCursor}`);
    expect(page3.body.runs?.map((r) => r.id)).toEqual([ids[0]]);
    expect(page3.body.nextCursor).toBeNull();
    const prod = await c.get('/api/v1/runs?stack=prod');
    expect(prod.body.runs?.map((r) => r.id)).toEqual([ids[2], ids[1]]);
    const previews = await c.get('/api/v1/runs?type=preview&project=shop');
    expect(previews.body.runs?.map((r) => r.id)).toEqual([ids[4], ids[1]]);
    expect((await c.get('/api/v1/runs?status=failed')).body.runs).toEqual([]);
    expect((await c.get('/api/v1/runs?createdBy=anonymous')).body.runs).toHaveLength(5);
    const future = encodeURIComponent(new Date(Date.now() + 60_000).toISOString());
    expect((await c.get(`/api/v1/runs?since=${future}`)).body.runs).toEqual([]);
    expect((await c.get(`/api/v1/runs?until=${future}`)).body.runs).toHaveLength(5);
  });

  it('returns the same run for a repeated Idempotency-Key, and 409 for the result of an unfinished run', async () => {
    const p = shop({ db: ['--sleep', '800'] });
    const server = await serve(p);
    const c = api(server.url);
    const body = { type: 'apply', project: 'shop', stack: 'dev' };
    const first = await c.post('/api/v1/runs', body, { 'idempotency-key': 'deploy-42' });
    const again = await c.post('/api/v1/runs', body, { 'idempotency-key': 'deploy-42' });
    expect(first.status).toBe(202);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    const early = await c.get(`/api/v1/runs/${first.body.id}/result`);
    expect(early.status).toBe(409);
    expect(early.body.type).toBe('https://kapps.dev/problems/not-finished');
    await waitForRun(c, first.body.id!);
    expect((await c.get('/api/v1/runs')).body.runs).toHaveLength(1);
  });
});
