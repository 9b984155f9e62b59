/**
 * Several `kapps serve` instances on one PostgreSQL database share one queue (issue 12 §6, §8): every run is
 * executed exactly once, never two at once on one stack (read from the steps' own start/end trace), none is lost;
 * when an instance is killed with -9 mid-run, another marks its run `errored` within the lease, and the others go on.
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freshDatabases, sql } from '../support/pg.js';
import {
  cleanupProjects,
  fake,
  fixtureProject,
  kapp,
  type FixtureProject,
  type TraceLine,
} from '../support/project.js';
import { api, readEvents, startServer } from '../support/server.js';

type Server = Awaited<ReturnType<typeof startServer>>;

const STACKS = ['s1', 's2', 's3', 's4', 's5', 's6'];
const RUNS = 60;
const LEASE_SECONDS = 2;

const databases = freshDatabases('kapps_instances');
const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop().catch(() => undefined)));
});

afterAll(async () => {
  cleanupProjects();
  await databases.dropAll();
});

/** Six stacks, each one kapp whose step traces its start and end, tagged with the stack's name. */
function project(stepArgs: readonly string[]): FixtureProject {
  const manifests: Record<string, unknown> = {};
  const stacks: Record<string, unknown> = {};
  for (const stack of STACKS) {
    manifests[stack] = { kapps: [kapp('work', { apply_install: [fake('step', stack, stepArgs)] })] };
    stacks[stack] = { provider: 'local', cluster: 'c', manifests: [{ uri: `manifests/${stack}.yaml` }] };
  }
  return fixtureProject({ manifests, stacks });
}

/** Start `count` servers on one database, all serving the project as `shop`. */
async function startInstances(p: FixtureProject, backend: string, count: number): Promise<Server[]> {
  const started = await Promise.all(
    Array.from({ length: count }, () =>
      startServer({
        args: [
          '--backend',
          backend,
          '--project',
          `shop=${p.stackFile}`,
          '--max-runs',
          '2',
          '--lease',
          String(LEASE_SECONDS),
        ],
        env: p.env,
        cwd: p.dir,
      }),
    ),
  );
  servers.push(...started);
  return started;
}

interface RunView {
  id: string;
  stack: string;
  status: string;
  error: string | null;
}

async function getRun(server: Server, id: string): Promise<RunView> {
  const res = await api(server.url).get(`/api/v1/runs/${id}`);
  expect(res.status).toBe(200);
  return res.body as RunView;
}

