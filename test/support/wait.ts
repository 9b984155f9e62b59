/**
 * Polling for a condition in tests: the one `waitFor` every test file uses.
 */

/** Resolve after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Resolve once `check()` is true (a boolean or a promise of one, e.g. an HTTP call), polling every 20 ms after
 * each check settles; reject with "timed out waiting for <what>" after `timeoutMs` (a safety net for a broken run,
 * not an assertion on speed). A check that throws fails the wait at once with its error.
 */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
