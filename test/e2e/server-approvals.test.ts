/**
 * Approvals on a real `kapps serve`: an apply, destroy or rollback of a stack requiring approvals runs its preview,
 * waits in `needs-approval` holding it, and applies exactly that preview once enough distinct tokens approved it
 * (never its author's); a rejection ends it; a release by another path while it waits makes it `stale`; a webhook's
 * apply waits the same way; the stack's next apply waits behind it while its previews go on; break glass is allowed
 * to the configured roles only, recorded and notified; two instances on PostgreSQL agree.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Run } from '../../src/api/index.js';
import { gitRemote } from '../support/git-remote.js';
import { freshDatabases } from '../support/pg.js';
import { cleanupProjects, fake, fixtureProject, kapp, waitFor, type FixtureProject } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun, type ApiClient, type TestServer } from '../support/server.js';

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
const HOOK_SECRET = 'hook-secret-5d1e';
const databases = freshDatabases('kapps_approvals_e2e');
const receivers: Server[] = [];

afterEach(async () => {
  await stopAllServers();
  for (const r of receivers.splice(0)) {
    r.closeAllConnections();
    await new Promise((resolve) => r.close(resolve));
  }
  cleanupProjects();
});
afterAll(() => databases.dropAll());

/** A notification receiver on loopback: the events it was sent, with their run. */
async function receiver(): Promise<{ url: string; events: { event: string; run: Run }[] }> {
  const events: { event: string; run: Run }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      events.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event: string; run: Run });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receivers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, events };
}

/** Tokens: alice and bob (apply), dave (apply), carol (plan), ops (admin). */
const TOKENS =
  `tokens:\n` +
  `  - {name: alice, role: apply, sha256: ${sha('alice-secret')}}\n` +
  `  - {name: bob, role: apply, sha256: ${sha('bob-secret')}}\n` +
  `  - {name: dave, role: apply, sha256: ${sha('dave-secret')}}\n` +
  `  - {name: carol, role: plan, sha256: ${sha('carol-secret')}}\n` +
  `  - {name: ops, role: admin, sha256: ${sha('ops-secret')}}\n`;

const APPROVALS = '    approvals: {required: 1, break_glass: [admin]}\n';

function project(tag = 'v1'): FixtureProject {
  return fixtureProject({
    manifests: { shop: { kapps: [kapp('web', { apply_install: [fake('deploy', 'web', ['--stdout', tag])] })] } },
  });
}

/** The `--stdout` value of each deploy that started, in order. */
function deployed(p: FixtureProject): string[] {
  return p
    .traceLines()
    .filter((l) => l.event === 'start' && l.tag === 'web')
    .map((l) => l.args[l.args.indexOf('--stdout') + 1] ?? '');
}

/** A server of project `shop` (the fixture's stack file) with `gate` in its entry and notifications to `notify`. */
async function serve(p: FixtureProject, gate = APPROVALS, notify?: string, args: string[] = []) {
  const config = p.write(
    '../server.yaml',
    `projects:\n  - name: shop\n    stack_file: project/stacks.yaml\n${gate}` +
      (notify
        ? `    notify:\n      - url: ${notify}\n        events: [run.needs_approval, run.approved, run.rejected, run.break_glass, run.failed]\n        secret_env: HOOK_SECRET\n`
        : '') +
      TOKENS,
  );
  const server = await startServer({
    args: ['--config', config, ...args],
    env: { ...p.env, HOOK_SECRET },
    cwd: p.root,
  });
  return { server, ...clients(server) };
}

function clients(server: TestServer) {
  return {
    alice: api(server.url, 'alice-secret'),
    bob: api(server.url, 'bob-secret'),
    dave: api(server.url, 'dave-secret'),
    carol: api(server.url, 'carol-secret'),
    ops: api(server.url, 'ops-secret'),
  };
}

