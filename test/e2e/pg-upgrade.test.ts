/**
 * A PostgreSQL database made by a kapps before numbered migrations, used by the CLI as built: its releases are
 * listed and shown as they were, and the database is upgraded in place (`kapps_migrations` lists every file).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrations } from '../../src/pg/migrate.js';
import { runCli } from '../support/cli.js';
import { freshDatabases, sql } from '../support/pg.js';
import { seedDatabaseBefore } from '../support/pg-before.js';
import { cleanupProjects, fixtureProject } from '../support/project.js';
import { makeRelease } from '../unit/release/helpers.js';

const databases = freshDatabases('kapps_up_t');

afterAll(async () => {
  await databases.dropAll();
  cleanupProjects();
});

describe('kapps on a PostgreSQL database of an older kapps', () => {
  it('lists and shows its releases, and records the old schema as the migrations already applied', async () => {
    const url = await databases.create();
    const p = fixtureProject({ name: 'upshop', stacks: 'dev:\n  provider: local\n  manifests: []\n' });
    const release = makeRelease('upshop', 'dev', 1);
    await seedDatabaseBefore(url, release);

    const list = await runCli(['release', 'list', p.stackFile, 'dev', '--backend', url], { env: p.env });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split('\n').map((l) => l.split(/ +/)[0])).toEqual(['REVISION', '1', '']);
    const show = await runCli(['release', 'show', p.stackFile, 'dev', '-o', 'json', '--backend', url], {
      env: p.env,
    });
    expect(show.code, show.stderr).toBe(0);
    expect(JSON.parse(show.stdout)).toEqual(release);

    const migrations = await loadMigrations();
    expect(await sql(url, 'SELECT id, name FROM kapps_migrations ORDER BY id')).toEqual(
      migrations.map(({ id, name }) => ({ id, name })),
    );
    expect(
      await sql(url, `SELECT tablename FROM pg_tables WHERE tablename IN ('kapps_schema', 'kapps_runs_schema')`),
    ).toEqual([]);
    expect(await sql(url, 'SELECT id, status, lease_generation::int AS generation FROM kapps_runs')).toEqual([
      { id: 'run-before', status: 'running', generation: 3 },
    ]);
  });
});
