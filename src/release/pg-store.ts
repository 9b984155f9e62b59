/**
 * The PostgreSQL backend (`postgres://user:password@host:port/database`).
 *
 * Releases live in `kapps_releases`, primary key (project, stack, revision): `create` is an INSERT, so the
 * database itself refuses a second release with the same revision (unique violation → `RevisionTakenError`).
 * `update` runs in a transaction that locks the row (`SELECT … FOR UPDATE`), checks `modifiedAt` when asked and
 * replaces the record, deleting the release's journal rows. While a run is in flight, its kapp states and heartbeats
 * are appended as rows of `kapps_release_journal` (`appendState`: one INSERT per save, the row's columns moved on)
 * and every read applies them to the record, in the same statement. The whole record is kept as `json` (text, so key order and numbers are kept exactly as
 * written); the metadata `kapps release list` shows is kept in columns so listing does not load specs.
 *
 * The schema is created on first use and migrated by the numbered SQL files of `src/pg/migrations/` (`PgDatabase`,
 * which also opens the pool and turns driver errors into `ReleaseStoreError`s without the URL's password).
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import {
  ReleaseConflictError,
  ReleaseNotFoundError,
  ReleaseRecordError,
  ReleaseStoreError,
  RevisionTakenError,
} from './errors.js';
import { parseReleaseRecord } from './record-schema.js';
import { orderKappState, orderRelease } from './record-order.js';
import { damageReport, encodeLines, readLogRows } from '../log/ndjson.js';
import type { DamageReport, LogChunk, LogStoreOptions, StoredLine } from '../log/ndjson.js';
import { storableJson, type LogLine } from '../log/line.js';
import { PgDatabase } from '../pg/pool.js';
import { transaction } from '../pg/transaction.js';
import { pgCode } from '../pg/transient.js';
import type { ReleaseKey, ReleaseStore, StateChange, UpdateOptions } from './store-types.js';
import type {
  KappState,
  Release,
  ReleaseOperation,
  ReleaseOwner,
  ReleasePhase,
  ReleaseSummary,
  ReleaseApproval,
  ReleaseBreakGlass,
  ReleaseSource,
  ReleaseUnlock,
} from './types.js';
import { approvalsOf, summarySource } from './types.js';

interface SummaryRow {
  revision: number | string;
  operation: string;
  phase: string;
  kapps_count: number | string;
  owner: ReleaseOwner;
  unlocked: ReleaseUnlock | null;
  source: ReleaseSource | null;
  rollback_of: number | string | null;
  approvals: ReleaseApproval[] | null;
  break_glass: ReleaseBreakGlass | null;
  created_at: Date;
  modified_at: Date;
  finished_at: Date | null;
  heartbeat_at: Date;
}

/** How a PostgreSQL release store connects: its connections at most (2) and their `application_name` (`kapps`). */
export interface PgReleaseStoreOptions {
  readonly maxConnections?: number;
  readonly applicationName?: string;
}

/** The release store kept in a PostgreSQL database. */
export class PgReleaseStore implements ReleaseStore {
  readonly description: string;
  readonly #db: PgDatabase;
  readonly #pool: pg.Pool;

  readonly #report: DamageReport;
  /** The spec key once read: it is made once and never changes, so a store kept open reads it once. */
  #specKey: Buffer | undefined;

