/**
 * Rollback runs on a real `kapps serve`: a project from git rolled back to revision 1 runs at the commit revision 1
 * recorded (its steps as they were then), the preview of the rollback first and the rollback naming it; the CLI's
 * `release rollback --server` does the same; a plan-role token may preview a rollback but not run one (403); a
 * rollback without its target, a bad target and rollback options on other runs are 400 problems naming the field.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Run } from '../../src/api/index.js';
import { runCli } from '../support/cli.js';
import { gitRemote } from '../support/git-remote.js';
import { cleanupProjects, fake, fixtureProject, kapp, type FixtureProject } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun, type ApiClient } from '../support/server.js';

afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

function manifest(tag: string) {
  return { kapps: [kapp('web', { apply_install: [fake('deploy', 'web', ['--stdout', tag])] })] };
}

/** A project `shop` from git (two tokens: `apply-secret` and `plan-secret`). */
async function serve(p: FixtureProject, url: string) {
  const config = p.write(
    '../server.yaml',
    `projects:\n  - name: shop\n    repo:\n      url: ${url}\n      path: stacks.yaml\n` +
      `tokens:\n  - name: deployer\n    role: apply\n    sha256: ${sha('apply-secret')}\n` +
      `  - name: viewer\n    role: plan\n    sha256: ${sha('plan-secret')}\n`,
  );
  const server = await startServer({
    args: ['--config', config, '--data-dir', path.join(p.root, 'data')],
    env: p.env,
    cwd: p.root,
  });
  return { server, c: api(server.url, 'apply-secret'), viewer: api(server.url, 'plan-secret') };
}

/** The `--stdout` value of each deploy that started, in order. */
function deployed(p: FixtureProject): string[] {
  return p
    .traceLines()
    .filter((l) => l.event === 'start' && l.tag === 'web')
    .map((l) => l.args[l.args.indexOf('--stdout') + 1] ?? '');
}

