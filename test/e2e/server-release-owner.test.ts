/**
 * Who ran a release: a release recorded by a runs server run is owned by the token that submitted the run (the
 * run's `createdBy`), the login the server runs as kept beside it; a CLI release by the user running kapps.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupProjects, fake, fixtureProject, kapp } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun } from '../support/server.js';

afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});

interface Owner {
  user: string;
  machineUser?: string;
  host: string;
  pid: number;
}

describe('the owner of a release', () => {
  it('is the token that submitted a server run, the machine login kept apart; a CLI run’s is its user', async () => {
    const p = fixtureProject({
      manifests: { shop: { kapps: [kapp('db', { apply_install: [fake('apply', 'db')] })] } },
    });
    const config = join(p.dir, 'kapps-server.yaml');
    const sha = createHash('sha256').update('deploy-secret').digest('hex');
    writeFileSync(
      config,
      `projects:\n  - name: shop\n    stack_file: stacks.yaml\n` +
        `tokens:\n  - name: release-bot\n    role: apply\n    sha256: ${sha}\n`,
    );
    const server = await startServer({ args: ['--config', config], env: p.env, cwd: p.dir });
    const c = api(server.url, 'deploy-secret');
    const apply = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    expect(apply.status).toBe(202);
    const run = await waitForRun(c, apply.body.id!);
    expect(run).toMatchObject({ status: 'succeeded', releaseRevision: 1, createdBy: 'release-bot' });

    const me = userInfo().username;
    const expected = { user: 'release-bot', machineUser: me, host: hostname() };
    const listed = await c.get<{ revision: number; owner: Owner }[]>('/api/v1/projects/shop/stacks/dev/releases');
    expect(listed.status).toBe(200);
    expect(listed.body[0]).toMatchObject({ revision: 1, owner: expected });
    const summary = await c.get<{ latestRelease: { owner: Owner } }>('/api/v1/projects/shop/stacks/dev');
    expect(summary.body.latestRelease.owner).toMatchObject(expected);

    const env = { KAPPS_BACKEND: server.backend! };
    const shown = await p.run('release', ['show', p.stackFile, 'dev', '-o', 'json'], { bare: true, env });
    expect(shown.code, shown.stderr).toBe(0);
    expect((JSON.parse(shown.stdout) as { owner: Owner }).owner).toMatchObject(expected);

    // The same stack installed by the CLI: owned by the user running kapps, no machineUser.
    const cli = await p.run('install', ['-y'], { env });
    expect(cli.code, cli.stderr).toBe(0);
    const list = await p.run('release', ['list', p.stackFile, 'dev', '-o', 'json'], { bare: true, env });
    const releases = JSON.parse(list.stdout) as { revision: number; owner: Owner }[];
    expect(releases.map((r) => [r.revision, r.owner.user, r.owner.machineUser])).toEqual([
      [2, me, undefined],
      [1, 'release-bot', me],
    ]);
    const table = await p.run('release', ['list', p.stackFile, 'dev'], { bare: true, env });
    const row = (revision: number): string =>
      table.stdout.split('\n').find((line) => line.startsWith(`${revision} `)) ?? '';
    expect(row(1)).toContain(`release-bot via ${me}@${hostname()} (pid `);
    expect(row(2)).toContain(`${me}@${hostname()} (pid `);
    expect(row(2)).not.toContain('via');
  });
});
