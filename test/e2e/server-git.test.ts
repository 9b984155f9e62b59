/**
 * Projects from git through a real `kapps serve`: a bare repository on disk is the remote, each run is pinned to
 * the commit it was submitted at, and its release records that commit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Run } from '../../src/api/index.js';
import { gitRemote } from '../support/git-remote.js';
import { cleanupProjects, fake, fixtureProject, kapp } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun } from '../support/server.js';

afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});

function shop(tag = 'v1') {
  return fixtureProject({
    name: 'infra',
    manifests: { shop: { kapps: [kapp('web', { apply_install: [fake('deploy', 'web', ['--stdout', tag])] })] } },
  });
}

describe('kapps serve: projects from git', () => {
  it('pins a run to the commit it was submitted at, and records it', async () => {
    const p = shop();
    const remote = gitRemote(p);
    const first = remote.head();
    const config = p.write(
      '../server.yaml',
      `projects:\n  - name: shop\n    repo:\n      url: ${remote.url}\n      path: stacks.yaml\n`,
    );
    const server = await startServer({ args: ['--config', config], env: p.env, cwd: p.root });
    const c = api(server.url);
    const projects = await c.get<{ projects: { name: string; stacks: string[]; repo: unknown }[] }>('/api/v1/projects');
    expect(projects.body.projects[0]).toMatchObject({ name: 'shop', stacks: ['dev'] });
    const submitted = await c.post<Run>('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    expect(submitted.status).toBe(202);
    expect(submitted.body.commit).toMatchObject({ sha: first, ref: 'main', subject: 'First stack' });
    expect(submitted.body.commit?.author).toBe('Ada Lovelace <ada@example.com>');
    expect(submitted.body.trigger).toEqual({ kind: 'api', delivery: null, ref: null });
    const done = await waitForRun(c, submitted.body.id);
    expect(done.error).toBeNull();
    expect(done.status).toBe('succeeded');
  });
});