async function done(c: ApiClient, body: Record<string, unknown>): Promise<Run> {
  const r = await c.post<Run>('/api/v1/runs', { project: 'shop', stack: 'dev', ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const run = await waitForRun(c, r.body.id, undefined, 60_000);
  expect(run.status, JSON.stringify(run)).toBe('succeeded');
  return run;
}

interface ReleaseBody {
  revision: number;
  rollbackOf?: number;
  source?: { commit: string };
}

describe('kapps serve: rollback runs', () => {
  it("rolls a project from git back to revision 1's commit: the preview first, then the rollback naming it", async () => {
    const p = fixtureProject({ name: 'infra', manifests: { shop: manifest('v1') } });
    const remote = gitRemote(p);
    const first = remote.head();
    const { c, viewer } = await serve(p, remote.url);
    await done(c, { type: 'apply' });
    remote.commit('v2', { 'manifests/shop.yaml': manifest('v2') });
    await done(c, { type: 'apply' });
    expect(deployed(p)).toEqual(['v1', 'v2']);

    // A plan-role token may preview the rollback, at revision 1's commit.
    const preview = await done(viewer, { type: 'preview', toRevision: 1 });
    expect(preview.commit).toMatchObject({ sha: first, ref: 'revision 1' });
    const result = await c.get<{ basedOnRevision: number; kapps: { id: string; action: string }[] }>(
      `/api/v1/runs/${preview.id}/result`,
    );
    expect(result.body.basedOnRevision).toBe(2);
    expect(result.body.kapps.map((k) => [k.id, k.action])).toEqual([['shop:web', 'Update']]);
    expect(deployed(p)).toEqual(['v1', 'v2']);

    // …but not roll back: 403.
    const refused = await viewer.post('/api/v1/runs', {
      type: 'rollback',
      project: 'shop',
      stack: 'dev',
      previewRunId: preview.id,
    });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toBe('viewer has role plan; a rollback run needs apply');

    const rolled = await done(c, { type: 'rollback', previewRunId: preview.id });
    expect(rolled.commit).toMatchObject({ sha: first, ref: 'revision 1' });
    expect(rolled.releaseRevision).toBe(3);
    expect(deployed(p)).toEqual(['v1', 'v2', 'v1']);
    const three = await c.get<ReleaseBody>('/api/v1/projects/shop/stacks/dev/releases/3');
    expect(three.body).toMatchObject({ revision: 3, rollbackOf: 1, source: { commit: first } });
    const list = await c.get<ReleaseBody[]>('/api/v1/projects/shop/stacks/dev/releases');
    expect(list.body.map((r) => [r.revision, r.rollbackOf ?? null])).toEqual([
      [3, 1],
      [2, null],
      [1, null],
    ]);

    // The same preview again: it no longer holds (the latest release moved), nothing applied.
    const stale = await c.post<Run>('/api/v1/runs', {
      type: 'rollback',
      project: 'shop',
      stack: 'dev',
      previewRunId: preview.id,
    });
    expect(stale.status).toBe(202);
    const staleRun = await waitForRun(c, stale.body.id, undefined, 60_000);
    expect(staleRun.status).toBe('failed');
    expect(staleRun.error).toContain('changed since preview run');
    expect(deployed(p)).toEqual(['v1', 'v2', 'v1']);
  });

  it('kapps release rollback --server: the preview, then with -y the rollback run, recorded with rollbackOf', async () => {
    const p = fixtureProject({ name: 'infra', manifests: { shop: manifest('v1') } });
    const remote = gitRemote(p);
    const { server, c } = await serve(p, remote.url);
    await done(c, { type: 'apply' });
    remote.commit('v2', { 'manifests/shop.yaml': manifest('v2') });
    await done(c, { type: 'apply' });

    const cli = (...args: string[]) =>
      runCli(['release', 'rollback', p.stackFile, 'dev', '--server', server.url, '--project', 'shop', ...args], {
        cwd: p.dir,
        env: { ...p.env, KAPPS_TOKEN: 'apply-secret' },
        killAfterMs: 60_000,
      });
    const shown = await cli('--to', '-1');
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/shop:web\s+Update/);
    expect(shown.stderr).toContain('Nothing was changed. To apply this rollback:');
    expect(deployed(p)).toEqual(['v1', 'v2']);

    const applied = await cli('--to', '-1', '-y', '--reporter', 'plain');
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain('Recorded as release 3 of stack dev');
    expect(deployed(p)).toEqual(['v1', 'v2', 'v1']);
    const three = await c.get<ReleaseBody>('/api/v1/projects/shop/stacks/dev/releases/3');
    expect(three.body).toMatchObject({ revision: 3, rollbackOf: 1 });
  });

  it('rolls back a stack file on the server kept in a git checkout, and with prune deletes the kapp added since', async () => {
    const p = fixtureProject({ name: 'infra', manifests: { shop: manifest('v1') } });
    const remote = gitRemote(p);
    const config = p.write(
      '../server.yaml',
      `projects:\n  - name: local\n    stack_file: ${p.stackFile}\n` +
        `tokens:\n  - name: deployer\n    role: apply\n    sha256: ${sha('apply-secret')}\n`,
    );
    const server = await startServer({
      args: ['--config', config, '--data-dir', path.join(p.root, 'data')],
      env: p.env,
      cwd: p.root,
    });
    const c = api(server.url, 'apply-secret');
    const local = { project: 'local' };
    await done(c, { ...local, type: 'apply' });
    remote.commit('v2 and extra', {
      'manifests/shop.yaml': {
        kapps: [
          kapp('web', { apply_install: [fake('deploy', 'web', ['--stdout', 'v2'])] }),
          kapp('extra', {
            apply_install: [fake('deploy', 'extra-up')],
            apply_delete: [fake('remove', 'extra-down')],
          }),
        ],
      },
    });
    await done(c, { ...local, type: 'apply' });
    expect(deployed(p)).toEqual(['v1', 'v2']);

    const rolled = await done(c, { ...local, type: 'rollback', toRevision: 1, prune: true });
    expect(deployed(p)).toEqual(['v1', 'v2', 'v1']);
    expect(p.traceLines().filter((l) => l.event === 'start' && l.tag === 'extra-down')).toHaveLength(1);
    expect(rolled.releaseRevision).toBe(4);
    const list = await c.get<(ReleaseBody & { operation: string; source?: { dirty?: boolean } })[]>(
      '/api/v1/projects/local/stacks/dev/releases',
    );
    expect(list.body.map((r) => [r.revision, r.operation, r.rollbackOf ?? null])).toEqual([
      [4, 'delete', 1],
      [3, 'install', 1],
      [2, 'install', null],
      [1, 'install', null],
    ]);
    // The rollback ran at revision 1's commit: its release records it, clean.
    expect(list.body[1]?.source).toMatchObject({ commit: list.body[3]?.source?.commit, dirty: false });
  });

  it('answers 400 naming the field for a rollback without its target, a bad one, and rollback options elsewhere', async () => {
    const p = fixtureProject({ name: 'infra', manifests: { shop: manifest('v1') } });
    const remote = gitRemote(p);
    const { c } = await serve(p, remote.url);
    await done(c, { type: 'apply' });
    const cases: [Record<string, unknown>, string, number][] = [
      [{ type: 'rollback' }, 'body.toRevision', 400],
      [{ type: 'rollback', toRevision: 0 }, 'body.toRevision', 400],
      [{ type: 'rollback', toRevision: 'one' }, 'body.toRevision', 400],
      [{ type: 'rollback', toRevision: 5 }, 'body.toRevision', 400],
      [{ type: 'rollback', toRevision: -1 }, 'body.toRevision', 400],
      [{ type: 'apply', toRevision: 1 }, 'body.toRevision', 400],
      [{ type: 'apply', prune: true }, 'body.prune', 400],
      [{ type: 'preview', force: true }, 'body.force', 400],
      [{ type: 'rollback', toRevision: 1, include: ['shop:web'] }, 'body.include', 400],
      [{ type: 'rollback', toRevision: 1, ref: 'main' }, 'body.ref', 400],
    ];
    for (const [body, field, status] of cases) {
      const r = await c.post('/api/v1/runs', { project: 'shop', stack: 'dev', ...body });
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.headers.get('content-type'), JSON.stringify(body)).toMatch(/^application\/problem\+json/);
      expect(JSON.stringify(r.body), JSON.stringify(body)).toContain(field);
    }
    // No run was queued by any of them.
    const runs = await c.get('/api/v1/runs?project=shop');
    expect(runs.body.runs?.map((r) => r.type)).toEqual(['apply']);
  });
});
