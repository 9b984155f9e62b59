/**
 * The outbox in PostgreSQL (`kapps_notifications`, migration 0009), shared by every instance: `claim` leases due
 * deliveries with `FOR UPDATE SKIP LOCKED`, so each is sent by one instance at a time, and an instance that stops
 * leaves its deliveries to the others once their lease ran out. Times are the database's clock. A run's deliveries
 * go with the run (`ON DELETE CASCADE`).
 */
import type pg from 'pg';
import { KappsError } from '../../diagnostics/errors.js';
import type { NotificationAttempt, NotificationEvent, NotificationState } from '../../api/index.js';
import { PgDatabase } from '../../pg/pool.js';
import { transaction } from '../../pg/transaction.js';
import { MAX_DELIVERIES_PER_RUN, type AttemptOutcome, type Delivery, type NewDelivery, type Outbox } from './outbox.js';

/** A driver or database failure of the outbox (without the URL's password). */
export class OutboxError extends KappsError {
  readonly unavailable: boolean;
  constructor(message: string, unavailable: boolean) {
    super(message);
    this.unavailable = unavailable;
  }
}

interface DeliveryRow {
  id: string;
  run_id: string;
  event: string;
  url: string;
  secret_env: string;
  body: string;
  state: string;
  attempts: NotificationAttempt[];
  next_attempt_at: Date | null;
  created_at: Date;
}

const COLUMNS = 'id, run_id, event, url, secret_env, body, state, attempts, next_attempt_at, created_at';

function fromRow(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    runId: row.run_id,
    event: row.event as NotificationEvent,
    url: row.url,
    secretEnv: row.secret_env,
    body: row.body,
    state: row.state as NotificationState,
    attempts: row.attempts,
    nextAttemptAt: row.next_attempt_at ? row.next_attempt_at.toISOString() : null,
    createdAt: row.created_at.toISOString(),
  };
}

export class PgOutbox implements Outbox {
  readonly #db: PgDatabase;
  readonly #pool: pg.Pool;

  constructor(url: string) {
    this.#db = new PgDatabase(url, {
      name: 'notification outbox',
      applicationName: 'kapps-serve-notify',
      maxConnections: 2,
      error: (message, unavailable) => new OutboxError(message, unavailable),
    });
    this.#pool = this.#db.pool;
  }

  open(): Promise<void> {
    return this.#db.run('cannot open the notification outbox', () => Promise.resolve());
  }

  close(): Promise<void> {
    return this.#db.close();
  }

  enqueue(deliveries: readonly NewDelivery[]): Promise<void> {
    if (deliveries.length === 0) return Promise.resolve();
    return this.#db.write('cannot store notifications', () =>
      transaction(this.#pool, async (client) => {
        for (const runId of new Set(deliveries.map((d) => d.runId))) {
          // One writer per run at a time, so the cap holds.
          await client.query(`SELECT pg_advisory_xact_lock(hashtext('kapps_notifications:' || $1))`, [runId]);
          const counted = await client.query<{ n: string }>(
            'SELECT count(*) AS n FROM kapps_notifications WHERE run_id = $1',
            [runId],
          );
          let room = MAX_DELIVERIES_PER_RUN - Number(counted.rows[0]?.n ?? 0);
          for (const d of deliveries.filter((x) => x.runId === runId)) {
            if (room-- <= 0) break;
            await client.query(
              `INSERT INTO kapps_notifications (id, run_id, event, url, secret_env, body, state, next_attempt_at)
               VALUES ($1, $2, $3, $4, $5, $6, 'pending', clock_timestamp())
               ON CONFLICT (id) DO NOTHING`,
              [d.id, d.runId, d.event, d.url, d.secretEnv, d.body],
            );
          }
        }
      }),
    );
  }

  claim(instance: string, leaseMs: number, limit: number): Promise<Delivery[]> {
    return this.#db.run('cannot claim notifications', async () => {
      const rows = await this.#pool.query<DeliveryRow>(
        `UPDATE kapps_notifications
            SET instance = $1, lease_until = clock_timestamp() + $2 * interval '1 millisecond'
          WHERE id IN (SELECT id FROM kapps_notifications
                        WHERE state = 'pending' AND next_attempt_at <= clock_timestamp()
                          AND (lease_until IS NULL OR lease_until <= clock_timestamp())
                        ORDER BY next_attempt_at, seq
                        LIMIT $3
                        FOR UPDATE SKIP LOCKED)
        RETURNING ${COLUMNS}`,
        [instance, leaseMs, Math.max(0, limit)],
      );
      return rows.rows.map(fromRow);
    });
  }

  record(id: string, instance: string, attempt: NotificationAttempt, outcome: AttemptOutcome): Promise<boolean> {
    return this.#db.write('cannot record a notification attempt', async () => {
      const updated = await this.#pool.query(
        `UPDATE kapps_notifications
            SET attempts = attempts || jsonb_build_array($3::jsonb), state = $4,
                next_attempt_at = CASE WHEN $4 = 'pending'
                                       THEN clock_timestamp() + $5 * interval '1 millisecond' END,
                instance = NULL, lease_until = NULL
          WHERE id = $1 AND instance = $2 AND state = 'pending'`,
        [id, instance, JSON.stringify(attempt), outcome.state, outcome.state === 'pending' ? outcome.retryInMs : 0],
      );
      return (updated.rowCount ?? 0) > 0;
    });
  }

  listForRun(runId: string): Promise<Delivery[]> {
    return this.#db.run('cannot read notifications', async () => {
      const rows = await this.#pool.query<DeliveryRow>(
        `SELECT ${COLUMNS} FROM kapps_notifications WHERE run_id = $1 ORDER BY seq`,
        [runId],
      );
      return rows.rows.map(fromRow);
    });
  }

  /** The run store's retention deletes the rows with their runs. */
  prune(): Promise<number> {
    return Promise.resolve(0);
  }
}
