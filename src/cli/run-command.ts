/**
 * The shared flow of install, delete, output, clean and template: open the stack, take the release lock
 * (install/delete that apply; before anything is touched), fill the workspace, check the commands, run with a
 * reporter, record every kapp in the release, and map the outcome to an exit code. SIGINT/SIGTERM are owned here
 * from the start: the first stops the run (or the fetch of sources) cleanly (exit 130), a second kills every step
 * at once.
 */
import { CancelledError, KappsError, SilentFailure } from '../diagnostics/errors.js';
import type { RunCommand, RunMode, RunOptions, KappResult } from '../execute/types.js';
import type { Reporter, RunEvent } from '../report/events.js';
import type { Stack } from '../stack/stack.js';
import type { RunLock, RunRecorder } from './release-run.js';
import type { ApplyArgs, RunArgs } from './run-args.js';
import { flushWarnings, openStackFromArgs } from './stack-args.js';

function workersFrom(args: RunArgs, stack: Stack): number {
  const fromEnv = process.env.KAPPS_WORKERS ? Number(process.env.KAPPS_WORKERS) : undefined;
  const n = args.workers ?? fromEnv ?? stack.project.num_workers;
  if (!Number.isInteger(n) || n < 1)
    throw new KappsError(`the number of workers must be a whole number ≥ 1, got ${String(n)}`);
  return n;
}

function modeFrom(args: Partial<ApplyArgs>): RunMode {
  if (args.oneShot) return 'one-shot';
  return args.yes ? 'apply' : 'plan';
}

function stepEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  return env;
}

/** Fill the workspace for the kapps of the sub-graph that have sources; reopen the stack when anything was there to fetch. */
async function prepareWorkspace(stack: Stack, args: RunArgs, signal: AbortSignal): Promise<Stack> {
  const withSources = stack.selection.nodes.map((n) => stack.kapp(n.id)).filter((k) => k.sources.length > 0);
  if (withSources.length === 0) return stack;
  const { ensureWorkspace } = await import('../workspace/workspace.js');
  const { gitRunner } = await import('./git-runner.js');
  await ensureWorkspace(
    withSources.map((k) => ({ fqId: k.id, cacheRoot: k.cacheRoot, sources: k.sources })),
    {
      update: args.fetch ?? false,
      run: gitRunner,
      signal,
      onFetch: (id, source) => process.stderr.write(`Fetching ${source.id} for ${id}...\n`),
    },
  );
  return openStackFromArgs(args);
}

/** Commands that cannot run: checked before anything runs (the first planning of every kapp the run visits). */
async function preflight(stack: Stack, options: RunOptions): Promise<void> {
  const { checkCommands } = await import('../execute/preflight.js');
  const { plannedPhases } = await import('../execute/run-stack.js');
  // A dry run may have no workspace yet: only commands looked up on PATH can be checked.
  const missing = checkCommands(stack, options, plannedPhases(stack, options), { pathOnly: options.dryRun });
  if (missing.length) {
    throw new KappsError(
      `${missing.length} command(s) not found, nothing was run:\n${missing.map((m) => `  kapp ${m.kapp}, ${m.phase} step '${m.step}': '${m.command}' not found ${m.where}`).join('\n')}\n(--no-validate skips this check)`,
    );
  }
}

