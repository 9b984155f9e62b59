/**
 * The runs server when its PostgreSQL backend fails: real `kapps serve` processes on a throwaway PostgreSQL of this
 * file alone, which the tests stop, start and restart with `pg_ctl` (the shared test server is never stopped).
 *
 * - an outage longer than the lease while a run is inside a long step: the owner stops the step before its lease can
 *   expire and says why; never two runs of the stack at once (from the steps' own trace); the queued run then runs;
 * - a sub-second restart under heavy logging: the run succeeds and every line its step printed is in its run log and
 *   in its release log;
 * - an outage answers 503 `unavailable` with `Retry-After`, said once in the server's log, and `/readyz` is not
 *   ready meanwhile; a submission that fails creates nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import {
  cleanupProjects,
  fake,
  fixtureProject,
  kapp,
  type FixtureProject,
  type TraceLine,
} from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun, type TestServer } from '../support/server.js';
import { waitFor } from '../support/wait.js';

let postgres: TestPostgres;
let databases = 0;
const gates: string[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
}, 120_000);

afterEach(async () => {
  // The server may have been left stopped by a failed test.
  await postgres.ctl('start').catch(() => undefined);
  await stopAllServers();
});

afterAll(async () => {
  cleanupProjects();
  for (const gate of gates) rmSync(gate, { recursive: true, force: true });
  await postgres?.stop();
});

/** A new database on this file's PostgreSQL; its URL. */
async function freshDatabase(): Promise<string> {
  const name = `kapps_faults_${process.pid}_${++databases}`;
  const admin = new pg.Client({ connectionString: postgres.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(postgres.url);
  url.pathname = `/${name}`;
  return url.toString();
}

/** One stack `dev` whose one kapp runs one step with `stepArgs`. */
function project(stepArgs: readonly string[]): FixtureProject {
  return fixtureProject({
    manifests: { web: { kapps: [kapp('work', { apply_install: [fake('step', 'dev', stepArgs)] })] } },
    stacks: { dev: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/web.yaml' }] } },
  });
}

function serve(p: FixtureProject, backend: string, leaseSeconds: number): Promise<TestServer> {
  return startServer({
    args: ['--backend', backend, '--project', `shop=${p.stackFile}`, '--lease', String(leaseSeconds)],
    env: p.env,
    cwd: p.dir,
  });
}

async function submit(server: TestServer): Promise<string> {
  const res = await api(server.url).post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return (res.body as { id: string }).id;
}

/** The [start, end] of each step process, in start order; fails on a start without an end. */
function executions(trace: readonly TraceLine[]): [bigint, bigint][] {
  const starts = trace.filter((l) => l.event === 'start');
  return starts.map((start) => {
    const end = trace.find((l) => l.event === 'end' && l.pid === start.pid);
    expect(end, `step pid ${start.pid} never ended`).toBeDefined();
    return [start.ns, end!.ns];
  });
}

/** Every line of a run's log, page by page. */
async function runLog(server: TestServer, id: string): Promise<{ stream: string; text: string }[]> {
  const lines: { stream: string; text: string }[] = [];
  for (let offset = 0; ;) {
    const res = await api(server.url).get(`/api/v1/runs/${id}/logs?offset=${offset}`);
    expect(res.status).toBe(200);
    const body = res.body as { lines: { stream: string; text: string }[]; nextOffset: number; complete: boolean };
    lines.push(...body.lines);
    if (body.complete || body.nextOffset === offset) return lines;
    offset = body.nextOffset;
  }
}

describe('kapps serve when PostgreSQL fails', () => {
  it('an outage longer than the lease: the owner stops its step in time, never two runs at once, the next runs', async () => {
    const backend = await freshDatabase();
    const gate = mkdtempSync(join(tmpdir(), 'kapps-faults-'));
    gates.push(gate);
    const p = project(['--trace-term', '--wait-file', join(gate, 'go'), '120000']);
    const servers = [await serve(p, backend, 2), await serve(p, backend, 2)];
    const first = await submit(servers[0]!);
    await waitFor('the first run to be inside its step', () => p.traceLines().some((l) => l.event === 'start'));
    const second = await submit(servers[1]!);

    // Longer than the lease (2 s) plus the reaping margin: the owner cannot renew.
    await postgres.ctl('stop');
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    // The fakes' trace holds the wall clock in nanoseconds.
    const back = BigInt(Date.now()) * 1_000_000n;
    await postgres.ctl('start');

    await waitFor(
      'the second run to be inside its step',
      () => p.traceLines().filter((l) => l.event === 'start').length >= 2,
      90_000,
    );
    writeFileSync(join(gate, 'go'), 'go');
    const client = api(servers[0]!.url);
    const [a, b] = [await waitForRun(client, first, undefined, 60_000), await waitForRun(client, second)];

    const [one, two] = executions(p.traceLines());
    expect(one, 'the first step').toBeDefined();
    expect(two, 'the second step').toBeDefined();
    // The first run's step was stopped during the outage, before its lease could expire: not when the database
    // came back, and before the second run's step began.
    expect(one![1] < back).toBe(true);
    expect(one![1] < two![0]).toBe(true);
    expect(a.status).toMatch(/^(errored|failed)$/);
    expect(b.status, b.error ?? '').toBe('succeeded');
    const said = servers.map((s) => s.stderr()).join('');
    expect(said).toMatch(
      new RegExp(
        `run ${first} \\(apply of shop/dev\\): its lease could not be renewed for [0-9.]+ s \\(.+\\): stopped`,
      ),
    );
    // The first run's release was closed (by its owner once the database was back, or as failed by the reaper),
    // the second's succeeded.
    const releases = await api(servers[0]!.url).get<{ revision: number; phase: string }[]>(
      '/api/v1/projects/shop/stacks/dev/releases',
    );
    expect(releases.body.map((r) => r.revision)).toEqual([2, 1]);
    expect(releases.body[0]?.phase).toBe('succeeded');
    expect(releases.body[1]?.phase).toMatch(/^(failed|cancelled)$/);
  }, 180_000);

  it('a sub-second restart under heavy logging: every line of the succeeded run is in its run and release logs', async () => {
    const backend = await freshDatabase();
    const burst = ['--lines', '1000', 'stdout', '--sleep', '150'];
    const p = project(Array.from({ length: 20 }, () => burst).flat());
    const server = await serve(p, backend, 30);
    const id = await submit(server);
    await waitFor('the step to print', () => p.traceLines().some((l) => l.event === 'start'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await postgres.ctl('restart');
    const run = await waitForRun(api(server.url), id, undefined, 120_000);
    expect(run.status, run.error ?? '').toBe('succeeded');

    const expected = Array.from({ length: 20 }, () => Array.from({ length: 1000 }, (_, n) => `line ${n + 1}`)).flat();
    const printed = (await runLog(server, id)).filter((l) => l.stream === 'stdout').map((l) => l.text);
    expect(printed.length).toBe(expected.length);
    expect(printed).toEqual(expected);

    const logs = await runCli(['release', 'logs', p.stackFile, 'dev', '--backend', backend, '--revision', '1'], {
      env: p.env,
      cwd: p.dir,
    });
    expect(logs.code, logs.stderr).toBe(0);
    const kept = logs.stdout
      .split('\n')
      .filter((l) => /^\[web:work apply_install\/step\] line [0-9]+$/.test(l))
      .map((l) => l.replace(/^\[[^\]]*\] /, ''));
    expect(kept.length).toBe(expected.length);
    expect(kept).toEqual(expected);
  }, 180_000);
  it('an outage answers 503 unavailable with Retry-After, said once; /readyz is not ready; nothing is created', async () => {
    const backend = await freshDatabase();
    const p = project(['--stdout', 'hello']);
    const server = await serve(p, backend, 30);
    const client = api(server.url);
    expect((await client.get('/readyz')).status).toBe(200);

    await postgres.ctl('stop');
    const answers = [];
    for (let n = 0; n < 5; n++) {
      answers.push(await client.get('/api/v1/runs'));
      answers.push(await client.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' }));
      answers.push(await client.get('/api/v1/runs/nosuchrun'));
    }
    for (const res of answers) {
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.body).toMatchObject({ type: 'https://kapps.dev/problems/unavailable', status: 503 });
    }
    const ready = await client.get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ type: 'https://kapps.dev/problems/unavailable' });
    const said = server.stderr();
    expect(said.match(/the backend is unavailable/g)).toHaveLength(1);
    expect(said).not.toMatch(/internal error|\n\s+at /);

    await postgres.ctl('start');
    await waitFor('the server to be ready again', async () => (await client.get('/readyz')).status === 200);
    const listed = await client.get('/api/v1/runs');
    expect(listed.status).toBe(200);
    expect(listed.body.runs).toEqual([]);
  }, 120_000);
});
