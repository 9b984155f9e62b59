/**
 * The run store in PostgreSQL (`--backend postgres://…`): any number of `kapps serve` instances share one queue.
 *
 * - `kapps_runs` holds every run. A partial unique index over `(project, stack) WHERE status = 'running'` is the
 *   database's guarantee of at most one running run per stack. `claim` takes the oldest queued run whose stack has
 *   neither a running run nor an older queued run, with `UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED LIMIT
 *   1) RETURNING *`; a unique violation (another instance won the stack) makes it try again. A queued apply, destroy
 *   or rollback of a stack with an older `needs-approval` run is held back (and does not hold back the runs after it).
 * - Approvals: a waiting run's `approval` (jsonb) and its preview (`kapps_run_previews`) are kept with it; a decision
 *   takes the run row's lock (`SELECT … FOR UPDATE`), so decisions made at once on any instances are counted one after
 *   the other; ending a waiting run is one `UPDATE … WHERE status = 'needs-approval'` (one instance does it).
 * - The owner renews `lease_until` (the database's clock, so instances' clocks do not matter); `reapExpired` marks
 *   running runs whose lease expired `errored`. Nothing is ever put back in the queue.
 * - A run's feed is `kapps_run_feed` (run_id, seq, kind, data jsonb); log lines also record their byte offset and
 *   length in the log's NDJSON form, so `readLog` is an index range scan. Appends take the run row's lock to number
 *   their entries, so entries are gap-free per run. Each status change the store makes (claim, finish, cancel of a
 *   queued run, reap) is appended as a `status` entry in the same transaction.
 * - Every change is announced with `pg_notify('kapps_runs', <StoreNotice JSON>)` inside its transaction (so it is
 *   sent on commit only); one dedicated connection per instance LISTENs and reconnects when it is dropped.
 * - Submissions are serialised by a transaction-level advisory lock, so the queue limits counted in SQL hold
 *   exactly with any number of instances; idempotency keys are unique per `createdBy`.
 * - The tables are created on first use by the numbered SQL files of `src/pg/migrations/` (`PgDatabase`, which also
 *   opens the pools and turns driver errors into `RunStoreError`s without the URL's password), so several instances
 *   starting at once do not race.
 */
import type pg from 'pg';
import { FINAL_RUN_STATES, type ApprovalDecision, type CheckResult } from '../../api/index.js';
import type { AwaitApproval, DecideOutcome } from './run-store.js';
import { KappsError } from '../../diagnostics/errors.js';
import type { RunApproval, RunCommit, RunRequestOptions, RunState, RunTrigger, RunType } from '../../api/index.js';
import { storableJson, storableText } from '../../log/line.js';
import { damageReport, readLogRows, type LogChunk, type LogStoreOptions, type StoredLine } from '../../log/ndjson.js';
import {
  approvalOutcome,
  CHANGE_RUN_TYPES,
  feedWindow,
  queueInfoOf,
  RunStorePolicy,
  type InsertOutcome,
  type RunSelection,
} from './policy.js';
import { PgDatabase } from '../../pg/pool.js';
import { transaction } from '../../pg/transaction.js';
import { pgCode } from '../../pg/transient.js';
import {
  API_TRIGGER,
  RunLeaseLostError,
  type FeedEntry,
  type FeedItem,
  type RetentionPolicy,
  type NewRun,
  type QueueInfo,
  type ReapOptions,
  type RunEnding,
  type RunOwner,
  type RunResult,
  type RunStore,
  type StoreNotice,
  type StoredRun,
  type SubmitLimits,
} from './run-store.js';

/** The channel every instance LISTENs on. */
export const RUNS_CHANNEL = 'kapps_runs';

/** Advisory lock key of submitting ("ksub"). */
const SUBMIT_LOCK_KEY = 0x6b737562;

/** How often a claim retries after losing a stack to another instance (unique violation). */
const CLAIM_ATTEMPTS = 5;

/**
 * A driver or database failure of the run store (the message names the store by its redacted URL). `unavailable`:
 * the failure is transient (the database restarts, a connection was refused).
 */
export class RunStoreError extends KappsError {
  readonly unavailable: boolean;
  constructor(message: string, options?: { unavailable?: boolean }) {
    super(message);
    this.unavailable = options?.unavailable ?? false;
  }
}

export { RunCursorError } from './policy.js';

interface RunRow {
  id: string;
  seq: string | number;
  type: string;
  project: string;
  stack: string;
  status: string;
  created_by: string;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  release_revision: number | null;
  error: string | null;
  options: RunRequestOptions;
  source_commit: RunCommit | null;
  run_trigger: RunTrigger | null;
  approval: RunApproval | null;
  checks: CheckResult[] | null;
  instance: string | null;
  lease_until: Date | null;
  cancel_requested: boolean;
  feed_seq: string | number;
  lease_generation: string | number;
}

