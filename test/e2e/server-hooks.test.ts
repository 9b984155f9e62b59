/**
 * Webhooks and polling through a real `kapps serve`: a bare repository on disk is the remote, deliveries are signed
 * as GitHub and GitLab sign them, and what they queue is read back from the runs API.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Run } from '../../src/api/index.js';
import { gitRemote, type GitRemote } from '../support/git-remote.js';
import { freshDatabases, sql } from '../support/pg.js';
import { cleanupProjects, fake, fixtureProject, kapp, type FixtureProject } from '../support/project.js';
import { api, startServer, stopAllServers, type TestServer } from '../support/server.js';
import { sleep, waitFor } from '../support/wait.js';

const SECRET = 'It is a truth universally acknowledged';
const databases = freshDatabases('kapps_hooks');

afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});

afterAll(async () => {
  await databases.dropAll();
});

/** A project of two stacks, `dev` and `prod`, each one kapp. */
function twoStacks(): FixtureProject {
  const local = (cluster: string) => ({ provider: 'local', cluster, manifests: [{ uri: 'manifests/shop.yaml' }] });
  return fixtureProject({
    name: 'infra',
    manifests: { shop: { kapps: [kapp('web', { apply_install: [fake('deploy', 'web')] })] } },
    stacks: { dev: local('dev'), prod: local('prod') },
  });
}

/** The server's configuration: project `shop` from the remote, with a webhook secret and what else is given. */
function configOf(p: FixtureProject, remote: GitRemote, extra = ''): string {
  return p.write(
    '../server.yaml',
    `projects:\n  - name: shop\n    repo:\n      url: ${remote.url}\n      path: stacks.yaml\n` +
      `    webhook:\n      secret_env: SHOP_HOOK_SECRET\n${extra}`,
  );
}

async function serve(p: FixtureProject, config: string, args: string[] = []): Promise<TestServer> {
  return startServer({
    args: ['--config', config, ...args],
    env: { ...p.env, SHOP_HOOK_SECRET: SECRET },
    cwd: p.root,
  });
}

interface HookAnswer {
  status: number;
  type: string;
  body: {
    status?: string | number;
    reason?: string;
    runs?: Run[];
    title?: string;
    detail?: string;
  };
}

/** POST a delivery of raw `text` with `headers`. */
async function deliver(url: string, path: string, text: string, headers: Record<string, string>): Promise<HookAnswer> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: text,
  });
  const type = response.headers.get('content-type') ?? '';
  return { status: response.status, type, body: JSON.parse(await response.text()) as HookAnswer['body'] };
}

const sign = (secret: string, text: string): string =>
  `sha256=${createHmac('sha256', secret).update(text).digest('hex')}`;

/** A GitHub delivery of `event`, signed with `secret`. */
function github(url: string, event: string, payload: unknown, options: { secret?: string; id?: string } = {}) {
  const text = JSON.stringify(payload, null, 1); // not as JSON.stringify would write it again: the raw bytes count
  return deliver(url, '/api/v1/hooks/github', text, {
    'x-github-event': event,
    'x-github-delivery': options.id ?? randomUUID(),
    'x-hub-signature-256': sign(options.secret ?? SECRET, text),
  });
}

function githubPush(remote: GitRemote, sha: string, branch = 'main') {
  return {
    ref: `refs/heads/${branch}`,
    before: '0'.repeat(40),
    after: sha,
    deleted: false,
    repository: {
      clone_url: `${remote.url}.git/`,
      ssh_url: 'git@example.com:acme/elsewhere.git',
      default_branch: 'main',
    },
  };
}

async function runsOf(server: TestServer): Promise<Run[]> {
  const r = await api(server.url).get<{ runs: Run[] }>('/api/v1/runs');
  expect(r.status).toBe(200);
  return r.body.runs;
}

