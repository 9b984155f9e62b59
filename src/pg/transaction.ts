/**
 * The one way a PostgreSQL store of kapps runs a transaction: on a connection of its pool, BEGIN, the work, COMMIT,
 * and ROLLBACK on an error. No store writes BEGIN or COMMIT itself.
 */
import type pg from 'pg';
import { isTransient } from './transient.js';

/**
 * Run `action` in one transaction on a connection of `pool`. While it is held, the connection's own `error` event
 * (the server dropped it between two queries) is taken here instead of reaching the process as an unhandled error;
 * a connection that failed is closed rather than given back to the pool. `lockKey`: the transaction-level advisory
 * lock taken with `BEGIN`, in the same round trip, before `action` runs.
 */
export async function transaction<T>(
  pool: pg.Pool,
  action: (client: pg.PoolClient) => Promise<T>,
  options: { readonly lockKey?: number } = {},
): Promise<T> {
  const { lockKey } = options;
  if (lockKey !== undefined && !Number.isSafeInteger(lockKey)) throw new Error(`not a lock key: ${lockKey}`);
  const client = await pool.connect();
  let broken: unknown;
  const onError = (error: unknown): void => {
    broken = error;
  };
  client.on('error', onError);
  try {
    // Without parameters, both statements go in one message (the simple query protocol).
    await client.query(lockKey === undefined ? 'BEGIN' : `BEGIN; SELECT pg_advisory_xact_lock(${lockKey})`);
    const value = await action(client);
    await client.query('COMMIT');
    return value;
  } catch (error) {
    if (isTransient(error)) broken ??= error;
    else await client.query('ROLLBACK').catch((e: unknown) => (broken = e));
    throw error;
  } finally {
    client.off('error', onError);
    client.release(broken === undefined ? undefined : true);
  }
}
