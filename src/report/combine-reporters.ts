/**
 * Fans one event stream out to several reporters (the user's reporter plus, say, the release recorder), so the
 * executor emits each event once.
 */
import type { Reporter, RunEvent } from './events.js';

/**
 * A reporter that passes every event to each of `reporters`, in order. One reporter throwing does not starve the
 * others: every one still gets the event, and the first error is rethrown afterwards. `close()` closes them all
 * (in parallel) and rejects with the first failure, after all have settled.
 */
export function combineReporters(reporters: readonly Reporter[]): Reporter {
  return {
    onEvent(event: RunEvent): void {
      let failure: { error: unknown } | undefined;
      for (const reporter of reporters) {
        try {
          reporter.onEvent(event);
        } catch (error) {
          failure ??= { error };
        }
      }
      if (failure) throw failure.error;
    },
    async close(): Promise<void> {
      const results = await Promise.allSettled(reporters.map((r) => r.close()));
      for (const result of results) if (result.status === 'rejected') throw result.reason;
    },
  };
}
