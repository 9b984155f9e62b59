/**
 * The life of runs on a real `kapps serve`: the queue per stack (order, positions, limits), cancel of queued and
 * running runs (no step process left), a restart with queued and running runs, a crash of the step-spawning child,
 * the graceful stop, the release lock shared with the CLI, and applies pinned to a preview.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Run } from '../../src/api/index.js';
import {
  cleanupProjects,
  fake,
  fixtureProject,
  kapp,
  killMatching,
  processesMatching,
  survivors,
  uniqueMarker,
  waitFor,
} from '../support/project.js';
import { api, readEvents, startServer, stopAllServers, waitForRun, type TestServer } from '../support/server.js';

const markers: string[] = [];
afterEach(async () => {
  await stopAllServers();
  for (const m of markers.splice(0)) killMatching(m);
  cleanupProjects();
});

/** A project whose stack `dev` (and `prod`) has one kapp `db` running `kapps-fake --tag db <args>`. */
function project(args: string[] = []) {
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

function marker(): string {
  const m = uniqueMarker('kapps-serve');
  markers.push(m);
  return m;
}

async function serve(p: ReturnType<typeof project>, args: string[] = [], env: Record<string, string> = {}) {
  return startServer({
    args: ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome, ...args],
    env: { ...p.env, ...env },
    cwd: p.dir,
  });
}

const submit = (server: TestServer, body: Record<string, unknown>) =>
  api(server.url).post('/api/v1/runs', { project: 'shop', stack: 'dev', type: 'apply', ...body });

