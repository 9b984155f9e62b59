/**
 * The PostgreSQL backend (`postgres://user:password@host:port/database`).
 *
 * Releases live in `kapps_releases`, primary key (project, stack, revision): `create` is an INSERT, so the
 * database itself refuses a second release with the same revision (unique violation → `RevisionTakenError`).
 * `update` runs in a transaction that locks the row (`SELECT … FOR UPDATE`), checks `modifiedAt` when asked and
 * replaces the record. The whole record is kept as `json` (text, so key order and numbers are kept exactly as
 * written); the metadata `kapps release list` shows is kept in columns so listing does not load specs.
 *
 * The schema is created on first use and migrated by version (`kapps_schema`), inside one transaction holding an
 * advisory lock, so two first uses at once do not race.
 *
 * The password in the URL never appears in a message: the store describes itself by the redacted URL and scrubs
 * driver errors with `redactText`.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  ReleaseConflictError,
  ReleaseNotFoundError,
  ReleaseRecordError,
  ReleaseStoreError,
  RevisionTakenError,
} from './errors.js';
import { KappsError } from '../diagnostics/errors.js';
import { parseReleaseRecord } from './record-schema.js';
import { orderRelease } from './record-order.js';
import { redactText, redactUrl } from './redact.js';
import { damageReport, encodeLines, readLogRows } from '../log/ndjson.js';
import type { DamageReport, LogChunk, LogStoreOptions, StoredLine } from '../log/ndjson.js';
import type { LogLine } from '../log/line.js';
import { describePgError, isTransient, pgCode, transaction, withRetry, WRITE_RETRY_MS } from '../pg/transient.js';
import type { ReleaseStore, UpdateOptions } from './store-types.js';
import type { Release, ReleaseOperation, ReleaseOwner, ReleasePhase, ReleaseSummary, ReleaseUnlock } from './types.js';

/** The schema version this kapps writes; `kapps_schema.version` after migration. */
export const PG_SCHEMA_VERSION = 2;

/** Key of the advisory lock held while migrating ("kapp" in ASCII). */
const MIGRATION_LOCK_KEY = 0x6b617070;

/** Migrations by version, applied in order; each list of statements runs in the migration transaction. */
const MIGRATIONS: readonly { version: number; statements: readonly string[] }[] = [
  {
    version: 1,
    statements: [
      `CREATE TABLE kapps_releases (
         project      text        NOT NULL,
         stack        text        NOT NULL,
         revision     integer     NOT NULL CHECK (revision > 0),
         operation    text        NOT NULL,
         phase        text        NOT NULL,
         kapps_count  integer     NOT NULL,
         owner        json        NOT NULL,
         unlocked     json,
         created_at   timestamptz NOT NULL,
         modified_at  timestamptz NOT NULL,
         finished_at  timestamptz,
         heartbeat_at timestamptz NOT NULL,
         record       json        NOT NULL,
         PRIMARY KEY (project, stack, revision)
       )`,
    ],
  },
  {
    version: 2,
    statements: [
      // The log of each release: one row per line, keyed by its byte offset in the log's NDJSON form.
      `CREATE TABLE kapps_release_logs (
         project     text    NOT NULL,
         stack       text    NOT NULL,
         revision    integer NOT NULL,
         byte_offset bigint  NOT NULL,
         byte_end    bigint  NOT NULL,
         line        text    NOT NULL,
         PRIMARY KEY (project, stack, revision, byte_offset)
       )`,
    ],
  },
];

interface SummaryRow {
  revision: number | string;
  operation: string;
  phase: string;
  kapps_count: number | string;
  owner: ReleaseOwner;
  unlocked: ReleaseUnlock | null;
  created_at: Date;
  modified_at: Date;
  finished_at: Date | null;
  heartbeat_at: Date;
}

/** The release store kept in a PostgreSQL database. */
export class PgReleaseStore implements ReleaseStore {
  readonly description: string;
  readonly #url: string;
  readonly #pool: pg.Pool;
  #ready: Promise<void> | undefined;
  #closed = false;

