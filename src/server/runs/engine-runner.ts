/**
 * The engine of the server's runs: src/engine driven in-process, one context per run (its own abort signal,
 * messages and log), as the CLI drives it for one run.
 *
 * - generate: the `kapps generate` document (YAML) is the result;
 * - preview: the `kapps preview -o json` document is the result;
 * - apply / destroy: `install -y` / `delete -y`, recorded as a release in the server's backend (the same store and
 *   project key as the CLI uses for the same stack file, so both are serialised by the release lock and share one
 *   history); the result says how many kapps succeeded, failed, were skipped or cancelled.
 *
 * An apply that names a preview applies only while that preview still holds: the preview it would show now must be
 * the one shown then (the same kapps, actions and specs, against the same release); otherwise it fails as stale.
 */
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CancelledError, ConfigError, KappsError } from '../../diagnostics/errors.js';
import type { EngineContext, RunParams, StackParams } from '../../engine/index.js';
import type { PreviewDocument } from '../../release/preview.js';
import { canonicalJson } from '../../release/canonical-json.js';
import { redactCredentials } from '../../release/redact.js';
import { formatDiagnostics } from '../../report/diagnostic-printer.js';
import { previewSelection, runOptionsSchema, type ApplyResult, type RunRequestOptions } from '../../api/index.js';
import { STEP_STOP_MS, type RunEngine, type RunIO, type RunOutcome } from './executor.js';
import type { StoredRun } from '../queue/run-store.js';
import type { EngineContext as ServerEngineContext } from '../server.js';
import { projectRunEnv } from '../config.js';

/** Between SIGTERM and SIGKILL when a cancelled (or fenced) run stops its steps. */
const KILL_GRACE_MS = STEP_STOP_MS;

/** What a preview showed, as a digest: its kapps, their actions and specs, and the release it compared with. */
export function previewBasis(document: Pick<PreviewDocument, 'basedOnRevision' | 'kapps'>): string {
  const shown = {
    basedOnRevision: document.basedOnRevision,
    // The digest of each spec tells a changed secret apart even where the redacted spec shows only a mask.
    kapps: document.kapps.map((k) => ({ id: k.id, action: k.action, to: k.to, specDigest: k.specDigest ?? null })),
  };
  return createHash('sha256').update(canonicalJson(shown)).digest('hex');
}

/** The message of an error a user can act on (diagnostics as the CLI prints them), or undefined for a bug. */
function userMessage(error: unknown): string | undefined {
  if (error instanceof ConfigError) return redactCredentials(formatDiagnostics(error.diagnostics));
  if (error instanceof KappsError) return redactCredentials(error.message);
  return undefined;
}

