/**
 * A warm `kapps serve` on PostgreSQL keeps its release store open for its runs: a run opens no connection pool of its
 * own (the CLI's connections are named `kapps`; the server's `kapps-serve…`), and a run ending leaves the server's
 * store open, so the next runs record their releases and the server still reads them.
 */
import path from 'node:path';
import { existsSync, writeFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freshDatabases, sql } from '../support/pg.js';
import { cleanupProjects, fake, fixtureProject, kapp, tempDir } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun } from '../support/server.js';
import { waitFor } from '../support/wait.js';

const databases = freshDatabases('kapps_warm');

afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});
afterAll(() => databases.dropAll());

describe('kapps serve on PostgreSQL: runs share the server’s release store', () => {
  it('a run opens no release store of its own, and the runs after it record their releases', async () => {
    const url = await databases.create();
    const marks = tempDir('kapps-warm-');
    const started = path.join(marks, 'started');
    const go = path.join(marks, 'go');
    const p = fixtureProject({
      manifests: {
        shop: {
          kapps: [
            kapp('db', {
              apply_install: [fake('migrate', 'db', ['--write-file', started, 'yes', '--wait-file', go, '60000'])],
            }),
          ],
        },
      },
    });
    const server = await startServer({
      args: ['--project', `shop=${p.stackFile}`, '--backend', url],
      env: p.env,
      cwd: p.dir,
    });
    const c = api(server.url);
    const names = async (): Promise<string[]> =>
      (
        await sql<{ name: string }>(
          url,
          `SELECT application_name AS name FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() ORDER BY 1`,
        )
      ).map((r) => r.name);

    const first = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    expect(first.status).toBe(202);
    // The run holds its release (begun, its plan recorded) while its step waits.
    await waitFor('the step to start', () => existsSync(started));
    const during = await names();
    expect(during.filter((n) => !n.startsWith('kapps-serve'))).toEqual([]);
    expect(during).toContain('kapps-serve-releases');
    writeFileSync(go, '');
    expect((await waitForRun(c, first.body.id!)).status).toBe('succeeded');

    for (const n of [2, 3]) {
      const run = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
      expect(run.status).toBe(202);
      const ended = await waitForRun(c, run.body.id!);
      expect(ended).toMatchObject({ status: 'succeeded', releaseRevision: n });
    }
    const releases = await c.get('/api/v1/projects/shop/stacks/dev/releases?limit=10');
    expect(releases.status).toBe(200);
    expect((releases.body as { releases: { revision: number }[] }).releases.map((r) => r.revision)).toEqual([3, 2, 1]);
  });
});
