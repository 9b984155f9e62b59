/**
 * Drift checks through a real `kapps serve`: a `drift:` schedule with a short interval reads the live outputs of an
 * installed kapp (a file its output phase reads) and finds them changed behind kapps' back; a drift that persists is
 * one episode and one `drift.detected` notification; an ignore rule leaves an output out; the stack in sync again
 * closes the episode (`drift.resolved`); `remediate: apply` brings the kapp back; an output that changes on every
 * read is marked noisy; two instances on PostgreSQL run each scheduled check once; the fleet lists every stack.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Fleet, Run, RunList, StackDrift } from '../../src/api/index.js';
import { cleanup, fakeKapp, makeProject, tempDir, fileBackend, type TestProject } from '../fixtures/release/harness.js';
import { runCli } from '../support/cli.js';
import { freshDatabases } from '../support/pg.js';
import { api, startServer, stopAllServers, waitForRun, type ApiClient, type TestServer } from '../support/server.js';
import { waitFor } from '../support/wait.js';

interface Received {
  readonly event: string;
  readonly run: Run;
  readonly drift: { state: string; kapps: string[]; episode: { id: string; closedAt: string | null } };
}

const receivers: Server[] = [];
const databases = freshDatabases('kapps_drift_e2e');
afterEach(async () => {
  await stopAllServers();
  for (const r of receivers.splice(0)) {
    r.closeAllConnections();
    await new Promise<void>((resolve) => r.close(() => resolve()));
  }
});
afterAll(async () => {
  cleanup();
  await databases.dropAll();
});

/** A receiver of notifications on loopback, answering 200; what it received, in order. */
async function receiver(): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Received);
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receivers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/**
 * Project `shop` (stack `dev`) with kapp `web:db`: its install writes `db.txt` (`db-v1`), its output phase reads
 * `db.txt` (output `version`) and `stamp.txt` (output `stamp`) and, with `clock`, the time now (output `at`).
 */
function project(live: string, clock = false): TestProject {
  writeFileSync(join(live, 'stamp.txt'), 's1');
  const step = (name: string, args: string, file: string) => [
    `      - name: ${name}`,
    '        command: kapps-fake',
    `        args: ${args}`,
    `        stdout: db/${file}`,
  ];
  const output = (id: string) => [`  - id: ${id}`, `    path: ${id}.txt`, '    format: text'];
  const descriptor = fakeKapp(
    { apply: `--tag apply-db --write-file ${join(live, 'db.txt')} db-v1` },
    [
      '    output:',
      ...step('read', `--tag output-db --cat ${join(live, 'db.txt')}`, 'version.txt'),
      ...step('stamp', `--tag stamp-db --cat ${join(live, 'stamp.txt')}`, 'stamp.txt'),
      ...(clock
        ? ['      - name: clock', '        command: date', "        args: '+%s%N'", '        stdout: db/at.txt']
        : []),
      'outputs:',
      ...output('version'),
      ...output('stamp'),
      ...(clock ? output('at') : []),
      '',
    ].join('\n'),
  );
  return makeProject('shop', fileBackend(tempDir('kapps-drift-unused-')), [{ id: 'db', descriptor }]);
}

interface Setup {
  readonly p: TestProject;
  readonly live: string;
  readonly server: TestServer;
  readonly c: ApiClient;
  readonly rx: { url: string; received: Received[] };
}

/** A server with project `shop` checked every 5 s (`drift` YAML lines added), notifying a local receiver. */
async function serve(driftLines: string[], o: { clock?: boolean; backend?: string; instances?: number } = {}) {
  const live = tempDir('kapps-drift-live-');
  const p = project(live, o.clock);
  const rx = await receiver();
  const config = join(p.root, 'server.yaml');
  writeFileSync(
    config,
    [
      'projects:',
      '  - name: shop',
      `    stack_file: ${p.stackFile}`,
      '    notify:',
      `      - url: ${rx.url}/hook`,
      '        events: [drift.detected, drift.resolved]',
      '        secret_env: HOOK_SECRET',
      '    drift:',
      '      every: 5s',
      ...driftLines.map((l) => `      ${l}`),
      '',
    ].join('\n'),
  );
  const backend = o.backend ?? tempDir('kapps-drift-backend-');
  const servers = await Promise.all(
    Array.from({ length: o.instances ?? 1 }, () =>
      startServer({
        args: ['--config', config, '--backend', backend],
        env: { ...p.env, HOOK_SECRET: 'hook-secret-4411' },
        cwd: p.dir,
      }),
    ),
  );
  const server = servers[0]!;
  return { p, live, server, servers, c: api(server.url), rx };
}