/** Run one of the run commands. */
export async function runCommand(command: RunCommand, args: RunArgs & Partial<ApplyArgs>): Promise<void> {
  const { runStack } = await import('../execute/run-stack.js');
  const { createReporter } = await import('../report/create-reporter.js');
  const { onInterrupt } = await import('../run/interrupt.js');
  const { removeAllSensitiveTemplates } = await import('../execute/templates.js');
  const mode = modeFrom(args);
  if (args.changedOnly && mode === 'plan') throw new KappsError('--changed-only needs --yes or --one-shot');

  // Signals are ours from the start, so that Ctrl-C while sources are fetched also stops git cleanly.
  const controller = new AbortController();
  let recorder: RunRecorder | undefined;
  let exiting = false;
  const removeHandlers = onInterrupt(controller, {
    onFirstSignal: (signal) =>
      process.stderr.write(
        `\n${signal}: stopping (running steps are being stopped; press Ctrl-C again to kill them at once)\n`,
      ),
    // The second signal has already killed every step: delete the sensitive templates on disk, close the release
    // as cancelled (at most 2 s) so the stack is not left locked, then exit.
    exit: (code) => {
      // The kapps that rendered sensitive templates will not get to delete them.
      removeAllSensitiveTemplates();
      if (exiting || !recorder) process.exit(code);
      exiting = true;
      void Promise.race([
        recorder.close('cancelled').catch(() => undefined),
        new Promise((resolve) => setTimeout(resolve, 2000)),
      ]).then(() => process.exit(code));
    },
  });
  const reporters: Reporter[] = [];
  try {
    let stack = await openStackFromArgs(args);
    const operation = command === 'install' || command === 'delete' ? command : undefined;
    const records = operation !== undefined;
    const release = records ? await import('./release-run.js') : undefined;
    // The release lock is taken before anything is touched (the workspace included): a run refused by the lock
    // changes nothing. The spec is recorded once the workspace is filled and the stack complete.
    let lock: RunLock | undefined;
    if (release && operation && mode !== 'plan' && !args.dryRun) {
      lock = await release.lockRun(stack, args as ApplyArgs, operation);
      recorder = lock;
    }
    if (!args.dryRun) {
      try {
        stack = await prepareWorkspace(stack, args, controller.signal);
      } catch (e) {
        // A fetch stopped by Ctrl-C fails; the interruption is what the user needs to hear about.
        if (controller.signal.aborted) throw new CancelledError('interrupted while fetching sources');
        throw e;
      }
    }
    if (controller.signal.aborted) throw new CancelledError('interrupted');
    const options: RunOptions = {
      command,
      mode,
      dryRun: args.dryRun,
      workers: workersFrom(args, stack),
      keepGoing: args.keepGoing,
      ignoreErrors: args.ignoreErrors ?? false,
      verbose: args.verbose,
      env: stepEnv(),
      killGraceMs: Math.max(0, args.killGrace * 1000),
    };
    if (args.validate) await preflight(stack, options);

    const isTTY = process.stdout.isTTY === true;
    reporters.push(
      await createReporter({
        kind: args.reporter,
        stdout: process.stdout,
        stderr: process.stderr,
        isTTY,
        verbose: args.verbose,
        color: args.color && isTTY && !process.env.NO_COLOR,
        mode: { command, planOnly: records && mode === 'plan' },
      }),
    );

    let only: ReadonlySet<string> | undefined;
    if (release && command === 'install' && mode === 'plan' && !args.dryRun) {
      await release.printPreview(stack, args as ApplyArgs, process.stderr);
    }
    if (release && args.changedOnly)
      only = lock ? lock.changedKapps(stack) : await release.changedKapps(stack, args as ApplyArgs);
    if (lock) recorder = await lock.start(stack, only);
    const emit = (e: RunEvent): void => {
      for (const r of reporters) r.onEvent(e);
    };
    const active = recorder;
    const summary = await runStack(
      stack,
      { ...options, ...(only ? { only } : {}) },
      {
        emit,
        signal: controller.signal,
        onKappFinished: active ? (r: KappResult) => active.record(r) : undefined,
        onKappsDone: active ? () => active.flush() : undefined,
      },
    );
    for (const r of reporters) await r.close();
    reporters.length = 0;
    await flushWarnings(stack);
    if (command === 'output' && !args.dryRun && args.reporter !== 'json') {
      const { outputLines } = await import('../report/outputs-table.js');
      const done = stack;
      const lines = outputLines(summary.results.values(), (id) =>
        (done.kapp(id).descriptor.outputs ?? []).filter((o) => o.sensitive === true).map((o) => o.id),
      );
      if (lines.length) process.stdout.write(`\nOutputs:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
    }
    if (recorder) await recorder.finish(summary);
    if (summary.status === 'cancelled') throw new CancelledError('interrupted');
    if (summary.status === 'failed') throw new SilentFailure('the run failed');
  } catch (error) {
    // After a second signal the exit handler owns the end (exit 130 once the release is closed): what the
    // interrupted run throws on its way out is a consequence of the kill, not news for the user.
    if (exiting) await new Promise<never>(() => undefined);
    throw error;
  } finally {
    for (const r of reporters) await r.close();
    removeHandlers();
    if (recorder) await recorder.close(controller.signal.aborted ? 'cancelled' : 'failed');
  }
}