/** Poll (through `server`) until every run is final; fails after `seconds`. */
async function waitFinal(server: Server, ids: readonly string[], seconds: number): Promise<RunView[]> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const runs = await Promise.all(ids.map((id) => getRun(server, id)));
    if (runs.every((r) => ['succeeded', 'failed', 'cancelled', 'errored'].includes(r.status))) return runs;
    if (Date.now() > deadline) {
      throw new Error(
        `not final after ${seconds} s: ${runs
          .filter((r) => r.status === 'queued' || r.status === 'running')
          .map((r) => `${r.id} ${r.status}`)
          .join(', ')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Per tag: the [start, end] of each execution, from the trace; fails on a start without an end. */
function executions(trace: readonly TraceLine[]): Map<string, [bigint, bigint][]> {
  const open = new Map<number, TraceLine>();
  const out = new Map<string, [bigint, bigint][]>();
  for (const line of trace) {
    if (line.event === 'start') open.set(line.pid, line);
    else {
      const start = open.get(line.pid);
      expect(start, `an end without a start (pid ${line.pid})`).toBeDefined();
      open.delete(line.pid);
      out.set(line.tag, [...(out.get(line.tag) ?? []), [start!.ns, line.ns]]);
    }
  }
  expect([...open.values()].map((l) => `${l.tag} pid ${l.pid} never ended`)).toEqual([]);
  return out;
}

/** The pid of the `kapps serve` (one of `servers`) that is an ancestor of `pid`. */
function serverOf(pid: number, candidates: readonly Server[]): Server | undefined {
  let current = pid;
  for (let depth = 0; depth < 10 && current > 1; depth++) {
    const found = candidates.find((s) => s.pid === current);
    if (found) return found;
    const stat = readFileSync(`/proc/${current}/stat`, 'utf8');
    current = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  }
  return undefined;
}

describe('several kapps serve instances on one PostgreSQL', () => {
  it('60 runs over 6 stacks from many clients: each executed exactly once, one at a time per stack, none lost', async () => {
    const backend = await databases.create();
    const p = project(['--sleep', '20']);
    const instances = await startInstances(p, backend, 3);

    // 12 clients, each submitting 5 runs to whichever instance it picks, all at once.
    const submissions = Array.from({ length: RUNS }, (_, n) => ({
      server: instances[n % instances.length]!,
      stack: STACKS[n % STACKS.length]!,
    }));
    const ids = (
      await Promise.all(
        Array.from({ length: 12 }, async (_, client) => {
          const mine: string[] = [];
          for (const s of submissions.slice(client * 5, client * 5 + 5)) {
            const res = await api(s.server.url).post('/api/v1/runs', {
              type: 'apply',
              project: 'shop',
              stack: s.stack,
            });
            expect(res.status, JSON.stringify(res.body)).toBe(202);
            mine.push((res.body as { id: string }).id);
          }
          return mine;
        }),
      )
    ).flat();
    expect(new Set(ids).size).toBe(RUNS);

    const runs = await waitFinal(instances[0]!, ids, 90);
    expect(runs.filter((r) => r.status !== 'succeeded').map((r) => `${r.id} ${r.status} ${r.error}`)).toEqual([]);
    for (const stack of STACKS) expect(runs.filter((r) => r.stack === stack)).toHaveLength(RUNS / STACKS.length);

    // The steps' own trace: ten executions per stack (one per run), never overlapping on a stack.
    const perStack = executions(p.traceLines());
    expect([...perStack.keys()].sort()).toEqual(STACKS);
    for (const stack of STACKS) {
      const spans = perStack.get(stack)!.sort((a, b) => (a[0] < b[0] ? -1 : 1));
      expect(spans, stack).toHaveLength(RUNS / STACKS.length);
      for (let n = 1; n < spans.length; n++) {
        expect(spans[n]![0] > spans[n - 1]![1], `${stack}: an execution started before the previous one ended`).toBe(
          true,
        );
      }
    }
    // The work was shared: more than one instance claimed runs.
    const owners = await sql<{ instance: string }>(backend, 'SELECT DISTINCT instance FROM kapps_runs');
    expect(owners.length).toBeGreaterThan(1);
  });

  it('kill -9 of an instance mid-run: another marks its run errored within the lease, never re-runs it, and goes on', async () => {
    const backend = await databases.create();
    const p = project(['--stdout', 'begun', '--sleep', '60000']);
    const instances = await startInstances(p, backend, 3);
    const client = api(instances[0]!.url);
    const submitted = await client.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 's1' });
    expect(submitted.status).toBe(202);
    const victimRun = (submitted.body as { id: string }).id;

    // Wait for the step to start, then find the instance running it from the step's process ancestry.
    let step: TraceLine | undefined;
    for (let n = 0; n < 300 && !step; n++) {
      step = p.traceLines().find((l) => l.tag === 's1' && l.event === 'start');
      if (!step) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(step, 'the step started').toBeDefined();
    const victim = serverOf(step!.pid, instances);
    expect(victim, 'one of the instances runs the step').toBeDefined();
    const survivors = instances.filter((s) => s !== victim);

    // Another instance reads the log the running instance writes, as it is written.
    let lines: { text: string; stream: string }[] = [];
    for (let n = 0; n < 300 && !lines.some((l) => l.text === 'begun'); n++) {
      const chunk = await api(survivors[0]!.url).get(`/api/v1/runs/${victimRun}/logs?offset=0`);
      expect(chunk.status).toBe(200);
      lines = (chunk.body as { lines: typeof lines }).lines;
      if (!lines.some((l) => l.text === 'begun')) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(lines).toContainEqual(expect.objectContaining({ stream: 'stdout', text: 'begun' }));
    // And streams its events: the stream (on a survivor) ends with the status the survivors give it.
    const stream = readEvents(`${survivors[1]!.url}/api/v1/runs/${victimRun}/events`, { timeoutMs: 30_000 });

    victim!.kill9();
    // Within the lease (plus the reaper's period), a survivor marks it errored.
    const [errored] = await waitFinal(survivors[0]!, [victimRun], LEASE_SECONDS * 4 + 10);
    expect(errored).toMatchObject({ id: victimRun, status: 'errored' });
    const streamed = await stream;
    expect(streamed.ended).toBe(true);
    expect(streamed.events.some((e) => e.event === 'log' && (e.data as { text: string }).text === 'begun')).toBe(true);
    expect(streamed.events.at(-1)).toMatchObject({ event: 'status', data: { id: victimRun, status: 'errored' } });
    // Its release no longer holds the stack: closed as failed (one history with the other instances' releases). The
    // reaper closes it just after marking the run errored, so it may still be applying for a moment.
    const releaseOf = () => api(survivors[0]!.url).get('/api/v1/projects/shop/stacks/s1/releases/1');
    let release = await releaseOf();
    for (let i = 0; i < 100 && (release.body as { phase?: string }).phase === 'applying'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      release = await releaseOf();
    }
    expect(release.status).toBe(200);
    expect(release.body).toMatchObject({ revision: 1, phase: 'failed' });
    try {
      process.kill(step!.pid, 'SIGKILL');
    } catch {
      // the step went with its server
    }

    // The others go on: new runs of the same stack and of another one succeed, on the survivors.
    const after = await Promise.all(
      ['s1', 's2'].map(async (stack, n) => {
        const res = await api(survivors[n % survivors.length]!.url).post('/api/v1/runs', {
          type: 'apply',
          project: 'shop',
          stack,
        });
        expect(res.status).toBe(202);
        return (res.body as { id: string }).id;
      }),
    );
    // These steps sleep 60 s too: once both have started (their own trace says so), cancel them.
    const starts = (tag: string): number => p.traceLines().filter((l) => l.tag === tag && l.event === 'start').length;
    for (let n = 0; n < 400 && (starts('s1') < 2 || starts('s2') < 1); n++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect([starts('s1'), starts('s2')]).toEqual([2, 1]);
    for (const id of after) expect((await api(survivors[0]!.url).post(`/api/v1/runs/${id}/cancel`)).status).toBe(200);
    const ended = await waitFinal(survivors[0]!, after, 20);
    expect(ended.map((r) => r.status)).toEqual(['cancelled', 'cancelled']);
    // The errored run was never started again: s1's step ran once for it and once for the new run.
    expect(starts('s1')).toBe(2);
    expect((await getRun(survivors[1]!, victimRun)).status).toBe('errored');
  });
});
