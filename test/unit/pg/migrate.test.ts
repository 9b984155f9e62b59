import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../../src/pg/migrate.js';
import { PgReleaseStore } from '../../../src/release/pg-store.js';
import { PgRunStore } from '../../../src/server/queue/pg-run-store.js';
import { freshDatabases, sql } from '../../support/pg.js';
import { LOG_LINE_BEFORE, RUN_BEFORE, SPEC_KEY_BEFORE, seedDatabaseBefore } from '../../support/pg-before.js';
import { waitFor } from '../../support/wait.js';
import { makeRelease, uniqueProject } from '../release/helpers.js';

/** The tables of the newest schema. */
const ALL_TABLES = [
  'kapps_drift_stacks',
  'kapps_migrations',
  'kapps_notifications',
  'kapps_poll_claims',
  'kapps_release_journal',
  'kapps_release_logs',
  'kapps_releases',
  'kapps_run_feed',
  'kapps_run_previews',
  'kapps_run_results',
  'kapps_runs',
  'kapps_spec_key',
  'kapps_webhook_deliveries',
];

const databases = freshDatabases('kapps_mig_t');
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});
afterAll(() => databases.dropAll());

function releaseStore(url: string): PgReleaseStore {
  const store = new PgReleaseStore(url);
  closers.push(() => store.close());
  return store;
}

async function runStore(url: string, instance = 'new'): Promise<PgRunStore> {
  const store = new PgRunStore(url);
  closers.push(() => store.close());
  await store.open(instance);
  return store;
}

function pool(url: string): pg.Pool {
  const p = new pg.Pool({ connectionString: url, max: 2 });
  closers.push(() => p.end());
  return p;
}

/** The rows of `kapps_migrations`, in order. */
async function applied(url: string): Promise<{ id: number; name: string }[]> {
  return sql(url, 'SELECT id, name FROM kapps_migrations ORDER BY id');
}

async function allMigrations(): Promise<{ id: number; name: string }[]> {
  return (await loadMigrations()).map(({ id, name }) => ({ id, name }));
}

async function tables(url: string): Promise<string[]> {
  const rows = await sql<{ tablename: string }>(
    url,
    `SELECT tablename FROM pg_tables WHERE tablename LIKE 'kapps%' ORDER BY tablename`,
  );
  return rows.map((r) => r.tablename);
}

/** A database as kapps left it before numbered migrations: a release with a log line, a running run, a spec key. */
async function databaseBefore(): Promise<{ url: string; project: string }> {
  const url = await databases.create();
  const project = uniqueProject();
  await seedDatabaseBefore(url, makeRelease(project, 'dev', 1));
  return { url, project };
}

