/**
 * The release history through a real `kapps serve`, by pages: `limit` and `cursor` give `{releases, nextCursor}`,
 * newest first, each page the next revisions down, the last with a null cursor; without them the whole list as
 * `kapps release list -o json` prints it; a cursor the server never gave is a 400 problem naming the field.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FileReleaseStore } from '../../src/release/file-store.js';
import { cleanupProjects, fake, fixtureProject, kapp } from '../support/project.js';
import { api, startServer, stopAllServers } from '../support/server.js';

afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});

interface Page {
  releases: { revision: number; operation: string; phase: string; kappsCount: number; durationMs: number | null }[];
  nextCursor: string | null;
}

describe('kapps serve: the release history by pages', () => {
  it('pages five releases two at a time, newest first, and still answers the whole list without a limit', async () => {
    const p = fixtureProject({
      manifests: { shop: { kapps: [kapp('db', { apply_install: [fake('apply', 'db')] })] } },
    });
    for (let i = 0; i < 5; i++) {
      const r = await p.run('install', ['-y'], { env: { KAPPS_BACKEND: p.kappsHome } });
      expect(r.code, r.stderr).toBe(0);
    }
    const server = await startServer({
      args: ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome],
      env: p.env,
      cwd: p.dir,
    });
    const c = api(server.url);
    const base = '/api/v1/projects/shop/stacks/dev/releases';
    const seen: number[][] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 4; i++) {
      const r: { status: number; body: Page } = await c.get<Page>(
        `${base}?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(r.status).toBe(200);
      seen.push(r.body.releases.map((x) => x.revision));
      expect(r.body.releases.every((x) => x.operation === 'install' && x.phase === 'succeeded')).toBe(true);
      expect(r.body.releases.every((x) => x.kappsCount === 1 && typeof x.durationMs === 'number')).toBe(true);
      cursor = r.body.nextCursor;
      if (cursor === null) break;
    }
    expect(seen).toEqual([[5, 4], [3, 2], [1]]);
    // A second read of the first page (from what the server kept) is the same.
    expect((await c.get<Page>(`${base}?limit=2`)).body.releases.map((x) => x.revision)).toEqual([5, 4]);

    const whole = await c.get<Page['releases']>(base);
    expect(whole.body.map((x) => x.revision)).toEqual([5, 4, 3, 2, 1]);
    const cli = await p.run('release', ['list', p.stackFile, 'dev', '-o', 'json'], {
      bare: true,
      env: { KAPPS_BACKEND: p.kappsHome },
    });
    expect(whole.body).toEqual(JSON.parse(cli.stdout));

    const bad = await c.get(`${base}?limit=2&cursor=../3`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
    expect(JSON.stringify(bad.body)).toContain('query.cursor');
    expect((await c.get(`${base}?limit=0`)).status).toBe(400);
  });

  it('answers the approvals and the break glass of releases in the list, the pages and one release', async () => {
    const p = fixtureProject({
      manifests: { shop: { kapps: [kapp('db', { apply_install: [fake('apply', 'db')] })] } },
    });
    const r = await p.run('install', ['-y'], { env: { KAPPS_BACKEND: p.kappsHome } });
    expect(r.code, r.stderr).toBe(0);
    // Releases a server's runs made on a stack requiring approvals: recorded as its recorder writes them.
    const list = await p.run('release', ['list', p.stackFile, 'dev', '-o', 'json'], {
      bare: true,
      env: { KAPPS_BACKEND: p.kappsHome },
    });
    const [{ project }] = JSON.parse(list.stdout) as [{ project: string }];
    const store = new FileReleaseStore(p.kappsHome);
    const first = (await store.latest(project, 'dev'))!;
    const approvals = [{ by: 'alice', at: '2026-11-25T10:05:00.000Z', comment: 'looks fine' }];
    const breakGlass = { by: 'ops', role: 'admin', at: '2026-11-25T11:00:00.000Z' };
    await store.create({ ...first, revision: 2, approvals });
    await store.create({ ...first, revision: 3, breakGlass });
    await store.close();
    const server = await startServer({
      args: ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome],
      env: p.env,
      cwd: p.dir,
    });
    const c = api(server.url);
    const base = '/api/v1/projects/shop/stacks/dev/releases';
    type Entry = { revision: number; approvals?: unknown; breakGlass?: unknown };
    const pick = (e: Entry) => [e.revision, e.approvals ?? null, e.breakGlass ?? null];
    const whole = await c.get<Entry[]>(base);
    expect(whole.status).toBe(200);
    expect(whole.body.map(pick)).toEqual([
      [3, null, breakGlass],
      [2, approvals, null],
      [1, null, null],
    ]);
    const page = await c.get<{ releases: Entry[] }>(`${base}?limit=2`);
    expect(page.body.releases.map(pick)).toEqual([
      [3, null, breakGlass],
      [2, approvals, null],
    ]);
    const two = await c.get<Entry>(`${base}/2`);
    expect(two.status).toBe(200);
    expect(pick(two.body)).toEqual([2, approvals, null]);
    const cli = await p.run('release', ['show', p.stackFile, 'dev', '--revision', '2', '-o', 'json'], {
      bare: true,
      env: { KAPPS_BACKEND: p.kappsHome },
    });
    expect(two.body).toEqual(JSON.parse(cli.stdout));
  });
});
