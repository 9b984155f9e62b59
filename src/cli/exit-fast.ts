/**
 * How the CLI's process ends. A command ends when nothing is left to do (its output written, its files closed,
 * its children reaped or let go), and Node then emits `exit` and tears its environment down: every handle and
 * module, then the whole heap. That teardown changes nothing anyone can see, and it is not free: about 40 ms of a
 * 3-kapp install's 690 ms on a two-core machine (docs/running.md, "How to measure").
 *
 * So the last `exit` listener ends the process at once, with the exit code Node would have used. It does so only
 * when it is the last one: a listener added after it (a logger that flushes on `exit`, a test's hook) runs as
 * before, and the process then ends the ordinary way. `process.reallyExit` is what `process.exit` itself calls
 * after its `exit` event, so what Node does there is still done (the profile of `--cpu-prof` is written, for one).
 */

/** The parts of `process` this uses (a test passes its own). */
export interface ExitingProcess {
  on(event: 'exit', listener: (code: number) => void): unknown;
  listeners(event: 'exit'): readonly unknown[];
  exitCode?: number | string | null | undefined;
  reallyExit(code: number): void;
}

/** End the process as soon as its `exit` listeners have run (see above). */
export function endAtExit(proc: ExitingProcess = process as unknown as ExitingProcess): void {
  const end = (code: number): void => {
    const listeners = proc.listeners('exit');
    if (listeners[listeners.length - 1] !== end) return;
    // A listener that ran before this one may have changed the code; Node reads it again after the event.
    const final = typeof proc.exitCode === 'number' ? proc.exitCode : code;
    proc.reallyExit(final);
  };
  proc.on('exit', end);
}
