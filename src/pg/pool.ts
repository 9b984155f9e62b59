/**
 * How a PostgreSQL store of kapps reaches its database: `PgDatabase` opens its pools from the URL (one set of
 * settings, an `application_name` each, and an `error` listener, so an idle connection the server drops never
 * reaches the process as an unhandled error: the next query reconnects), brings the schema up to date once before
 * the first operation (`migrate`), and turns every driver error into the store's own error, naming the database by
 * its redacted URL and with the URL's password scrubbed from the driver's text.
 */
import pg from 'pg';
import { KappsError } from '../diagnostics/errors.js';
import { redactText, redactUrl } from '../diagnostics/redact.js';
import { migrate } from './migrate.js';
import { describePgError, isTransient, withRetry, WRITE_RETRY_MS } from './transient.js';

/** How long a query waits for a connection before it fails (a transient failure). */
const CONNECT_TIMEOUT_MS = 15_000;

export interface PgDatabaseOptions {
  /** What the store is called in messages (`release store`). */
  readonly name: string;
  /** The `application_name` of the main pool's connections. */
  readonly applicationName: string;
  /** Connections of the main pool at the most. */
  readonly maxConnections: number;
  /** The store's error for a message (`unavailable`: the failure is transient). */
  readonly error: (message: string, unavailable: boolean) => KappsError;
}

/** The database of one store: its pools, its schema made ready once, and its errors without secrets. */
export class PgDatabase {
  /** The URL with its password masked. */
  readonly description: string;
  /** The main pool. */
  readonly pool: pg.Pool;
  readonly #url: string;
  readonly #options: PgDatabaseOptions;
  readonly #pools: pg.Pool[] = [];
  #ready: Promise<void> | undefined;
  #closed = false;

  /** `url`: a `postgres://` or `postgresql://` URL. Nothing connects before the first query. */
  constructor(url: string, options: PgDatabaseOptions) {
    this.#url = url;
    this.#options = options;
    this.description = redactUrl(url);
    this.pool = this.openPool(options.applicationName, options.maxConnections);
  }

  /** One more pool of this database (closed with it), for work that must not wait behind the main pool's. */
  openPool(applicationName: string, max: number): pg.Pool {
    const pool = new pg.Pool({
      connectionString: this.#url,
      max,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      application_name: applicationName,
    });
    pool.on('error', () => undefined);
    this.#pools.push(pool);
    return pool;
  }

  /** A connection of its own (not pooled: the caller connects it, listens to its `error` and ends it). */
  newClient(applicationName: string): pg.Client {
    return new pg.Client({ connectionString: this.#url, application_name: applicationName });
  }

  /** Whether an operation has been started (the schema may be in place). */
  get used(): boolean {
    return this.#ready !== undefined;
  }

  /** Run one operation once the schema is ready; a driver error becomes the store's error, without secrets. */
  async run<T>(what: string, action: () => Promise<T>): Promise<T> {
    if (this.#closed) throw this.#options.error(`the ${this.#options.name} ${this.description} is closed`, false);
    try {
      this.#ready ??= migrate(this.pool).catch((error: unknown) => {
        this.#ready = undefined; // the next operation tries again
        throw error;
      });
      await this.#ready;
      return await action();
    } catch (error) {
      if (error instanceof KappsError) throw error;
      // No `cause`: the driver's error objects can carry the connection parameters.
      const text = redactText(describePgError(error), this.#url);
      throw this.#options.error(`${what} in ${this.description}: ${text}`, isTransient(error));
    }
  }

  /** A write (one transaction): retried through transient failures (a restart of the database) for a while. */
  write<T>(what: string, action: () => Promise<T>): Promise<T> {
    return withRetry(() => this.run(what, action), { budgetMs: WRITE_RETRY_MS });
  }

  /** Refuse further operations, run `last` (its failure ignored), and end the pools. */
  async close(last?: () => Promise<void>): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await last?.().catch(() => undefined);
    for (const pool of this.#pools) await pool.end().catch(() => undefined);
  }
}