export function createEngine(context: ServerEngineContext): Promise<RunEngine> {
  const backend = context.backend.kind === 'file' ? context.backend.root : context.backend.url;
  const engine = import('../../engine/index.js');

  const stackParams = (run: Pick<StoredRun, 'project' | 'stack'>, options: RunRequestOptions): StackParams => {
    const project = context.projects.get(run.project);
    if (!project) throw new KappsError(`project ${run.project} is no longer registered`);
    return {
      stackFile: project.stackFile,
      stackName: run.stack,
      workspaceDir: context.workspaceOf(run.project, run.stack),
      include: [...(options.include ?? [])],
      exclude: [...(options.exclude ?? [])],
      parents: options.parents ?? false,
      ...options.overrides,
      strictVars: false,
    };
  };
  const engineContext = (run: StoredRun, io: Pick<RunIO, 'message'>): EngineContext => {
    const project = context.projects.get(run.project);
    if (!project) throw new KappsError(`project ${run.project} is no longer registered`);
    const dir = dirname(project.stackFile);
    return {
      cwd: dir,
      env: { ...process.env, KAPPS_BACKEND: backend },
      // A run sees what its project is given, and reads files only in the project and its workspace.
      runEnv: projectRunEnv(project, process.env),
      readRoots: [realOrNearest(dir), realOrNearest(context.workspaceOf(run.project, run.stack))],
      argv: ['kapps', 'serve', `--run=${run.id}`, run.type, run.project, run.stack],
      runBy: run.createdBy,
      message: (text) => io.message(text),
      result: (text) => io.message(text),
      logLimits: { maxBytes: context.limits.maxLogBytes, maxLineLength: context.limits.maxLineLength },
    };
  };
  const target = (run: Pick<StoredRun, 'project' | 'stack'>) => ({
    project: context.projects.releaseProject(run.project),
    backend,
  });

  /** The preview of the stack now, with the options of `run`. */
  const previewNow = async (
    run: StoredRun,
    options: RunRequestOptions,
    io: Pick<RunIO, 'message'>,
    signal: AbortSignal,
  ) => {
    const { previewStack } = await engine;
    return previewStack(
      {
        ...stackParams(run, options),
        ...target(run),
        ...(options.refresh ? { refresh: true } : {}),
        ...(options.workers !== undefined ? { workers: options.workers } : {}),
      },
      engineContext(run, io),
      signal,
    );
  };

  /** Whether the preview run `previewId` still holds for `run`; a reason when it does not. */
  const stalePreview = async (preview: StoredRun, io: Pick<RunIO, 'message'>, signal: AbortSignal) => {
    const result = await context.store.getResult(preview.id);
    if (!result) return `preview run ${preview.id} has no result`;
    const then = JSON.parse(result.body) as PreviewDocument;
    const now = await previewNow(preview, { ...checkedOptions(preview), refresh: false }, io, signal);
    if (now.document.basedOnRevision !== then.basedOnRevision) {
      return `the last release of ${preview.project}/${preview.stack} changed since preview run ${preview.id} (revision ${then.basedOnRevision ?? 'none'} then, ${now.document.basedOnRevision ?? 'none'} now)`;
    }
    if (previewBasis(now.document) !== previewBasis(then)) {
      return `the spec of ${preview.project}/${preview.stack} changed since preview run ${preview.id}`;
    }
    return undefined;
  };

  const execute = async (run: StoredRun, io: RunIO): Promise<RunOutcome> => {
    const { createRunLog, generateDocument, runOperation } = await engine;
    try {
      const ctx = engineContext(run, io);
      const options = checkedOptions(run);
      if (run.type === 'generate') {
        const body = await generateDocument(stackParams(run, options), ctx, { format: 'yaml', signal: io.signal });
        io.message(`Generated the spec of ${run.project}/${run.stack}.`);
        return { status: 'succeeded', result: { contentType: 'application/yaml', body } };
      }
      if (run.type === 'preview') {
        const { document } = await previewNow(run, options, io, io.signal);
        const changed = document.kapps.filter((k) => k.action !== 'UnChanged').length;
        io.message(
          `Preview of ${run.project}/${run.stack} against ${document.basedOnRevision === null ? 'no previous release' : `release ${document.basedOnRevision}`}: ${document.hasChanges ? `${changed} kapp(s) would change` : 'no changes'}.`,
        );
        return {
          status: 'succeeded',
          result: { contentType: 'application/json', body: `${JSON.stringify(document, null, 2)}\n` },
        };
      }
      // apply / destroy
      let runOptions = options;
      if (options.previewRunId !== undefined) {
        const preview = await context.store.get(options.previewRunId);
        if (!preview) return { status: 'failed', error: `stale preview: preview run ${options.previewRunId} is gone` };
        const stale = await stalePreview(preview, io, io.signal);
        if (stale) {
          io.message(`kapps: stale preview: ${stale}; nothing was applied.`);
          return { status: 'failed', error: `stale preview: ${stale}` };
        }
        // Exactly what the preview showed: its selection and overrides.
        runOptions = { ...options, ...previewSelection(checkedOptions(preview)) };
      }
      const log = createRunLog((line) => io.log(line), {
        command: run.type === 'apply' ? 'install' : 'delete',
        maxLineLength: context.limits.maxLineLength,
      });
      const params: RunParams = {
        ...stackParams(run, runOptions),
        ...target(run),
        dryRun: false,
        keepGoing: runOptions.keepGoing ?? false,
        ...(runOptions.workers !== undefined ? { workers: runOptions.workers } : {}),
        verbose: false,
        validate: true,
        killGraceMs: KILL_GRACE_MS,
        yes: true,
        ...(runOptions.changedOnly ? { changedOnly: true } : {}),
        ...(runOptions.refresh ? { refresh: true } : {}),
        reporter: 'json',
        allOutput: true,
      };
      let revision: number | null = null;
      const outcome = await runOperation(run.type === 'apply' ? 'install' : 'delete', params, {
        ctx,
        signal: io.signal,
        begin: () => (event) => {
          io.emit(event);
          log.onEvent(event);
        },
        onRecorder: (_recorder, rev) => {
          if (revision !== rev) io.onRelease(rev);
          revision = rev;
        },
        afterRun: () => log.close(),
      });
      const counts = { succeeded: 0, failed: 0, skipped: 0, cancelled: 0 };
      let firstFailure: string | undefined;
      for (const r of outcome.summary.results.values()) {
        if (r.role !== 'selected') continue;
        counts[r.status]++;
        if (r.status === 'failed') firstFailure ??= `${r.id}: ${(r.reason ?? 'failed').split('\n')[0]}`;
      }
      const status = outcome.summary.status;
      const releaseRevision = outcome.revision ?? revision;
      const message =
        `${run.type === 'apply' ? 'Apply' : 'Destroy'} of ${run.project}/${run.stack} ${status}: ` +
        `${counts.succeeded} succeeded, ${counts.failed} failed, ${counts.skipped} skipped, ${counts.cancelled} cancelled` +
        (releaseRevision !== null ? `; release ${releaseRevision}` : '');
      const result: ApplyResult = { message, releaseRevision, kapps: counts };
      return {
        status,
        error:
          status === 'failed'
            ? `${counts.failed} kapp(s) failed${firstFailure ? `; ${firstFailure}` : ''}`
            : status === 'cancelled'
              ? 'cancelled'
              : null,
        releaseRevision,
        result: { contentType: 'application/json', body: JSON.stringify(result) },
      };
    } catch (error) {
      if (error instanceof CancelledError || (io.signal.aborted && error instanceof KappsError))
        return { status: 'cancelled', error: 'cancelled before the kapps ran' };
      const text = userMessage(error);
      if (text === undefined) throw error;
      io.message(`kapps: ${text}`);
      const first = (text.split('\n').find((l) => l.trim() !== '') ?? text).replace(/^error: /, '');
      return { status: 'failed', error: first };
    }
  };

  return Promise.resolve({ execute });
}

/** The real path of `p`: its nearest existing ancestor's real path joined with the rest. */
function realOrNearest(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    const parent = dirname(p);
    return parent === p ? p : join(realOrNearest(parent), basename(p));
  }
}

/**
 * A stored run's options, checked again as a request's are (a run stored by an older server, or a preview an apply
 * takes over, may hold what requests may no longer send): values from requests stay data.
 */
function checkedOptions(run: StoredRun): RunRequestOptions {
  const checked = runOptionsSchema.safeParse(run.options);
  if (checked.success) return checked.data;
  const issue = checked.error.issues[0];
  throw new KappsError(
    `run ${run.id} has options no request may send (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}); nothing was run`,
  );
}