describe('PostgreSQL migrations', () => {
  it('adopts a database made before numbered migrations: its data kept, the baseline recorded, nothing redone', async () => {
    const { url, project } = await databaseBefore();
    const releases = releaseStore(url);
    const runs = await runStore(url);

    expect(await releases.get(project, 'dev', 1)).toEqual(makeRelease(project, 'dev', 1));
    expect((await releases.readLog(project, 'dev', 1, 0, 10_000)).lines.map((l) => l.text)).toEqual([LOG_LINE_BEFORE]);
    expect((await releases.specKey())?.toString('hex')).toBe(SPEC_KEY_BEFORE);
    expect(await runs.get(RUN_BEFORE)).toMatchObject({ status: 'running', instance: 'old', leaseGeneration: 3 });
    expect(await runs.finish(RUN_BEFORE, { instance: 'old', generation: 3 }, { status: 'succeeded' })).toBe(true);

    expect(await applied(url)).toEqual(await allMigrations());
    expect(await tables(url)).toEqual(ALL_TABLES);
    // The new code goes on writing to the adopted tables.
    await releases.create(makeRelease(project, 'dev', 2));
    expect((await releases.list(project, 'dev')).map((r) => r.revision)).toEqual([2, 1]);
  });

  it('upgrades runs and releases written before approvals: their states kept, approvals read from the records', async () => {
    const url = await databases.create();
    const before = (await loadMigrations()).filter((m) => m.id < 12);
    await migrate(pool(url), before);
    const project = uniqueProject();
    const approvals = [{ by: 'alice', at: '2026-11-25T10:05:00.000Z', comment: 'fine' }];
    const release = { ...makeRelease(project, 'dev', 1), approvals };
    await sql(
      url,
      `INSERT INTO kapps_releases (project, stack, revision, operation, phase, kapps_count, owner, created_at,
                                   modified_at, heartbeat_at, record)
       SELECT r->>'project', r->>'stack', 1, r->>'operation', r->>'phase', 1, r->'owner',
              (r->>'createdAt')::timestamptz, (r->>'modifiedAt')::timestamptz, (r->>'heartbeatAt')::timestamptz, r
         FROM (SELECT $1::json AS r) AS given`,
      [JSON.stringify(release)],
    );
    await sql(
      url,
      `INSERT INTO kapps_runs (id, type, project, stack, status, created_by, created_at, options, feed_seq)
       VALUES ('0mhx3k2a1-4f9c0a1b2c3d', 'apply', $1, 'dev', 'queued', 'ci', now(), '{}', 0)`,
      [project],
    );
    const releases = releaseStore(url);
    const runs = await runStore(url);
    expect(await applied(url)).toEqual(await allMigrations());
    expect((await releases.list(project, 'dev'))[0]?.approvals).toEqual(approvals);
    expect(await runs.get('0mhx3k2a1-4f9c0a1b2c3d')).toMatchObject({ status: 'queued', approval: null, checks: [] });
    expect((await runs.claim('new', 30_000))?.id).toBe('0mhx3k2a1-4f9c0a1b2c3d');
  });

  it('adopts version 1 of both (before release logs and lease generations) and applies the files after it', async () => {
    const { url, project } = await databaseBefore();
    await sql(url, 'DROP TABLE kapps_release_logs');
    await sql(url, 'ALTER TABLE kapps_runs DROP COLUMN lease_generation');
    await sql(url, 'UPDATE kapps_schema SET version = 1');
    await sql(url, 'UPDATE kapps_runs_schema SET version = 1');

    const runs = await runStore(url);
    expect(await runs.get(RUN_BEFORE)).toMatchObject({ status: 'running', leaseGeneration: 0 });
    const releases = releaseStore(url);
    const line = { time: '2026-01-02T00:00:00.000Z', stream: 'kapps' as const, text: 'after the upgrade' };
    await releases.appendLog(project, 'dev', 1, [line]);
    expect((await releases.readLog(project, 'dev', 1, 0, 10_000)).lines).toEqual([line]);
    expect(await applied(url)).toEqual(await allMigrations());
  });

  it('refuses a version table it does not know, saying which, and changes nothing', async () => {
    const newer = (await databaseBefore()).url;
    await sql(newer, 'UPDATE kapps_schema SET version = 3');
    await expect(releaseStore(newer).latest('shop', 'dev')).rejects.toThrow(
      `cannot read releases in ${newer}: kapps_schema says the tables have schema version 3, which this kapps ` +
        'cannot upgrade (it knows version 1 and 2); upgrade kapps',
    );
    expect(await tables(newer)).toContain('kapps_schema');
    expect(await tables(newer)).not.toContain('kapps_migrations');

    const older = (await databaseBefore()).url;
    await sql(older, 'UPDATE kapps_runs_schema SET version = 0');
    const store = new PgRunStore(older);
    closers.push(() => store.close());
    const error = await store.open('i1').catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      `cannot open the run store in ${older}: kapps_runs_schema says the tables have schema version 0, which this ` +
        'kapps cannot upgrade (it knows version 1 and 2)',
    );
    expect(await tables(older)).toContain('kapps_runs_schema');
    expect(await tables(older)).not.toContain('kapps_migrations');
  });

  it('two migrators racing on a new database both succeed, and each file is applied once', async () => {
    const url = await databases.create();
    const results = await Promise.allSettled([
      migrate(pool(url)),
      migrate(pool(url)),
      runStore(url, 'a'),
      releaseStore(url).latest('shop', 'dev'),
    ]);
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(await applied(url)).toEqual(await allMigrations());
    expect(await tables(url)).toEqual(ALL_TABLES);
  });
});

describe('PostgreSQL migrations beside a migrator that does not take the lock', () => {
  /** Wait until a query of the database waits for a lock (the migrator behind the other's transaction). */
  async function waitForBlocked(url: string): Promise<void> {
    await waitFor('the migrator to wait for the other', async () => {
      const rows = await sql<{ n: number }>(
        url,
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      return (rows[0]?.n ?? 0) > 0;
    });
  }

  /** A connection in a transaction of its own: the other migrator. */
  async function otherMigrator(url: string): Promise<pg.Client> {
    const other = new pg.Client({ connectionString: url, application_name: 'other-migrator' });
    await other.connect();
    closers.push(() => other.end());
    await other.query('BEGIN');
    return other;
  }

  it('its duplicate row in kapps_migrations makes the migrator look again, not fail', async () => {
    const url = await databases.create();
    await migrate(pool(url), []); // the migrations table, empty
    const one = { id: 1, name: 'one', sql: 'CREATE TABLE IF NOT EXISTS t_one (x int)' };
    const other = await otherMigrator(url);
    await other.query(`INSERT INTO kapps_migrations (id, name) VALUES (1, 'one')`);
    const migrating = migrate(pool(url), [one]);
    await waitForBlocked(url);
    await other.query('COMMIT');
    await migrating;
    expect(await applied(url)).toEqual([{ id: 1, name: 'one' }]);
  });

  it('the tables it makes at the same time make the migrator wait for it and go on from there', async () => {
    const url = await databases.create();
    const [first] = await loadMigrations();
    const other = await otherMigrator(url);
    await other.query(
      `CREATE TABLE kapps_migrations
         (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())`,
    );
    await other.query(first?.sql ?? '');
    await other.query(`INSERT INTO kapps_migrations (id, name) VALUES (1, 'releases')`);
    const migrating = migrate(pool(url));
    await waitForBlocked(url);
    await other.query('COMMIT');
    await migrating;
    expect(await applied(url)).toEqual(await allMigrations());
  });
});