/** The children of a process (pids). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      // Gone.
    }
  }
  return out;
}

describe('kapps serve: the queue', () => {
  it('runs one run per stack at a time in submission order, other stacks in parallel; positions say why', async () => {
    const p = project();
    const go = p.path('go');
    p.write('manifests/shop.yaml', {
      kapps: [kapp('db', { apply_install: [fake('migrate', 'db', ['--wait-file', go])], apply_delete: [] })],
    });
    const server = await serve(p, ['--max-runs', '2']);
    const c = api(server.url);
    const first = await submit(server, {});
    await waitForRun(c, first.body.id!, (r) => r.status === 'running');
    const second = await submit(server, {});
    const third = await submit(server, { type: 'generate' });
    const other = await submit(server, { stack: 'prod', type: 'generate' });
    expect((await waitForRun(c, other.body.id!)).status).toBe('succeeded');
    const s2 = (await c.get<Run>(`/api/v1/runs/${second.body.id}`)).body;
    const s3 = (await c.get<Run>(`/api/v1/runs/${third.body.id}`)).body;
    expect([s2.status, s2.queuePosition, s2.blockedBy]).toEqual(['queued', 1, first.body.id]);
    expect([s3.status, s3.queuePosition, s3.blockedBy]).toEqual(['queued', 2, second.body.id]);
    const summary = await c.get('/api/v1/projects/shop/stacks/dev');
    expect((summary.body.running as Run[]).map((r) => r.id)).toEqual([first.body.id]);
    expect((summary.body.queued as Run[]).map((r) => r.id)).toEqual([second.body.id, third.body.id]);
    expect(summary.body.lock).toMatchObject({ revision: 1, operation: 'install', phase: 'applying' });
    p.write('go', 'x');
    const ends = [];
    for (const id of [first.body.id!, second.body.id!, third.body.id!]) ends.push(await waitForRun(c, id));
    expect(ends.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    // In order, never overlapping.
    for (let i = 1; i < ends.length; i++) expect(ends[i]!.startedAt! >= ends[i - 1]!.finishedAt!).toBe(true);
  });

  it('refuses beyond the queue limits with 429 and Retry-After, without blocking', async () => {
    const p = project();
    const go = p.path('go');
    p.write('manifests/shop.yaml', {
      kapps: [kapp('db', { apply_install: [fake('migrate', 'db', ['--wait-file', go])], apply_delete: [] })],
    });
    p.write('kapps-server.yaml', 'limits:\n  max_queued_per_stack: 2\n  max_queued_total: 3\n');
    const server = await serve(p, ['--config', p.path('kapps-server.yaml')]);
    const c = api(server.url);
    const running = await submit(server, {});
    await waitForRun(c, running.body.id!, (r) => r.status === 'running');
    expect((await submit(server, {})).status).toBe(202);
    expect((await submit(server, {})).status).toBe(202);
    const full = await submit(server, {});
    expect(full.status).toBe(429);
    expect(full.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    expect(full.body).toMatchObject({ type: 'https://kapps.dev/problems/queue-full', status: 429 });
    expect(full.body.detail).toContain('shop/dev has 2 queued runs');
    // prod: one more fits in the total, then the total is full.
    const prodBlocker = await submit(server, { stack: 'prod' });
    expect(prodBlocker.status).toBe(202);
    await waitForRun(c, prodBlocker.body.id!, (r) => r.status === 'running');
    expect((await submit(server, { stack: 'prod' })).status).toBe(202);
    const total = await submit(server, { stack: 'prod' });
    expect(total.status).toBe(429);
    expect(total.body.detail).toContain('3 queued runs');
    p.write('go', 'x');
  });
});

describe('kapps serve: cancel', () => {
  it('cancels a queued run at once and a running one as on Ctrl-C, leaving no step process', async () => {
    const m = marker();
    const p = project(['--fork-sleep', '60', m, '--hang']);
    const server = await serve(p);
    const c = api(server.url);
    const running = await submit(server, {});
    const queued = await submit(server, {});
    await waitForRun(c, running.body.id!, (r) => r.status === 'running');
    // The step (it has written its trace) and the grandchild it forked.
    await waitFor(
      'the step and its child to run',
      () => p.traceLines().length === 1 && processesMatching(m).length >= 2,
      20_000,
    );

    const q = await c.post<Run>(`/api/v1/runs/${queued.body.id}/cancel`);
    expect(q.status).toBe(200);
    expect(q.body).toMatchObject({ status: 'cancelled', actions: { cancelable: false } });
    expect(q.body.error).toContain('cancelled by anonymous');

    const r = await c.post<Run>(`/api/v1/runs/${running.body.id}/cancel`);
    expect(r.status).toBe(200);
    expect(r.body.actions.cancelable).toBe(false);
    const ended = await waitForRun(c, running.body.id!);
    expect(ended.status).toBe('cancelled');
    expect(processesMatching(m)).toEqual([]);
    // Its release is closed as cancelled, the stack unlocked.
    const rel = await c.get('/api/v1/projects/shop/stacks/dev/releases/1');
    expect(rel.body.phase).toBe('cancelled');
    expect((await c.get('/api/v1/projects/shop/stacks/dev')).body.lock).toBeNull();
    // The queued one never ran: one start in the trace.
    expect(p.traceLines().filter((t) => t.event === 'start')).toHaveLength(1);
    const again = await c.post(`/api/v1/runs/${running.body.id}/cancel`);
    expect(again.status).toBe(409);
  });
});

describe('kapps serve: restarts and crashes', () => {
  it('after kill -9: the running run is errored with its release failed, queued runs run, nothing is re-run', async () => {
    const p = project();
    const go = p.path('go');
    const m = marker();
    p.write('manifests/shop.yaml', {
      kapps: [
        kapp('db', { apply_install: [fake('migrate', 'db', ['--tag', m, '--wait-file', go])], apply_delete: [] }),
      ],
    });
    const first = await serve(p, ['--max-runs', '1']);
    const c1 = api(first.url);
    const running = await submit(first, {});
    await waitForRun(c1, running.body.id!, (r) => r.status === 'running' && r.releaseRevision === 1);
    await waitFor('the step to start', () => p.traceLines().some((t) => t.event === 'start'), 20_000);
    const queued = await submit(first, {});
    const queuedGen = await submit(first, { type: 'generate' });
    first.kill9();
    await first.exited;
    await waitFor('the step to be stopped', () => processesMatching(m).length === 0, 10_000);
    p.write('go', 'x');

    const second = await serve(p, ['--max-runs', '1']);
    const c2 = api(second.url);
    const errored = await waitForRun(c2, running.body.id!);
    expect(errored.status).toBe('errored');
    expect(errored.error).toContain('its server stopped');
    expect(second.stderr()).toContain(`run ${running.body.id}`);
    expect((await waitForRun(c2, queued.body.id!)).status).toBe('succeeded');
    expect((await waitForRun(c2, queuedGen.body.id!)).status).toBe('succeeded');
    // Release 1 (the errored run's) is closed as failed, with who closed it and why; the queued run made release 2.
    const r1 = await c2.get('/api/v1/projects/shop/stacks/dev/releases/1');
    expect(r1.body.phase).toBe('failed');
    expect((r1.body.unlocked as { by: string }).by).toContain(`run ${running.body.id}`);
    expect((await c2.get('/api/v1/projects/shop/stacks/dev/releases/2')).body.phase).toBe('succeeded');
    // The errored run's step was started once and never again: two starts in all, one per run.
    const starts = p.traceLines().filter((t) => t.event === 'start');
    expect(starts).toHaveLength(2);
  });

  it('a step-spawning child killed with -9 mid-run fails that run with the reason in its log; the server goes on', async () => {
    const m = marker();
    const p = project(['--stdout', 'started', '--sleep', '4000', '--tag', m]);
    const server = await serve(p);
    const c = api(server.url);
    const run = await submit(server, {});
    await waitFor('the step to start', () => p.traceLines().length === 1, 20_000);
    const spawners = childrenOf(server.pid).filter((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('process-server'),
    );
    expect(spawners.length).toBeGreaterThan(0);
    for (const pid of spawners) process.kill(pid, 'SIGKILL');
    const ended = await waitForRun(c, run.body.id!);
    expect(ended.status).toBe('failed');
    const log = await c.get(`/api/v1/runs/${run.body.id}/logs`);
    const text = (log.body.lines ?? []).map((l) => l.text).join('\n');
    expect(text).toContain('the process server stopped: killed by SIGKILL');
    expect(ended.error).toBe('1 kapp(s) failed; shop:db: the process server stopped: killed by SIGKILL');
    // The step the dead child supervised does not outlive it.
    expect(await survivors(m)).toEqual([]);
    // The server still serves and runs.
    p.write('manifests/shop.yaml', {
      kapps: [kapp('db', { apply_install: [fake('migrate', 'db', ['--stdout', 'fine'])], apply_delete: [] })],
    });
    const next = await submit(server, {});
    expect((await waitForRun(c, next.body.id!)).status).toBe('succeeded');
  });
});

describe('kapps serve: graceful stop', () => {
  it('on SIGTERM lets a running run finish within the grace, then exits 0', async () => {
    const p = project(['--sleep', '600']);
    const server = await serve(p, ['--grace', '20']);
    const c = api(server.url);
    const run = await submit(server, {});
    await waitForRun(c, run.body.id!, (r) => r.status === 'running');
    await waitFor('the step to start', () => p.traceLines().some((t) => t.event === 'start'), 20_000);
    expect(await server.stop('SIGTERM')).toEqual({ code: 0 });
    const after = await serve(p);
    expect((await api(after.url).get<Run>(`/api/v1/runs/${run.body.id}`)).body.status).toBe('succeeded');
  });

  it('cancels what is still running when the grace is over (recorded cancelled, never succeeded)', async () => {
    const m = marker();
    const p = project(['--fork-sleep', '60', m, '--hang']);
    const server = await serve(p, ['--grace', '0.3']);
    const run = await submit(server, {});
    const queued = await submit(server, {});
    await waitFor('the step to start', () => p.traceLines().length === 1 && processesMatching(m).length >= 2, 20_000);
    // A client following the queued run does not hold the stop up: its stream is closed.
    const following = readEvents(`${server.url}/api/v1/runs/${queued.body.id}/events`, { timeoutMs: 15_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await server.stop('SIGTERM')).toEqual({ code: 0 });
    const followed = await following;
    expect(followed.events.map((e) => (e.data as Run).status)).toEqual(['queued']);
    expect(followed.ended).toBe(true);
    expect(server.stderr()).toContain(`cancelling run ${run.body.id}`);
    expect(processesMatching(m)).toEqual([]);
    const after = await serve(p);
    const c2 = api(after.url);
    const stopped = (await c2.get<Run>(`/api/v1/runs/${run.body.id}`)).body;
    expect(stopped.status).toBe('cancelled');
    expect(stopped.error).toContain('the server stopped');
    expect((await c2.get('/api/v1/projects/shop/stacks/dev/releases/1')).body.phase).toBe('cancelled');
    // The queued run stays queued over the stop and runs on the next start (its step hangs again: cancel it).
    await waitForRun(c2, queued.body.id!, (r) => r.status === 'running');
    await c2.post(`/api/v1/runs/${queued.body.id}/cancel`);
    expect((await waitForRun(c2, queued.body.id!)).status).toBe('cancelled');
  });
});

describe('kapps serve: with the CLI', () => {
  it('a CLI install -y and a server apply on one stack are serialised by the release lock, in one history', async () => {
    const p = project();
    const go = p.path('go');
    p.write('manifests/shop.yaml', {
      kapps: [kapp('db', { apply_install: [fake('migrate', 'db', ['--wait-file', go])], apply_delete: [] })],
    });
    const server = await serve(p);
    const c = api(server.url);
    // The CLI holds the lock: the server's apply is refused by it, naming the holder, and changes nothing.
    const cli = p.start('install', ['-y', p.path('.kapps-workspace', 'dev')]);
    await waitFor('the CLI step to start', () => p.traceLines().some((t) => t.event === 'start'), 20_000);
    const refused = await submit(server, {});
    const r1 = await waitForRun(c, refused.body.id!);
    expect(r1.status).toBe('failed');
    expect(r1.error).toMatch(/lock|in progress|applying/i);
    p.write('go', 'x');
    expect((await cli.done).code).toBe(0);
    // Now the server applies (release 2) while the CLI is refused.
    p.write('manifests/shop.yaml', {
      kapps: [
        kapp('db', { apply_install: [fake('migrate', 'db2', ['--wait-file', p.path('go2')])], apply_delete: [] }),
      ],
    });
    const applied = await submit(server, {});
    await waitForRun(c, applied.body.id!, (r) => r.status === 'running' && r.releaseRevision === 2);
    const blocked = await p.run('install', ['-y']);
    expect(blocked.code).toBe(1);
    expect(blocked.stderr).toMatch(/lock|in progress|applying/i);
    p.write('go2', 'x');
    expect((await waitForRun(c, applied.body.id!)).status).toBe('succeeded');
    const history = await p.run('release', ['list', p.stackFile, 'dev', '-o', 'json'], { bare: true });
    const entries = JSON.parse(history.stdout) as { revision: number }[];
    expect(entries.map((e) => e.revision)).toEqual([2, 1]);
    const byServer = await c.get('/api/v1/projects/shop/stacks/dev/releases/2');
    expect((byServer.body.command as string[]).slice(0, 2)).toEqual(['kapps', 'serve']);
    const byCli = await c.get('/api/v1/projects/shop/stacks/dev/releases/1');
    expect(byCli.body.command as string[]).toContain('install');
  });
});

describe('kapps serve: unlock', () => {
  it('shows the lock of a CLI killed with -9 as looking dead, and an admin unlocks it, recorded with who did it', async () => {
    const p = project();
    p.write('manifests/shop.yaml', {
      kapps: [kapp('db', { apply_install: [fake('migrate', 'db', ['--wait-file', p.path('go')])], apply_delete: [] })],
    });
    const cli = p.start('install', ['-y']);
    await waitFor('the CLI step to start', () => p.traceLines().some((t) => t.event === 'start'), 20_000);
    cli.child.kill('SIGKILL');
    await cli.done;
    const server = await serve(p);
    const c = api(server.url);
    const summary = await c.get('/api/v1/projects/shop/stacks/dev');
    expect(summary.body.lock).toMatchObject({ revision: 1, operation: 'install', phase: 'applying' });
    expect((summary.body.lock as { ownerLooksDead: string }).ownerLooksDead).toContain('is not running');
    const unlocked = await c.post('/api/v1/projects/shop/stacks/dev/unlock');
    expect(unlocked.status).toBe(200);
    expect(unlocked.body).toMatchObject({ unlocked: true, revision: 1, previousPhase: 'applying', by: 'anonymous' });
    const release = await c.get('/api/v1/projects/shop/stacks/dev/releases/1');
    expect(release.body.phase).toBe('failed');
    expect((release.body.unlocked as { by: string }).by).toBe('anonymous (kapps serve)');
    expect((await c.get('/api/v1/projects/shop/stacks/dev')).body.lock).toBeNull();
    // The stack takes runs again.
    p.write('go', 'x');
    const next = await submit(server, {});
    expect(await waitForRun(c, next.body.id!)).toMatchObject({ status: 'succeeded', releaseRevision: 2 });
  });
});

describe('kapps serve: applies pinned to a preview', () => {
  it('applies what a preview showed, and fails it as stale once the spec or the last release changed', async () => {
    const p = project(['--stdout', 'v1']);
    const server = await serve(p);
    const c = api(server.url);
    const preview = await submit(server, { type: 'preview' });
    expect((await waitForRun(c, preview.body.id!)).status).toBe('succeeded');
    const apply = await submit(server, { previewRunId: preview.body.id });
    expect(apply.status).toBe(202);
    expect((await waitForRun(c, apply.body.id!)).status).toBe('succeeded');
    // The release moved on since that preview: stale (found by the run, in the stack's turn).
    const stale = await submit(server, { previewRunId: preview.body.id });
    expect(stale.status).toBe(202);
    const staleEnd = await waitForRun(c, stale.body.id!);
    expect(staleEnd.status).toBe('failed');
    expect(staleEnd.error).toContain('stale preview: the last release of shop/dev changed');
    // A fresh preview, then the spec changes: stale.
    const fresh = await submit(server, { type: 'preview' });
    await waitForRun(c, fresh.body.id!);
    p.write('manifests/shop.yaml', {
      kapps: [kapp('db', { apply_install: [fake('migrate', 'db', ['--stdout', 'v2'])], apply_delete: [] })],
    });
    const changed = await submit(server, { previewRunId: fresh.body.id });
    expect(changed.status).toBe(202);
    expect((await waitForRun(c, changed.body.id!)).error).toContain('stale preview: the spec of shop/dev changed');
    // Not a preview, or of another stack: 400.
    expect((await submit(server, { previewRunId: apply.body.id })).status).toBe(400);
    expect((await submit(server, { type: 'destroy', previewRunId: fresh.body.id })).status).toBe(400);
  });

  it('checks again when the apply starts: a change while it waited fails it as stale', async () => {
    const p = project(['--stdout', 'v1']);
    const go = p.path('go');
    const server = await serve(p, ['--max-runs', '1']);
    const c = api(server.url);
    const preview = await submit(server, { type: 'preview' });
    await waitForRun(c, preview.body.id!);
    // The only slot is taken by a run of prod that waits.
    p.write('stacks.yaml', {
      dev: { provider: 'local', manifests: [{ uri: 'manifests/shop.yaml' }] },
      prod: { provider: 'local', manifests: [{ uri: 'manifests/prod.yaml' }] },
    });
    p.write('manifests/prod.yaml', {
      kapps: [kapp('db', { apply_install: [fake('migrate', 'prod', ['--wait-file', go])], apply_delete: [] })],
    });
    const blocker = await submit(server, { stack: 'prod' });
    await waitForRun(c, blocker.body.id!, (r) => r.status === 'running');
    const apply = await submit(server, { previewRunId: preview.body.id });
    expect(apply.status).toBe(202);
    p.write('manifests/shop.yaml', {
      kapps: [kapp('db', { apply_install: [fake('migrate', 'db', ['--stdout', 'v2'])], apply_delete: [] })],
    });
    p.write('go', 'x');
    const ended = await waitForRun(c, apply.body.id!);
    expect(ended.status).toBe('failed');
    expect(ended.error).toContain('stale preview');
    expect(p.traceLines().filter((t) => t.tag === 'db')).toEqual([]);
  });
});
