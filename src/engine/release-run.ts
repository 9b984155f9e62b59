/**
 * Releases around a run: the preview before a plan, the `--changed-only` selection, and the recorder that takes the
 * lock (revision N+1), saves each kapp's state as it finishes and closes the release with its phase.
 */
import path from 'node:path';
import { redactArgv, redactCredentials } from '../diagnostics/redact.js';
import { timed } from '../diagnostics/timings.js';
import type { LogLine } from '../log/line.js';
import type { ReleaseStore } from '../release/store-types.js';
import type { BackendSpec } from '../release/store.js';
import type { ReleaseApproval, ReleaseBreakGlass, ReleaseSource } from '../release/types.js';
import type * as ReleaseModule from '../release/index.js';
import type { ReleaseLogWriter } from '../release/log-writer.js';
import type { PreviewRow, ReleaseRecorder, ReleaseState } from '../release/index.js';
import type { KappResult, RunSummary } from '../execute/types.js';
import { SPEC_FORMAT, type StackSpec } from '../plan/spec.js';
import type { Stack } from '../stack/stack.js';
import { toJS } from '../go-value/value.js';
import type { EngineContext, TargetParams } from './context.js';
import { kappsVersion } from './version.js';
import { viewOf } from './view.js';
import { openTarget } from './target.js';

/** What a recorded run needs besides the target: the selectors it records, how it reads the live state. */
export interface RecordParams extends TargetParams {
  include: string[];
  exclude: string[];
  refresh?: boolean;
  workers?: number;
  /**
   * The repository and commit the stack was read at (a runs server's project from git, a rollback), recorded in the
   * release. Unset: the git checkout holding the stack file, if any (its commit, whether it had local changes).
   */
  source?: ReleaseSource;
  /** A rollback: the revision whose desired state the run applies again. */
  rollbackOf?: number;
  /** A runs server's run of a stack requiring approvals: the approvals that let it apply (recorded). */
  approvals?: readonly ReleaseApproval[];
  /** Those approvals were skipped by a break-glass token (recorded). */
  breakGlass?: ReleaseBreakGlass;
}

/** The longest error a release records (a long list of diagnostics is cut, saying so). */
const MAX_ERROR_CHARS = 8_000;

function boundedError(text: string): string {
  return text.length <= MAX_ERROR_CHARS
    ? text
    : `${text.slice(0, MAX_ERROR_CHARS)}… (cut at ${MAX_ERROR_CHARS} characters)`;
}

/** The ids the run processes, in stack order. */
function processedIds(stack: Stack): string[] {
  return stack.selection.nodes.filter((n) => n.processed).map((n) => n.id);
}

/** Preview rows of the processed kapps against the latest release (Delete only for kapps gone from the stack). */
export async function previewRows(
  stack: Stack,
  args: TargetParams,
  ctx: EngineContext,
): Promise<{ rows: PreviewRow[]; revision: number | null; project: string; spec: StackSpec }> {
  const { computePreview } = await import('../release/index.js');
  const { completeSpecOf, previewKappsOf } = await import('./spec.js');
  const { project, store } = await openTarget(stack, args, ctx);
  try {
    const complete = await completeSpecOf(stack, new Set(processedIds(stack)), store, ctx, { record: false });
    const latest = await store.latest(project, stack.config.name);
    const known = new Set(stack.kapps.map((k) => k.id));
    const rows = computePreview(await previewKappsOf(stack, complete), latest?.state).filter(
      (r) => r.action !== 'Delete' || !known.has(r.id),
    );
    return { rows, revision: latest?.revision ?? null, project, spec: complete.spec };
  } finally {
    await store.close();
  }
}

/** Show the preview (and its details) before a plan; a store that cannot be read is a warning, not a failure. */
export async function printPreview(
  stack: Stack,
  args: RecordParams,
  ctx: EngineContext,
  signal: AbortSignal,
): Promise<void> {
  const view = viewOf(ctx);
  try {
    const { computePreviewFor } = await import('./preview.js');
    const { rows, revision, document } = await computePreviewFor(stack, args, ctx, signal);
    if (document.refreshed) view.outputsRefreshed({ kapps: document.refreshed });
    view.previewShown({ revision, rows, document });
  } catch (e) {
    view.previewUnavailable({ error: redactCredentials(e instanceof Error ? e.message : String(e)) });
  }
}

