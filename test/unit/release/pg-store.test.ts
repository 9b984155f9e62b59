import { afterAll, describe, expect, it } from 'vitest';
import { ReleaseRecordError, ReleaseStoreError } from '../../../src/release/errors.js';
import { loadMigrations } from '../../../src/pg/migrate.js';
import { PgReleaseStore } from '../../../src/release/pg-store.js';
import { freshDatabases, pgUrl, sql } from '../../support/pg.js';
import { makeRelease, uniqueProject } from './helpers.js';

const databases = freshDatabases('kapps_t');

afterAll(() => databases.dropAll());

describe('PostgreSQL release store', () => {
  it('creates its schema on first use and records the migrations applied', async () => {
    const url = await databases.create();
    const store = new PgReleaseStore(url);
    try {
      expect(await store.latest('shop', 'dev')).toBeUndefined();
    } finally {
      await store.close();
    }
    const migrations = await loadMigrations();
    expect(await sql(url, 'SELECT id, name FROM kapps_migrations ORDER BY id')).toEqual(
      migrations.map(({ id, name }) => ({ id, name })),
    );
    const keys = await sql<{ column_name: string }>(
      url,
      `SELECT a.attname AS column_name FROM pg_index i
         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
        WHERE i.indrelid = 'kapps_releases'::regclass AND i.indisprimary ORDER BY a.attnum`,
    );
    expect(keys.map((k) => k.column_name)).toEqual(['project', 'stack', 'revision']);
  });

  it('lets many first uses at once migrate without racing', async () => {
    const url = await databases.create();
    const stores = Array.from({ length: 8 }, () => new PgReleaseStore(url));
    try {
      const project = uniqueProject();
      const results = await Promise.allSettled(
        stores.map((store, i) => store.create(makeRelease(project, `s${i}`, 1))),
      );
      expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      expect(await sql(url, 'SELECT count(*)::int AS n, count(DISTINCT id)::int AS ids FROM kapps_migrations')).toEqual(
        [{ n: (await loadMigrations()).length, ids: (await loadMigrations()).length }],
      );
      expect(await sql(url, 'SELECT count(*)::int AS n FROM kapps_releases')).toEqual([{ n: 8 }]);
    } finally {
      for (const store of stores) await store.close();
    }
  });

  it('refuses a database whose schema is newer than this kapps', async () => {
    const url = await databases.create();
    const first = new PgReleaseStore(url);
    await first.latest('shop', 'dev');
    await first.close();
    await sql(url, `INSERT INTO kapps_migrations (id, name) VALUES (99, 'later')`);
    const store = new PgReleaseStore(url);
    try {
      const error = await store.latest('shop', 'dev').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReleaseStoreError);
      expect((error as Error).message).toContain(
        `has migration 99 applied, newer than this kapps knows (its latest is ${(await loadMigrations()).length}); upgrade kapps`,
      );
    } finally {
      await store.close();
    }
  });

  it('reports a damaged record with its row, and still lists from the metadata columns', async () => {
    const url = pgUrl();
    const store = new PgReleaseStore(url);
    const project = uniqueProject();
    try {
      await store.create(makeRelease(project, 'dev', 1));
      await sql(url, `UPDATE kapps_releases SET record = '{"project": 1}' WHERE project = $1`, [project]);
      const error = await store.get(project, 'dev', 1).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReleaseRecordError);
      expect((error as Error).message).toContain(`kapps_releases row (${project}, dev, 1) in ${url}`);
      expect((error as Error).message).toContain('is not a valid release record: project: ');
      await expect(store.latest(project, 'dev')).rejects.toThrow(ReleaseRecordError);
      expect((await store.list(project, 'dev')).map((s) => [s.revision, s.phase, s.kappsCount])).toEqual([
        [1, 'succeeded', 1],
      ]);
    } finally {
      await store.close();
    }
  });

  it('never shows the password of its URL, in its description or in errors', async () => {
    const password = 'Sup3r-Secret-Pw';
    const good = new URL(pgUrl());
    good.password = password;
    const store = new PgReleaseStore(good.toString());
    try {
      // The test server trusts loopback, so the password is accepted and ignored: the store works.
      const project = uniqueProject();
      await store.create(makeRelease(project, 'dev', 1));
      expect((await store.latest(project, 'dev'))?.revision).toBe(1);
      expect(store.description).toBe(good.toString().replace(password, '***'));
    } finally {
      await store.close();
    }

    const missingDb = new URL(good);
    missingDb.pathname = '/no_such_database';
    const closedPort = new URL(good);
    closedPort.port = '1';
    for (const url of [missingDb, closedPort]) {
      const bad = new PgReleaseStore(url.toString());
      try {
        const error = await bad.latest('shop', 'dev').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ReleaseStoreError);
        const message = (error as Error).message;
        expect(message).toMatch(/^cannot read releases in postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\//);
        expect(message).not.toContain(password);
        expect(JSON.stringify(error)).not.toContain(password);
        expect((error as Error).stack).not.toContain(password);
      } finally {
        await bad.close();
      }
    }
  });
});
