/**
 * The engine of the server's runs: src/engine driven in-process, one context per run (its own abort signal,
 * messages and log), as the CLI drives it for one run. `EngineAdapter` has one method per kind of engine work, chosen
 * by the run's plan (`run-plan.ts`):
 *
 * - generate: the `kapps generate` document (YAML) is the result;
 * - preview: the `kapps preview -o json` document is the result;
 * - apply / destroy (`operate`): `install -y` / `delete -y`, recorded as a release in the server's backend (the same
 *   store and project key as the CLI uses for the same stack file, so both are serialised by the release lock and
 *   share one history); the result says how many kapps succeeded, failed, were skipped or cancelled;
 * - drift: `kapps drift`, the live outputs read and compared with the last release, nothing written; the drift
 *   report is the result.
 *
 * An apply that names a preview applies only while that preview still holds: the preview it would show now must be
 * the one shown then (the same kapps, actions and specs, against the same release); otherwise it raises
 * `StalePreviewError` and the run fails as stale, nothing applied. What stops a run (a stale preview, a refused run, a
 * user mistake, a cancel) becomes its outcome in `outcomeOfError`; anything else is a bug the executor records.
 */
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CancelledError, ConfigError, KappsError } from '../../diagnostics/errors.js';
import type * as Engine from '../../engine/index.js';
import type { EngineContext, RollbackParams, RunParams, StackParams } from '../../engine/index.js';
import type { ReleaseSource } from '../../release/types.js';
import type { BackendSpec } from '../../release/store.js';
import type { ReleaseStore } from '../../release/store-types.js';
import type { PreviewDocument } from '../../release/preview.js';
import { canonicalJson } from '../../release/canonical-json.js';
import { redactCredentials } from '../../diagnostics/redact.js';
import { formatDiagnostics } from '../../report/diagnostic-printer.js';
import {
  previewSelection,
  runOptionsSchema,
  type ApplyResult,
  type CheckStage,
  type DriftReport,
  type RunRequestOptions,
} from '../../api/index.js';
import type { NoisyMark } from '../drift/drift-store.js';
import { STEP_STOP_MS, type RunEngine, type RunIO, type ExecutedRun } from './executor.js';
import type { StoredRun } from '../queue/run-store.js';
import type { RunEngineDeps } from '../server.js';
import { projectRunEnv, type ProjectEntry } from '../config.js';
import { gateSecretEnvs } from '../gate-config.js';
import { RunRefused, StalePreviewError } from './errors.js';
import { RepositoryError, type Checkout } from '../sources/repository.js';
import { runPlan, type RunPlan } from './run-plan.js';
import { approvalsOf, gateOf, isApproved, releaseApprovals } from './gate.js';
import { DEFAULT_APPROVAL_EXPIRY_SECONDS, type StackGate } from '../gate-config.js';
import { blockingFailure, runChecks } from '../checks/run-checks.js';

/** Between SIGTERM and SIGKILL when a cancelled (or fenced) run stops its steps. */
const KILL_GRACE_MS = STEP_STOP_MS;

/**
 * Where a run's stack file is: the project's file on this server's disk, or the file in the working tree of the
 * run's commit (a project from git); the release project its releases are kept under.
 */
interface Located {
  readonly stackFile: string;
  /** The folder the run reads files in (the project's folder, or the commit's working tree). */
  readonly root: string;
  readonly releaseProject: string;
  /** The repository and commit its release records (a project from git). */
  readonly source?: ReleaseSource;
}

/** One run as the adapter works on it: the run, what it reports through, its checked options, plan and context. */
interface EngineJob {
  readonly at: Located;
  readonly run: StoredRun;
  readonly io: RunIO;
  readonly options: RunRequestOptions;
  readonly plan: RunPlan;
  readonly ctx: EngineContext;
}

type OperationSummary = Awaited<ReturnType<typeof Engine.runOperation>>['summary'];