async function drift(c: ApiClient): Promise<StackDrift> {
  const r = await c.get<StackDrift>('/api/v1/projects/shop/stacks/dev/drift');
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

/** Install through the server; then wait for a scheduled check against that release. */
async function install(s: Pick<Setup, 'c'>, revision = 1): Promise<void> {
  const r = await s.c.post<Run>('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
  expect(r.status).toBe(202);
  expect((await waitForRun(s.c, r.body.id, undefined, 60_000)).status).toBe('succeeded');
  await waitFor(`a check against release ${revision}`, async () => {
    const d = await drift(s.c);
    return d.history.some((h) => h.basedOnRevision === revision);
  });
}

/** Wait until `n` checks were made since `since` checks were listed, and return the stack's drift then. */
async function checksAfter(c: ApiClient, count: number, n: number): Promise<StackDrift> {
  let last: StackDrift | undefined;
  await waitFor(
    `${n} more drift check(s)`,
    async () => {
      last = await drift(c);
      return last.history.length >= count + n;
    },
    90_000,
  );
  return last!;
}

describe('kapps serve: drift checks', () => {
  it('finds an output changed behind its back, once per episode, less what is ignored, and sees it resolved', async () => {
    const s = await serve(['ignore:', '  - kapp: "web:*"', '    outputs: [stamp]']);
    await install(s);
    const calm = await drift(s.c);
    expect(calm.latest).toMatchObject({ state: 'inSync', basedOnRevision: 1, project: 'shop', stack: 'dev' });
    expect(calm.schedule).toMatchObject({ everySeconds: 5, remediate: 'none' });
    expect(calm.schedule?.nextAt).not.toBeNull();
    expect(calm.episode).toBeNull();

    // Behind kapps' back: the version changes (drift) and so does the stamp (ignored).
    writeFileSync(join(s.live, 'db.txt'), 'db-v2');
    writeFileSync(join(s.live, 'stamp.txt'), 's2');
    let d = await checksAfter(s.c, calm.history.length, 1);
    await waitFor(
      'two checks finding the drift',
      async () => {
        d = await drift(s.c);
        return d.history.filter((h) => h.state === 'drifted').length >= 2;
      },
      90_000,
    );
    expect(d.latest?.state).toBe('drifted');
    expect(d.latest?.kapps).toEqual([
      {
        id: 'web:db',
        state: 'drifted',
        changes: [{ path: ['outputs', 'version'], from: 'db-v1', to: 'db-v2' }],
        ignored: [['outputs', 'stamp']],
        noisy: [],
        reason: null,
      },
    ]);
    // One episode across the checks that found it.
    expect(d.episodes).toHaveLength(1);
    expect(d.episode).toMatchObject({ kapps: ['web:db'], closedAt: null, remediations: [] });
    expect(d.episode!.checks).toBeGreaterThanOrEqual(2);
    const drifted = d.history.filter((h) => h.state === 'drifted');
    expect(new Set(drifted.map((h) => h.episodeId))).toEqual(new Set([d.episode!.id]));
    expect(drifted.every((h) => h.drifted.join() === 'web:db')).toBe(true);

    // The run that found it: a scheduled drift run whose result is the report.
    const run = (await s.c.get<Run>(`/api/v1/runs/${d.episode!.openedBy}`)).body;
    expect(run).toMatchObject({ type: 'drift', createdBy: 'schedule', trigger: { kind: 'schedule' } });
    const result = await s.c.get<{ state: string }>(`/api/v1/runs/${d.episode!.openedBy}/result`);
    expect(result.body.state).toBe('drifted');

    // One notification for the episode, however many checks found it.
    await waitFor('the drift.detected notification', () => s.rx.received.length >= 1);
    expect(s.rx.received.map((r) => r.event)).toEqual(['drift.detected']);
    expect(s.rx.received[0]).toMatchObject({
      run: { id: d.episode!.openedBy, type: 'drift' },
      drift: { state: 'drifted', kapps: ['web:db'], episode: { id: d.episode!.id, closedAt: null } },
    });

    // The fleet shows it drifted, since the episode opened.
    const fleet = await s.c.get<Fleet>('/api/v1/fleet');
    expect(fleet.status).toBe(200);
    expect(fleet.body.stacks).toEqual([
      {
        project: 'shop',
        stack: 'dev',
        lastRelease: expect.objectContaining({ revision: 1, operation: 'install', phase: 'succeeded' }) as unknown,
        drift: expect.objectContaining({
          state: 'drifted',
          drifted: 1,
          unknown: 0,
          since: d.episode!.openedAt,
        }) as unknown,
        schedule: expect.objectContaining({ everySeconds: 5 }) as unknown,
      },
    ]);

    // Back as recorded: the episode closes, once.
    writeFileSync(join(s.live, 'db.txt'), 'db-v1');
    await waitFor('the episode closed', async () => (await drift(s.c)).episode === null, 90_000);
    const after = await drift(s.c);
    expect(after.episodes).toHaveLength(1);
    expect(after.episodes[0]?.closedAt).not.toBeNull();
    expect(after.latest).toMatchObject({
      state: 'inSync',
      kapps: [{ id: 'web:db', state: 'inSync', ignored: [['outputs', 'stamp']] }],
    });
    await waitFor('the drift.resolved notification', () => s.rx.received.length >= 2);
    expect(s.rx.received.map((r) => r.event)).toEqual(['drift.detected', 'drift.resolved']);
    expect(s.rx.received[1]?.drift.episode).toMatchObject({ id: d.episode!.id });
    expect(s.rx.received[1]?.drift.episode.closedAt).not.toBeNull();
  });

  it('remediate: apply queues an apply of the drifted kapps that brings it back', async () => {
    const s = await serve(['remediate: apply']);
    await install(s);
    writeFileSync(join(s.live, 'db.txt'), 'db-v2');
    await waitFor(
      'the episode closed by the remediation',
      async () => {
        const d = await drift(s.c);
        return d.episodes.length === 1 && d.episodes[0]!.closedAt !== null;
      },
      120_000,
    );
    const d = await drift(s.c);
    const remediation = d.episodes[0]!.remediations;
    expect(remediation).toEqual([{ runId: expect.any(String) as unknown, type: 'apply' }]);
    const apply = (await s.c.get<Run>(`/api/v1/runs/${remediation[0]!.runId}`)).body;
    expect(apply).toMatchObject({
      type: 'apply',
      status: 'succeeded',
      createdBy: 'drift',
      trigger: { kind: 'drift' },
      options: { include: ['web:db'] },
      releaseRevision: 2,
    });
    // The apply ran the install again: the file is as recorded, and the stack in sync with release 2.
    expect(s.p.traceLines().filter((l) => l.event === 'start' && l.args.includes('apply-db'))).toHaveLength(2);
    expect(d.latest).toMatchObject({ state: 'inSync', basedOnRevision: 2 });
    await waitFor('detected and resolved', () => s.rx.received.length >= 2);
    expect(s.rx.received.map((r) => r.event)).toEqual(['drift.detected', 'drift.resolved']);
  });

  it('marks an output that changes on every read noisy, and drops the mark when a release installs the kapp again', async () => {
    const s = await serve([], { clock: true });
    await install(s);
    await waitFor('the clock marked noisy', async () => (await drift(s.c)).noisy.length > 0, 90_000);
    let d = await drift(s.c);
    expect(d.noisy).toEqual([{ kapp: 'web:db', path: ['outputs', 'at'], since: expect.any(String) as unknown }]);
    // Once marked, its changes are noisy, not drift.
    const before = d.history.length;
    d = await checksAfter(s.c, before, 1);
    expect(d.latest).toMatchObject({
      state: 'inSync',
      kapps: [{ id: 'web:db', noisy: [['outputs', 'at']], changes: [] }],
    });

    // A release that installs the kapp again changes its entry: the mark goes.
    const r = await s.c.post<Run>('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    expect((await waitForRun(s.c, r.body.id, undefined, 60_000)).status).toBe('succeeded');
    await waitFor(
      'a check against release 2',
      async () => {
        d = await drift(s.c);
        return d.latest?.basedOnRevision === 2;
      },
      90_000,
    );
    // The first check against release 2 finds the clock changed: it was no longer marked.
    const first = d.history.filter((h) => h.basedOnRevision === 2).at(-1);
    expect(first).toMatchObject({ state: 'drifted', drifted: ['web:db'] });
  });

  it('two instances on PostgreSQL run each scheduled check once', async () => {
    const url = await databases.create();
    const s = await serve([], { backend: url, instances: 2 });
    await waitFor(
      'three scheduled checks',
      async () => {
        const runs = await s.c.get<RunList>('/api/v1/runs?project=shop&stack=dev&type=drift');
        return runs.body.runs.filter((r) => r.status === 'succeeded').length >= 3;
      },
      90_000,
    );
    const runs = (await s.c.get<RunList>('/api/v1/runs?project=shop&stack=dev&type=drift')).body.runs;
    expect(runs.every((r) => r.createdBy === 'schedule')).toBe(true);
    // Each 5 s interval's check was queued by one instance only: no two scheduled runs were queued within one interval.
    const times = runs.map((r) => Date.parse(r.createdAt)).sort((a, b) => a - b);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    expect(
      gaps.every((g) => g >= 4000),
      `gaps ${gaps.join(', ')}`,
    ).toBe(true);
    expect(await drift(s.c)).toMatchObject({
      latest: { state: 'unknown', reason: 'the stack has no release to compare with' },
    });
  });

  it('answers 404 for an unknown project or stack, 403 for a token that may not reach it, 401 without a token', async () => {
    const live = tempDir('kapps-drift-live-');
    const p = project(live);
    const config = join(p.root, 'server.yaml');
    writeFileSync(
      config,
      [
        'projects:',
        '  - name: shop',
        `    stack_file: ${p.stackFile}`,
        '  - name: other',
        `    stack_file: ${p.stackFile}`,
        'tokens:',
        '  - name: reader',
        '    sha256: da6161cb90815491daa7fdabd9983a61814c4394e52314cd2b3b669fb7d14501',
        '    role: read',
        '    projects: [other]',
        '',
      ].join('\n'),
    );
    const server = await startServer({ args: ['--config', config], env: p.env });
    const c = api(server.url);
    const auth = { authorization: 'Bearer r-token-123456789' };
    const forbidden = await c.get('/api/v1/projects/shop/stacks/dev/drift', auth);
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get('content-type')).toContain('application/problem+json');
    expect((await c.get('/api/v1/projects/other/stacks/nope/drift', auth)).status).toBe(404);
    expect((await c.get('/api/v1/projects/other/stacks/dev/drift', auth)).body).toMatchObject({
      project: 'other',
      stack: 'dev',
      schedule: null,
      latest: null,
      history: [],
    });
    expect((await c.get('/api/v1/projects/other/stacks/dev/drift')).status).toBe(401);
    // The fleet lists only what the token reaches.
    const fleet = await c.get<Fleet>('/api/v1/fleet', auth);
    expect(fleet.body.stacks.map((x) => `${x.project}/${x.stack}`)).toEqual(['other/dev']);
    expect(fleet.body.stacks[0]).toMatchObject({ lastRelease: null, drift: null, schedule: null });
  });

  it('refuses a drift interval out of bounds, naming the file, line and field', async () => {
    const dir = tempDir('kapps-drift-config-');
    const config = join(dir, 'server.yaml');
    writeFileSync(join(dir, 'stacks.yaml'), 'dev:\n  provider: local\n');
    writeFileSync(
      config,
      ['projects:', '  - name: shop', '    stack_file: stacks.yaml', '    drift:', '      every: 2s', ''].join('\n'),
    );
    const r = await runCli(['serve', '--config', config, '--listen', '127.0.0.1:0'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^server\.yaml:5:\d+: error: `every: 2s` is out of bounds: at least 5s, at most 30d/);
    expect(r.stderr).toContain('projects[0].drift.every');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
