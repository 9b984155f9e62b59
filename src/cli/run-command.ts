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
import { flushWarnings, openStackFromArgs, type OpenOptions } from './stack-args.js';
import { closeAll, fanOut } from './reporter-fan-out.js';
import { urlSecrets } from '../release/redact.js';

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

/** Variables kapps reads for itself: never passed to steps (a kapp asks for one by name in its `env_vars`). */
const OWN_ENV = ['KAPPS_BACKEND', 'KAPPS_HOME', 'KAPPS_WORKERS', 'KAPPS_INPROCESS_SPAWN'];
/** The connection variables the PostgreSQL driver reads: kapps' own while its release backend is PostgreSQL. */
const PG_ENV = [
  'PGHOST',
  'PGHOSTADDR',
  'PGPORT',
  'PGUSER',
  'PGPASSWORD',
  'PGPASSFILE',
  'PGDATABASE',
  'PGSSLMODE',
  'PGSSLCERT',
  'PGSSLKEY',
  'PGSSLROOTCERT',
  'PGSERVICE',
  'PGOPTIONS',
  'PGAPPNAME',
  'PGCONNECT_TIMEOUT',
];

/** The release backend a run uses, as given (flag, environment, sugarkube-conf.yaml), when there is one. */
function backendOf(args: Partial<ApplyArgs>, stack: Stack): string | undefined {
  return args.backend ?? process.env.KAPPS_BACKEND ?? stack.project.backend;
}

/** The environment steps start from: kapps' own without kapps' own configuration. */
function stepEnv(backend: string | undefined): Record<string, string> {
  const own = new Set(OWN_ENV);
  if (backend !== undefined && /^postgres(ql)?:/i.test(backend)) for (const name of PG_ENV) own.add(name);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !own.has(k)) env[k] = v;
  return env;
}