/** `--changed-only`: the processed kapps that are new or changed (or, with --refresh, drifted) since the latest release. */
export async function changedKapps(
  stack: Stack,
  args: RecordParams,
  ctx: EngineContext,
  signal: AbortSignal,
): Promise<Set<string>> {
  if (args.refresh) {
    const { changedWithRefresh } = await import('./preview.js');
    const { project, store } = await openTarget(stack, args, ctx);
    try {
      const state = (await store.latest(project, stack.config.name))?.state;
      const { ids, refreshed } = await changedWithRefresh(stack, state, args.workers, ctx, signal, store);
      viewOf(ctx).outputsRefreshed({ kapps: refreshed });
      return ids;
    } finally {
      await store.close();
    }
  }
  const { rows } = await previewRows(stack, args, ctx);
  return new Set(rows.filter((r) => r.action === 'Create' || r.action === 'Update').map((r) => r.id));
}

/** What records a run into its release. */
export interface RunRecorder {
  /** Save one kapp's result in the release state (kapps only providing outputs, and skipped kapps, keep theirs). */
  record(result: KappResult): Promise<void>;
  /** No more kapps will be recorded: write the saves still queued at once rather than after the write interval. */
  flush(): void;
  /**
   * Add a line to the release's log (written in batches; every line given before `finish`/`close` is stored before
   * the release's final phase).
   */
  log(line: LogLine): void;
  /** Close the release with the run's outcome (never `succeeded` while a recorded kapp failed or was cancelled). */
  finish(summary: RunSummary): Promise<void>;
  /**
   * Release the store; a release not finished yet ends with `phase` (the run did not get to finish it) and, when
   * given, the error that stopped it (recorded as the release's `error` and as the last line of its log).
   */
  close(phase: 'failed' | 'cancelled', error?: string): Promise<void>;
}

/**
 * The lock of a run, taken before anything is changed (sources fetched, steps run): revision N+1 exists, with an
 * empty spec until `start` records the spec of the kapps the run processes.
 */
export interface RunLock extends RunRecorder {
  /** The revision this run records. */
  readonly revision: number;
  /** The state this release began with (the latest release's state when the lock was taken). */
  readonly previousState: ReleaseState;
  /**
   * `--changed-only`: the processed kapps of `stack` that are new or changed against the state this release began
   * with (the latest release's state when the lock was taken).
   */
  changedKapps(stack: Stack): Promise<Set<string>>;
  /** `--changed-only --refresh`: the same, with the live outputs read (see `changedWithRefresh`). */
  changedWithRefresh(stack: Stack, signal: AbortSignal): Promise<{ ids: Set<string>; refreshed: string[] }>;
  /** Record the spec of the kapps the run processes (all processed kapps, or those in `only`); call once. */
  start(stack: Stack, only: ReadonlySet<string> | undefined): Promise<RunRecorder>;
}

/** The spec digests of a release's kapps, by id. */
interface LazyDigests {
  has(id: string): boolean;
  get(id: string): string | undefined;
}

/** The complete spec of the kapps a run processes. */
async function runSpec(
  stack: Stack,
  only: ReadonlySet<string> | undefined,
  store: ReleaseStore,
  ctx: EngineContext,
): Promise<StackSpec> {
  const { completeSpecOf } = await import('./spec.js');
  const ids = processedIds(stack).filter((id) => !only || only.has(id));
  return (await completeSpecOf(stack, new Set(ids), store, ctx, { record: true })).spec;
}

/**
 * Take the lock of `stack` (create revision N+1, phase `applying`/`deleting`) before touching anything, so that a
 * run refused by the lock changes nothing. `stack` only needs its project configuration and name here; the spec is
 * recorded by `start` once the stack is complete. Throws `ReleaseLockedError` while another release runs.
 */
export async function lockRun(
  stack: Stack,
  args: RecordParams,
  operation: 'install' | 'delete',
  ctx: EngineContext,
  signal?: AbortSignal,
): Promise<RunLock> {
  return openRun(stack, args, operation, { stack: stack.config.name, kapps: [] }, false, ctx, signal);
}

