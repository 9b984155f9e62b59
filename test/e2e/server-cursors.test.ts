/**
 * The one cursor rule of the API, on both backends: a page's cursor is 1 to 15 decimal digits; anything else — a
 * 16-digit number too — is a 400 problem naming `query.cursor`, never a 500, for the runs and for the releases.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freshDatabases } from '../support/pg.js';
import { cleanupProjects, fake, fixtureProject, kapp } from '../support/project.js';
import { api, startServer, stopAllServers } from '../support/server.js';

const databases = freshDatabases('kapps_cursors');
afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});
afterAll(() => databases.dropAll());

const backends = [
  { name: 'files', backend: (home: string) => Promise.resolve(home) },
  { name: 'PostgreSQL', backend: () => databases.create() },
];

describe.each(backends)('kapps serve: cursors ($name backend)', ({ backend }) => {
  it('answers a cursor of 16 digits (or not digits) 400 naming the field, and one of 15 digits 200', async () => {
    const p = fixtureProject({
      manifests: { shop: { kapps: [kapp('db', { apply_install: [fake('apply', 'db')] })] } },
    });
    const server = await startServer({
      args: ['--project', `shop=${p.stackFile}`, '--backend', await backend(p.kappsHome)],
      env: p.env,
      cwd: p.dir,
    });
    const c = api(server.url);
    const submitted = await c.post<{ id: string }>('/api/v1/runs', { type: 'generate', project: 'shop', stack: 'dev' });
    expect(submitted.status).toBe(202);
    for (const path of ['/api/v1/runs?limit=2', '/api/v1/projects/shop/stacks/dev/releases?limit=2']) {
      for (const cursor of ['1234567890123456', '99999999999999999999', '-1', '1e3', 'abc']) {
        const bad = await c.get(`${path}&cursor=${encodeURIComponent(cursor)}`);
        expect(bad.status, `${path} cursor ${cursor}`).toBe(400);
        expect(bad.headers.get('content-type')).toContain('application/problem+json');
        expect(JSON.stringify(bad.body)).toContain('query.cursor');
      }
      expect((await c.get(`${path}&cursor=999999999999999`)).status).toBe(200);
    }
    const runs = await c.get<{ runs: { id: string }[] }>('/api/v1/runs?limit=2&cursor=999999999999999');
    expect(runs.body.runs.map((r) => r.id)).toEqual([submitted.body.id]);
  });
});
