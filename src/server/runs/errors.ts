/**
 * Why a run did not do its work, as the runs say it: domain errors, never answers of the API. A run that meets one
 * ends `failed` with it in its `error`; where a request meets one, the HTTP layer chooses the answer.
 */
import { KappsError } from '../../diagnostics/errors.js';

/** The run cannot be run as stored: its project is gone, its options are not what a request may send. */
export class RunRefused extends KappsError {}

/** An apply of a preview whose preview no longer holds (the stack or its last release changed since): nothing applied. */
export class StalePreviewError extends KappsError {
  /** Why, without the `stale preview: ` prefix. */
  readonly reason: string;
  constructor(reason: string) {
    super(`stale preview: ${reason}`);
    this.reason = reason;
  }
}

/**
 * Why an owner stopped its own run: its lease could not be renewed, or its log could not be written. The run ends
 * `failed` with this message.
 */
export class OwnerStopError extends Error {}

/** One line for a message: the first line of the error's, at most 500 characters. */
export function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split('\n')[0] ?? '').slice(0, 500) || 'unknown error';
}