/** kapps' own credentials, redacted wherever a step or a kapp passes them on. */
function ownSecrets(backend: string | undefined): string[] {
  const secrets: string[] = [];
  for (const url of [backend, process.env.KAPPS_BACKEND]) {
    if (url && /^[a-z][a-z0-9+.-]*:\/\//i.test(url)) secrets.push(url, ...urlSecrets(url));
  }
  if (backend !== undefined && /^postgres(ql)?:/i.test(backend) && process.env.PGPASSWORD)
    secrets.push(process.env.PGPASSWORD);
  return secrets;
}

/** Fill the workspace for the kapps of the sub-graph that have sources; reopen the stack when anything was there to fetch. */
async function prepareWorkspace(stack: Stack, args: RunArgs, signal: AbortSignal, open: OpenOptions): Promise<Stack> {
  const withSources = stack.selection.nodes.map((n) => stack.kapp(n.id)).filter((k) => k.sources.length > 0);
  if (withSources.length === 0) return stack;
  const { ensureWorkspace } = await import('../workspace/workspace.js');
  const { gitRunner } = await import('./git-runner.js');
  await ensureWorkspace(
    withSources.map((k) => ({ fqId: k.id, cacheRoot: k.cacheRoot, sources: k.sources })),
    {
      update: args.fetch === true,
      run: gitRunner,
      signal,
      onFetch: (id, source) => process.stderr.write(`Fetching ${source.id} for ${id}...\n`),
    },
  );
  return openStackFromArgs(args, open);
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

/** Close reporters (print their summaries); one that fails to is reported, and does not fail the run. */
async function closeReporters(reporters: readonly Reporter[]): Promise<void> {
  await closeAll(reporters, (error) =>
    process.stderr.write(
      `kapps: the progress display failed to close: ${error instanceof Error ? error.message : String(error)}\n`,
    ),
  );
}

/** Steps that render `<no value>` in an apply: an error before anything runs. */
async function noValueCheck(stack: Stack, options: RunOptions): Promise<void> {
  const { noValueProblems } = await import('../execute/preflight.js');
  const { plannedPhases } = await import('../execute/run-stack.js');
  const { ConfigError } = await import('../diagnostics/errors.js');
  const problems = noValueProblems(stack, plannedPhases(stack, options));
  if (problems.length) throw new ConfigError(problems);
}

/** Run one of the run commands. */
export async function runCommand(command: RunCommand, args: RunArgs & Partial<ApplyArgs>): Promise<void> {
  const { runStack } = await import('../execute/run-stack.js');
  const { createReporter } = await import('../report/create-reporter.js');
  const { onInterrupt } = await import('../process/interrupt.js');
  const { removeAllSensitiveTemplates } = await import('../execute/templates.js');
  const { killAllProcessGroups } = await import('../process/process-groups.js');
  const { RunProgress } = await import('./run-progress.js');
  const { reportError } = await import('./errors.js');
  const mode = modeFrom(args);
  if (args.changedOnly && mode === 'plan') throw new KappsError('--changed-only needs --yes or --one-shot');

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
  const operation = command === 'install' || command === 'delete' ? command : undefined;
  const records = operation !== undefined;
  try {
    // A dry run reads every kapp it reports on: missing git sources are fetched (or --no-fetch fails).
    // An apply stops on `<no value>` in a step before anything runs (unless --allow-no-value).
    const open: OpenOptions = {
      planning: args.dryRun,
      applyNoValue: records && mode !== 'plan' && !args.dryRun && !args.allowNoValue,
    };
    let stack = await openStackFromArgs(args, open);
    const release = records ? await import('./release-run.js') : undefined;
    // The release lock is taken before anything is touched (the workspace included): a run refused by the lock
    // changes nothing. The spec is recorded once the workspace is filled and the stack complete.
    let lock: RunLock | undefined;
    const runOptions = (s: Stack): RunOptions => ({
      command,
      mode,
      dryRun: args.dryRun,
      workers: workersFrom(args, s),
      keepGoing: args.keepGoing,
      ignoreErrors: args.ignoreErrors ?? false,
      verbose: args.verbose,
      env: stepEnv(backendOf(args, s)),
      secrets: ownSecrets(backendOf(args, s)),
      killGraceMs: graceMs,
    });
    // Checked before the lock, so a refused apply records no release (and again once the workspace is filled).
    if (open.applyNoValue) await noValueCheck(stack, runOptions(stack));
    if (release && operation && mode !== 'plan' && !args.dryRun) {
      lock = await release.lockRun(stack, args as ApplyArgs, operation);
      recorder = lock;
    }
    if (!args.dryRun) {
      try {
        stack = await prepareWorkspace(stack, args, controller.signal, open);
      } catch (e) {
        // A fetch stopped by Ctrl-C fails; the interruption is what the user needs to hear about.
        if (controller.signal.aborted) throw new CancelledError('interrupted while fetching sources');
        throw e;
      }
    }
    if (controller.signal.aborted) throw new CancelledError('interrupted');
    const options = runOptions(stack);
    if (open.applyNoValue) await noValueCheck(stack, options);
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
    if (release && args.changedOnly && lock && args.refresh) {
      const { changedWithRefresh, refreshLine } = await import('./preview-run.js');
      const changed = await changedWithRefresh(stack, lock.previousState, args.workers);
      process.stderr.write(refreshLine(changed.refreshed));
      only = changed.ids;
    } else if (release && args.changedOnly)
      only = lock ? lock.changedKapps(stack) : await release.changedKapps(stack, args as ApplyArgs);
    if (lock) recorder = await lock.start(stack, only);
    const emit = (e: RunEvent): void => {
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
    await closeReporters(reporters.splice(0));
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
    await closeReporters(reporters.splice(0));
    removeHandlers();
    process.off('uncaughtException', onFatal);
    process.off('unhandledRejection', onFatal);
    if (recorder) await recorder.close(controller.signal.aborted ? 'cancelled' : 'failed');
  }
}