/** The run store kept in a PostgreSQL database, shared by any number of instances. */
export class PgRunStore extends RunStorePolicy implements RunStore {
  readonly description: string;
  readonly #db: PgDatabase;
  readonly #pool: pg.Pool;
  /** One connection of its own for renewing leases: a renewal never waits behind the feed writes. */
  readonly #leasePool: pg.Pool;
  readonly #listeners = new Set<(notice: StoreNotice) => void>();
  #listener: pg.Client | undefined;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #reconnectDelay = 100;
  #instance: string | undefined;
  /** Feed appends waiting for the transaction in flight of their run. */
  readonly #batches = new Map<
    string,
    {
      items: FeedItem[];
      waiters: { end: number; resolve: (seq: number) => void; reject: (e: unknown) => void }[];
      owner: RunOwner | undefined;
    }
  >();
  readonly #flushing = new Set<string>();
  #open = false;
  readonly #report: ReturnType<typeof damageReport>;

  /** `url`: a `postgres://` or `postgresql://` URL. Nothing connects before `open` or the first call. */
  constructor(url: string, options: LogStoreOptions & { maxConnections?: number } = {}) {
    super();
    this.#report = damageReport(options);
    this.#db = new PgDatabase(url, {
      name: 'run store',
      applicationName: 'kapps-serve',
      maxConnections: options.maxConnections ?? 4,
      error: (message, unavailable) => new RunStoreError(message, { unavailable }),
    });
    this.description = this.#db.description;
    this.#pool = this.#db.pool;
    this.#leasePool = this.#db.openPool('kapps-serve-lease', 1);
  }

  async open(instance: string): Promise<void> {
    await this.#run('cannot open the run store', async () => {
      this.#instance = instance;
      this.#open = true;
      await this.#connectListener();
    });
  }

  async close(): Promise<void> {
    const instance = this.#instance;
    const used = this.#db.used;
    await this.#db.close(async () => {
      this.#open = false;
      this.#listeners.clear();
      if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer);
      // This instance can no longer renew or finish the runs it still holds: their leases end now, so the next
      // `reapExpired` of any instance errors them instead of waiting out the lease.
      if (instance !== undefined && used) {
        await this.#pool
          .query(`UPDATE kapps_runs SET lease_until = clock_timestamp() WHERE instance = $1 AND status = 'running'`, [
            instance,
          ])
          .catch(() => undefined);
      }
      const listener = this.#listener;
      this.#listener = undefined;
      await listener?.end().catch(() => undefined);
    });
  }

  protected async insertRun(run: NewRun & { readonly id: string }, limits: SubmitLimits): Promise<InsertOutcome> {
    return this.#run('cannot submit a run', () =>
      this.#tx(
        async (client) => {
          const key = limits.idempotencyKey;
          if (key !== undefined) {
            const found = await client.query<RunRow>(
              'SELECT * FROM kapps_runs WHERE created_by = $1 AND idempotency_key = $2',
              [run.createdBy, key],
            );
            if (found.rows[0]) return { kind: 'existing', run: toRun(found.rows[0]) };
          }
          // Inserted only within the queue limits, counted in the same statement (the submission lock is held since
          // BEGIN, so the count sees every submission before this one).
          const inserted = await client.query<RunRow>(
            `INSERT INTO kapps_runs (id, type, project, stack, status, created_by, created_at, options, idempotency_key,
                                   feed_seq, source_commit, run_trigger, approval)
           SELECT $1, $2, $3, $4, 'queued', $5, clock_timestamp(), $6::jsonb, $7, 1, $8::jsonb, $9::jsonb, $10::jsonb
             FROM (SELECT count(*) AS total, count(*) FILTER (WHERE project = $3 AND stack = $4) AS stack
                     FROM kapps_runs WHERE status IN ('queued', 'needs-approval')) AS queue
            WHERE queue.stack < $11 AND queue.total < $12
           RETURNING *`,
            [
              run.id,
              run.type,
              run.project,
              run.stack,
              run.createdBy,
              JSON.stringify(run.options),
              key ?? null,
              run.commit ? JSON.stringify(run.commit) : null,
              JSON.stringify(run.trigger ?? API_TRIGGER),
              run.approval ? storableJson(run.approval) : null,
              limits.maxQueuedPerStack,
              limits.maxQueuedTotal,
            ],
          );
          if (!inserted.rows[0]) {
            // A full queue (rare): which one, counted again under the same lock.
            const counts = await client.query<{ stack: string }>(
              `SELECT count(*) AS stack FROM kapps_runs
              WHERE status IN ('queued', 'needs-approval') AND project = $1 AND stack = $2`,
              [run.project, run.stack],
            );
            return {
              kind: 'full',
              scope: Number(counts.rows[0]?.stack ?? 0) >= limits.maxQueuedPerStack ? 'stack' : 'total',
            };
          }
          const created = toRun(firstRow(inserted));
          await appendStatus(client, created, 1, { type: 'queued', runId: created.id });
          return { kind: 'created', run: created };
        },
        { lockKey: SUBMIT_LOCK_KEY },
      ),
    );
  }

  async get(id: string): Promise<StoredRun | undefined> {
    return this.#run('cannot read a run', async () => {
      const result = await this.#pool.query<RunRow>('SELECT * FROM kapps_runs WHERE id = $1', [id]);
      return result.rows[0] ? toRun(result.rows[0]) : undefined;
    });
  }

  async queueInfo(run: StoredRun): Promise<QueueInfo> {
    if (run.status !== 'queued') return { queuePosition: null, blockedBy: null };
    // The stack's queue is bounded by the queue limits: read whole, placed by the one rule of both stores.
    return queueInfoOf(run, await this.active(run.project, run.stack));
  }

  protected async selectRuns(query: RunSelection): Promise<StoredRun[]> {
    const where: string[] = [];
    const values: unknown[] = [];
    const add = (sql: string, value: unknown): void => {
      values.push(value);
      where.push(sql.replace('?', `$${values.length}`));
    };
    if (query.project !== undefined) add('project = ?', query.project);
    if (query.stack !== undefined) add('stack = ?', query.stack);
    if (query.type !== undefined) add('type = ?', query.type);
    if (query.status !== undefined) add('status = ?', query.status);
    if (query.createdBy !== undefined) add('created_by = ?', query.createdBy);
    if (query.since !== undefined) add('created_at >= ?::timestamptz', query.since);
    if (query.until !== undefined) add('created_at <= ?::timestamptz', query.until);
    if (query.beforeSeq !== undefined) add('seq < ?', query.beforeSeq);
    if (query.projects !== undefined) add('project LIKE ANY (?::text[])', query.projects.map(likePattern));
    values.push(query.limit);
    const sql =
      `SELECT * FROM kapps_runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ` +
      `ORDER BY seq DESC LIMIT $${values.length}`;
    return this.#run('cannot list runs', async () => {
      const result = await this.#pool.query<RunRow>(sql, values);
      return result.rows.map(toRun);
    });
  }

  async active(project: string, stack: string): Promise<StoredRun[]> {
    return this.#run('cannot read the queue', async () => {
      const result = await this.#pool.query<RunRow>(
        `SELECT * FROM kapps_runs WHERE project = $1 AND stack = $2 AND status IN ('queued', 'running', 'needs-approval')
          ORDER BY seq`,
        [project, stack],
      );
      return result.rows.map(toRun);
    });
  }

  async claim(instance: string, leaseMs: number): Promise<StoredRun | undefined> {
    return this.#run('cannot claim a run', async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.#tx(async (client) => {
            const result = await client.query<RunRow>(
              `UPDATE kapps_runs
                  SET status = 'running', instance = $1, started_at = clock_timestamp(),
                      lease_until = clock_timestamp() + $2::double precision * interval '1 millisecond',
                      lease_generation = lease_generation + 1, feed_seq = feed_seq + 1
                WHERE id = (
                  SELECT r.id FROM kapps_runs r
                   WHERE r.status = 'queued'
                     AND NOT EXISTS (SELECT 1 FROM kapps_runs a WHERE a.project = r.project AND a.stack = r.stack
                                        AND a.status = 'running')
                     AND NOT ${heldBackSql('r')}
                     AND NOT EXISTS (SELECT 1 FROM kapps_runs q WHERE q.project = r.project AND q.stack = r.stack
                                        AND q.status = 'queued' AND q.seq < r.seq AND NOT ${heldBackSql('q')})
                   ORDER BY r.seq
                   LIMIT 1
                   FOR UPDATE SKIP LOCKED)
                  AND status = 'queued'
               RETURNING *`,
              [instance, leaseMs],
            );
            const row = result.rows[0];
            if (!row) return undefined;
            const run = toRun(row);
            await appendStatus(client, run, toInt(row.feed_seq));
            return run;
          });
        } catch (error) {
          // Another instance started a run of the same stack between our look and our update: try the next one.
          if (pgCode(error) === '23505' && attempt < CLAIM_ATTEMPTS) continue;
          if (pgCode(error) === '23505') return undefined;
          throw error;
        }
      }
    });
  }

  async renew(instance: string, runIds: readonly string[], leaseMs: number): Promise<string[]> {
    if (runIds.length === 0) return [];
    return this.#run('cannot renew leases', async () => {
      const result = await this.#leasePool.query<{ id: string }>(
        `UPDATE kapps_runs SET lease_until = clock_timestamp() + $3::double precision * interval '1 millisecond'
          WHERE id = ANY($2::text[]) AND instance = $1 AND status = 'running'
         RETURNING id`,
        [instance, [...runIds], leaseMs],
      );
      const kept = new Set(result.rows.map((row) => row.id));
      return runIds.filter((id) => !kept.has(id));
    });
  }

  async setRelease(id: string, owner: RunOwner, revision: number): Promise<void> {
    const [instance, generation] = ownerParts(owner);
    await this.#write('cannot record the release of a run', async () => {
      await this.#pool.query(
        `UPDATE kapps_runs SET release_revision = $3
          WHERE id = $1 AND instance = $2 AND status = 'running' AND ($4::bigint IS NULL OR lease_generation = $4)`,
        [id, instance, revision, generation],
      );
    });
  }

  async finish(id: string, owner: RunOwner, ending: RunEnding): Promise<boolean> {
    const [instance, generation] = ownerParts(owner);
    return this.#write('cannot finish a run', () =>
      this.#tx(async (client) => {
        const result = await client.query<RunRow>(
          `UPDATE kapps_runs
              SET status = $3, error = $4, release_revision = COALESCE($5, release_revision),
                  finished_at = clock_timestamp(), lease_until = NULL, feed_seq = feed_seq + 1
            WHERE id = $1 AND instance = $2 AND status = 'running' AND ($6::bigint IS NULL OR lease_generation = $6)
           RETURNING *`,
          [
            id,
            instance,
            ending.status,
            ending.error == null ? null : storableText(ending.error),
            ending.releaseRevision ?? null,
            generation,
          ],
        );
        const row = result.rows[0];
        if (!row) return false;
        const run = toRun(row);
        await appendStatus(client, run, toInt(row.feed_seq));
        await notify(client, { type: 'finished', runId: id });
        return true;
      }),
    );
  }

  /**
   * The expired runs are locked (`FOR UPDATE SKIP LOCKED`) while `beforeErrored` closes their releases, then errored
   * and announced in the same transaction: until it commits they still count as running, so no run of their stacks
   * is claimed before their releases are closed.
   */
  async reapExpired(reason: string, options: ReapOptions = {}): Promise<StoredRun[]> {
    return this.#run('cannot reap expired runs', () =>
      this.#tx(async (client) => {
        const expired = await client.query<RunRow>(
          `SELECT * FROM kapps_runs
            WHERE status = 'running'
              AND lease_until + $1::double precision * interval '1 millisecond' < clock_timestamp()
            ORDER BY seq
            FOR UPDATE SKIP LOCKED`,
          [Math.max(0, options.graceMs ?? 0)],
        );
        const runs: StoredRun[] = [];
        for (const found of expired.rows) {
          if (options.beforeErrored) {
            try {
              await options.beforeErrored({ ...toRun(found), status: 'errored', error: reason });
            } catch {
              continue; // its release could not be closed: it stays running until the next reap
            }
          }
          const result = await client.query<RunRow>(
            `UPDATE kapps_runs
                SET status = 'errored', error = $2, finished_at = clock_timestamp(), lease_until = NULL,
                    feed_seq = feed_seq + 1
              WHERE id = $1 AND status = 'running'
             RETURNING *`,
            [found.id, storableText(reason)],
          );
          const row = firstRow(result);
          const run = toRun(row);
          await appendStatus(client, run, toInt(row.feed_seq));
          await notify(client, { type: 'finished', runId: run.id });
          runs.push(run);
        }
        return runs;
      }),
    );
  }

  async requestCancel(id: string, by: string): Promise<StoredRun | undefined> {
    return this.#run('cannot cancel a run', () =>
      this.#tx(async (client) => {
        const found = await client.query<RunRow>('SELECT * FROM kapps_runs WHERE id = $1 FOR UPDATE', [id]);
        const current = found.rows[0];
        if (!current) return undefined;
        if (current.status === 'queued' || current.status === 'needs-approval') {
          const result = await client.query<RunRow>(
            `UPDATE kapps_runs SET status = 'cancelled', error = $2, finished_at = clock_timestamp(),
                    feed_seq = feed_seq + 1
              WHERE id = $1 RETURNING *`,
            [
              id,
              current.status === 'queued'
                ? `cancelled by ${by} before it started`
                : `cancelled by ${by} while it waited for approval`,
            ],
          );
          const row = firstRow(result);
          const run = toRun(row);
          await appendStatus(client, run, toInt(row.feed_seq));
          await notify(client, { type: 'finished', runId: id });
          return run;
        }
        if (current.status === 'running' && !current.cancel_requested) {
          const result = await client.query<RunRow>(
            `UPDATE kapps_runs SET cancel_requested = true WHERE id = $1 RETURNING *`,
            [id],
          );
          await notify(client, { type: 'cancel', runId: id });
          return toRun(firstRow(result));
        }
        return toRun(current);
      }),
    );
  }

  async prune(policy: RetentionPolicy): Promise<number> {
    return this.#run('cannot delete old runs', async () => {
      const result = await this.#pool.query(
        `DELETE FROM kapps_runs WHERE id IN (
           SELECT id FROM (
             SELECT id, created_at,
                    row_number() OVER (PARTITION BY project, stack ORDER BY seq DESC) AS n
               FROM kapps_runs WHERE status = ANY($3::text[])) AS finished
            WHERE n > $1 OR ($2::timestamptz IS NOT NULL AND created_at < $2::timestamptz))
           AND status = ANY($3::text[])`,
        [policy.keepPerStack, policy.before ?? null, FINAL_RUN_STATES],
      );
      return result.rowCount ?? 0;
    });
  }

  /**
   * Appends to one run are written in order, one transaction at a time; calls made while one is being written are
   * gathered into the next transaction (a step printing fast costs one round trip per batch, not per line). A batch
   * is checked against the owner of its first call (a run's feed has one writer, its owner). A transient failure is
   * retried (the batch and the ones after it wait), so nothing is lost or reordered by a restart of the database.
   */
  appendFeed(id: string, items: readonly FeedItem[], owner?: RunOwner): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      let batch = this.#batches.get(id);
      if (!batch) {
        batch = { items: [], waiters: [], owner };
        this.#batches.set(id, batch);
      }
      batch.items.push(...items);
      batch.waiters.push({ end: batch.items.length, resolve, reject });
      if (!this.#flushing.has(id)) void this.#flush(id);
    });
  }

  async #flush(id: string): Promise<void> {
    this.#flushing.add(id);
    try {
      for (let batch = this.#batches.get(id); batch; batch = this.#batches.get(id)) {
        this.#batches.delete(id);
        try {
          const last = await this.#appendNow(id, batch.items, batch.owner);
          const first = last - batch.items.length;
          for (const waiter of batch.waiters) waiter.resolve(first + waiter.end);
        } catch (error) {
          for (const waiter of batch.waiters) waiter.reject(error);
        }
      }
    } finally {
      this.#flushing.delete(id);
    }
  }

  async #appendNow(id: string, items: readonly FeedItem[], owner: RunOwner | undefined): Promise<number> {
    const [instance, generation] = owner === undefined ? [null, null] : ownerParts(owner);
    return this.#write('cannot append to the feed of a run', () =>
      this.#tx(async (client) => {
        // jsonb holds neither U+0000 nor a lone surrogate: each is kept as U+FFFD, and offsets count that form.
        const datas = items.map((item) => storableJson(item.data));
        const lines = items.map((item, index) =>
          item.kind === 'log' ? Buffer.byteLength(`${datas[index] ?? ''}\n`) : 0,
        );
        const bytes = lines.reduce((sum, n) => sum + n, 0);
        const result = await client.query<{ feed_seq: string; log_bytes: string }>(
          `UPDATE kapps_runs SET feed_seq = feed_seq + $2, log_bytes = log_bytes + $3
            WHERE id = $1
              AND ($4::text IS NULL OR (instance = $4 AND status = 'running'))
              AND ($5::bigint IS NULL OR lease_generation = $5)
           RETURNING feed_seq, log_bytes`,
          [id, items.length, bytes, instance, generation],
        );
        const row = result.rows[0];
        if (!row && instance !== null) {
          throw new RunLeaseLostError(`run ${id} is no longer held by this server (its lease was reaped)`);
        }
        if (!row) throw new RunStoreError(`run ${id} does not exist in ${this.description}`);
        const last = toInt(row.feed_seq);
        if (items.length === 0) return last;
        let seq = last - items.length;
        let offset = toInt(row.log_bytes) - bytes;
        const seqs: number[] = [];
        const kinds: string[] = [];
        const offsets: (number | null)[] = [];
        const lengths: (number | null)[] = [];
        items.forEach((item, index) => {
          seqs.push(++seq);
          kinds.push(item.kind);
          const length = lines[index] ?? 0;
          offsets.push(item.kind === 'log' ? offset : null);
          lengths.push(item.kind === 'log' ? length : null);
          offset += length;
        });
        await client.query(
          `INSERT INTO kapps_run_feed (run_id, seq, kind, data, log_offset, log_length)
           SELECT $1, s, k, d::jsonb, o, l
             FROM unnest($2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::integer[]) AS t(s, k, d, o, l)`,
          [id, seqs, kinds, datas, offsets, lengths],
        );
        await notify(client, { type: 'feed', runId: id, seq: last });
        return last;
      }),
    );
  }

  async readFeed(id: string, afterSeq: number, limit: number): Promise<FeedEntry[]> {
    const window = feedWindow(afterSeq, limit);
    return this.#run('cannot read the feed of a run', async () => {
      const result = await this.#pool.query<{ seq: string; kind: FeedItem['kind']; data: unknown }>(
        `SELECT seq, kind, data FROM kapps_run_feed WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
        [id, window.afterSeq, window.limit],
      );
      return result.rows.map((row) => ({ seq: toInt(row.seq), item: { kind: row.kind, data: row.data } as FeedItem }));
    });
  }

  async readLog(id: string, offset: number, maxBytes: number): Promise<LogChunk> {
    const start = Math.max(0, Math.floor(offset));
    const rows = (from: number, limit: number): Promise<StoredLine[]> =>
      this.#run('cannot read the log of a run', async () => {
        const result = await this.#pool.query<{ data: object; log_offset: string; log_length: number }>(
          `SELECT data, log_offset, log_length FROM kapps_run_feed
            WHERE run_id = $1 AND log_offset >= $2 ORDER BY log_offset LIMIT $3`,
          [id, from, limit],
        );
        return result.rows.map((row) => {
          const at = toInt(row.log_offset);
          return { offset: at, end: at + row.log_length, data: row.data };
        });
      });
    return readLogRows(rows, start, maxBytes, {
      report: this.#report,
      where: (at) => `kapps_run_feed row (${id}, log offset ${at}) in ${this.description}`,
    });
  }

  async setResult(id: string, result: RunResult): Promise<void> {
    await this.#write('cannot store the result of a run', async () => {
      await this.#pool.query(
        `INSERT INTO kapps_run_results (run_id, content_type, body) VALUES ($1, $2, $3)
         ON CONFLICT (run_id) DO UPDATE SET content_type = EXCLUDED.content_type, body = EXCLUDED.body`,
        [id, result.contentType, result.body],
      );
    });
  }

  // Approvals: see RunStore.
  async addChecks(id: string, owner: RunOwner, results: readonly CheckResult[]): Promise<void> {
    const [instance, generation] = ownerParts(owner);
    await this.#write('cannot record the checks of a run', () =>
      this.#tx(async (client) => {
        const result = await client.query<RunRow>(
          `UPDATE kapps_runs SET checks = checks || $4::jsonb, feed_seq = feed_seq + 1
            WHERE id = $1 AND instance = $2 AND status = 'running' AND ($3::bigint IS NULL OR lease_generation = $3)
           RETURNING *`,
          [id, instance, generation, storableJson(results)],
        );
        const row = result.rows[0];
        if (!row) throw new RunLeaseLostError(`run ${id} is no longer held by this server (its lease was reaped)`);
        await appendStatus(client, toRun(row), toInt(row.feed_seq));
      }),
    );
  }

  async awaitApproval(id: string, owner: RunOwner, waiting: AwaitApproval): Promise<boolean> {
    const [instance, generation] = ownerParts(owner);
    return this.#write('cannot make a run wait for approval', () =>
      this.#tx(async (client) => {
        const found = await client.query<RunRow>(
          `SELECT * FROM kapps_runs
            WHERE id = $1 AND instance = $2 AND status = 'running' AND ($3::bigint IS NULL OR lease_generation = $3)
              AND approval IS NOT NULL
           FOR UPDATE`,
          [id, instance, generation],
        );
        const current = found.rows[0];
        if (!current) return false;
        if (current.cancel_requested) {
          // Cancelled while its preview ran: it ends now instead of waiting.
          const result = await client.query<RunRow>(
            `UPDATE kapps_runs SET status = 'cancelled', error = 'cancelled before it waited for approval',
                    finished_at = clock_timestamp(), lease_until = NULL, feed_seq = feed_seq + 1
              WHERE id = $1 RETURNING *`,
            [id],
          );
          const row = firstRow(result);
          await appendStatus(client, toRun(row), toInt(row.feed_seq));
          await notify(client, { type: 'finished', runId: id });
          return true;
        }
        await client.query(
          `INSERT INTO kapps_run_previews (run_id, content_type, body) VALUES ($1, $2, $3)
           ON CONFLICT (run_id) DO UPDATE SET content_type = EXCLUDED.content_type, body = EXCLUDED.body`,
          [id, waiting.preview.contentType, storableText(waiting.preview.body)],
        );
        const result = await client.query<RunRow>(
          `UPDATE kapps_runs
              SET status = 'needs-approval', instance = NULL, lease_until = NULL, feed_seq = feed_seq + 1,
                  approval = approval || jsonb_build_object('waitingSince', $2::text, 'expiresAt', $3::text,
                                                            'basedOnRevision', $4::integer)
            WHERE id = $1 RETURNING *`,
          [id, waiting.waitingSince, waiting.expiresAt, waiting.basedOnRevision],
        );
        const row = firstRow(result);
        await appendStatus(client, toRun(row), toInt(row.feed_seq));
        // Its stack is free again for the runs it does not hold back.
        await notify(client, { type: 'finished', runId: id });
        return true;
      }),
    );
  }

  /** Decided under the run row's lock: two decisions at once (on any instances) both count. */
  async decide(id: string, decision: ApprovalDecision): Promise<DecideOutcome | undefined> {
    return this.#write('cannot record a decision on a run', () =>
      this.#tx(async (client) => {
        const found = await client.query<RunRow>('SELECT * FROM kapps_runs WHERE id = $1 FOR UPDATE', [id]);
        const current = found.rows[0];
        if (!current) return undefined;
        const outcome = approvalOutcome(toRun(current), decision);
        if (outcome.kind === 'not-waiting' || outcome.kind === 'duplicate')
          return { kind: outcome.kind, run: toRun(current) };
        const status = outcome.kind === 'rejected' ? 'rejected' : outcome.kind === 'approved' ? 'queued' : null;
        const result = await client.query<RunRow>(
          `UPDATE kapps_runs
              SET approval = $2::jsonb, status = COALESCE($3, status), error = COALESCE($4, error),
                  finished_at = CASE WHEN $3 = 'rejected' THEN clock_timestamp() ELSE finished_at END,
                  feed_seq = feed_seq + 1
            WHERE id = $1 RETURNING *`,
          [
            id,
            storableJson(outcome.approval),
            status,
            outcome.kind === 'rejected' ? storableText(outcome.error) : null,
          ],
        );
        const row = firstRow(result);
        const run = toRun(row);
        await appendStatus(client, run, toInt(row.feed_seq));
        if (outcome.kind === 'rejected') await notify(client, { type: 'finished', runId: id });
        if (outcome.kind === 'approved') await notify(client, { type: 'queued', runId: id });
        return { kind: outcome.kind, run };
      }),
    );
  }

  /** One `UPDATE … WHERE status = 'needs-approval'`: of two instances ending the same run, one does. */
  async endWaiting(id: string, status: 'stale' | 'cancelled', error: string): Promise<StoredRun | undefined> {
    return this.#write('cannot end a waiting run', () =>
      this.#tx(async (client) => {
        const result = await client.query<RunRow>(
          `UPDATE kapps_runs SET status = $2, error = $3, finished_at = clock_timestamp(), feed_seq = feed_seq + 1
            WHERE id = $1 AND status = 'needs-approval'
           RETURNING *`,
          [id, status, storableText(error)],
        );
        const row = result.rows[0];
        if (!row) return undefined;
        const run = toRun(row);
        await appendStatus(client, run, toInt(row.feed_seq));
        await notify(client, { type: 'finished', runId: id });
        return run;
      }),
    );
  }

  async waiting(): Promise<StoredRun[]> {
    return this.#run('cannot read the runs waiting for approval', async () => {
      const result = await this.#pool.query<RunRow>(
        `SELECT * FROM kapps_runs WHERE status = 'needs-approval' ORDER BY seq`,
      );
      return result.rows.map(toRun);
    });
  }

  async getPreview(id: string): Promise<RunResult | undefined> {
    return this.#run('cannot read the preview of a run', async () => {
      const result = await this.#pool.query<{ content_type: string; body: string }>(
        'SELECT content_type, body FROM kapps_run_previews WHERE run_id = $1',
        [id],
      );
      const row = result.rows[0];
      return row ? { contentType: row.content_type, body: row.body } : undefined;
    });
  }

  async getResult(id: string): Promise<RunResult | undefined> {
    return this.#run('cannot read the result of a run', async () => {
      const result = await this.#pool.query<{ content_type: string; body: string }>(
        'SELECT content_type, body FROM kapps_run_results WHERE run_id = $1',
        [id],
      );
      const row = result.rows[0];
      return row ? { contentType: row.content_type, body: row.body } : undefined;
    });
  }

  subscribe(listener: (notice: StoreNotice) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** The dedicated LISTEN connection; when it drops, it is opened again (100 ms, doubling up to 2 s). */
  async #connectListener(): Promise<void> {
    if (!this.#open || this.#listener) return;
    const client = this.#db.newClient('kapps-serve-listen');
    const lost = (): void => {
      if (this.#listener !== client) return;
      this.#listener = undefined;
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      this.#scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      if (message.channel !== RUNS_CHANNEL || !message.payload) return;
      let notice: StoreNotice;
      try {
        notice = JSON.parse(message.payload) as StoreNotice;
      } catch {
        return;
      }
      for (const listener of [...this.#listeners]) {
        try {
          listener(notice);
        } catch {
          // A subscriber's failure is its own; the others still hear of the change.
        }
      }
    });
    this.#listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${RUNS_CHANNEL}`);
      this.#reconnectDelay = 100;
    } catch (error) {
      if (this.#listener === client) this.#listener = undefined;
      await client.end().catch(() => undefined);
      throw error;
    }
  }

  #scheduleReconnect(): void {
    if (!this.#open || this.#reconnectTimer) return;
    const delay = this.#reconnectDelay;
    this.#reconnectDelay = Math.min(this.#reconnectDelay * 2, 2_000);
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      this.#connectListener().catch(() => this.#scheduleReconnect());
    }, delay);
    this.#reconnectTimer.unref();
  }

  /** Run one transaction on a pooled connection. */
  #tx<T>(action: (client: pg.PoolClient) => Promise<T>, options?: { readonly lockKey?: number }): Promise<T> {
    return transaction(this.#pool, action, options);
  }

  #run<T>(what: string, action: () => Promise<T>): Promise<T> {
    return this.#db.run(what, action);
  }

  #write<T>(what: string, action: () => Promise<T>): Promise<T> {
    return this.#db.write(what, action);
  }
}