/** What a preview showed, as a digest: its kapps, their actions and specs, and the release it compared with. */
export function previewBasis(document: Pick<PreviewDocument, 'basedOnRevision' | 'kapps'>): string {
  const shown = {
    basedOnRevision: document.basedOnRevision,
    // The digest of each spec tells a changed secret apart even where the redacted spec shows only a mask.
    kapps: document.kapps.map((k) => ({ id: k.id, action: k.action, to: k.to, specDigest: k.specDigest ?? null })),
  };
  return createHash('sha256').update(canonicalJson(shown)).digest('hex');
}

/** A digest of a kapp's entry in a release's state: a release that changed the entry changes the digest. */
function entryDigest(entry: unknown): string {
  return createHash('sha256').update(canonicalJson(entry)).digest('hex').slice(0, 32);
}

/** The engine of `kapps serve`'s runs. */
export function createEngine(context: RunEngineDeps): Promise<RunEngine> {
  return Promise.resolve(new EngineAdapter(context));
}

export class EngineAdapter implements RunEngine {
  readonly #context: RunEngineDeps;
  readonly #backend: string;
  /** The server's release store as the runs get it (closing it leaves it open), for a PostgreSQL backend. */
  readonly #sharedReleases: ReleaseStore | undefined;
  #engineModule: Promise<typeof Engine> | undefined;

