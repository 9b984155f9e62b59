/**
 * Two `kapps serve` instances on one PostgreSQL database, each with its own data directory, serving one project from
 * git: an instance runs a run another took the request for, from its own mirror and working tree, with nothing shared
 * on disk; the release list read from PostgreSQL's columns shows each release's commit.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Run } from '../../src/api/index.js';
import { gitRemote } from '../support/git-remote.js';
import { freshDatabases } from '../support/pg.js';
import { cleanupProjects, fake, fixtureProject, kapp } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun } from '../support/server.js';
import { waitFor } from '../support/wait.js';

const databases = freshDatabases('kapps_git_instances');

afterEach(async () => {
  await stopAllServers();
});

afterAll(async () => {
  cleanupProjects();
  await databases.dropAll();
});

/** The repositories an instance holds in its data directory: each with its mirror and working trees. */
function held(dataDir: string): { mirror: boolean; trees: string[] }[] {
  const sources = path.join(dataDir, 'sources');
  if (!existsSync(sources)) return [];
  return readdirSync(sources).map((repo) => {
    const trees = path.join(sources, repo, 'trees');
    return {
      mirror: existsSync(path.join(sources, repo, 'mirror.git', 'HEAD')),
      trees: existsSync(trees) ? readdirSync(trees) : [],
    };
  });
}

describe('kapps serve: several instances, a project from git, no shared files', () => {
  it('runs a run on the instance that did not take its request, from its own data directory', async () => {
    const p = fixtureProject({
      name: 'infra',
      manifests: {
        slow: { kapps: [kapp('work', { apply_install: [fake('step', 's1', ['--wait-file', 'GATE'])] })] },
        fast: { kapps: [kapp('work', { apply_install: [fake('step', 's2', ['--stdout', 'v1'])] })] },
      },
      stacks: {
        s1: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/slow.yaml' }] },
        s2: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/fast.yaml' }] },
      },
    });
    const gate = path.join(p.root, 'gate');
    p.write('manifests/slow.yaml', {
      kapps: [kapp('work', { apply_install: [fake('step', 's1', ['--wait-file', gate])] })],
    });
    const remote = gitRemote(p);
    const sha = remote.head();
    const config = p.write(
      '../server.yaml',
      `projects:\n  - name: shop\n    repo:\n      url: ${remote.url}\n      path: stacks.yaml\n`,
    );
    const backend = await databases.create();
    const dirA = path.join(p.root, 'instance-a');
    const dirB = path.join(p.root, 'instance-b');
    const start = (dataDir: string) =>
      startServer({
        args: ['--config', config, '--backend', backend, '--data-dir', dataDir, '--max-runs', '1'],
        env: p.env,
        cwd: p.root,
      });

    // A takes both requests; it is busy with the first (one run at a time), so B, started later, runs the second.
    const a = await start(dirA);
    const ca = api(a.url);
    const slow = await ca.post<Run>('/api/v1/runs', { type: 'apply', project: 'shop', stack: 's1' });
    expect(slow.status).toBe(202);
    await waitFor('the slow run to start its step', () => p.traceLines().some((l) => l.tag === 's1'));
    const fast = await ca.post<Run>('/api/v1/runs', { type: 'apply', project: 'shop', stack: 's2' });
    expect(fast.status).toBe(202);
    expect(fast.body.commit?.sha).toBe(sha);
    expect(existsSync(dirB)).toBe(false);

    const b = await start(dirB);
    const cb = api(b.url);
    const ran = await waitForRun(cb, fast.body.id);
    expect(ran.error).toBeNull();
    expect(ran.status).toBe('succeeded');
    expect((await ca.get<Run>(`/api/v1/runs/${slow.body.id}`)).body.status).toBe('running');
    // B cloned into its own data directory; no working tree is left once its run ended.
    expect(held(dirB)).toEqual([{ mirror: true, trees: [] }]);

    writeFileSync(gate, 'go');
    expect((await waitForRun(ca, slow.body.id)).status).toBe('succeeded');
    expect(held(dirA)).toEqual([{ mirror: true, trees: [] }]);

    // The release lists come from PostgreSQL's columns, on either instance.
    for (const c of [ca, cb]) {
      for (const stack of ['s1', 's2']) {
        const list = await c.get<{ revision: number; source?: unknown }[]>(
          `/api/v1/projects/shop/stacks/${stack}/releases`,
        );
        expect(list.body).toMatchObject([{ revision: 1, source: { repo: remote.url, commit: sha } }]);
        const one = await c.get<{ source?: unknown }>(`/api/v1/projects/shop/stacks/${stack}/releases/1`);
        expect(one.body.source).toEqual({ repo: remote.url, commit: sha });
      }
    }
  });
});