/**
 * Append the run's new status as its feed entry `seq` (the row's `feed_seq`, already counted), and announce it, then
 * `then` if given: one statement (one round trip); the notices are sent on commit, in this order.
 */
async function appendStatus(client: pg.PoolClient, run: StoredRun, seq: number, then?: StoreNotice): Promise<void> {
  const notices = [{ type: 'feed', runId: run.id, seq } satisfies StoreNotice, ...(then ? [then] : [])];
  await client.query(
    `WITH entry AS (
       INSERT INTO kapps_run_feed (run_id, seq, kind, data) VALUES ($1, $2, 'status', $3::jsonb) RETURNING seq)
     SELECT ${notices.map((_, i) => `pg_notify($4, $${5 + i})`).join(', ')} FROM entry`,
    [run.id, seq, storableJson(run), RUNS_CHANNEL, ...notices.map((n) => JSON.stringify(n))],
  );
}

async function notify(client: pg.PoolClient, notice: StoreNotice): Promise<void> {
  await client.query('SELECT pg_notify($1, $2)', [RUNS_CHANNEL, JSON.stringify(notice)]);
}

function toRun(row: RunRow): StoredRun {
  return {
    id: row.id,
    seq: toInt(row.seq),
    type: row.type as RunType,
    project: row.project,
    stack: row.stack,
    status: row.status as RunState,
    createdBy: row.created_by,
    createdAt: row.created_at.toISOString(),
    startedAt: row.started_at ? row.started_at.toISOString() : null,
    finishedAt: row.finished_at ? row.finished_at.toISOString() : null,
    releaseRevision: row.release_revision,
    error: row.error,
    options: row.options,
    commit: row.source_commit ?? null,
    trigger: row.run_trigger ?? API_TRIGGER,
    approval: row.approval ?? null,
    checks: row.checks ?? [],
    instance: row.instance,
    leaseUntil: row.lease_until ? row.lease_until.toISOString() : null,
    cancelRequested: row.cancel_requested,
    leaseGeneration: toInt(row.lease_generation ?? 0),
  };
}