async function submit(c: ApiClient, body: Record<string, unknown>): Promise<Run> {
  const r = await c.post<Run>('/api/v1/runs', { project: 'shop', stack: 'dev', ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  return r.body;
}

const waiting = (c: ApiClient, id: string) => waitForRun(c, id, (r) => r.status === 'needs-approval', 60_000);
const final = (c: ApiClient, id: string) =>
  waitForRun(
    c,
    id,
    (r) => ['succeeded', 'failed', 'cancelled', 'errored', 'rejected', 'stale'].includes(r.status),
    60_000,
  );

interface PreviewBody {
  basedOnRevision: number | null;
  kapps: { id: string; action: string }[];
}

describe('kapps serve: approvals', () => {
  it("waits for approval; the author's approve is 403, another apply token's approve lets it apply", async () => {
    const p = project();
    const hook = await receiver();
    const { alice, bob, carol } = await serve(p, APPROVALS, hook.url);

    const run = await submit(alice, { type: 'apply' });
    expect(run.approval).toMatchObject({ required: 1, fromRoles: ['apply', 'admin'], decisions: [], breakGlass: null });
    const held = await waiting(alice, run.id);
    expect(held.approval?.basedOnRevision).toBeNull();
    expect(held.approval?.waitingSince).not.toBeNull();
    expect(Date.parse(held.approval!.expiresAt!) - Date.parse(held.approval!.waitingSince!)).toBe(7 * 86_400_000);
    expect(deployed(p)).toEqual([]);

    // The preview it waits with.
    const preview = await carol.get<PreviewBody>(`/api/v1/runs/${run.id}/preview`);
    expect(preview.status).toBe(200);
    expect(preview.body.kapps.map((k) => [k.id, k.action])).toEqual([['shop:web', 'Create']]);

    // Who may decide, as each caller sees it.
    expect((await alice.get<Run>(`/api/v1/runs/${run.id}`)).body.actions).toMatchObject({
      approvable: false,
      rejectable: false,
      cancelable: true,
    });
    expect((await bob.get<Run>(`/api/v1/runs/${run.id}`)).body.actions).toMatchObject({
      approvable: true,
      rejectable: true,
    });
    const listed = await bob.get<{ runs: Run[] }>('/api/v1/runs?status=needs-approval');
    expect(listed.body.runs.map((r) => [r.id, r.actions.approvable])).toEqual([[run.id, true]]);

    const own = await alice.post(`/api/v1/runs/${run.id}/approve`, {});
    expect(own.status).toBe(403);
    expect(own.headers.get('content-type')).toContain('application/problem+json');
    expect(own.body.detail).toContain('the author of a run may not approve it');
    const planner = await carol.post(`/api/v1/runs/${run.id}/approve`);
    expect(planner.status).toBe(403);
    expect(planner.body.detail).toBe('carol has role plan; approvals of shop/dev come from apply, admin');
    const tooLong = await bob.post(`/api/v1/runs/${run.id}/approve`, { comment: 'x'.repeat(2001) });
    expect(tooLong.status).toBe(400);
    expect(deployed(p)).toEqual([]);

    const ok = await bob.post<Run>(`/api/v1/runs/${run.id}/approve`, { comment: 'looks fine' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.approval?.decisions).toMatchObject([
      { by: 'bob', role: 'apply', decision: 'approved', comment: 'looks fine' },
    ]);
    const done = await final(bob, run.id);
    expect(done.status, JSON.stringify(done)).toBe('succeeded');
    expect(done.releaseRevision).toBe(1);
    expect(deployed(p)).toEqual(['v1']);
    const again = await bob.post(`/api/v1/runs/${run.id}/approve`);
    expect(again.status).toBe(409);

    await waitFor('the run.approved notification', () => hook.events.some((e) => e.event === 'run.approved'), 30_000);
    expect(hook.events.filter((e) => e.run.id === run.id).map((e) => e.event)).toEqual([
      'run.needs_approval',
      'run.approved',
    ]);
    const release = await bob.get<{ approvals?: unknown }>('/api/v1/projects/shop/stacks/dev/releases/1');
    expect(release.body.approvals).toMatchObject([{ by: 'bob', comment: 'looks fine' }]);
  });

  it('a release by another path while it waits (the CLI on the same stack file and backend) makes it stale', async () => {
    const p = project('server');
    const { server, alice, bob } = await serve(p);
    const run = await submit(alice, { type: 'apply' });
    await waiting(alice, run.id);

    const cli = await p.run('install', ['-y'], { env: { KAPPS_BACKEND: server.backend! } });
    expect(cli.code, cli.stderr).toBe(0);
    const stale = await final(alice, run.id);
    expect(stale.status).toBe('stale');
    expect(stale.error).toBe(
      "the stack's release changed while it waited: revision none then, 1 now; a new preview and new approvals are needed",
    );
    const late = await bob.post(`/api/v1/runs/${run.id}/approve`);
    expect(late.status).toBe(409);
    expect(late.body.detail).toContain('is stale');
    // Only the CLI's install ran the deploy.
    expect(deployed(p)).toEqual(['server']);
  });

  it("a rejection ends it, nothing applied; the stack's next apply waits behind it while a preview runs", async () => {
    const p = project();
    const hook = await receiver();
    const { alice, bob, dave, carol } = await serve(p, APPROVALS, hook.url);
    const first = await submit(alice, { type: 'apply' });
    await waiting(alice, first.id);
    const second = await submit(dave, { type: 'apply' });
    const preview = await submit(carol, { type: 'preview' });
    expect((await final(carol, preview.id)).status).toBe('succeeded');
    const behind = await alice.get<Run>(`/api/v1/runs/${second.id}`);
    expect(behind.body).toMatchObject({ status: 'queued', blockedBy: first.id });

    const byAuthor = await alice.post(`/api/v1/runs/${first.id}/reject`, {});
    expect(byAuthor.status).toBe(403);
    const rejected = await bob.post<Run>(`/api/v1/runs/${first.id}/reject`, { comment: 'not today' });
    expect(rejected.status).toBe(200);
    expect(rejected.body.status).toBe('rejected');
    expect(rejected.body.approval?.decisions).toMatchObject([
      { by: 'bob', decision: 'rejected', comment: 'not today' },
    ]);
    expect((await bob.post(`/api/v1/runs/${first.id}/approve`)).status).toBe(409);

    // The next one takes its turn: it waits the same way.
    await waiting(alice, second.id);
    expect(deployed(p)).toEqual([]);
    await waitFor('the run.rejected notification', () => hook.events.some((e) => e.event === 'run.rejected'), 30_000);
    expect(hook.events.filter((e) => e.run.id === first.id).map((e) => e.event)).toEqual([
      'run.needs_approval',
      'run.rejected',
    ]);
    const cancelled = await dave.post<Run>(`/api/v1/runs/${second.id}/cancel`);
    expect(cancelled.body.status).toBe('cancelled');
    expect(deployed(p)).toEqual([]);
  });

  it('break glass: only a configured role may skip the approvals; recorded, notified, applied at once', async () => {
    const p = project();
    const hook = await receiver();
    const { alice, ops, carol } = await serve(p, APPROVALS, hook.url);

    const refused = await alice.post('/api/v1/runs', {
      type: 'apply',
      project: 'shop',
      stack: 'dev',
      breakGlass: true,
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.body.detail).toBe(
      'alice has role apply; approvals.break_glass of shop/dev allows admin to skip its approvals',
    );
    const onPreview = await carol.post('/api/v1/runs', {
      type: 'preview',
      project: 'shop',
      stack: 'dev',
      breakGlass: true,
    });
    expect(onPreview.status).toBe(400);
    expect(JSON.stringify(onPreview.body)).toContain('body.breakGlass');

    const run = await submit(ops, { type: 'apply', breakGlass: true });
    expect(run.approval?.breakGlass).toMatchObject({ by: 'ops', role: 'admin' });
    const done = await final(ops, run.id);
    expect(done.status, JSON.stringify(done)).toBe('succeeded');
    expect(deployed(p)).toEqual(['v1']);
    await waitFor(
      'the run.break_glass notification',
      () => hook.events.some((e) => e.event === 'run.break_glass'),
      30_000,
    );
    expect(hook.events.filter((e) => e.run.id === run.id).map((e) => e.event)).toEqual(['run.break_glass']);
    const release = await ops.get<{ breakGlass?: unknown; approvals?: unknown }>(
      '/api/v1/projects/shop/stacks/dev/releases/1',
    );
    expect(release.body.breakGlass).toMatchObject({ by: 'ops', role: 'admin' });
  });

  it('an approval binds to the preview: a spec changed while it waited ends it stale, nothing applied', async () => {
    const p = project('v1');
    const { alice, bob } = await serve(p);
    const run = await submit(alice, { type: 'apply' });
    await waiting(alice, run.id);
    p.write('manifests/shop.yaml', {
      kapps: [kapp('web', { apply_install: [fake('deploy', 'web', ['--stdout', 'unseen'])] })],
    });
    expect((await bob.post(`/api/v1/runs/${run.id}/approve`)).status).toBe(200);
    const ended = await final(alice, run.id);
    expect(ended.status).toBe('stale');
    expect(ended.error).toBe('stale preview: the spec of shop/dev changed since its preview');
    expect(ended.releaseRevision).toBeNull();
    expect(deployed(p)).toEqual([]);
    const log = await alice.get<{ lines: { text: string }[] }>(`/api/v1/runs/${run.id}/logs`);
    expect(log.body.lines.map((l) => l.text)).toContain(
      'kapps: stale preview: the spec of shop/dev changed since its preview; nothing was applied.',
    );
    const openapi = await alice.get<{ paths: Record<string, unknown> }>('/api/v1/openapi.json');
    expect(Object.keys(openapi.body.paths)).toEqual(
      expect.arrayContaining(['/api/v1/runs/{id}/approve', '/api/v1/runs/{id}/reject', '/api/v1/runs/{id}/preview']),
    );
  });

  it('"apply this" of a preview run waits the same way, bound to that preview', async () => {
    const p = project();
    const { alice, bob, carol } = await serve(p);
    const preview = await submit(carol, { type: 'preview' });
    expect((await final(carol, preview.id)).status).toBe('succeeded');
    const run = await submit(alice, { type: 'apply', previewRunId: preview.id });
    expect(run.approval).toMatchObject({ required: 1, breakGlass: null });
    await waiting(alice, run.id);
    const bound = await bob.get<PreviewBody>(`/api/v1/runs/${run.id}/preview`);
    const shown = await bob.get<PreviewBody>(`/api/v1/runs/${preview.id}/result`);
    expect(bound.body.kapps).toEqual(shown.body.kapps);
    expect(deployed(p)).toEqual([]);
    expect((await bob.post(`/api/v1/runs/${run.id}/approve`)).status).toBe(200);
    expect((await final(alice, run.id)).status).toBe('succeeded');
    expect(deployed(p)).toEqual(['v1']);

    // The same preview again no longer holds (the release moved): the run ends stale before it waits.
    const again = await submit(alice, { type: 'apply', previewRunId: preview.id });
    const stale = await final(alice, again.id);
    expect(stale.status).toBe('stale');
    expect(stale.error).toContain(`changed since preview run ${preview.id}`);
    expect(deployed(p)).toEqual(['v1']);
  });

  it('a run waiting longer than expire_after is discarded', { timeout: 240_000 }, async () => {
    const p = project();
    const hook = await receiver();
    const { alice, bob } = await serve(p, '    approvals: {required: 1, expire_after: 1m}\n', hook.url);
    const run = await submit(alice, { type: 'apply' });
    const held = await waiting(alice, run.id);
    expect(Date.parse(held.approval!.expiresAt!) - Date.parse(held.approval!.waitingSince!)).toBe(60_000);
    const ended = await waitForRun(alice, run.id, (r) => r.status !== 'needs-approval', 180_000);
    expect(ended.status).toBe('cancelled');
    expect(ended.error).toBe('discarded: waited for approval longer than 1m');
    expect((await bob.post(`/api/v1/runs/${run.id}/approve`)).status).toBe(409);
    expect(deployed(p)).toEqual([]);
  });

  it('a destroy waits with the rows it deletes', async () => {
    const p = project('v1');
    const { alice, bob } = await serve(p);
    const run = await submit(alice, { type: 'apply' });
    await waiting(alice, run.id);
    expect((await bob.post(`/api/v1/runs/${run.id}/approve`)).status).toBe(200);
    expect((await final(alice, run.id)).status).toBe('succeeded');

    const destroy = await submit(alice, { type: 'destroy' });
    await waiting(alice, destroy.id);
    const rows = await bob.get<PreviewBody>(`/api/v1/runs/${destroy.id}/preview`);
    expect(rows.body.basedOnRevision).toBe(1);
    expect(rows.body.kapps.map((k) => [k.id, k.action])).toEqual([['shop:web', 'Delete']]);
    expect((await bob.post(`/api/v1/runs/${destroy.id}/approve`)).status).toBe(200);
    const destroyed = await final(alice, destroy.id);
    expect(destroyed.status, JSON.stringify(destroyed)).toBe('succeeded');
    expect(destroyed.releaseRevision).toBe(2);
    const release = await bob.get<{ operation: string }>('/api/v1/projects/shop/stacks/dev/releases/2');
    expect(release.body.operation).toBe('delete');
  });

  it('approvals are not asked of a stack whose override requires none, nor of previews', async () => {
    const p = project();
    const { alice, ops } = await serve(p, `${APPROVALS}    stacks:\n      dev: {approvals: {required: 0}}\n`);
    const run = await submit(alice, { type: 'apply' });
    expect(run.approval).toBeNull();
    expect((await final(alice, run.id)).status).toBe('succeeded');
    const none = await ops.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev', breakGlass: true });
    expect(none.status).toBe(400);
    expect(none.body.detail).toBe('body.breakGlass: shop/dev requires no approvals: there are none to skip');
    const missing = await ops.get(`/api/v1/runs/${run.id}/preview`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('application/problem+json');
  });
});

describe('kapps serve: approvals of runs the server starts', () => {
  it('an apply a signed push queues (on_push: apply) waits for approval the same way', async () => {
    const p = project();
    const remote = gitRemote(p);
    const config = p.write(
      '../server.yaml',
      `projects:\n  - name: shop\n    repo:\n      url: ${remote.url}\n      path: stacks.yaml\n` +
        `    webhook:\n      secret_env: SHOP_HOOK_SECRET\n    on_push: apply\n${APPROVALS}${TOKENS}`,
    );
    const server = await startServer({
      args: ['--config', config, '--data-dir', path.join(p.root, 'data')],
      env: { ...p.env, SHOP_HOOK_SECRET: HOOK_SECRET },
      cwd: p.root,
    });
    const { alice, bob } = clients(server);
    const pushed = remote.commit('Ship it');
    const text = JSON.stringify({
      ref: 'refs/heads/main',
      before: '0'.repeat(40),
      after: pushed,
      deleted: false,
      repository: { clone_url: `${remote.url}.git/`, default_branch: 'main' },
    });
    const answer = await fetch(`${server.url}/api/v1/hooks/github`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': `sha256=${createHmac('sha256', HOOK_SECRET).update(text).digest('hex')}`,
      },
      body: text,
    });
    expect(answer.status).toBe(202);
    const queued = ((await answer.json()) as { runs: Run[] }).runs;
    expect(queued.map((r) => [r.type, r.stack, r.createdBy])).toEqual([['apply', 'dev', 'webhook:github']]);
    const id = queued[0]!.id;
    expect(queued[0]!.approval).toMatchObject({ required: 1, breakGlass: null });
    const held = await waiting(alice, id);
    expect(held.commit?.sha).toBe(pushed);
    expect(deployed(p)).toEqual([]);
    expect((await alice.post(`/api/v1/runs/${id}/approve`)).status).toBe(200);
    const done = await final(bob, id);
    expect(done.status, JSON.stringify(done)).toBe('succeeded');
    expect(deployed(p)).toEqual(['v1']);
  });
});

describe('kapps serve: approvals of a rollback', () => {
  it('a rollback waits with its preview, then applies the revision approved', { timeout: 180_000 }, async () => {
    const p = project('v1');
    const remote = gitRemote(p);
    const config = p.write(
      '../server.yaml',
      `projects:\n  - name: shop\n    repo:\n      url: ${remote.url}\n      path: stacks.yaml\n${APPROVALS}${TOKENS}`,
    );
    const server = await startServer({
      args: ['--config', config, '--data-dir', path.join(p.root, 'data')],
      env: p.env,
      cwd: p.root,
    });
    const { alice, bob } = clients(server);
    const apply = async () => {
      const run = await submit(alice, { type: 'apply' });
      await waiting(alice, run.id);
      expect((await bob.post(`/api/v1/runs/${run.id}/approve`)).status).toBe(200);
      expect((await final(alice, run.id)).status).toBe('succeeded');
    };
    await apply();
    remote.commit('v2', {
      'manifests/shop.yaml': { kapps: [kapp('web', { apply_install: [fake('deploy', 'web', ['--stdout', 'v2'])] })] },
    });
    await apply();
    expect(deployed(p)).toEqual(['v1', 'v2']);

    const rollback = await submit(alice, { type: 'rollback', toRevision: 1 });
    await waiting(alice, rollback.id);
    const shown = await bob.get<PreviewBody>(`/api/v1/runs/${rollback.id}/preview`);
    expect(shown.body.basedOnRevision).toBe(2);
    expect(shown.body.kapps.map((k) => [k.id, k.action])).toEqual([['shop:web', 'Update']]);
    expect(deployed(p)).toEqual(['v1', 'v2']);
    expect((await bob.post(`/api/v1/runs/${rollback.id}/approve`, { comment: 'back to v1' })).status).toBe(200);
    const rolled = await final(alice, rollback.id);
    expect(rolled.status, JSON.stringify(rolled)).toBe('succeeded');
    expect(deployed(p)).toEqual(['v1', 'v2', 'v1']);
    const three = await bob.get<{ rollbackOf?: number; approvals?: unknown }>(
      '/api/v1/projects/shop/stacks/dev/releases/3',
    );
    expect(three.body).toMatchObject({ rollbackOf: 1, approvals: [{ by: 'bob', comment: 'back to v1' }] });
  });
});

describe('kapps serve: approvals on two instances (PostgreSQL)', () => {
  it('a run waiting on one instance is approved on the other and applied; decisions at once on both count', async () => {
    const p = project();
    const backend = await databases.create();
    const gate = '    approvals: {required: 2}\n';
    const first = await serve(p, gate, undefined, ['--backend', backend]);
    const run = await submit(first.alice, { type: 'apply' });
    await waiting(first.alice, run.id);
    // The first instance stops: the waiting run is nobody's to reap.
    await first.server.stop();
    const second = await serve(p, gate, undefined, ['--backend', backend]);
    const third = await serve(p, gate, undefined, ['--backend', backend]);
    expect((await second.bob.get<Run>(`/api/v1/runs/${run.id}`)).body.status).toBe('needs-approval');

    // Two approvals at once, one on each instance: both count.
    const [a, b] = await Promise.all([
      second.bob.post<Run>(`/api/v1/runs/${run.id}/approve`, { comment: 'from one' }),
      third.dave.post<Run>(`/api/v1/runs/${run.id}/approve`, { comment: 'from the other' }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const done = await final(third.bob, run.id);
    expect(done.status, JSON.stringify(done)).toBe('succeeded');
    expect(done.approval?.decisions.map((d) => d.by).sort()).toEqual(['bob', 'dave']);
    expect(deployed(p)).toEqual(['v1']);
    const release = await second.bob.get<{ approvals?: { by: string }[] }>(
      '/api/v1/projects/shop/stacks/dev/releases/1',
    );
    expect(release.body.approvals?.map((x) => x.by).sort()).toEqual(['bob', 'dave']);
  });
});
