/**
 * The schema of every PostgreSQL store of kapps, as numbered SQL files (`migrations/0001_releases.sql`, …) and one
 * table that lists those applied, `kapps_migrations (id, name, applied_at)`.
 *
 * `migrate` applies each pending file in its own transaction, holding the one migration advisory lock, and records it
 * in the same transaction. Should another migrator (one that does not take the lock, as a kapps of another version
 * might) apply the same file at the same time, the second insert of its row, or of a table it creates, is a unique
 * violation: the transaction is rolled back and the list read again, so both succeed and each file is applied once.
 *
 * A database made before the migrations table (its versions in `kapps_schema`, of the release tables, and
 * `kapps_runs_schema`, of the run tables) is adopted in place: the files those versions stand for are recorded as
 * applied, the two version tables are dropped, then the newer files are applied. A version or a recorded migration
 * this kapps does not know is refused with a message that says so.
 *
 * The files are read at run time from `../pg/migrations/` beside the module (the build copies them to
 * `dist/pg/migrations/`), which is the same folder from `src/pg/`, `dist/pg/` and the bundle's `dist/bin/`.
 */
import { readdir, readFile } from 'node:fs/promises';
import type pg from 'pg';
import { transaction } from './transaction.js';
import { pgCode } from './transient.js';

/** Key of the advisory lock held while migrating ("kapp" in ASCII). */
const MIGRATION_LOCK_KEY = 0x6b617070;

/** How often a migration is tried again after it met another migrator. */
const CONCURRENT_ATTEMPTS = 10;

/** What meeting another migrator looks like: unique_violation (its row, or a table it made at the same time) and
 * duplicate_table (a table it committed between our look and our CREATE). */
const CONCURRENT_CODES = new Set(['23505', '42P07']);

/** The folder of the SQL files. */
const MIGRATIONS_DIR = new URL('../pg/migrations/', import.meta.url);

/** One numbered SQL file. */
export interface Migration {
  /** Its number (`0003_runs.sql` → 3). */
  readonly id: number;
  /** Its name without number and ending (`runs`). */
  readonly name: string;
  /** Its statements. */
  readonly sql: string;
}

/** The files a version of the tables before `kapps_migrations` stands for: table → version → migration ids. */
const LEGACY_VERSIONS: readonly { table: string; versions: ReadonlyMap<number, readonly number[]> }[] = [
  {
    table: 'kapps_schema',
    versions: new Map([
      [1, [1]],
      [2, [1, 2]],
    ]),
  },
  {
    table: 'kapps_runs_schema',
    versions: new Map([
      [1, [3]],
      [2, [3, 4]],
    ]),
  },
];

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** The migrations in order; their numbers run from 1 without a gap (checked). */
export async function loadMigrations(dir: URL = MIGRATIONS_DIR): Promise<Migration[]> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of names) {
    const match = FILE_NAME.exec(file);
    if (!match?.[1] || !match[2]) throw new Error(`${file} in ${dir.pathname} is not named NNNN_name.sql`);
    const id = Number(match[1]);
    if (id !== migrations.length + 1) {
      throw new Error(`${file} in ${dir.pathname} should be number ${migrations.length + 1}: the numbers have a gap`);
    }
    migrations.push({ id, name: match[2], sql: await readFile(new URL(file, dir), 'utf8') });
  }
  return migrations;
}

/** Bring the database of `pool` to the newest schema. */
export async function migrate(pool: pg.Pool, migrations?: readonly Migration[]): Promise<void> {
  const known = migrations ?? (await loadMigrations());
  const done = await appliedIds(pool);
  if (done !== undefined && checkKnown(done, known).length === 0) return;
  for (let attempt = 1; ;) {
    try {
      if (!(await applyNext(pool, known))) return;
    } catch (error) {
      // Another migrator applied the same file, or made the same table, at the same time: look again.
      if (!CONCURRENT_CODES.has(pgCode(error) ?? '') || attempt >= CONCURRENT_ATTEMPTS) throw error;
      attempt++;
    }
  }
}

/** The ids in `kapps_migrations`, or undefined when there is no such table yet (a new database, or an older one). */
async function appliedIds(db: pg.Pool | pg.PoolClient): Promise<Set<number> | undefined> {
  // Asked, not tried: a failed query would abort the transaction it runs in.
  if (!(await tableExists(db, 'kapps_migrations'))) return undefined;
  const rows = await db.query<{ id: number }>('SELECT id FROM kapps_migrations');
  return new Set(rows.rows.map((row) => row.id));
}

async function tableExists(db: pg.Pool | pg.PoolClient, table: string): Promise<boolean> {
  const found = await db.query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [table]);
  return found.rows[0]?.found === true;
}

/** The migrations not applied yet; a recorded one this kapps does not know is refused. */
function checkKnown(done: ReadonlySet<number>, known: readonly Migration[]): Migration[] {
  const latest = known[known.length - 1]?.id ?? 0;
  const unknown = [...done].filter((id) => id > latest || id < 1).sort((a, b) => a - b);
  if (unknown.length > 0) {
    throw new Error(
      `the database has migration ${unknown.map(String).join(', ')} applied, newer than this kapps knows ` +
        `(its latest is ${latest}); upgrade kapps`,
    );
  }
  return known.filter((migration) => !done.has(migration.id));
}

/** In one transaction under the lock: adopt a database made before the migrations table, or apply the next file. */
async function applyNext(pool: pg.Pool, known: readonly Migration[]): Promise<boolean> {
  return transaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    let done = await appliedIds(client);
    if (done === undefined) {
      await client.query(
        `CREATE TABLE kapps_migrations (
           id         integer     PRIMARY KEY,
           name       text        NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
         )`,
      );
      const adopted = await adoptLegacy(client);
      if (adopted.length > 0) {
        for (const id of adopted) await record(client, known, id);
        return true;
      }
      done = new Set();
    }
    const next = checkKnown(done, known)[0];
    if (next === undefined) return false;
    try {
      await client.query(next.sql);
    } catch (error) {
      if (error instanceof Error) error.message = `migration ${fileName(next)} failed: ${error.message}`;
      throw error;
    }
    await record(client, known, next.id);
    return true;
  });
}

/** The migration ids the version tables of an older kapps stand for (the tables are then dropped); [] if none. */
async function adoptLegacy(client: pg.PoolClient): Promise<number[]> {
  const ids: number[] = [];
  for (const { table, versions } of LEGACY_VERSIONS) {
    if (!(await tableExists(client, table))) continue;
    const rows = await client.query<{ version: number }>(`SELECT version FROM ${table} WHERE id = 1`);
    const version = rows.rows[0]?.version;
    const adopted = version === undefined ? undefined : versions.get(version);
    if (adopted === undefined) {
      const knownVersions = [...versions.keys()].join(' and ');
      throw new Error(
        `${table} says the tables have schema version ${version ?? '(none)'}, which this kapps cannot upgrade ` +
          `(it knows version ${knownVersions})` +
          (version !== undefined && version > Math.max(...versions.keys()) ? '; upgrade kapps' : ''),
      );
    }
    ids.push(...adopted);
    await client.query(`DROP TABLE ${table}`);
  }
  return ids.sort((a, b) => a - b);
}

async function record(client: pg.PoolClient, known: readonly Migration[], id: number): Promise<void> {
  const migration = known.find((m) => m.id === id);
  await client.query('INSERT INTO kapps_migrations (id, name) VALUES ($1, $2)', [id, migration?.name ?? '']);
}

function fileName(migration: Migration): string {
  return `${String(migration.id).padStart(4, '0')}_${migration.name}.sql`;
}
