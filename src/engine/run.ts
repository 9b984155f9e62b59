/**
 * The flow of install, delete, output, clean and template, in-process and without owning the process: open the
 * stack, take the release lock (install/delete that apply; before anything is touched), fill the workspace, check
 * the commands, run, record every kapp in the release. The CLI drives it for one run (and owns signals, the display
 * and exit codes); the runs server drives it for many runs at once (each with its own abort signal and sinks).
 */
import { CancelledError, KappsError } from '../diagnostics/errors.js';
import type { KappResult, RunCommand, RunOptions, RunSummary } from '../execute/types.js';
import type { Reporter, RunEvent } from '../report/events.js';
import type { Stack } from '../stack/stack.js';
import type { ReleaseApproval, ReleaseBreakGlass, ReleaseSource } from '../release/types.js';
import { urlSecrets } from '../diagnostics/redact.js';
import { DEFAULT_MAX_LINE_LENGTH } from '../log/line-cut.js';
import { warmProcessServers } from '../process/process-runner.js';
import { timed, type Timings } from '../diagnostics/timings.js';
import type { EngineContext, StackParams } from './context.js';
import { openStackFor, type OpenOptions } from './open.js';
import { operationPlan, type OperationPlan } from './operation-plan.js';
import { inRunContext, runEnvOf } from './scope.js';
import type { RunLock, RunRecorder } from './release-run.js';
import { viewOf } from './view.js';

export { runMode } from './operation-plan.js';

/** The options of a run command (the CLI's flags). */
export interface RunParams extends StackParams {
  dryRun: boolean;
  keepGoing: boolean;
  workers?: number;
  verbose: boolean;
  /** Check before running that every command exists. */
  validate: boolean;
  /** Between SIGTERM and SIGKILL when a step is stopped. */
  killGraceMs: number;
  yes?: boolean;
  oneShot?: boolean;
  project?: string;
  backend?: string;
  ignoreErrors?: boolean;
  changedOnly?: boolean;
  refresh?: boolean;
  allowNoValue?: boolean;
  /** Emit every line steps print, what `print` hides marked `hidden` (for a run's log). */
  allOutput?: boolean;
  /** The project's repository and commit its release records (unset: the git checkout holding the stack file). */
  source?: ReleaseSource;
  /** A rollback: the revision whose desired state the run applies again (recorded in its release). */
  rollbackOf?: number;
  /** A runs server's run of a stack requiring approvals: the approvals that let it apply (recorded in its release). */
  approvals?: readonly ReleaseApproval[];
  /** Those approvals were skipped by a break-glass token (recorded in its release). */
  breakGlass?: ReleaseBreakGlass;
}

/** What the caller of a run provides. */
export interface RunHooks {
  readonly ctx: EngineContext;
  /** Aborted: stop cleanly (no new kapps; running steps stopped), as on Ctrl-C. */
  readonly signal: AbortSignal;
  /** The kapps are about to run (lock taken, workspace filled, checks passed): the sink of the run's events. */
  begin(stack: Stack): Promise<(event: RunEvent) => void> | ((event: RunEvent) => void);
  /** The release that records this run exists (its lock is taken). */
  onRecorder?(recorder: RunRecorder, revision: number): void;
  /** The kapps ran; the release is not closed yet. */
  afterRun?(stack: Stack, summary: RunSummary): Promise<void>;
}

export interface RunOutcome {
  readonly stack: Stack;
  readonly summary: RunSummary;
  /** The release this run recorded, if it recorded one. */
  readonly revision?: number;
}

function workersFrom(params: RunParams, stack: Stack, ctx: EngineContext): number {
  if (params.workers === undefined && ctx.env.KAPPS_WORKERS) {
    const text = ctx.env.KAPPS_WORKERS;
    const n = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
    if (!Number.isInteger(n) || n < 1)
      throw new KappsError(`KAPPS_WORKERS must be a whole number ≥ 1, got ${JSON.stringify(text)}`);
    return n;
  }
  const n = params.workers ?? stack.project.num_workers;
  if (!Number.isInteger(n) || n < 1)
    throw new KappsError(`the number of workers must be a whole number ≥ 1, got ${String(n)}`);
  return n;
}

/** Variables kapps reads for itself: every `KAPPS_*`, never passed to steps (a kapp asks for one by name in its `env_vars`). */
const OWN_PREFIX = 'KAPPS_';
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
function backendOf(params: RunParams, stack: Stack, ctx: EngineContext): string | undefined {
  return params.backend ?? ctx.env.KAPPS_BACKEND ?? stack.project.backend;
}

