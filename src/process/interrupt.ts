/**
 * SIGINT/SIGTERM/SIGHUP/SIGQUIT handling for a run, for the CLI to install around it (kapps has exactly one owner of these
 * signals; listr2's own handler stays off).
 *
 * - First signal: abort the run's controller. The walk starts nothing new, running steps get SIGTERM (then
 *   SIGKILL after their grace period), and the run finishes normally with everything recorded: the CLI then
 *   exits 130.
 * - Second signal: the user wants out *now*. SIGKILL every live process group synchronously and exit 130 at
 *   once, without awaiting anything.
 *
 * Not its job: printing (the CLI or reporter says "Cancelling…" through `onFirstSignal`), or choosing exit
 * codes for normal ends.
 */
import { CancelledError, ExitCode } from '../diagnostics/errors.js';
import { killAllProcessGroups } from './process-groups.js';

/** The abort reason set by the first signal: says which signal cancelled the run. */
export class InterruptedError extends CancelledError {
  /** `SIGINT`, `SIGTERM`, `SIGHUP` (the terminal was closed) or `SIGQUIT`. */
  readonly signal: NodeJS.Signals;
  constructor(signal: NodeJS.Signals) {
    super(`Interrupted by ${signal}`);
    this.signal = signal;
  }
}

/** Options of `onInterrupt`, mostly seams for tests. */
export interface InterruptOptions {
  /** Called after the first signal aborted the controller (e.g. to print "Cancelling; ^C again to force"). */
  readonly onFirstSignal?: (signal: NodeJS.Signals) => void;
  /** Called on the second signal, after every live process group was sent SIGKILL, with how many were. */
  readonly onSecondSignal?: (signal: NodeJS.Signals, killed: number) => void;
  /** Ends the process on the second signal; default `process.exit`. */
  readonly exit?: (code: number) => void;
}

/**
 * The signals that cancel a run. SIGHUP comes when the terminal is closed (a dropped SSH session), SIGQUIT from
 * Ctrl-\; both would otherwise kill kapps on the spot and leave its release `applying`.
 */
export const INTERRUPT_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

/**
 * Installs the handlers and returns a function that removes them. While installed, SIGINT and SIGTERM no longer
 * end the process by themselves. The first signal aborts `controller` with an `InterruptedError` as its reason
 * (read it back with `controller.signal.reason`).
 */
export function onInterrupt(controller: AbortController, options: InterruptOptions = {}): () => void {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let received = 0;
  const handler = (signal: NodeJS.Signals): void => {
    received++;
    if (received === 1) {
      if (!controller.signal.aborted) controller.abort(new InterruptedError(signal));
      options.onFirstSignal?.(signal);
      return;
    }
    const killed = killAllProcessGroups('SIGKILL');
    options.onSecondSignal?.(signal, killed);
    exit(ExitCode.cancelled);
  };
  for (const signal of INTERRUPT_SIGNALS) process.on(signal, handler);
  return () => {
    for (const signal of INTERRUPT_SIGNALS) process.off(signal, handler);
  };
}