/**
 * The SQL condition that the queued run `alias` is held back by a run of its stack waiting for approvals (the rule of
 * `heldBack` in policy.ts): an apply, destroy or rollback submitted after it.
 */
function heldBackSql(alias: string): string {
  const types = CHANGE_RUN_TYPES.map((t) => `'${t}'`).join(', ');
  return `(${alias}.type IN (${types}) AND EXISTS (SELECT 1 FROM kapps_runs w WHERE w.project = ${alias}.project
            AND w.stack = ${alias}.stack AND w.status = 'needs-approval' AND w.seq < ${alias}.seq))`;
}

/** The instance and (null: any) lease generation of an owner. */
function ownerParts(owner: RunOwner): [string, number | null] {
  return typeof owner === 'string' ? [owner, null] : [owner.instance, owner.generation];
}

function firstRow<T extends pg.QueryResultRow>(result: pg.QueryResult<T>): T {
  const row = result.rows[0];
  if (!row) throw new RunStoreError('the database returned no row');
  return row;
}

/** A project pattern of a token (`team-*`) as a LIKE pattern. */
function likePattern(pattern: string): string {
  return pattern.replace(/[\\%_]/g, (c) => `\\${c}`).replaceAll('*', '%');
}

/** pg returns int8 as strings; integers are cast here and checked. */
function toInt(value: number | string): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(n)) throw new RunStoreError(`unexpected non-integer ${String(value)} from the database`);
  return n;
}
