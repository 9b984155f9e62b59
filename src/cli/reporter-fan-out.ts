/**
 * The run's event stream fanned out to its reporters (the user's display; the release recorder is fed apart), so a
 * reporter that fails never starves the others nor stops the run.
 */
import type { Reporter, RunEvent } from '../report/events.js';

/**
 * Passes `event` to each of `reporters` in order. One that throws is removed from `reporters` (it gets no further
 * events and is not closed) and `onFailure` is told; the others still get the event.
 */
export function fanOut(reporters: Reporter[], event: RunEvent, onFailure: (error: unknown) => void): void {
  for (const reporter of [...reporters]) {
    try {
      reporter.onEvent(event);
    } catch (error) {
      reporters.splice(reporters.indexOf(reporter), 1);
      onFailure(error);
    }
  }
}

/** Closes each of `reporters` in order (printing their summaries); one that fails to is told to `onFailure`. */
export async function closeAll(reporters: readonly Reporter[], onFailure: (error: unknown) => void): Promise<void> {
  for (const reporter of reporters) {
    try {
      await reporter.close();
    } catch (error) {
      onFailure(error);
    }
  }
}
