/**
 * Runs of a project from git, each at the commit it was submitted at, through a real `kapps serve` and a bare
 * repository on disk: the release records that commit, an apply of a preview applies the preview's commit whatever
 * the branch did since, queued runs keep their commit, refs are resolved (or refused) at submission, and two runs of
 * different commits work in two working trees that are gone once the runs end.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Run } from '../../src/api/index.js';
import { runCli } from '../support/cli.js';
import { gitRemote } from '../support/git-remote.js';
import { cleanupProjects, fake, fixtureProject, kapp, type FixtureProject } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun, type ApiClient, type TestServer } from '../support/server.js';
import { waitFor } from '../support/wait.js';

afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});

/** The manifest of `shop`: one kapp whose step prints `tag` (and waits for `gate` when given). */
function manifest(tag: string, gate?: string) {
  const wait = gate ? ['--wait-file', gate] : [];
  return { kapps: [kapp('web', { apply_install: [fake('deploy', 'web', ['--stdout', tag, ...wait])] })] };
}

function shop(gate?: string, stacks?: Record<string, unknown>) {
  return fixtureProject({ name: 'infra', manifests: { shop: manifest('v1', gate) }, ...(stacks ? { stacks } : {}) });
}

async function serve(p: FixtureProject, url: string): Promise<{ c: ApiClient; server: TestServer; dataDir: string }> {
  const config = p.write(
    '../server.yaml',
    `projects:\n  - name: shop\n    repo:\n      url: ${url}\n      path: stacks.yaml\n  - name: local\n    stack_file: ${p.stackFile}\n`,
  );
  const dataDir = path.join(p.root, 'data');
  const server = await startServer({ args: ['--config', config, '--data-dir', dataDir], env: p.env, cwd: p.root });
  return { c: api(server.url), server, dataDir };
}

/** The `--stdout` value of each `deploy` step that started, in order. */
function deployed(p: FixtureProject): string[] {
  return p
    .traceLines()
    .filter((l) => l.event === 'start' && l.tag === 'web')
    .map((l) => l.args[l.args.indexOf('--stdout') + 1] ?? '');
}

