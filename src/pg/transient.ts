/**
 * What every PostgreSQL store of kapps shares about failures: which driver errors are transient (the database is
 * restarting, a connection was dropped or refused), retrying a write through them with backoff, and the text of a
 * driver error.
 *
 * - `isTransient`: connection refused/reset/terminated, SQLSTATE class 08 (connection exception), 57P01
 *   (admin_shutdown), 57P02 (crash_shutdown), 57P03 (cannot_connect_now), 53300 (too_many_connections), 40001
 *   (serialization_failure) and 40P01 (deadlock_detected). Everything else (a constraint, a bad query, a conflict)
 *   is not retried.
 * - `describePgError`: the one-line text of a driver error (the stores scrub the password from it).
 * - `withRetry`: runs an action again after a transient error, waiting 50 ms, 100 ms, … up to 1 s between attempts,
 *   until `budgetMs` has passed; then the last error is thrown. A retried action is a whole transaction, so a batch
 *   is either written once or not at all, and the caller's order is kept (the next batch waits for this one).
 * - `isUnavailable`: an error a store raised for a transient failure (`unavailable: true`), which the server answers
 *   with 503 and `Retry-After`.
 */
/** SQLSTATE codes of transient failures (besides class 08). */
const TRANSIENT_CODES = new Set(['57P01', '57P02', '57P03', '53300', '40001', '40P01']);

/** Errors of the socket under a connection. */
const TRANSIENT_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** The texts of the driver's own errors (no code) when a connection ends or cannot be had. */
const TRANSIENT_TEXTS = [
  /connection terminated/i,
  /terminating connection/i,
  /timeout exceeded when trying to connect/i,
  /is not queryable/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /server closed the connection unexpectedly/i,
];

/** The SQLSTATE (or errno) code of a driver error, if any. */
export function pgCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

/** Whether `error` is a failure that may pass if the same work is tried again shortly. */
export function isTransient(error: unknown): boolean {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.some((e) => isTransient(e));
  if (isUnavailable(error)) return true;
  const code = pgCode(error);
  if (code !== undefined && (code.startsWith('08') || TRANSIENT_CODES.has(code) || TRANSIENT_ERRNOS.has(code)))
    return true;
  const message = error instanceof Error ? error.message : '';
  return TRANSIENT_TEXTS.some((pattern) => pattern.test(message));
}

/** Whether a store's error says its backend is unavailable for now (a transient failure). */
export function isUnavailable(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'unavailable' in error && error.unavailable === true;
}

/** The text of a driver error (every inner error of an AggregateError); the caller scrubs the URL's password. */
export function describePgError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors.map(describePgError).join('; ');
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

export interface RetryOptions {
  /** Give up (throw the last error) once this long has passed since the first attempt. */
  readonly budgetMs: number;
  /** Told before each wait (attempt 1 is the first retry). */
  readonly onRetry?: (error: unknown, attempt: number) => void;
}

/** The default budget of a write: long enough for a restart of the database, short of hiding an outage. */
export const WRITE_RETRY_MS = 30_000;

/** Run `action`; after a transient error, again with backoff (50 ms doubling to 1 s) until `budgetMs` passed. */
export async function withRetry<T>(action: () => Promise<T>, options: RetryOptions): Promise<T> {
  const started = performance.now();
  let delay = 50;
  for (let attempt = 1; ; attempt++) {
    try {
      return await action();
    } catch (error) {
      if (!isTransient(error) || performance.now() - started + delay > options.budgetMs) throw error;
      options.onRetry?.(error, attempt);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 1_000);
    }
  }
}
