/** The trigger store on PostgreSQL (migration 0008): shared by every instance of the database. */
import { PgDatabase } from '../../pg/pool.js';
import {
  KEEP_DELIVERY_DAYS,
  MAX_DELIVERIES,
  TriggerStoreError,
  type PollClaim,
  type TriggerStore,
} from './trigger-store.js';

/** Prune the deliveries once in this many claims. */
const PRUNE_EVERY = 500;

export class PgTriggerStore implements TriggerStore {
  readonly #db: PgDatabase;
  #claims = 0;

  constructor(url: string) {
    this.#db = new PgDatabase(url, {
      name: 'trigger store',
      applicationName: 'kapps-serve-triggers',
      maxConnections: 2,
      error: (message, unavailable) => new TriggerStoreError(message, unavailable),
    });
  }

  claimDelivery(id: string): Promise<boolean> {
    return this.#db.write('record a webhook delivery', async () => {
      if (this.#claims++ % PRUNE_EVERY === 0) await this.#prune();
      const r = await this.#db.pool.query(
        'INSERT INTO kapps_webhook_deliveries (id) VALUES ($1) ON CONFLICT (id) DO NOTHING',
        [id],
      );
      return r.rowCount === 1;
    });
  }

  async forgetDelivery(id: string): Promise<void> {
    await this.#db.write('forget a webhook delivery', () =>
      this.#db.pool.query('DELETE FROM kapps_webhook_deliveries WHERE id = $1', [id]),
    );
  }

  claimPoll(project: string, _intervalSeconds: number, holdSeconds: number): Promise<PollClaim | undefined> {
    return this.#db.run('claim a poll', async () => {
      await this.#db.pool.query(
        "INSERT INTO kapps_poll_claims (project, next_at) VALUES ($1, 'epoch') ON CONFLICT (project) DO NOTHING",
        [project],
      );
      const r = await this.#db.pool.query<{ last_sha: string | null }>(
        'UPDATE kapps_poll_claims SET next_at = now() + make_interval(secs => $2) WHERE project = $1 AND next_at <= now() RETURNING last_sha',
        [project, holdSeconds],
      );
      const row = r.rows[0];
      return row ? { lastSha: row.last_sha } : undefined;
    });
  }

  async finishPoll(project: string, sha: string | undefined, intervalSeconds: number): Promise<void> {
    await this.#db.write('record a poll', () =>
      this.#db.pool.query(
        'UPDATE kapps_poll_claims SET next_at = now() + make_interval(secs => $2), last_sha = COALESCE($3, last_sha) WHERE project = $1',
        [project, intervalSeconds, sha ?? null],
      ),
    );
  }

  close(): Promise<void> {
    return this.#db.close();
  }

  /** Drop the deliveries older than the days kept, and all but the newest MAX_DELIVERIES. */
  async #prune(): Promise<void> {
    await this.#db.pool.query(
      'DELETE FROM kapps_webhook_deliveries WHERE received_at < now() - make_interval(days => $1)',
      [KEEP_DELIVERY_DAYS],
    );
    await this.#db.pool.query(
      `DELETE FROM kapps_webhook_deliveries WHERE received_at < (
         SELECT received_at FROM kapps_webhook_deliveries ORDER BY received_at DESC OFFSET $1 LIMIT 1)`,
      [MAX_DELIVERIES],
    );
  }
}