describe('kapps serve: webhooks', () => {
  it('queues a preview of each stack at the commit of a signed GitHub push, once per delivery', async () => {
    const p = twoStacks();
    const remote = gitRemote(p);
    const server = await serve(p, configOf(p, remote));
    const pushed = remote.commit('Bigger web');
    const id = randomUUID();

    const answer = await github(server.url, 'push', githubPush(remote, pushed), { id });
    expect(answer.status).toBe(202);
    expect(answer.body.status).toBe('queued');
    const queued = answer.body.runs ?? [];
    expect(queued.map((r) => `${r.type} ${r.stack}`).sort()).toEqual(['preview dev', 'preview prod']);
    for (const run of queued) {
      expect(run.commit).toMatchObject({ sha: pushed, ref: 'main', subject: 'Bigger web' });
      expect(run.trigger).toEqual({ kind: 'push', delivery: id, ref: 'refs/heads/main' });
      expect(run.createdBy).toBe('webhook:github');
    }
    expect((await runsOf(server)).length).toBe(2);

    // The same delivery again (GitHub's redelivery): acknowledged, nothing queued.
    const again = await github(server.url, 'push', githubPush(remote, pushed), { id });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'duplicate', runs: [] });
    expect((await runsOf(server)).length).toBe(2);
  });

  it('remembers deliveries across a restart (file backend) and across instances (PostgreSQL)', async () => {
    const p = twoStacks();
    const remote = gitRemote(p);
    const config = configOf(p, remote);
    const pushed = remote.commit('Bigger web');
    const payload = githubPush(remote, pushed);

    const backend = p.path('../backend');
    const first = await serve(p, config, ['--backend', backend]);
    const id = randomUUID();
    expect((await github(first.url, 'push', payload, { id })).status).toBe(202);
    await first.stop();
    const restarted = await serve(p, config, ['--backend', backend]);
    expect((await github(restarted.url, 'push', payload, { id })).body).toMatchObject({ status: 'duplicate' });
    await restarted.stop();

    const url = await databases.create();
    const [a, b] = (await Promise.all(
      ['a', 'b'].map((name) => serve(p, config, ['--backend', url, '--data-dir', p.path(`../data-${name}`)])),
    )) as [TestServer, TestServer];
    const shared = randomUUID();
    expect((await github(a.url, 'push', payload, { id: shared })).body).toMatchObject({ status: 'queued' });
    const again = await github(b.url, 'push', payload, { id: shared });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'duplicate', runs: [] });
    expect((await runsOf(b)).length).toBe(2);
  });

  it("acts only on the projects whose secret verifies the delivery, of the payload's repository and branch", async () => {
    const p = twoStacks();
    const remote = gitRemote(p);
    const other = gitRemote(twoStacks());
    const project = (name: string, url: string, secretEnv: string, branch: string) =>
      `  - name: ${name}\n    repo: {url: ${url}, branch: ${branch}, path: stacks.yaml}\n` +
      `    webhook: {secret_env: ${secretEnv}}\n`;
    const config = p.write(
      '../server.yaml',
      'projects:\n' +
        project('shop', remote.url, 'SHOP_HOOK_SECRET', 'main') +
        project('shop-release', remote.url, 'SHOP_HOOK_SECRET', 'release') +
        project('shop-other-secret', remote.url, 'OTHER_SECRET', 'main') +
        project('blog', other.url, 'SHOP_HOOK_SECRET', 'main'),
    );
    const server = await startServer({
      args: ['--config', config],
      env: { ...p.env, SHOP_HOOK_SECRET: SECRET, OTHER_SECRET: 'another secret' },
      cwd: p.root,
    });
    const pushed = remote.commit('Bigger web');
    const answer = await github(server.url, 'push', githubPush(remote, pushed));
    expect(answer.status).toBe(202);
    expect((answer.body.runs ?? []).map((r) => `${r.project}/${r.stack}`).sort()).toEqual(['shop/dev', 'shop/prod']);

    const elsewhere = await github(server.url, 'push', {
      ...githubPush(remote, pushed),
      repository: { clone_url: 'https://example.com/acme/unknown.git' },
    });
    expect(elsewhere.body).toMatchObject({ status: 'ignored', runs: [] });
    expect((await runsOf(server)).length).toBe(2);
  });

  it('refuses a delivery signed with another secret (401) and ignores what it does not act on', async () => {
    const p = twoStacks();
    const remote = gitRemote(p);
    const server = await serve(p, configOf(p, remote));
    const pushed = remote.commit('Bigger web');

    const forged = await github(server.url, 'push', githubPush(remote, pushed), { secret: 'another secret' });
    expect(forged.status).toBe(401);
    expect(forged.type).toMatch(/^application\/problem\+json/);
    expect(forged.body.detail).toMatch(/X-Hub-Signature-256/);
    expect(forged.body.detail).not.toContain(SECRET);

    const unsigned = await deliver(server.url, '/api/v1/hooks/github', JSON.stringify(githubPush(remote, pushed)), {
      'x-github-event': 'push',
      'x-github-delivery': randomUUID(),
    });
    expect(unsigned.status).toBe(401);

    const ping = await github(server.url, 'ping', { zen: 'Keep it logically awesome.', hook_id: 1 });
    expect(ping.status).toBe(202);
    expect(ping.body).toMatchObject({ status: 'ignored', runs: [] });
    expect(ping.body.reason).toMatch(/ping/);

    const feature = remote.commit('Elsewhere', {}, 'feature');
    const other = await github(server.url, 'push', githubPush(remote, feature, 'feature'));
    expect(other.status).toBe(202);
    expect(other.body).toMatchObject({ status: 'ignored', runs: [] });
    expect(other.body.reason).toMatch(/branch feature/);

    const deleted = await github(server.url, 'push', { ...githubPush(remote, '0'.repeat(40)), deleted: true });
    expect(deleted.status).toBe(202);
    expect(deleted.body.reason).toMatch(/deleted/);

    const malformed = await github(server.url, 'push', { ref: 'refs/heads/main', after: 'not a sha', repository: {} });
    expect(malformed.status).toBe(400);
    expect(malformed.type).toMatch(/^application\/problem\+json/);
    expect(malformed.body.detail).toMatch(/body\.after/);

    // The server answers 413 before reading the rest, and reads (and drops) the rest before it closes the
    // connection: a client still sending gets the answer, not a reset.
    const big = { ...githubPush(remote, pushed), padding: 'x'.repeat(6 << 20) };
    const tooLarge = await github(server.url, 'push', big);
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.type).toMatch(/^application\/problem\+json/);

    const text = JSON.stringify(githubPush(remote, pushed));
    const form = await deliver(server.url, '/api/v1/hooks/github', text, {
      'content-type': 'application/x-www-form-urlencoded',
      'x-github-event': 'push',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': sign(SECRET, text),
    });
    expect(form.status).toBe(415);
    expect(form.type).toMatch(/^application\/problem\+json/);

    expect(await runsOf(server)).toEqual([]);
  });

  it('queues previews at the head of a pull request, fetched by its ref', async () => {
    const p = twoStacks();
    const remote = gitRemote(p);
    const server = await serve(p, configOf(p, remote));
    const head = remote.commit('Try a bigger web', {}, 'feature');
    // What GitHub serves for pull request 7; the branch itself is gone (a fork's, say).
    remote.git('push', '--quiet', 'origin', `${head}:refs/pull/7/head`, ':refs/heads/feature');
    const id = randomUUID();
    const answer = await github(
      server.url,
      'pull_request',
      {
        action: 'synchronize',
        number: 7,
        pull_request: { number: 7, head: { sha: head, ref: 'feature' } },
        repository: { clone_url: remote.url, default_branch: 'main' },
      },
      { id },
    );
    expect(answer.status).toBe(202);
    const queued = answer.body.runs ?? [];
    expect(queued.map((r) => `${r.type} ${r.stack}`).sort()).toEqual(['preview dev', 'preview prod']);
    for (const run of queued) {
      expect(run.commit).toMatchObject({ sha: head, ref: 'refs/pull/7/head', subject: 'Try a bigger web' });
      expect(run.trigger).toEqual({ kind: 'pull_request', delivery: id, ref: 'refs/pull/7/head' });
    }

    const closed = await github(server.url, 'pull_request', {
      action: 'closed',
      number: 7,
      pull_request: { number: 7, head: { sha: head } },
      repository: { clone_url: remote.url },
    });
    expect(closed.body).toMatchObject({ status: 'ignored' });
    expect((await runsOf(server)).length).toBe(2);
  });

  it('queues applies of a push when the project says on_push: apply', async () => {
    const p = twoStacks();
    const remote = gitRemote(p);
    const server = await serve(p, configOf(p, remote, '    on_push: apply\n'));
    const pushed = remote.commit('Ship it');
    // Larger than other requests may be (1 MiB), within the hooks' own limit.
    const answer = await github(server.url, 'push', { ...githubPush(remote, pushed), commits: ['x'.repeat(2 << 20)] });
    expect(answer.status).toBe(202);
    const queued = answer.body.runs ?? [];
    expect(queued.map((r) => `${r.type} ${r.stack} ${r.commit?.sha}`).sort()).toEqual([
      `apply dev ${pushed}`,
      `apply prod ${pushed}`,
    ]);
  });

  it('takes GitLab pushes with the secret token, and refuses a wrong token', async () => {
    const p = twoStacks();
    const remote = gitRemote(p);
    const server = await serve(p, configOf(p, remote));
    const pushed = remote.commit('Bigger web');
    const payload = JSON.stringify({
      object_kind: 'push',
      ref: 'refs/heads/main',
      before: '0'.repeat(40),
      after: pushed,
      checkout_sha: pushed,
      project: { git_http_url: remote.url.replace('file://', 'FILE://'), default_branch: 'main' },
    });
    const headers = (token: string, id: string) => ({
      'x-gitlab-event': 'Push Hook',
      'x-gitlab-event-uuid': id,
      'x-gitlab-token': token,
    });

    const wrong = await deliver(server.url, '/api/v1/hooks/gitlab', payload, headers(`${SECRET}!`, randomUUID()));
    expect(wrong.status).toBe(401);
    expect(wrong.type).toMatch(/^application\/problem\+json/);
    expect(await runsOf(server)).toEqual([]);

    const id = randomUUID();
    const answer = await deliver(server.url, '/api/v1/hooks/gitlab', payload, headers(SECRET, id));
    expect(answer.status).toBe(202);
    const queued = answer.body.runs ?? [];
    expect(queued.map((r) => `${r.type} ${r.stack}`).sort()).toEqual(['preview dev', 'preview prod']);
    for (const run of queued) {
      expect(run.commit?.sha).toBe(pushed);
      expect(run.trigger).toEqual({ kind: 'push', delivery: id, ref: 'refs/heads/main' });
      expect(run.createdBy).toBe('webhook:gitlab');
    }
    const again = await deliver(server.url, '/api/v1/hooks/gitlab', payload, headers(SECRET, id));
    expect(again.status).toBe(200);
    expect((await runsOf(server)).length).toBe(2);
  });
});

