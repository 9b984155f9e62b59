/**
 * A throwaway PostgreSQL server on loopback for the release store tests: initdb into a temp directory, start on a
 * free port with its socket in that directory, fsync off (test data only), stop by pid and remove everything.
 * As root, initdb and pg_ctl run as the `postgres` user (initdb refuses root). See scripts/throwaway-postgres.mjs.
 */
import { findPgBin, startThrowawayPostgres } from '../../scripts/throwaway-postgres.mjs';

declare module 'vitest' {
  interface ProvidedContext {
    /** URL of the test server (`postgres://postgres@127.0.0.1:<port>/postgres`), or '' when it could not start. */
    pgUrl: string;
    /** Why the server could not start ('' when it runs). */
    pgError: string;
  }
}

/** A running test server. */
export interface TestPostgres {
  readonly url: string;
  /** The postmaster's pid when it was started (a `ctl('restart')` gives it another). */
  readonly pid: number;
  /** Stop it for good and remove its directory. */
  stop(): Promise<void>;
  /**
   * Fault injection: `pg_ctl stop -m fast` (every connection is terminated; then connections are refused),
   * `start`, or `restart -m fast`, each waiting until done. The data and the port stay the same.
   */
  ctl(action: 'stop' | 'start' | 'restart'): Promise<void>;
}

/**
 * Start a test server (fsync off: test data only) from the binaries under `installRoot`; throws with a clear message
 * when they are missing or the server does not start. The server itself is `scripts/throwaway-postgres.mjs`, which
 * the benchmarks use too.
 */
export async function startPostgres(installRoot = '/usr/lib/postgresql'): Promise<TestPostgres> {
  try {
    return await startThrowawayPostgres({ installRoot, durable: false });
  } catch (error) {
    if (!findPgBin(installRoot) && error instanceof Error) {
      throw new Error(`${error.message} to run the PostgreSQL release store tests`, { cause: error });
    }
    throw error;
  }
}