  /** `url`: a `postgres://` or `postgresql://` connection URL. Nothing connects before the first call. */
  constructor(url: string, options: LogStoreOptions & PgReleaseStoreOptions = {}) {
    this.#report = damageReport(options);
    this.#db = new PgDatabase(url, {
      name: 'release store',
      applicationName: options.applicationName ?? 'kapps',
      maxConnections: options.maxConnections ?? 2,
      error: (message, unavailable) => new ReleaseStoreError(message, { unavailable }),
    });
    this.description = this.#db.description;
    this.#pool = this.#db.pool;
  }

  async latest(project: string, stack: string): Promise<Release | undefined> {
    return this.#run('cannot read releases', async () => {
      const result = await this.#pool.query<{
        revision: number | string;
        record: unknown;
        journal: JournalRow[] | null;
      }>(
        `SELECT r.revision, r.record, ${JOURNAL_OF_R} AS journal FROM kapps_releases r
          WHERE r.project = $1 AND r.stack = $2 ORDER BY r.revision DESC LIMIT 1`,
        [project, stack],
      );
      const row = result.rows[0];
      return row ? this.#parse(withJournal(row.record, row.journal), project, stack, toInt(row.revision)) : undefined;
    });
  }

  async get(project: string, stack: string, revision: number): Promise<Release | undefined> {
    if (!Number.isSafeInteger(revision) || revision < 1 || revision > 2 ** 31 - 1) return undefined;
    return this.#run('cannot read releases', async () => {
      const result = await this.#pool.query<{ record: unknown; journal: JournalRow[] | null }>(
        `SELECT r.record, ${JOURNAL_OF_R} AS journal FROM kapps_releases r
          WHERE r.project = $1 AND r.stack = $2 AND r.revision = $3`,
        [project, stack, revision],
      );
      const row = result.rows[0];
      return row ? this.#parse(withJournal(row.record, row.journal), project, stack, revision) : undefined;
    });
  }

  async list(project: string, stack: string): Promise<ReleaseSummary[]> {
    return this.#run('cannot list releases', async () => {
      const result = await this.#pool.query<SummaryRow>(
        `SELECT revision, operation, phase, kapps_count, owner, unlocked, source, rollback_of, approvals, break_glass,
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
        ...(row.source ? { source: summarySource(row.source) } : {}),
        ...(row.rollback_of !== null ? { rollbackOf: toInt(row.rollback_of) } : {}),
        ...approvalsOf({
          ...(row.approvals ? { approvals: row.approvals } : {}),
          ...(row.break_glass ? { breakGlass: row.break_glass } : {}),
        }),
      }));
    });
  }

  async create(release: Release): Promise<void> {
    await this.#write('cannot create a release', async () => {
      try {
        await this.#pool.query(
          `INSERT INTO kapps_releases (project, stack, revision, operation, phase, kapps_count, owner, unlocked,
                                       created_at, modified_at, finished_at, heartbeat_at, record, source, rollback_of,
                                       approvals, break_glass)
           VALUES ($1, $2, $3, $4, $5, $6, $7::json, $8::json, $9, $10, $11, $12, $13::json, $14::json, $15,
                   $16::json, $17::json)`,
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
        const locked = current.rows[0];
        const row = locked && {
          record: withJournal(locked.record, await journalRows(client, release)),
        };
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
                  record = $13::json, source = $14::json, rollback_of = $15, approvals = $16::json,
                  break_glass = $17::json
            WHERE project = $1 AND stack = $2 AND revision = $3`,
          rowValues(release),
        );
        // The record now holds what the journal said (the caller's release was read with it applied).
        await client.query('DELETE FROM kapps_release_journal WHERE project = $1 AND stack = $2 AND revision = $3', [
          release.project,
          release.stack,
          release.revision,
        ]);
      });
    });
  }

  async appendState(release: ReleaseKey, change: StateChange, options: UpdateOptions = {}): Promise<void> {
    await this.#write('cannot update a release', async () => {
      await transaction(this.#pool, async (client) => {
        const key = [release.project, release.stack, release.revision];
        // Lock the row first, then read the journal in a statement of its own: a statement that waited for the lock
        // still sees the rows as they were when it began (an unlock's deleted rows), the next one sees them now.
        const locked = await client.query(
          'SELECT 1 FROM kapps_releases WHERE project = $1 AND stack = $2 AND revision = $3 FOR UPDATE',
          key,
        );
        const current = await client.query<{ last: string | null }>(
          `SELECT modified_at AS last FROM kapps_release_journal WHERE project = $1 AND stack = $2 AND revision = $3
            ORDER BY seq DESC LIMIT 1`,
          key,
        );
        const row = locked.rows.length > 0 ? { last: current.rows[0]?.last ?? null } : undefined;
        if (!row) {
          throw new ReleaseNotFoundError(
            `release ${release.revision} of ${release.project}/${release.stack} does not exist, so it cannot be updated`,
          );
        }
        if (options.ifModifiedAt !== undefined) {
          // The record's own modifiedAt is read only when no journal row follows it (the first save of a run).
          let modifiedAt = row.last;
          if (modifiedAt === null) {
            const base = await client.query<{ modified: string | null }>(
              `SELECT record->>'modifiedAt' AS modified FROM kapps_releases
                WHERE project = $1 AND stack = $2 AND revision = $3`,
              key,
            );
            modifiedAt = base.rows[0]?.modified ?? null;
          }
          if (modifiedAt !== options.ifModifiedAt) {
            const stored = await this.get(release.project, release.stack, release.revision);
            throw new ReleaseConflictError(
              `release ${release.revision} of ${release.project}/${release.stack} was changed by another process ` +
                `(modified ${modifiedAt ?? 'never'}, expected ${options.ifModifiedAt})`,
              stored,
            );
          }
        }
        const ids = Object.keys(change.state);
        const kapps: (string | null)[] = ids.length > 0 ? ids : [null];
        await client.query(
          `INSERT INTO kapps_release_journal (project, stack, revision, modified_at, heartbeat_at, kapp, state)
           SELECT $1, $2, $3, $4, $5, k, s::json FROM unnest($6::text[], $7::text[]) WITH ORDINALITY AS t(k, s, n)
            ORDER BY n`,
          [
            ...key,
            change.modifiedAt,
            change.heartbeatAt ?? null,
            kapps,
            kapps.map((id) => (id === null ? null : storableJson(orderKappState(change.state[id] as KappState)))),
          ],
        );
        await client.query(
          `UPDATE kapps_releases SET modified_at = $4, heartbeat_at = COALESCE($5, heartbeat_at)
            WHERE project = $1 AND stack = $2 AND revision = $3`,
          [...key, change.modifiedAt, change.heartbeatAt ?? null],
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
        const stored = encodeLines(lines, last.rows[0]?.end == null ? 0 : toInt(last.rows[0].end));
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
    await this.#db.close();
  }

  #run<T>(what: string, action: () => Promise<T>): Promise<T> {
    return this.#db.run(what, action);
  }

  #write<T>(what: string, action: () => Promise<T>): Promise<T> {
    return this.#db.write(what, action);
  }

  async specKey(): Promise<Buffer | undefined> {
    if (this.#specKey) return Buffer.from(this.#specKey);
    return this.#run('cannot read the spec key', async () => {
      // The first kapps that needs it makes it; `DO NOTHING` keeps the one made first.
      await this.#pool.query('INSERT INTO kapps_spec_key (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING', [
        randomBytes(32).toString('hex'),
      ]);
      const found = await this.#pool.query<{ key: string }>('SELECT key FROM kapps_spec_key WHERE id = 1');
      const key = found.rows[0]?.key ?? '';
      if (!/^[0-9a-f]{64}$/.test(key))
        throw new ReleaseStoreError(`kapps_spec_key in ${this.description} holds no valid key`);
      this.#specKey = Buffer.from(key, 'hex');
      return Buffer.from(this.#specKey);
    });
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

