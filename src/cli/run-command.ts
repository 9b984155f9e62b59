/**
 * The shared flow of install, delete, output, clean and template: open the stack, take the release lock
 * (install/delete that apply; before anything is touched), fill the workspace, check the commands, run with a
 * reporter, record every kapp in the release, and map the outcome to an exit code. SIGINT/SIGTERM are owned here
 * from the start: the first stops the run (or the fetch of sources) cleanly (exit 130), a second kills every step
 * at once.
 */
import { CancelledError, SilentFailure } from '../diagnostics/errors.js';
import type { RunCommand } from '../execute/types.js';
import type { Reporter, RunEvent } from '../report/events.js';
import type { RunRecorder } from '../engine/release-run.js';
import type { RunHooks, RunOutcome, RunParams } from '../engine/run.js';
import type { ApplyArgs, RunArgs } from './run-args.js';
import { flushWarnings } from './stack-open.js';
import { closeAll, fanOut } from './reporter-fan-out.js';
import { cliContext, cliJsonContext } from './context.js';

/** Close reporters (print their summaries); one that fails to is reported, and does not fail the run. */
async function closeReporters(reporters: readonly Reporter[]): Promise<void> {
  await closeAll(reporters, (error) =>
    process.stderr.write(
      `kapps: the progress display failed to close: ${error instanceof Error ? error.message : String(error)}\n`,
    ),
  );
}

/** What runs the command in the engine (default: `runOperation(command, …)`). */
export type EngineCall = (params: RunParams, hooks: RunHooks) => Promise<RunOutcome>;