/** Take the lock (create revision N+1) with the spec of the kapps the run processes, and return what records the run. */
export async function beginRun(
  stack: Stack,
  args: RecordParams,
  operation: 'install' | 'delete',
  only: ReadonlySet<string> | undefined,
  ctx: EngineContext,
): Promise<RunRecorder> {
  const lock = await openRun(stack, args, operation, { stack: stack.config.name, kapps: [] }, false, ctx);
  try {
    return await lock.start(stack, only);
  } catch (e) {
    await lock.close('failed');
    throw e;
  }
}

async function openRun(
  stack: Stack,
  args: RecordParams,
  operation: 'install' | 'delete',
  initialSpec: StackSpec,
  specRecorded: boolean,
  ctx: EngineContext,
  signal?: AbortSignal,
): Promise<RunLock> {
  const release = await import('../release/index.js');
  const { ReleaseLogWriter } = await import('../release/log-writer.js');
  const target = await openTarget(stack, args, ctx);
  let recorder: ReleaseRecorder;
  try {
    const source = args.source ?? (await checkoutOf(stack, args, target.backend, ctx, signal));
    recorder = await release.beginRelease({
      store: target.store,
      project: target.project,
      stack: stack.config.name,
      operation,
      spec: initialSpec,
      command: redactArgv([...ctx.argv]),
      selectors: { include: args.include, exclude: args.exclude },
      kappsVersion: kappsVersion(),
      stackFile: args.stackFile,
      owner: release.ownerFor(ctx.runBy),
      ...(source ? { source } : {}),
      ...(args.rollbackOf !== undefined ? { rollbackOf: args.rollbackOf } : {}),
      ...(args.approvals ? { approvals: args.approvals } : {}),
      ...(args.breakGlass ? { breakGlass: args.breakGlass } : {}),
    });
  } catch (e) {
    await target.store.close();
    throw e;
  }
  // The lock is taken: the spec key (made on a store's first record) is read while the workspace is filled and the
  // steps are planned for the spec, rather than after. A store keeps the key once read; a failure here is met again
  // when the spec is recorded.
  target.store.specKey({ create: true }).catch(() => undefined);
  const logWriter = new ReleaseLogWriter(target.store, target.project, stack.config.name, recorder.revision, {
    ...(ctx.logLimits ? { limits: ctx.logLimits } : {}),
    onError: (error) =>
      viewOf(ctx).releaseLogFailed({
        revision: recorder.revision,
        error: redactCredentials(error instanceof Error ? error.message : String(error)),
      }),
  });
  return new ReleaseRun(
    { stack, args, operation, ctx, target, recorder, logWriter, release },
    initialSpec,
    specRecorded,
  );
}

/** The git checkout holding the stack file, as a release records it (the workspace and a file backend left out). */
async function checkoutOf(
  stack: Stack,
  args: RecordParams,
  backend: BackendSpec,
  ctx: EngineContext,
  signal: AbortSignal | undefined,
): Promise<ReleaseSource | undefined> {
  const { checkoutSource } = await import('./checkout.js');
  const { gitRunnerFor } = await import('./git-runner.js');
  const leaveOut = [stack.workspace, ...(backend.kind === 'file' ? [backend.root] : [])];
  return checkoutSource(gitRunnerFor(ctx.env), path.resolve(ctx.cwd, args.stackFile), leaveOut, signal);
}

/** What a `ReleaseRun` is made of: the release begun (revision N+1) in its store, and what records into it. */
interface ReleaseRunParts {
  readonly stack: Stack;
  readonly args: RecordParams;
  readonly operation: 'install' | 'delete';
  readonly ctx: EngineContext;
  readonly target: Awaited<ReturnType<typeof openTarget>>;
  readonly recorder: ReleaseRecorder;
  /** The release's log, written in batches. */
  readonly logWriter: ReleaseLogWriter;
  readonly release: Pick<typeof ReleaseModule, 'computePreview' | 'specDigest'>;
}

/**
 * A run's release: the lock (revision N+1, taken when it was begun), then the recorder of the spec, each kapp, the
 * log and the final phase. `close` releases the store (after closing the release if `finish` did not).
 */
class ReleaseRun implements RunLock {
  readonly revision: number;
  /** The state this release began with: the previous release's, copied by `beginRelease`. */
  readonly previousState: ReleaseState;
  readonly #parts: ReleaseRunParts;
  readonly #logWriter: ReleaseLogWriter;
  #digests: LazyDigests;
  #started: boolean;
  #closed = false;