  constructor(context: RunEngineDeps) {
    this.#context = context;
    this.#backend = context.backend.kind === 'file' ? context.backend.root : context.backend.url;
    // A file store is opened by each run (it is cheap, and what it remembers of the files it wrote goes with it).
    this.#sharedReleases = context.backend.kind === 'postgres' ? keptOpen(context.releases) : undefined;
  }
  /** The engine's modules, loaded by the first run that needs them. */
  get #engine(): Promise<typeof Engine> {
    this.#engineModule ??= import('../../engine/index.js');
    return this.#engineModule;
  }

  async execute(run: StoredRun, io: RunIO): Promise<ExecutedRun> {
    let checkout: Checkout | undefined;
    try {
      const project = this.#project(run);
      let at: Located;
      if (project.repo) {
        checkout = await this.#checkout(run, project, io);
        at = {
          stackFile: join(checkout.dir, project.repo.path),
          root: checkout.dir,
          releaseProject: this.#context.projects.releaseProject(run.project, checkout.dir),
          ...(run.commit ? { source: { repo: run.commit.repo, commit: run.commit.sha } } : {}),
        };
      } else {
        const stackFile = project.stackFile!;
        at = {
          stackFile,
          root: dirname(stackFile),
          releaseProject: this.#context.projects.releaseProject(run.project),
        };
      }
      const options = checkedOptions(run);
      return await this.#work({
        at,
        run,
        io,
        options,
        plan: runPlan(run.type, options),
        ctx: this.#engineContext(run, io, at),
      });
    } catch (error) {
      return outcomeOfError(error, io);
    } finally {
      await checkout?.release().catch(() => undefined);
    }
  }

  /** The working tree of the run's commit (a project from git), held until the run ends. */
  async #checkout(run: StoredRun, project: ProjectEntry, io: RunIO): Promise<Checkout> {
    const repository = this.#context.projects.sources?.of(project);
    if (!repository || !run.commit) throw new RunRefused(`run ${run.id} of a project from git names no commit`);
    io.message(`Checking out ${run.commit.sha.slice(0, 12)} (${run.commit.ref}) of ${run.commit.repo}.`);
    try {
      return await repository.checkout(run.commit.sha, io.signal);
    } catch (error) {
      if (error instanceof RepositoryError) throw new KappsError(error.message);
      throw error;
    }
  }

  #work(job: EngineJob): Promise<ExecutedRun> {
    const gate = gateOf(this.#project(job.run), job.run.stack);
    // A run that changes the stack goes through the gate when approvals hold it or the stack has checks.
    if (job.plan.records && (job.run.approval || gate.checks.length > 0)) return this.#gated(job, gate);
    switch (job.plan.engine) {
      case 'generate':
        return this.generate(job);
      case 'preview':
        return this.preview(job);
      case 'install':
      case 'delete':
        return this.operate(job, job.plan.engine);
      case 'rollback':
        return this.rollback(job);
      case 'drift':
        return this.drift(job);
    }
  }

  /**
   * A run through the gate. First claim: the preview it would apply (an apply's, a destroy's rows to delete, a
   * rollback's), then the `after_preview` checks; with approvals to wait for, it waits (`needs-approval`) holding that
   * preview. Once approved (its second claim), or without approvals to wait for: the `before_apply` checks, then it
   * applies exactly that preview — computed again, any difference in its basis ends the run `stale`, nothing applied.
   * A failed mandatory check ends it `failed` with the check's name and message.
   */
  async #gated(job: EngineJob, gate: StackGate): Promise<ExecutedRun> {
    const { run, io } = job;
    try {
      let document: PreviewDocument;
      if (isApproved(run)) {
        const stored = await this.#context.store.getPreview(run.id);
        if (!stored) throw new StalePreviewError(`run ${run.id} holds no preview`);
        document = JSON.parse(stored.body) as PreviewDocument;
        const by = approvalsOf(run.approval!).map((d) => d.by);
        io.message(`Approved by ${by.join(', ')}: applying the preview it waited with.`);
      } else {
        document = await this.#gatePreview(job);
        this.#sayPreview(run, io, document);
        const failed = await this.#checks(job, gate, 'after_preview', document);
        if (failed) return failed;
        if (run.approval?.breakGlass) {
          const bg = run.approval.breakGlass;
          io.message(`Approvals skipped by break glass: ${bg.by} (${bg.role}).`);
        } else if (run.approval) {
          const since = new Date();
          const seconds = gate.approvals?.expireAfterSeconds ?? DEFAULT_APPROVAL_EXPIRY_SECONDS;
          io.message(
            `Waiting for ${run.approval.required} approval(s) from ${run.approval.fromRoles.join(', ')} (kapps runs approve ${run.id}).`,
          );
          return {
            status: 'needs-approval',
            waiting: {
              preview: { contentType: 'application/json', body: `${JSON.stringify(document, null, 2)}\n` },
              basedOnRevision: document.basedOnRevision,
              waitingSince: since.toISOString(),
              expiresAt: new Date(since.getTime() + seconds * 1000).toISOString(),
            },
          };
        }
      }
      const failed = await this.#checks(job, gate, 'before_apply', document);
      if (failed) return failed;
      return await this.#applyPreview(job, document);
    } catch (error) {
      if (!(error instanceof StalePreviewError)) throw error;
      io.message(`kapps: ${error.message}; nothing was applied.`);
      return { status: 'stale', error: error.message };
    }
  }

  /** The preview a gated run binds to: an apply's (of the preview it names, while it holds), a destroy's, a rollback's. */
  async #gatePreview(job: EngineJob): Promise<PreviewDocument> {
    const { run, io, options, plan, at, ctx } = job;
    if (plan.engine === 'rollback') {
      const { previewRollback } = await this.#engine;
      const { document } = await previewRollback(this.#rollbackParams(run, options, at), ctx, io.signal);
      if (plan.approvedBy !== undefined) {
        const approved = await this.#context.store.get(plan.approvedBy);
        const then = approved ? await this.#context.store.getResult(approved.id) : undefined;
        if (!approved || !then) throw new StalePreviewError(`preview run ${plan.approvedBy} is gone`);
        this.#stillHolds(approved, JSON.parse(then.body) as PreviewDocument, document);
      }
      return document;
    }
    if (plan.engine === 'delete') return (await this.#deletePreview(job)).document;
    const applied = plan.approvedBy === undefined ? options : await this.#approvedOptions(job, plan.approvedBy);
    return (await this.#previewNow(run, applied, io, at)).document;
  }

  /** The preview of a destroy: the selected installed kapps, each `Delete`, against the latest release. */
  async #deletePreview({ run, io, options, at }: EngineJob) {
    const { previewDeleteStack } = await this.#engine;
    return previewDeleteStack(
      { ...this.#stackParams(run, options, at), ...this.#target(at) },
      this.#engineContext(run, io, at),
      io.signal,
    );
  }

  #sayPreview(run: StoredRun, io: RunIO, document: PreviewDocument): void {
    const changed = document.kapps.filter((k) => k.action !== 'UnChanged').length;
    const against = document.basedOnRevision === null ? 'no previous release' : `release ${document.basedOnRevision}`;
    io.message(
      `Preview of ${run.project}/${run.stack} against ${against}: ${document.hasChanges ? `${changed} kapp(s) would change` : 'no changes'}.`,
    );
  }

  /** The checks of `stage` on `document`, recorded in the run; the ending of the run when a mandatory one failed. */
  async #checks(
    job: EngineJob,
    gate: StackGate,
    stage: CheckStage,
    document: PreviewDocument,
  ): Promise<ExecutedRun | undefined> {
    const { run, io, at } = job;
    if (!gate.checks.some((c) => c.stage === stage)) return undefined;
    const results = await runChecks(gate.checks, stage, `${JSON.stringify(document, null, 2)}\n`, {
      run: { id: run.id, project: run.project, stack: run.stack, type: run.type },
      cwd: dirname(at.stackFile),
      env: definedOnly(this.#engineContext(run, io, at).runEnv ?? {}),
      serverEnv: process.env,
      signal: io.signal,
      message: (text) => io.message(text),
    });
    if (results.length > 0) await io.addChecks(results);
    // Cancelled while a check ran: the check was stopped, which is no verdict on the preview.
    if (io.signal.aborted) return { status: 'cancelled', error: 'cancelled while its checks ran; nothing was applied' };
    const failed = blockingFailure(results);
    if (!failed) return undefined;
    // The check's whole message (a command's exit code and last lines), on one line: what the run failed on.
    const error = `check ${failed.name} failed: ${failed.message.trim().replace(/\s*\n\s*/g, ' | ')}`;
    io.message(`kapps: ${error}; nothing was applied.`);
    return { status: 'failed', error };
  }

  /** Apply exactly `document`: the same preview computed again must have the same basis (else stale). */
  async #applyPreview(job: EngineJob, document: PreviewDocument): Promise<ExecutedRun> {
    const { run, plan } = job;
    const holds = (now: PreviewDocument) => {
      if (now.basedOnRevision !== document.basedOnRevision)
        throw new StalePreviewError(
          `the last release of ${run.project}/${run.stack} changed since its preview (revision ${document.basedOnRevision ?? 'none'} then, ${now.basedOnRevision ?? 'none'} now)`,
        );
      if (previewBasis(now) !== previewBasis(document))
        throw new StalePreviewError(`the spec of ${run.project}/${run.stack} changed since its preview`);
    };
    if (plan.engine === 'rollback') return this.rollback(job, holds);
    const now =
      plan.engine === 'delete'
        ? (await this.#deletePreview(job)).document
        : (await this.#previewNow(run, job.options, job.io, job.at)).document;
    holds(now);
    return this.operate(
      { ...job, plan: { ...plan, approvedBy: undefined } },
      plan.engine === 'delete' ? 'delete' : 'install',
    );
  }

  /**
   * A rollback to the revision `toRevision` names (resolved when it was submitted), recorded as a new revision with
   * `rollbackOf`; a rollback of a preview run only while the preview still holds.
   */
  async rollback(job: EngineJob, holds?: (now: PreviewDocument) => void): Promise<ExecutedRun> {
    const { run, io, plan, ctx } = job;
    const approved =
      plan.approvedBy === undefined || holds ? undefined : await this.#context.store.get(plan.approvedBy);
    // Through the gate (`holds`) the preview it named was checked at its first claim; its stored preview counts now.
    if (plan.approvedBy !== undefined && !holds && !approved)
      throw new StalePreviewError(`preview run ${plan.approvedBy} is gone`);
    const options = approved ? { ...job.options, ...previewSelection(checkedOptions(approved)) } : job.options;
    const then = approved ? await this.#context.store.getResult(approved.id) : undefined;
    if (approved && !then) throw new StalePreviewError(`preview run ${approved.id} has no result`);
    const { createRunLog, rollbackStack } = await this.#engine;
    // One log per operation: the install, then the delete of `prune`.
    let log: ReturnType<typeof createRunLog> | undefined;
    let operations = 0;
    let revision: number | null = null;
    const outcome = await rollbackStack(
      { ...this.#rollbackParams(run, options, job.at), keepGoing: options.keepGoing ?? false },
      {
        ctx,
        signal: io.signal,
        begin: () => {
          const command = operations++ === 0 ? 'install' : 'delete';
          const opened = createRunLog((line) => io.log(line), {
            command,
            maxLineLength: this.#context.limits.maxLineLength,
          });
          log = opened;
          return (event) => {
            io.emit(event);
            opened.onEvent(event);
          };
        },
        onRecorder: (_recorder, rev) => {
          if (revision !== rev) io.onRelease(rev);
          revision = rev;
        },
        afterRun: async () => {
          await log?.close();
          log = undefined;
        },
        ...(holds ? { check: (preview) => holds(preview.document) } : {}),
        ...(approved && then
          ? {
              check: (preview) =>
                this.#stillHolds(approved, JSON.parse(then.body) as PreviewDocument, preview.document),
            }
          : {}),
      },
    );
    return operationOutcome(run, plan, outcome.summary, outcome.revision ?? revision);
  }

  /** Whether the preview of a rollback, computed again now, is what preview run `preview` showed; throws if not. */
  #stillHolds(preview: StoredRun, then: PreviewDocument, now: PreviewDocument): void {
    if (now.basedOnRevision !== then.basedOnRevision)
      throw new StalePreviewError(
        `the last release of ${preview.project}/${preview.stack} changed since preview run ${preview.id} (revision ${then.basedOnRevision ?? 'none'} then, ${now.basedOnRevision ?? 'none'} now)`,
      );
    if (previewBasis(now) !== previewBasis(then))
      throw new StalePreviewError(
        `the spec of ${preview.project}/${preview.stack} changed since preview run ${preview.id}`,
      );
  }

  /** The parameters of a rollback (or of its preview): the whole stack, at the run's commit for a project from git. */
  #rollbackParams(run: StoredRun, options: RunRequestOptions, at: Located): RollbackParams {
    if (options.toRevision === undefined) throw new RunRefused(`run ${run.id} names no revision to roll back to`);
    const params = this.#runParams(run, { ...options, changedOnly: false, refresh: false }, at);
    return {
      ...params,
      toRevision: options.toRevision,
      ...(options.prune ? { prune: true } : {}),
      ...(options.force ? { force: true } : {}),
      // The working tree of a project from git is at the commit the target recorded already.
      ...(at.source ? { checkedOut: at.source } : {}),
    };
  }

  /**
   * A drift check (`kapps drift`): the live outputs of the installed kapps read and compared with the last release,
   * with the project's ignore rules, the stack's noisy marks and what its previous check read; writes no release.
   * The outputs this check finds noisy are marked; the marks of a kapp whose entry a release changed are dropped.
   * The result is the drift report (the server records the check when the run finishes).
   */
  async drift({ at, run, io, options, plan, ctx }: EngineJob): Promise<ExecutedRun> {
    const { checkDrift } = await this.#engine;
    const store = this.#context.drift;
    const record = store ? await store.get(run.project, run.stack) : undefined;
    const latest = await this.#context.releases.latest(at.releaseProject, run.stack);
    const entries = new Map(Object.entries(latest?.state ?? {}).map(([id, entry]) => [id, entryDigest(entry)]));
    const kept = (record?.noisy ?? []).filter((m) => entries.get(m.kapp) === m.entry);
    const { report, newlyNoisy } = await checkDrift(
      { ...this.#stackParams(run, options, at), ...this.#target(at) },
      ctx,
      io.signal,
      {
        ignore: this.#project(run).drift?.ignore ?? [],
        noisy: kept.map((m) => ({ kapp: m.kapp, path: m.path })),
        ...(record?.previous ? { previous: record.previous } : {}),
        ...(options.workers !== undefined ? { workers: options.workers } : {}),
      },
    );
    // Marks are taken against the release the check compared with (a release in between: none are taken).
    const fresh = report.basedOnRevision === (latest?.revision ?? null) ? newlyNoisy : [];
    if (store && (fresh.length > 0 || kept.length !== record?.noisy.length)) {
      const marks: NoisyMark[] = [
        ...kept,
        ...fresh.map((n) => ({
          kapp: n.kapp,
          path: [...n.path],
          since: report.checkedAt,
          entry: entries.get(n.kapp) ?? '',
        })),
      ];
      await store.setNoisy(run.project, run.stack, marks);
    }
    const drifted = report.kapps.filter((k) => k.state === 'drifted').map((k) => k.id);
    io.message(
      `Drift check of ${run.project}/${run.stack}: ${report.state === 'drifted' ? `drifted (${drifted.join(', ')})` : report.state === 'inSync' ? 'in sync' : `unknown: ${report.reason ?? ''}`}.`,
    );
    const shown: DriftReport = { ...report, project: run.project };
    return {
      status: 'succeeded',
      result: { contentType: plan.resultType, body: `${JSON.stringify(shown, null, 2)}\n` },
    };
  }

  /** The `kapps generate` document of the stack. */
  async generate({ at, run, io, options, plan, ctx }: EngineJob): Promise<ExecutedRun> {
    const { generateDocument } = await this.#engine;
    const body = await generateDocument(this.#stackParams(run, options, at), ctx, {
      format: 'yaml',
      signal: io.signal,
    });
    io.message(`Generated the spec of ${run.project}/${run.stack}.`);
    return { status: 'succeeded', result: { contentType: plan.resultType, body } };
  }

  /** The `kapps preview -o json` document of the stack (of a rollback: against the latest release). */
  async preview(job: EngineJob): Promise<ExecutedRun> {
    const { at, run, io, options, plan, ctx } = job;
    const { document } =
      options.toRevision !== undefined
        ? await (await this.#engine).previewRollback(this.#rollbackParams(run, options, at), ctx, io.signal)
        : await this.#previewNow(run, options, io, at);
    const changed = document.kapps.filter((k) => k.action !== 'UnChanged').length;
    const against = document.basedOnRevision === null ? 'no previous release' : `release ${document.basedOnRevision}`;
    io.message(
      `Preview of ${run.project}/${run.stack} against ${against}: ${document.hasChanges ? `${changed} kapp(s) would change` : 'no changes'}.`,
    );
    // The stack's `after_preview` checks judge every preview: a failed mandatory one fails the preview run.
    const failed = await this.#checks(job, gateOf(this.#project(run), run.stack), 'after_preview', document);
    const result = { contentType: plan.resultType, body: `${JSON.stringify(document, null, 2)}\n` };
    if (failed) return { ...failed, result };
    return { status: 'succeeded', result };
  }

  /** `install -y` or `delete -y` of the stack, recorded as a release; an approved apply only while its preview holds. */
  async operate(job: EngineJob, command: 'install' | 'delete'): Promise<ExecutedRun> {
    const { at, run, io, plan, ctx } = job;
    const options = plan.approvedBy === undefined ? job.options : await this.#approvedOptions(job, plan.approvedBy);
    const { createRunLog, runOperation } = await this.#engine;
    const log = createRunLog((line) => io.log(line), {
      command,
      maxLineLength: this.#context.limits.maxLineLength,
    });
    let revision: number | null = null;
    const outcome = await runOperation(command, this.#runParams(run, options, at), {
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
    return operationOutcome(run, plan, outcome.summary, outcome.revision ?? revision);
  }

  /**
   * The options an apply of preview run `previewId` runs with — exactly what the preview showed: its selection and
   * overrides — once the preview is found to still hold; `StalePreviewError` when it does not.
   */
  async #approvedOptions(job: EngineJob, previewId: string): Promise<RunRequestOptions> {
    const preview = await this.#context.store.get(previewId);
    if (!preview) throw new StalePreviewError(`preview run ${previewId} is gone`);
    const stale = await this.#stalePreview(preview, job.io, job.at);
    if (stale) throw new StalePreviewError(stale);
    return { ...job.options, ...previewSelection(checkedOptions(preview)) };
  }

  /** Whether the preview run `preview` still holds (at the apply's commit, which is the preview's); a reason if not. */
  async #stalePreview(preview: StoredRun, io: RunIO, at: Located): Promise<string | undefined> {
    const result = await this.#context.store.getResult(preview.id);
    if (!result) return `preview run ${preview.id} has no result`;
    const then = JSON.parse(result.body) as PreviewDocument;
    const now = await this.#previewNow(preview, { ...checkedOptions(preview), refresh: false }, io, at);
    if (now.document.basedOnRevision !== then.basedOnRevision) {
      return `the last release of ${preview.project}/${preview.stack} changed since preview run ${preview.id} (revision ${then.basedOnRevision ?? 'none'} then, ${now.document.basedOnRevision ?? 'none'} now)`;
    }
    if (previewBasis(now.document) !== previewBasis(then)) {
      return `the spec of ${preview.project}/${preview.stack} changed since preview run ${preview.id}`;
    }
    return undefined;
  }

  /** The preview of the stack now, with the options of `run`. */
  async #previewNow(run: StoredRun, options: RunRequestOptions, io: RunIO, at: Located) {
    const { previewStack } = await this.#engine;
    return previewStack(
      {
        ...this.#stackParams(run, options, at),
        ...this.#target(at),
        ...(options.refresh ? { refresh: true } : {}),
        ...(options.workers !== undefined ? { workers: options.workers } : {}),
      },
      this.#engineContext(run, io, at),
      io.signal,
    );
  }

  #runParams(run: StoredRun, options: RunRequestOptions, at: Located): RunParams {
    return {
      ...this.#stackParams(run, options, at),
      ...this.#target(at),
      dryRun: false,
      keepGoing: options.keepGoing ?? false,
      ...(options.workers !== undefined ? { workers: options.workers } : {}),
      verbose: false,
      validate: true,
      killGraceMs: KILL_GRACE_MS,
      yes: true,
      ...(options.changedOnly ? { changedOnly: true } : {}),
      ...(options.refresh ? { refresh: true } : {}),
      allOutput: true,
      ...(at.source ? { source: at.source } : {}),
      // A run of a stack requiring approvals: its release records them (or the break glass that skipped them).
      ...releaseApprovals(run),
    };
  }

  #project(run: Pick<StoredRun, 'project'>) {
    const project = this.#context.projects.get(run.project);
    if (!project) throw new RunRefused(`project ${run.project} is no longer registered`);
    return project;
  }

  #stackParams(run: Pick<StoredRun, 'project' | 'stack'>, options: RunRequestOptions, at: Located): StackParams {
    return {
      stackFile: at.stackFile,
      stackName: run.stack,
      workspaceDir: this.#context.workspaceOf(run.project, run.stack),
      include: [...(options.include ?? [])],
      exclude: [...(options.exclude ?? [])],
      parents: options.parents ?? false,
      ...options.overrides,
      strictVars: false,
    };
  }

  #engineContext(run: StoredRun, io: Pick<RunIO, 'message'>, at: Located): EngineContext {
    const project = this.#project(run);
    const dir = dirname(at.stackFile);
    return {
      cwd: dir,
      env: { ...process.env, KAPPS_BACKEND: this.#backend },
      // A run sees what its project is given, and reads files only in the project and its workspace; never a
      // credential the server holds for its projects (a repository's token, a webhook's or notification's secret).
      runEnv: withoutCredentials(projectRunEnv(project, process.env), this.#context.projects.list()),
      readRoots: [realOrNearest(at.root), realOrNearest(this.#context.workspaceOf(run.project, run.stack))],
      argv: ['kapps', 'serve', `--run=${run.id}`, run.type, run.project, run.stack],
      runBy: run.createdBy,
      message: (text) => io.message(text),
      // The release a run recorded is in its record and its result, not in its log.
      result: () => undefined,
      logLimits: { maxBytes: this.#context.limits.maxLogBytes, maxLineLength: this.#context.limits.maxLineLength },
      releaseStore: (spec) => this.#releaseStoreFor(spec),
    };
  }

  /** The server's own release store for a run whose backend is the server's PostgreSQL database. */
  #releaseStoreFor(spec: BackendSpec): ReleaseStore | undefined {
    const own = this.#context.backend;
    return spec.kind === 'postgres' && own.kind === 'postgres' && spec.url === own.url
      ? this.#sharedReleases
      : undefined;
  }

  #target(at: Located) {
    return { project: at.releaseProject, backend: this.#backend };
  }
}

/** How an apply or destroy ended: its status, the kapps per outcome, the release, and the first failure. */
export function operationOutcome(
  run: StoredRun,
  plan: RunPlan,
  summary: OperationSummary,
  releaseRevision: number | null,
): ExecutedRun {
  const counts = { succeeded: 0, failed: 0, skipped: 0, cancelled: 0 };
  let firstFailure: string | undefined;
  for (const r of summary.results.values()) {
    if (r.role !== 'selected') continue;
    counts[r.status]++;
    if (r.status === 'failed') firstFailure ??= `${r.id}: ${(r.reason ?? 'failed').split('\n')[0]}`;
  }
  const status = summary.status;
  const message =
    `${plan.label} of ${run.project}/${run.stack} ${status}: ` +
    `${counts.succeeded} succeeded, ${counts.failed} failed, ${counts.skipped} skipped, ${counts.cancelled} cancelled` +
    (releaseRevision !== null ? `; release ${releaseRevision}` : '');
  const result: ApplyResult = { message, releaseRevision, kapps: counts };
  // A run whose release could not be recorded says so with the cause, whether or not a kapp failed too.
  const failure = [
    ...(counts.failed > 0 || summary.recordError === undefined
      ? [`${counts.failed} kapp(s) failed${firstFailure ? `; ${firstFailure}` : ''}`]
      : []),
    ...(summary.recordError !== undefined ? [`its release could not be recorded: ${summary.recordError}`] : []),
  ].join('; ');
  const error = status === 'failed' ? failure : status === 'cancelled' ? 'cancelled' : null;
  return { status, error, releaseRevision, result: { contentType: plan.resultType, body: JSON.stringify(result) } };
}

/**
 * The outcome of a run stopped by `error`: cancelled; failed as a stale preview (nothing applied); failed on a
 * mistake a user can act on, its diagnostics in the log and their first line in `error`. A bug is thrown on.
 */
function outcomeOfError(error: unknown, io: RunIO): ExecutedRun {
  if (error instanceof StalePreviewError) {
    io.message(`kapps: ${error.message}; nothing was applied.`);
    return { status: 'failed', error: error.message };
  }
  if (error instanceof CancelledError || (io.signal.aborted && error instanceof KappsError))
    return { status: 'cancelled', error: 'cancelled before the kapps ran' };
  const text = userMessage(error);
  if (text === undefined) throw error;
  io.message(`kapps: ${text}`);
  const first = (text.split('\n').find((l) => l.trim() !== '') ?? text).replace(/^error: /, '');
  return { status: 'failed', error: first };
}

/** The message of an error a user can act on (diagnostics as the CLI prints them), or undefined for a bug. */
function userMessage(error: unknown): string | undefined {
  if (error instanceof ConfigError) return redactCredentials(formatDiagnostics(error.diagnostics));
  if (error instanceof KappsError) return redactCredentials(error.message);
  return undefined;
}

/** `env` less the variables the configuration names as credentials of any project (`token_env`, `secret_env`). */
function withoutCredentials(env: Record<string, string>, projects: readonly ProjectEntry[]): Record<string, string> {
  const out = { ...env };
  for (const project of projects) {
    for (const name of [
      project.repo?.tokenEnv,
      project.webhook?.secretEnv,
      ...project.notify.map((n) => n.secretEnv),
      ...gateSecretEnvs(project.gate),
    ]) {
      if (name !== undefined) delete out[name];
    }
  }
  return out;
}

/** `store` for a run: the same store, whose `close` leaves it open (the server closes it when it stops). */
function keptOpen(store: ReleaseStore): ReleaseStore {
  return new Proxy(store, {
    get(target, name) {
      if (name === 'close') return () => Promise.resolve();
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `env` without its unset variables. */
function definedOnly(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  return out;
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
  throw new RunRefused(
    `run ${run.id} has options no request may send (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}); nothing was run`,
  );
}