describe('kapps serve: polling', () => {
  it('notices a push once across two instances on one PostgreSQL', async () => {
    const p = twoStacks();
    const remote = gitRemote(p);
    const url = await databases.create();
    const config = p.write(
      '../server.yaml',
      `projects:\n  - name: shop\n    repo:\n      url: ${remote.url}\n      path: stacks.yaml\n    poll_seconds: 1\n`,
    );
    const instances = await Promise.all(
      ['a', 'b'].map((name) =>
        startServer({
          args: ['--config', config, '--backend', url, '--data-dir', p.path(`../data-${name}`)],
          env: p.env,
          cwd: p.root,
        }),
      ),
    );
    const [a, b] = instances as [TestServer, TestServer];
    // The first poll only records where the branch is; then a few more intervals pass without a change.
    const claimed = async () =>
      (await sql<{ last_sha: string | null }>(url, 'SELECT last_sha FROM kapps_poll_claims'))[0]?.last_sha ?? null;
    await waitFor('the first poll', async () => (await claimed()) === remote.head());
    await sleep(2500);
    expect(await runsOf(a)).toEqual([]);

    const pushed = remote.commit('Bigger web');
    await waitFor('the runs of the push', async () => (await runsOf(a)).length >= 2);
    // Several more intervals: neither instance queues the same change again.
    await sleep(4000);
    const runs = await runsOf(b);
    expect(runs.map((r) => `${r.type} ${r.stack}`).sort()).toEqual(['preview dev', 'preview prod']);
    for (const run of runs) {
      expect(run.commit?.sha).toBe(pushed);
      expect(run.trigger).toEqual({ kind: 'poll', delivery: null, ref: 'refs/heads/main' });
      expect(run.createdBy).toBe('poll');
    }
    expect(a.stderr() + b.stderr()).not.toMatch(/polling shop failed/);
  });

  it('says on stderr when a poll cannot fetch, without the token, and polls again at the next interval', async () => {
    const p = twoStacks();
    const remote = gitRemote(p);
    const missing = `${remote.url}-moved`;
    const config = p.write(
      '../server.yaml',
      `projects:\n  - name: shop\n    repo:\n      url: ${missing}\n      path: stacks.yaml\n      token_env: SHOP_TOKEN\n` +
        '    poll_seconds: 1\n',
    );
    const token = 'glpat-not-to-be-seen-0123456789';
    const server = await startServer({ args: ['--config', config], env: { ...p.env, SHOP_TOKEN: token }, cwd: p.root });
    const failures = () => server.stderr().match(/kapps serve: polling shop failed \(tried again in 1 s\)/g) ?? [];
    await waitFor('two failed polls', () => failures().length >= 2);
    expect(server.stderr()).not.toContain(token);
    expect((await api(server.url).get('/readyz')).status).toBe(200);
    expect(await runsOf(server)).toEqual([]);
  });
});