  constructor(parts: ReleaseRunParts, initialSpec: StackSpec, specRecorded: boolean) {
    const { recorder } = parts;
    this.#parts = parts;
    this.revision = recorder.revision;
    this.previousState = recorder.release.state;
    this.#digests = this.#digestsOf(initialSpec);
    this.#started = specRecorded;
    this.#logWriter = parts.logWriter;
  }

  /**
   * Each kapp's spec digest, computed when the kapp is recorded (during the walk, where the event loop has time to
   * spare) rather than all at once before the first step.
   */
  #digestsOf(spec: StackSpec): LazyDigests {
    const kapps = new Map(spec.kapps.map((k) => [k.id, k] as const));
    const done = new Map<string, string>();
    return {
      has: (id) => kapps.has(id),
      get: (id) => {
        let digest = done.get(id);
        const kapp = kapps.get(id);
        if (digest === undefined && kapp) {
          digest = this.#parts.release.specDigest(kapp);
          done.set(id, digest);
        }
        return digest;
      },
    };
  }

  async changedKapps(current: Stack): Promise<Set<string>> {
    const { ctx, target, release } = this.#parts;
    const { completeSpecOf, previewKappsOf } = await import('./spec.js');
    const complete = await completeSpecOf(current, new Set(processedIds(current)), target.store, ctx, {
      record: true,
    });
    const rows = release.computePreview(await previewKappsOf(current, complete), this.previousState);
    return new Set(rows.filter((r) => r.action === 'Create' || r.action === 'Update').map((r) => r.id));
  }

  async changedWithRefresh(current: Stack, signal: AbortSignal): Promise<{ ids: Set<string>; refreshed: string[] }> {
    const { changedWithRefresh } = await import('./preview.js');
    const { args, ctx, target } = this.#parts;
    return changedWithRefresh(current, this.previousState, args.workers, ctx, signal, target.store);
  }

  async start(current: Stack, only: ReadonlySet<string> | undefined): Promise<RunRecorder> {
    if (!this.#started) {
      const spec = await runSpec(current, only, this.#parts.target.store, this.#parts.ctx);
      this.#digests = this.#digestsOf(spec);
      await timed(this.#parts.ctx.timings, 'spec-write', () => this.#parts.recorder.setSpec(spec));
    }
    this.#started = true;
    return this;
  }

  async record(result: KappResult): Promise<void> {
    // Kapps the run did not touch keep their previous state (a skipped kapp is not uninstalled).
    if (result.role !== 'selected' || result.status === 'skipped') return;
    const { operation, recorder } = this.#parts;
    const status = result.status === 'succeeded' ? (operation === 'install' ? 'installed' : 'deleted') : result.status;
    await recorder.recordKapp(result.id, {
      status,
      ...(status !== 'installed' && status !== 'deleted' && result.reason !== undefined
        ? { error: boundedError(redactCredentials(result.reason)) }
        : {}),
      outputs: (result.outputs ? toJS(result.outputs) : {}) as never,
      steps: [...result.steps],
      ...(this.#digests.has(result.id) ? { specDigest: this.#digests.get(result.id), specFormat: SPEC_FORMAT } : {}),
    });
  }

  flush(): void {
    this.#parts.recorder.flush();
  }

  log(line: LogLine): void {
    this.#logWriter.write(line);
  }

  async finish(summary: RunSummary): Promise<void> {
    const { recorder, target, stack, ctx } = this.#parts;
    // The whole log is stored before the final phase: a reader that sees the phase has the whole log.
    await this.#logWriter.close();
    await recorder.finish(summary.status);
    // After the summary.
    viewOf(ctx).releaseRecorded({
      revision: recorder.revision,
      project: target.project,
      stack: stack.config.name,
      projectSource: target.source,
      where: target.where,
    });
  }

  async close(phase: 'failed' | 'cancelled', error?: string): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      const why = error === undefined ? undefined : boundedError(redactCredentials(error));
      if (why !== undefined) {
        const time = new Date().toISOString();
        for (const text of `error: ${why}`.split('\n')) this.#logWriter.write({ time, stream: 'kapps', text });
      }
      await this.#logWriter.close();
      await this.#parts.recorder.finish(phase, why);
    } finally {
      await this.#parts.target.store.close();
    }
  }
}