/** Run one of the run commands (`call`: an engine function other than `runOperation`, e.g. a rollback). */
export async function runCommand(
  command: RunCommand,
  args: RunArgs & Partial<ApplyArgs>,
  call?: EngineCall,
): Promise<void> {
  const { createReporter } = await import('../report/create-reporter.js');
  const { onInterrupt } = await import('../process/interrupt.js');
  const { removeAllSensitiveTemplates } = await import('../execute/templates.js');
  const { killAllProcessGroups } = await import('../process/process-groups.js');
  const { RunProgress } = await import('./run-progress.js');
  const { reportError } = await import('./errors.js');

  // Signals are ours from the start, so that Ctrl-C while sources are fetched also stops git cleanly.
  const controller = new AbortController();
  let recorder: RunRecorder | undefined;
  let exiting = false;
  const reporters: Reporter[] = [];
  const progress = new RunProgress();
  const graceMs = Math.max(0, args.killGrace * 1000);
  let secondSignal: { signal: NodeJS.Signals; killed: number } | undefined;
  /** Say something about the run: on the live display when one is drawn, else on stderr. */
  const notice = (text: string, liveOnly = false): void => {
    let shown = false;
    for (const r of reporters) {
      try {
        if (r.notice?.(text)) shown = true;
      } catch {
        // A display that cannot show it: stderr will.
      }
    }
    if (!shown && !liveOnly) process.stderr.write(`\n${text}\n`);
  };
  let stopping: NodeJS.Signals | undefined;
  /**
   * The run cannot finish by itself (a second signal, an internal error): end every reporter's display with the
   * events the run will not send, delete the sensitive templates still on disk, close the release as `phase`, all
   * within 2 s, then exit. What the interrupted run does after this is no longer shown or recorded.
   */
  const endNow = (code: number, phase: 'cancelled' | 'failed', reason: string): void => {
    // The kapps that rendered sensitive templates will not get to delete them.
    removeAllSensitiveTemplates();
    if (exiting) process.exit(code);
    exiting = true;
    const events = progress.endNow(reason, phase);
    for (const r of reporters) {
      for (const e of events) {
        try {
          r.onEvent(e);
        } catch {
          // Ending anyway.
        }
      }
    }
    const closing = reporters.splice(0).map((r) => r.close().catch(() => undefined));
    if (recorder) closing.push(recorder.close(phase).catch(() => undefined));
    void Promise.race([Promise.all(closing), new Promise((resolve) => setTimeout(resolve, 2000))]).then(() =>
      process.exit(code),
    );
  };
  const removeHandlers = onInterrupt(controller, {
    onFirstSignal: (signal) => {
      stopping = signal;
      notice(progress.stoppingText(signal, graceMs));
    },
    onSecondSignal: (signal, killed) => (secondSignal = { signal, killed }),
    // The second signal has already killed every step: say what, close the display and the release as cancelled
    // (at most 2 s) so the stack is not left locked, then exit.
    exit: (code) => {
      const second = secondSignal ?? { signal: 'SIGINT' as NodeJS.Signals, killed: 0 };
      if (!exiting) notice(progress.killedText(second.signal, second.killed));
      endNow(code, 'cancelled', `killed by a second ${second.signal}`);
    },
  });
  // Anything thrown where nothing catches it: stop every step, close the release as failed (not left `applying`,
  // holding the lock), exit 70.
  const onFatal = (error: unknown): void => {
    if (exiting) return;
    const code = reportError(error);
    const killed = killAllProcessGroups('SIGKILL');
    process.stderr.write(
      `kapps: stopping the run after an internal error${killed > 0 ? `; killed ${progress.runningList().join(', ')}` : ''}${recorder ? '; the release is closed as failed' : ''}\n`,
    );
    endNow(code, 'failed', 'kapps stopped on an internal error');
  };
  process.on('uncaughtException', onFatal);
  process.on('unhandledRejection', onFatal);
  // `KAPPS_TIMINGS=<file>`: where this run's time goes, written there as NDJSON when the command ends.
  const timingsFile = process.env.KAPPS_TIMINGS || undefined;
  const timings = timingsFile ? new (await import('../diagnostics/timings.js')).TimingsLog() : undefined;
  let engineEnd: number | undefined;
  try {
    const { runOperation, runMode } = await import('../engine/run.js');
    // A JSON display's stdout holds only its events: no line saying where the run was recorded.
    const base = args.reporter === 'json' ? cliJsonContext : cliContext;
    const ctx = timings ? { ...base, cwd: base.cwd, timings } : base;
    timings?.span('startup', 0);
    const operate: EngineCall = call ?? ((params, hooks) => runOperation(command, params, hooks));
    const { summary } = await operate(
      { ...args, killGraceMs: graceMs },
      {
        ctx,
        signal: controller.signal,
        onRecorder: (r) => (recorder = r),
        begin: async () => {
          const isTTY = process.stdout.isTTY === true;
          reporters.push(
            await createReporter({
              kind: args.reporter,
              stdout: process.stdout,
              stderr: process.stderr,
              isTTY,
              verbose: args.verbose,
              color: args.color && isTTY && !process.env.NO_COLOR,
              mode: { command, planOnly: (command === 'install' || command === 'delete') && runMode(args) === 'plan' },
            }),
          );
          return (e: RunEvent): void => {
            // After a second signal or an internal error the reporters were ended: the run's last events are not news.
            if (exiting) return;
            progress.apply(e);
            // A live display keeps saying what the stopping run still waits for.
            if (stopping && e.type === 'kapp-finished') notice(progress.stoppingText(stopping, graceMs), true);
            // A reporter that fails is dropped; the run goes on and is recorded as usual (see docs/running.md).
            fanOut(reporters, e, (error) =>
              process.stderr.write(
                `kapps: the progress display failed (${error instanceof Error ? error.message : String(error)}); the run goes on without it\n`,
              ),
            );
          };
        },
        afterRun: async (stack, summary) => {
          await closeReporters(reporters.splice(0));
          flushWarnings(stack, ctx);
          if (command === 'output' && !args.dryRun && args.reporter !== 'json') {
            const { outputLines } = await import('../report/outputs-table.js');
            const lines = outputLines(summary.results.values(), (id) =>
              (stack.kapp(id).descriptor.outputs ?? []).filter((o) => o.sensitive === true).map((o) => o.id),
            );
            if (lines.length) process.stdout.write(`\nOutputs:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
          }
        },
      },
    );
    engineEnd = timings?.now();
    if (summary.status === 'cancelled') throw new CancelledError('interrupted');
    if (summary.status === 'failed') throw new SilentFailure('the run failed');
  } catch (error) {
    // After a second signal the exit handler owns the end (exit 130 once the release is closed): what the
    // interrupted run throws on its way out is a consequence of the kill, not news for the user.
    if (exiting) await new Promise<never>(() => undefined);
    throw error;
  } finally {
    await closeReporters(reporters.splice(0));
    removeHandlers();
    process.off('uncaughtException', onFatal);
    process.off('unhandledRejection', onFatal);
    if (timings && timingsFile) {
      if (engineEnd !== undefined) timings.span('finish', engineEnd);
      try {
        timings.write(timingsFile);
      } catch (error) {
        process.stderr.write(
          `kapps: cannot write the timings to ${timingsFile}: ${error instanceof Error ? error.message : String(error)}\n`,
        );
      }
    }
  }
}