  readonly #report: DamageReport;

  /** `url`: a `postgres://` or `postgresql://` connection URL. Nothing connects before the first call. */
  constructor(url: string, options: LogStoreOptions = {}) {
    this.#url = url;
    this.#report = damageReport(options);
    this.description = redactUrl(url);
    this.#pool = new pg.Pool({
      connectionString: url,
      max: 2,
      connectionTimeoutMillis: 15_000,
      application_name: 'kapps',
    });
    // An idle connection dropped by the server must not crash the process; the next query reconnects.
    this.#pool.on('error', () => undefined);
  }

  async latest(project: string, stack: string): Promise<Release | undefined> {
    return this.#run('cannot read releases', async () => {
      const result = await this.#pool.query<{ revision: number | string; record: unknown }>(
        `SELECT revision, record FROM kapps_releases WHERE project = $1 AND stack = $2
         ORDER BY revision DESC LIMIT 1`,
        [project, stack],
      );
      const row = result.rows[0];
      return row ? this.#parse(row.record, project, stack, toInt(row.revision)) : undefined;
    });
  }

  async get(project: string, stack: string, revision: number): Promise<Release | undefined> {
    if (!Number.isSafeInteger(revision) || revision < 1 || revision > 2 ** 31 - 1) return undefined;
    return this.#run('cannot read releases', async () => {
      const result = await this.#pool.query<{ record: unknown }>(
        'SELECT record FROM kapps_releases WHERE project = $1 AND stack = $2 AND revision = $3',
        [project, stack, revision],
      );
      const row = result.rows[0];
      return row ? this.#parse(row.record, project, stack, revision) : undefined;
    });
  }

  async list(project: string, stack: string): Promise<ReleaseSummary[]> {
    return this.#run('cannot list releases', async () => {
      const result = await this.#pool.query<SummaryRow>(
        `SELECT revision, operation, phase, kapps_count, owner, unlocked,
                created_at, modified_at, finished_at, heartbeat_at
           FROM kapps_releases WHERE project = $1 AND stack = $2 ORDER BY revision DESC`,
        [project, stack],
      );
      return result.rows.map((row) => ({
        project,
        stack,
        revision: toInt(row.revision),
        operation: row.operation as ReleaseOperation,
        phase: row.phase as ReleasePhase,
        kappsCount: toInt(row.kapps_count),
        owner: row.owner,
        createdAt: row.created_at.toISOString(),
        modifiedAt: row.modified_at.toISOString(),
        ...(row.finished_at ? { finishedAt: row.finished_at.toISOString() } : {}),
        heartbeatAt: row.heartbeat_at.toISOString(),
        ...(row.unlocked ? { unlocked: row.unlocked } : {}),
      }));
    });
  }

  async create(release: Release): Promise<void> {
    await this.#write('cannot create a release', async () => {
      try {
        await this.#pool.query(
          `INSERT INTO kapps_releases (project, stack, revision, operation, phase, kapps_count, owner, unlocked,
                                       created_at, modified_at, finished_at, heartbeat_at, record)
           VALUES ($1, $2, $3, $4, $5, $6, $7::json, $8::json, $9, $10, $11, $12, $13::json)`,
          rowValues(release),
        );
      } catch (error) {
        if (pgCode(error) === '23505') throw new RevisionTakenError(release.project, release.stack, release.revision);
        throw error;
      }
    });
  }

  async update(release: Release, options: UpdateOptions = {}): Promise<void> {
    await this.#write('cannot update a release', async () => {
      await transaction(this.#pool, async (client) => {
        const current = await client.query<{ record: unknown }>(
          `SELECT record FROM kapps_releases WHERE project = $1 AND stack = $2 AND revision = $3 FOR UPDATE`,
          [release.project, release.stack, release.revision],
        );
        const row = current.rows[0];
        if (!row) {
          throw new ReleaseNotFoundError(
            `release ${release.revision} of ${release.project}/${release.stack} does not exist, so it cannot be updated`,
          );
        }
        if (options.ifModifiedAt !== undefined) {
          const stored = this.#parse(row.record, release.project, release.stack, release.revision);
          if (stored.modifiedAt !== options.ifModifiedAt) {
            throw new ReleaseConflictError(
              `release ${release.revision} of ${release.project}/${release.stack} was changed by another process ` +
                `(modified ${stored.modifiedAt}, expected ${options.ifModifiedAt})`,
              stored,
            );
          }
        }
        await client.query(
          `UPDATE kapps_releases SET operation = $4, phase = $5, kapps_count = $6, owner = $7::json,
                  unlocked = $8::json, created_at = $9, modified_at = $10, finished_at = $11, heartbeat_at = $12,
                  record = $13::json
            WHERE project = $1 AND stack = $2 AND revision = $3`,
          rowValues(release),
        );
      });
    });
  }

  async appendLog(project: string, stack: string, revision: number, lines: readonly LogLine[]): Promise<void> {
    if (lines.length === 0) return;
    await this.#write('cannot write a release log', async () => {
      await transaction(this.#pool, async (client) => {
        // One writer at a time per log (its owner's batches, in order), so the offsets follow each other.
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1), $2)', [`${project}/${stack}`, revision]);
        const last = await client.query<{ end: number | string | null }>(
          `SELECT max(byte_end) AS end FROM kapps_release_logs WHERE project = $1 AND stack = $2 AND revision = $3`,
          [project, stack, revision],
        );
        const stored = encodeLines(lines, last.rows[0]?.end == null ? 0 : toInt(last.rows[0].end)).lines;
        await client.query(
          `INSERT INTO kapps_release_logs (project, stack, revision, byte_offset, byte_end, line)
           SELECT $1, $2, $3, s, e, l FROM unnest($4::bigint[], $5::bigint[], $6::text[]) AS t(s, e, l)`,
          [project, stack, revision, stored.map((l) => l.offset), stored.map((l) => l.end), stored.map((l) => l.data)],
        );
      });
    });
  }

  async readLog(project: string, stack: string, revision: number, offset: number, maxBytes: number): Promise<LogChunk> {
    const start = Math.max(0, Math.floor(offset));
    if (!Number.isSafeInteger(revision) || revision < 1 || revision > 2 ** 31 - 1)
      return { lines: [], nextOffset: start };
    const rows = (from: number, limit: number): Promise<StoredLine[]> =>
      this.#run('cannot read a release log', async () => {
        const result = await this.#pool.query<{ byte_offset: string; byte_end: string; line: string }>(
          `SELECT byte_offset, byte_end, line FROM kapps_release_logs
            WHERE project = $1 AND stack = $2 AND revision = $3 AND byte_offset >= $4
            ORDER BY byte_offset LIMIT $5`,
          [project, stack, revision, from, limit],
        );
        return result.rows.map((row) => ({ offset: toInt(row.byte_offset), end: toInt(row.byte_end), data: row.line }));
      });
    return readLogRows(rows, start, maxBytes, {
      report: this.#report,
      where: (at) => `kapps_release_logs row (${project}, ${stack}, ${revision}, ${at}) in ${this.description}`,
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.end().catch(() => undefined);
  }

  /** Run one operation after the schema is ready; turn driver errors into `ReleaseStoreError` without secrets. */
  async #run<T>(what: string, action: () => Promise<T>): Promise<T> {
    if (this.#closed) throw new ReleaseStoreError(`the release store ${this.description} is closed`);
    try {
      this.#ready ??= this.#migrate();
      await this.#ready;
      return await action();
    } catch (error) {
      if (error instanceof KappsError) throw error;
      // No `cause`: the driver's error objects can carry the connection parameters.
      throw new ReleaseStoreError(`${what} in ${this.description}: ${redactText(describePgError(error), this.#url)}`, {
        unavailable: isTransient(error),
      });
    }
  }

  /** A write (one transaction): retried through transient failures (a restart of the database) for a while. */
  #write<T>(what: string, action: () => Promise<T>): Promise<T> {
    return withRetry(() => this.#run(what, action), { budgetMs: WRITE_RETRY_MS });
  }

  async specKey(): Promise<Buffer | undefined> {
    return this.#run('cannot read the spec key', async () => {
      // Its own table, made on first use (the schema version is unchanged: older kapps ignore it).
      const key = await transaction(this.#pool, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
        await client.query(
          'CREATE TABLE IF NOT EXISTS kapps_spec_key (id integer PRIMARY KEY CHECK (id = 1), key text NOT NULL)',
        );
        await client.query('INSERT INTO kapps_spec_key (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [
          randomBytes(32).toString('hex'),
        ]);
        const found = await client.query<{ key: string }>('SELECT key FROM kapps_spec_key WHERE id = 1');
        return found.rows[0]?.key ?? '';
      });
      if (!/^[0-9a-f]{64}$/.test(key))
        throw new ReleaseStoreError(`kapps_spec_key in ${this.description} holds no valid key`);
      return Buffer.from(key, 'hex');
    });
  }

  /** Create or migrate the schema. A failed attempt is retried by the next call. */
  async #migrate(): Promise<void> {
    try {
      if ((await this.#schemaVersion()) === PG_SCHEMA_VERSION) return;
      await transaction(this.#pool, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
        await client.query(
          'CREATE TABLE IF NOT EXISTS kapps_schema (id integer PRIMARY KEY CHECK (id = 1), version integer NOT NULL)',
        );
        const found = await client.query<{ version: number | string }>('SELECT version FROM kapps_schema WHERE id = 1');
        let version = found.rows[0] ? toInt(found.rows[0].version) : 0;
        checkNotNewer(version, this.description);
        for (const migration of MIGRATIONS) {
          if (migration.version <= version) continue;
          for (const statement of migration.statements) await client.query(statement);
          version = migration.version;
        }
        await client.query(
          `INSERT INTO kapps_schema (id, version) VALUES (1, $1)
           ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version`,
          [version],
        );
      });
    } catch (error) {
      this.#ready = undefined;
      throw error;
    }
  }

  /** The stored schema version, or 0 when there is no schema table yet. */
  async #schemaVersion(): Promise<number> {
    try {
      const found = await this.#pool.query<{ version: number | string }>(
        'SELECT version FROM kapps_schema WHERE id = 1',
      );
      const version = found.rows[0] ? toInt(found.rows[0].version) : 0;
      checkNotNewer(version, this.description);
      return version;
    } catch (error) {
      if (pgCode(error) === '42P01') return 0; // undefined_table: first use
      throw error;
    }
  }

  #parse(record: unknown, project: string, stack: string, revision: number): Release {
    const where = `kapps_releases row (${project}, ${stack}, ${revision}) in ${this.description}`;
    const release = parseReleaseRecord(record, where);
    if (release.project !== project || release.stack !== stack || release.revision !== revision) {
      throw new ReleaseRecordError(
        where,
        `it records release ${release.revision} of ${release.project}/${release.stack}`,
      );
    }
    return release;
  }
}

function checkNotNewer(version: number, description: string): void {
  if (version > PG_SCHEMA_VERSION) {
    throw new ReleaseStoreError(
      `the release database ${description} has schema version ${version}, newer than this kapps supports ` +
        `(${PG_SCHEMA_VERSION}); upgrade kapps`,
    );
  }
}

function rowValues(release: Release): unknown[] {
  return [
    release.project,
    release.stack,
    release.revision,
    release.operation,
    release.phase,
    release.spec.kapps.length,
    JSON.stringify(release.owner),
    release.unlocked ? JSON.stringify(release.unlocked) : null,
    release.createdAt,
    release.modifiedAt,
    release.finishedAt ?? null,
    release.heartbeatAt,
    JSON.stringify(orderRelease(release)),
  ];
}

/** pg returns int8 and numeric as strings; integers are cast here and checked. */
function toInt(value: number | string): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n))
    throw new ReleaseStoreError(`unexpected non-integer ${String(value)} from the database`);
  return n;
}