async function submit(c: ApiClient, body: Record<string, unknown>): Promise<Run> {
  const r = await c.post<Run>('/api/v1/runs', { project: 'shop', stack: 'dev', ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  return r.body;
}

/** The working trees of the repository's commits in the instance's data directory. */
function trees(dataDir: string): string[] {
  const sources = path.join(dataDir, 'sources');
  if (!existsSync(sources)) return [];
  return readdirSync(sources).flatMap((repo) => {
    const dir = path.join(sources, repo, 'trees');
    return existsSync(dir) ? readdirSync(dir) : [];
  });
}

describe('kapps serve: runs at a commit of a project from git', () => {
  it('records the commit in the release: the record, the list, the API and `kapps release list`', async () => {
    const p = shop();
    const remote = gitRemote(p);
    const first = remote.head();
    const { c, server } = await serve(p, remote.url);
    const run = await waitForRun(c, (await submit(c, { type: 'apply' })).id);
    expect(run.status).toBe('succeeded');
    const release = await c.get<Record<string, unknown>>('/api/v1/projects/shop/stacks/dev/releases/1');
    expect(release.status).toBe(200);
    expect(release.body.source).toEqual({ repo: remote.url, commit: first });
    const list = await c.get<{ source?: unknown }[]>('/api/v1/projects/shop/stacks/dev/releases');
    expect(list.body.map((r) => r.source)).toEqual([{ repo: remote.url, commit: first }]);
    const page = await c.get<{ releases: { source?: unknown }[] }>('/api/v1/projects/shop/stacks/dev/releases?limit=5');
    expect(page.body.releases.map((r) => r.source)).toEqual([{ repo: remote.url, commit: first }]);

    // A stack file on the server in a git checkout records the checkout: its commit, that it was clean, the path.
    expect((await waitForRun(c, (await submit(c, { type: 'apply', project: 'local' })).id)).status).toBe('succeeded');
    const local = await c.get<Record<string, unknown>>('/api/v1/projects/local/stacks/dev/releases/1');
    expect(local.status).toBe(200);
    expect(local.body.source).toEqual({ repo: remote.bare, commit: first, dirty: false, path: 'stacks.yaml' });

    // The CLI reads the same store: the release project of a repository without `project:` is its name.
    const cli = await runCli(
      ['release', 'list', p.stackFile, 'dev', '--project', 'remote', '--backend', server.backend ?? ''],
      { cwd: p.dir, env: p.env },
    );
    expect(cli.stderr).toBe(`Releases of remote/dev (project from --project) in ${server.backend ?? ''}\n`);
    expect(cli.code).toBe(0);
    const [header, row] = cli.stdout.split('\n');
    expect(header).toMatch(/ COMMIT$/);
    expect(row).toMatch(new RegExp(`^1 +install +succeeded .* ${first.slice(0, 12)}$`));
    const shown = await runCli(
      ['release', 'show', p.stackFile, 'dev', '--project', 'remote', '--backend', server.backend ?? ''],
      { cwd: p.dir, env: p.env },
    );
    expect(shown.stdout).toContain(`source:\n  repo: ${remote.url}\n  commit: ${first}\n`);
    expect(shown.stderr).toBe(`Release 1 of remote/dev: commit ${first.slice(0, 12)} of ${remote.url}\n`);
  });

  it("applies a preview at the preview's commit after a push, and refuses it as stale only when the release changed", async () => {
    const p = shop();
    const remote = gitRemote(p);
    const first = remote.head();
    const { c } = await serve(p, remote.url);
    const preview = await waitForRun(c, (await submit(c, { type: 'preview' })).id);
    expect(preview.status).toBe('succeeded');
    const second = remote.commit('Deploy v2', { 'manifests/shop.yaml': manifest('v2') });
    expect(second).not.toBe(first);

    // The branch moved; the apply of the preview still applies what the preview showed.
    const apply = await submit(c, { type: 'apply', previewRunId: preview.id });
    expect(apply.commit?.sha).toBe(first);
    const applied = await waitForRun(c, apply.id);
    expect(applied.error).toBeNull();
    expect(applied.status).toBe('succeeded');
    expect(deployed(p)).toEqual(['v1']);
    const release1 = await c.get<Record<string, unknown>>('/api/v1/projects/shop/stacks/dev/releases/1');
    expect(release1.body.source).toEqual({ repo: remote.url, commit: first });

    // A preview at the new commit, then another release of the stack: its apply is stale.
    const preview2 = await waitForRun(c, (await submit(c, { type: 'preview' })).id);
    expect(preview2.commit?.sha).toBe(second);
    expect((await waitForRun(c, (await submit(c, { type: 'apply' })).id)).status).toBe('succeeded');
    expect(deployed(p)).toEqual(['v1', 'v2']);
    const stale = await waitForRun(c, (await submit(c, { type: 'apply', previewRunId: preview2.id })).id);
    expect(stale.status).toBe('failed');
    expect(stale.error).toMatch(
      /^stale preview: the last release of shop\/dev changed since preview run .* \(revision 1 then, 2 now\)$/,
    );
    expect(deployed(p)).toEqual(['v1', 'v2']);
  });

  it('runs a queued run at the commit it was submitted at, though the branch moved before it started', async () => {
    const p = shop();
    const gate = path.join(p.root, 'gate');
    p.write('manifests/shop.yaml', manifest('v1', gate));
    const remote = gitRemote(p);
    const first = remote.head();
    const { c } = await serve(p, remote.url);
    const slow = await submit(c, { type: 'apply' });
    await waitFor('the slow run to start its step', () => deployed(p).length === 1);
    const queued = await submit(c, { type: 'apply' });
    expect(queued.status).toBe('queued');
    const second = remote.commit('Deploy v2', { 'manifests/shop.yaml': manifest('v2', gate) });
    writeFileSync(gate, 'go');
    expect((await waitForRun(c, slow.id)).status).toBe('succeeded');
    const ran = await waitForRun(c, queued.id);
    expect(ran.status).toBe('succeeded');
    expect(ran.commit?.sha).toBe(first);
    expect(deployed(p)).toEqual(['v1', 'v1']);
    const after = await waitForRun(c, (await submit(c, { type: 'apply' })).id);
    expect(after.commit?.sha).toBe(second);
    expect(deployed(p)).toEqual(['v1', 'v1', 'v2']);
    const release2 = await c.get<Record<string, unknown>>('/api/v1/projects/shop/stacks/dev/releases/2');
    expect(release2.body.source).toEqual({ repo: remote.url, commit: first });
  });

  it('resolves a branch, a tag and a SHA at submission; refuses an unknown ref, a ref of a stack file and an option', async () => {
    const p = shop();
    const remote = gitRemote(p);
    const first = remote.head();
    const feature = remote.commit('Feature work', { 'manifests/shop.yaml': manifest('feature') }, 'feature');
    remote.git('tag', 'v1.0', first);
    remote.git('push', '--quiet', 'origin', 'v1.0');
    const { c } = await serve(p, remote.url);
    const at = async (ref: string) => (await submit(c, { type: 'generate', ref })).commit;
    expect(await at('feature')).toMatchObject({ ref: 'feature', sha: feature, subject: 'Feature work' });
    expect(await at('v1.0')).toMatchObject({ ref: 'v1.0', sha: first, subject: 'First stack' });
    expect(await at(feature)).toMatchObject({ ref: feature, sha: feature });
    expect(await at(first.slice(0, 10))).toMatchObject({ sha: first });

    const generated = await submit(c, { type: 'generate', ref: 'feature' });
    expect(generated.trigger).toEqual({ kind: 'api', delivery: null, ref: 'feature' });
    await waitForRun(c, generated.id);
    const body = await c.get<string>(`/api/v1/runs/${generated.id}/result`);
    expect(body.body).toContain('feature');

    // One Idempotency-Key: the same ref is the same request, another ref another request.
    const keyed = (ref: string) =>
      c.post<Run & { detail?: string }>(
        '/api/v1/runs',
        { type: 'generate', project: 'shop', stack: 'dev', ref },
        { 'Idempotency-Key': 'k1' },
      );
    const once = await keyed('feature');
    expect(once.status).toBe(202);
    const again = await keyed('feature');
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(once.body.id);
    const other = await keyed('main');
    expect(other.status).toBe(409);
    expect(other.body.detail).toMatch(/^Idempotency-Key "k1" was used for another request/);

    const refused = async (body: Record<string, unknown>) => {
      const r = await c.post('/api/v1/runs', { type: 'generate', project: 'shop', stack: 'dev', ...body });
      expect(r.status).toBe(400);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      return r.body.errors;
    };
    expect(await refused({ ref: 'nope' })).toEqual([
      { field: 'body.ref', message: `\`nope\` is no branch, tag or commit of ${remote.url}` },
    ]);
    expect(await refused({ ref: 'main', project: 'local' })).toEqual([
      { field: 'body.ref', message: 'project `local` is a stack file on the server: it has no branches or commits' },
    ]);
    const option = await refused({ ref: '--upload-pack=touch /tmp/x' });
    expect(option?.map((e: { field: string }) => e.field)).toEqual(['body.ref']);
    const option2 = await refused({ ref: '-x' });
    expect(option2?.map((e: { field: string }) => e.field)).toEqual(['body.ref']);
  });

  it('runs two stacks at two commits at once, each in its own working tree, removed when the runs end', async () => {
    const gate = 'GATE';
    const p = shop(undefined, {
      dev: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/shop.yaml' }] },
      prod: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/shop.yaml' }] },
    });
    const gateFile = path.join(p.root, gate);
    p.write('manifests/shop.yaml', manifest('v1', gateFile));
    const remote = gitRemote(p);
    const first = remote.head();
    const second = remote.commit('Deploy v2', { 'manifests/shop.yaml': manifest('v2', gateFile) });
    const { c, dataDir } = await serve(p, remote.url);
    const dev = await submit(c, { type: 'apply', ref: first });
    const prod = await submit(c, { type: 'apply', stack: 'prod', ref: 'main' });
    await waitFor('both runs to start their step', () => deployed(p).length === 2);
    expect(trees(dataDir).sort()).toEqual([first, second].sort());
    writeFileSync(gateFile, 'go');
    expect((await waitForRun(c, dev.id)).status).toBe('succeeded');
    expect((await waitForRun(c, prod.id)).status).toBe('succeeded');
    const byStack = p
      .traceLines()
      .filter((l) => l.event === 'start' && l.tag === 'web')
      .map((l) => l.args[l.args.indexOf('--stdout') + 1])
      .sort();
    expect(byStack).toEqual(['v1', 'v2']);
    const devRelease = await c.get<Record<string, unknown>>('/api/v1/projects/shop/stacks/dev/releases/1');
    const prodRelease = await c.get<Record<string, unknown>>('/api/v1/projects/shop/stacks/prod/releases/1');
    expect(devRelease.body.source).toEqual({ repo: remote.url, commit: first });
    expect(prodRelease.body.source).toEqual({ repo: remote.url, commit: second });
    await waitFor('the working trees to be removed', () => trees(dataDir).length === 0);
    expect(trees(dataDir)).toEqual([]);
  });
});