/**
 * The environment steps start from: the run's (see `EngineContext.runEnv`) without kapps' own configuration
 * (every `KAPPS_*`, and the PostgreSQL driver's variables when the release backend is PostgreSQL).
 */
export function stepEnv(backend: string | undefined, ctx: EngineContext): Record<string, string> {
  const own = new Set<string>();
  if (backend !== undefined && /^postgres(ql)?:/i.test(backend)) for (const name of PG_ENV) own.add(name);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(runEnvOf(ctx)))
    if (v !== undefined && !own.has(k) && !k.startsWith(OWN_PREFIX)) env[k] = v;
  return env;
}

/** kapps' own credentials, redacted wherever a step or a kapp passes them on. */
export function ownSecrets(backend: string | undefined, ctx: EngineContext): string[] {
  const secrets: string[] = [];
  for (const url of [backend, ctx.env.KAPPS_BACKEND]) {
    if (url && /^[a-z][a-z0-9+.-]*:\/\//i.test(url)) secrets.push(url, ...urlSecrets(url));
  }
  if (backend !== undefined && /^postgres(ql)?:/i.test(backend) && ctx.env.PGPASSWORD) secrets.push(ctx.env.PGPASSWORD);
  if (ctx.env.KAPPS_TOKEN) secrets.push(ctx.env.KAPPS_TOKEN);
  return secrets;
}

/**
 * Fill the workspace for the kapps of the sub-graph that have sources; reopen the stack when that changed anything in
 * the workspace (a kapp's `sugarkube.yaml` and templates are read from there).
 */
export async function prepareWorkspace(
  stack: Stack,
  params: RunParams,
  open: OpenOptions,
  ctx: EngineContext,
  signal: AbortSignal,
): Promise<Stack> {
  const withSources = stack.selection.nodes.map((n) => stack.kapp(n.id)).filter((k) => k.sources.length > 0);
  if (withSources.length === 0) return stack;
  const { ensureWorkspace } = await import('../workspace/workspace.js');
  const { gitRunnerFor } = await import('./git-runner.js');
  const { changed } = await ensureWorkspace(
    withSources.map((k) => ({ fqId: k.id, cacheRoot: k.cacheRoot, sources: k.sources })),
    {
      update: params.fetch === true,
      run: gitRunnerFor(ctx.env),
      signal,
      onFetch: (id, source) => viewOf(ctx).sourceFetching({ kapp: id, source: source.id, missing: false }),
    },
  );
  return changed ? openStackFor(params, open, ctx) : stack;
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

/** Steps that render `<no value>` in an apply: an error before anything runs. */
async function noValueCheck(stack: Stack, options: RunOptions): Promise<void> {
  const { noValueProblems } = await import('../execute/preflight.js');
  const { plannedPhases } = await import('../execute/run-stack.js');
  const { ConfigError } = await import('../diagnostics/errors.js');
  const problems = noValueProblems(stack, plannedPhases(stack, options));
  if (problems.length) throw new ConfigError(problems);
}

/**
 * Run one of the run commands. Errors before the kapps run (bad configuration, the lock, a missing command) are
 * thrown; an abort before they run throws `CancelledError`. Once they ran, the outcome is returned whatever it is
 * (the summary's status says failed or cancelled). The release is always closed before this returns or throws.
 */
export function runOperation(command: RunCommand, params: RunParams, hooks: RunHooks): Promise<RunOutcome> {
  return inRunContext(hooks.ctx, () => new Operation(operationPlan(command, params), params, hooks).run());
}

/** One run command following its plan: open, lock, fill the workspace, check, run, record. */
class Operation {
  readonly #plan: OperationPlan;
  readonly #params: RunParams;
  readonly #hooks: RunHooks;
  readonly #open: OpenOptions;
  /** The release lock, once taken. */
  #lock: RunLock | undefined;
  /** What records the run, until the release is closed. */
  #recorder: RunRecorder | undefined;

  constructor(plan: OperationPlan, params: RunParams, hooks: RunHooks) {
    this.#plan = plan;
    this.#params = params;
    this.#hooks = hooks;
    this.#open = { planning: plan.planning, applyNoValue: plan.applyNoValue, signal: hooks.signal };
  }

  async run(): Promise<RunOutcome> {
    const { signal } = this.#hooks;
    try {
      const stack = await this.#prepare();
      return await this.#runKapps(stack);
    } catch (e) {
      // The release a run opened and did not get to finish records why (a cancellation says so by its phase).
      const open = this.#recorder;
      if (open && !signal.aborted && !(e instanceof CancelledError)) {
        this.#recorder = undefined;
        await open.close('failed', await errorText(e, this.#hooks.ctx));
      }
      throw e;
    } finally {
      const open = this.#recorder;
      if (open)
        await timed(this.#hooks.ctx.timings, 'release-close', () =>
          open.close(signal.aborted ? 'cancelled' : 'failed'),
        );
    }
  }

  /**
   * Open the stack, take the lock (before anything is touched, the workspace included: a run refused by the lock
   * changes nothing), fill the workspace and check the commands. Returns the complete stack.
   */
  async #prepare(): Promise<Stack> {
    const { ctx, signal } = this.#hooks;
    const t = ctx.timings;
    let stack = await timed(t, 'open', () => openStackFor(this.#params, this.#open, ctx));
    // Checked before the lock, so a refused apply records no release (and again once the workspace is filled).
    if (this.#plan.applyNoValue) await timed(t, 'no-value-check', () => noValueCheck(stack, this.#runOptions(stack)));
    if (this.#plan.takesLock && this.#plan.operation) {
      const operation = this.#plan.operation;
      const lock = await timed(t, 'lock', async () => {
        const { lockRun } = await import('./release-run.js');
        return lockRun(stack, this.#params, operation, ctx, signal);
      });
      this.#lock = lock;
      this.#recorder = lock;
      this.#hooks.onRecorder?.(lock, lock.revision);
    }
    const checked = stack;
    if (this.#plan.fillsWorkspace) {
      stack = await timed(t, 'workspace', () => this.#fillWorkspace(stack));
    }
    const options = this.#runOptions(stack);
    if (this.#plan.fillsWorkspace) {
      // Steps will run: the process servers start while the release is begun (which mostly waits for the disk)
      // rather than delaying the first steps; as many as the kapps that can run at once need.
      warmProcessServers(Math.min(options.workers, stack.kapps.length));
    }
    if (signal.aborted) throw new CancelledError('interrupted');
    // Checked again only when filling the workspace opened the stack anew (its sources changed what it says).
    if (this.#plan.applyNoValue && stack !== checked) {
      await timed(t, 'no-value-check', () => noValueCheck(stack, options));
    }
    if (this.#plan.checksCommands) await timed(t, 'preflight', () => preflight(stack, options));
    return stack;
  }

  async #fillWorkspace(stack: Stack): Promise<Stack> {
    const { ctx, signal } = this.#hooks;
    try {
      return await prepareWorkspace(stack, this.#params, this.#open, ctx, signal);
    } catch (e) {
      // A fetch stopped by an abort fails; the interruption is what the user needs to hear about.
      if (signal.aborted) throw new CancelledError('interrupted while fetching sources');
      throw e;
    }
  }

  /** Show the run, pick its kapps, start recording, run them and close the release. */
  async #runKapps(stack: Stack): Promise<RunOutcome> {
    const { runStack } = await import('../execute/run-stack.js');
    const { signal, ctx } = this.#hooks;
    const t = ctx.timings;
    const show = await timed(t, 'begin', () => this.#hooks.begin(stack));
    const runLog = await timed(t, 'run-log-open', () => this.#releaseLog());
    const emit = t ? timedEmit(t, show, runLog) : runLog ? logToo(show, runLog) : show;
    if (this.#plan.showsPreview) {
      await timed(t, 'preview', async () => {
        const { printPreview } = await import('./release-run.js');
        await printPreview(stack, this.#params, ctx, signal);
      });
    }
    const only = await timed(t, 'changed', () => this.#changedKapps(stack));
    const lock = this.#lock;
    if (lock) {
      this.#recorder = await timed(t, 'release-start', () => lock.start(stack, only));
      this.#hooks.onRecorder?.(this.#recorder, lock.revision);
    }
    const active = this.#recorder;
    const summary = await timed(t, 'walk', () =>
      runStack(
        stack,
        { ...this.#runOptions(stack), ...(only ? { only } : {}) },
        {
          emit,
          signal,
          onKappFinished: active ? (t ? timedRecord(t, active) : (r: KappResult) => active.record(r)) : undefined,
          onKappsDone: active ? () => active.flush() : undefined,
        },
      ),
    );
    await timed(t, 'run-log-close', () => runLog?.close().catch(() => undefined));
    await timed(t, 'after-run', () => this.#hooks.afterRun?.(stack, summary));
    const recorder = this.#recorder;
    if (recorder) await timed(t, 'release-finish', () => recorder.finish(summary));
    return { stack, summary, ...(lock ? { revision: lock.revision } : {}) };
  }

  /** The release's log: the plain reporter's lines and every line the steps print, whatever the caller shows. */
  async #releaseLog(): Promise<Reporter | undefined> {
    const log = this.#lock;
    if (!log) return undefined;
    const { createRunLog } = await import('./run-log.js');
    const { logLimits } = this.#hooks.ctx;
    return createRunLog((line) => log.log(line), {
      verbose: this.#params.verbose,
      command: this.#plan.command,
      maxLineLength: logLimits?.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH,
    });
  }

  /** `--changed-only`: the kapps to process (undefined: every processed kapp). */
  async #changedKapps(stack: Stack): Promise<ReadonlySet<string> | undefined> {
    const { ctx, signal } = this.#hooks;
    const lock = this.#lock;
    switch (this.#plan.changed) {
      case 'all':
        return undefined;
      case 'latest': {
        const { changedKapps } = await import('./release-run.js');
        return changedKapps(stack, this.#params, ctx, signal);
      }
      case 'lock':
        return lock?.changedKapps(stack);
      case 'lock-refresh': {
        if (!lock) return undefined;
        const changed = await lock.changedWithRefresh(stack, signal);
        viewOf(ctx).outputsRefreshed({ kapps: changed.refreshed });
        return changed.ids;
      }
    }
  }

  #runOptions(stack: Stack): RunOptions {
    const params = this.#params;
    const { ctx } = this.#hooks;
    const backend = backendOf(params, stack, ctx);
    return {
      command: this.#plan.command,
      mode: this.#plan.mode,
      dryRun: params.dryRun,
      workers: workersFrom(params, stack, ctx),
      keepGoing: params.keepGoing,
      ignoreErrors: params.ignoreErrors ?? false,
      verbose: params.verbose,
      env: stepEnv(backend, ctx),
      secrets: ownSecrets(backend, ctx),
      killGraceMs: params.killGraceMs,
      ...(this.#plan.allOutput ? { allOutput: true } : {}),
      ...(ctx.timings ? { timings: ctx.timings } : {}),
    };
  }
}

/** Events shown and written to the release's log; the log is not worth failing the run for. */
function logToo(show: (event: RunEvent) => void, log: Reporter): (event: RunEvent) => void {
  return (event) => {
    show(event);
    try {
      log.onEvent(event);
    } catch {
      // The display showed the event.
    }
  };
}

/**
 * `logToo` measured: the time each event takes to be shown (the driver's reporters) and written to the release's
 * log, added to its kapp's parts (`show`, `log`; events of no kapp count under `-`).
 */
function timedEmit(t: Timings, show: (event: RunEvent) => void, log: Reporter | undefined): (event: RunEvent) => void {
  return (event) => {
    const kapp = 'kapp' in event && typeof event.kapp === 'string' ? event.kapp : '-';
    const t0 = t.now();
    show(event);
    const t1 = t.now();
    t.add(kapp, 'show', t1 - t0);
    t.add(kapp, 'events', 1);
    if (!log) return;
    try {
      log.onEvent(event);
    } catch {
      // The display showed the event.
    }
    t.add(kapp, 'log', t.now() - t1);
  };
}

/**
 * The release recorder's save of a kapp, measured: `record` is the time the walk waits for it to return (its
 * synchronous part), `recordWall` until its writes are done.
 */
function timedRecord(t: Timings, recorder: RunRecorder): (result: KappResult) => Promise<void> {
  return (result) => {
    const t0 = t.now();
    const saving = recorder.record(result);
    t.add(result.id, 'record', t.now() - t0);
    return saving.finally(() => t.add(result.id, 'recordWall', t.now() - t0));
  };
}

/** An error as the release records it: diagnostics as the CLI prints them, else the message. */
async function errorText(error: unknown, ctx: EngineContext): Promise<string> {
  const { ConfigError } = await import('../diagnostics/errors.js');
  if (error instanceof ConfigError) {
    const { formatDiagnostics } = await import('../report/diagnostic-printer.js');
    return formatDiagnostics(error.diagnostics, { cwd: ctx.cwd });
  }
  return error instanceof Error ? error.message : String(error);
}