/** One row of `kapps_release_journal`, as the reads aggregate them. */
interface JournalRow {
  modified_at: string;
  heartbeat_at: string | null;
  kapp: string | null;
  state: unknown;
}

/** The journal rows of the release row `r`, in order, as one json array (null when there are none). */
const JOURNAL_OF_R = `(SELECT json_agg(json_build_object('modified_at', j.modified_at, 'heartbeat_at', j.heartbeat_at,
                                          'kapp', j.kapp, 'state', j.state) ORDER BY j.seq)
     FROM kapps_release_journal j WHERE j.project = r.project AND j.stack = r.stack AND j.revision = r.revision)`;

async function journalRows(client: pg.PoolClient, release: ReleaseKey): Promise<JournalRow[]> {
  const result = await client.query<JournalRow>(
    `SELECT modified_at, heartbeat_at, kapp, state FROM kapps_release_journal
      WHERE project = $1 AND stack = $2 AND revision = $3 ORDER BY seq`,
    [release.project, release.stack, release.revision],
  );
  return result.rows;
}

/** The stored record with its journal rows applied in order (checked afterwards, as the record is). */
function withJournal(record: unknown, rows: readonly JournalRow[] | null): unknown {
  if (!rows || rows.length === 0 || typeof record !== 'object' || record === null) return record;
  const merged = { ...(record as Record<string, unknown>) };
  const state = { ...(merged.state as Record<string, unknown> | undefined) };
  for (const row of rows) {
    merged.modifiedAt = row.modified_at;
    if (row.heartbeat_at !== null) merged.heartbeatAt = row.heartbeat_at;
    if (row.kapp !== null) state[row.kapp] = row.state;
  }
  merged.state = state;
  return merged;
}

function rowValues(release: Release): unknown[] {
  return [
    release.project,
    release.stack,
    release.revision,
    release.operation,
    release.phase,
    release.spec.kapps.length,
    storableJson(release.owner),
    release.unlocked ? storableJson(release.unlocked) : null,
    release.createdAt,
    release.modifiedAt,
    release.finishedAt ?? null,
    release.heartbeatAt,
    storableJson(orderRelease(release)),
    release.source ? storableJson(release.source) : null,
    release.rollbackOf ?? null,
    release.approvals ? storableJson(release.approvals) : null,
    release.breakGlass ? storableJson(release.breakGlass) : null,
  ];
}

/** pg returns int8 and numeric as strings; integers are cast here and checked. */
function toInt(value: number | string): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n))
    throw new ReleaseStoreError(`unexpected non-integer ${String(value)} from the database`);
  return n;
}
