/**
 * One visit of one kapp during a run: render its templates, run the steps of the phases the command asks for (each
 * step's conditions evaluated when it is reached, outputs loaded after `load_outputs` steps and the remaining steps
 * re-planned with them), then load its outputs when the command needs them. Emits the kapp's events.
 */
import { mkdir } from 'node:fs/promises';
import { ConfigError, KappsError } from '../diagnostics/errors.js';
import { cannotMakeDir } from '../process/spawn.js';
import { evaluateConditions } from '../plan/go-bool.js';
import type { PlannedStep } from '../plan/steps.js';
import { formatDiagnostics } from '../report/diagnostic-printer.js';
import type { KappRole, KappStatus, Phase, StepStatus } from '../vocabulary.js';
import type { KappModel } from '../stack/kapp-model.js';
import type { KappRuntime, Stack } from '../stack/stack.js';
import { newGoMap, type GoMap } from '../go-value/value.js';
import { outputsView, withPlaceholders } from '../vars/outputs.js';
import { loadOutputs, removeSensitiveOutputFiles } from './outputs.js';
import type { Redactor } from './redact.js';
import { StepQueue } from './step-queue.js';
import { runStep } from './step-runner.js';
import { removeSensitiveTemplates, renderKappTemplates } from './templates.js';
import type { EmitEvent, KappResult, RunOptions } from './types.js';
import type { StepRecord } from '../release/types.js';
import type { RunEvent } from '../report/events.js';

/**
 * The most step output held back at once for a kapp with sensitive outputs (characters); lines beyond it are
 * dropped, and the count said, rather than shown before the secrets they may hold are known.
 */
const HOLD_LIMIT = 8 * 1024 * 1024;

/** Whether a kapp declares an output that is (or may render as) sensitive. */
function declaresSensitiveOutputs(kapp: KappModel): boolean {
  return (kapp.descriptor.outputs ?? []).some((o) => o.sensitive !== undefined && o.sensitive !== false);
}

/** How a visit loads the kapp's outputs after its phases (only kapps that declare outputs load any). */
export interface OutputLoading {
  /** A declared output whose file is missing or empty: passed over (plan mode, ancestors), or an error. */
  readonly missing: 'tolerate' | 'error';
  /** A failing step of the output phase: reported and passed over (plan mode), or it fails the kapp. */
  readonly stepErrors: 'ignore' | 'fail';
}

/** What a visit does, decided by the command. */
export interface VisitPlan {
  readonly role: KappRole;
  /** Render templates before (and after loading outputs). */
  readonly templates: boolean;
  /** Phases to run in order. */
  readonly phases: readonly Phase[];
  /** Afterwards: run the output phase and load outputs (if the kapp declares any). */
  readonly loadOutputs: OutputLoading | 'no';
  /** Failing steps of the phases are reported and passed over (`delete --ignore-errors`). */
  readonly ignoreErrors: boolean;
  /**
   * Which of kapp-started/kapp-finished this visit emits: both, or only the start (delete's output-loading pass
   * of a kapp it deletes later) or only the finish (that kapp's deletion), so each kapp has one pair.
   */
  readonly kappEvents: 'both' | 'start' | 'finish';
}

/** Shared state of a run's visits. */
export interface VisitContext {
  readonly stack: Stack;
  readonly options: RunOptions;
  readonly emit: EmitEvent;
  readonly redactor: Redactor;
  /** Each kapp's own loaded outputs (registry keys), kept across walks. */
  readonly ownOutputs: Map<string, GoMap>;
  /** Each visited kapp's `.outputs` view, for its children. */
  readonly views: Map<string, GoMap>;
  /** When each kapp's kapp-started was emitted (ms since the epoch), for the duration in its kapp-finished. */
  readonly startedAt: Map<string, number>;
}

const now = (): string => new Date().toISOString();

/** Why a visit stopped before its end: the kapp's own failure, as a value. */
interface VisitFailure {
  readonly status: 'failed' | 'cancelled';
  /** One line, for kapp-finished and the release. */
  readonly reason: string;
  /** The located diagnostics of a configuration error, printed (as an error log) before the kapp finishes. */
  readonly detail?: string;
}

/** A step result or why the visit stops there. */
type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: VisitFailure };

const CANCELLED: VisitFailure = { status: 'cancelled', reason: 'cancelled' };

/** How a reached step ended: what its step-finished event and its record say. */
interface StepEnd {
  readonly status: StepStatus;
  readonly exitCode: number | null;
  readonly signal?: string;
  readonly durationMs: number;
  readonly timedOut: boolean;
  readonly timeoutMs?: number;
  readonly reason?: string;
  readonly outputTail?: readonly string[];
}

/** The `.outputs` view of a kapp from its parents' views and its own outputs (placeholders for missing ones). */
export function viewFor(ctx: VisitContext, kapp: KappModel): GoMap {
  const node = ctx.stack.planNode(kapp.id);
  const parents = (node?.dependsOn ?? [])
    .map((p) => ({ manifestId: ctx.stack.kapp(p).manifestId, view: ctx.views.get(p) }))
    .filter((p): p is { manifestId: string; view: GoMap } => p.view !== undefined);
  const own = withPlaceholders(ctx.ownOutputs.get(kapp.id) ?? newGoMap(), kapp.outputIds);
  return outputsView({ manifestId: kapp.manifestId, kappId: kapp.kappId, values: own }, parents);
}

/** The failure an error thrown while visiting a kapp (rendering, loading outputs, writing a file) stands for. */
function failureOf(e: unknown): VisitFailure {
  if (e instanceof ConfigError) {
    return {
      status: 'failed',
      reason: e.diagnostics[0]?.message ?? e.message,
      detail: formatDiagnostics(e.diagnostics),
    };
  }
  // Anything else (a file that cannot be written, a bug) still ends the kapp as failed, with the message.
  return { status: 'failed', reason: e instanceof Error ? e.message : String(e) };
}

/**
 * One visit: `run` is its course; one method per concern below it. Errors thrown by the layers it calls
 * (rendering, loading outputs) are turned into a `VisitFailure` where `run` (or a lenient output load) catches them;
 * everything else returns failures as values.
 */
class KappVisit {
  readonly #ctx: VisitContext;
  readonly #kapp: KappModel;
  readonly #plan: VisitPlan;
  readonly #signal: AbortSignal;
  readonly #dryRun: boolean;
  /** Each step reached, as the release records it. */
  readonly #steps: StepRecord[] = [];
  /** The outputs loaded that may be recorded (sensitive ones are not). */
  #recordable: GoMap | undefined;
  /** The kapp's directory was made (by the visit, or by a step's spawn). */
  #kappDirMade = false;
  /** Sensitive outputs loaded by a step: their files are gone, their values kept; not read again. */
  readonly #sensitiveLoaded = new Set<string>();
  /** Rendered templates marked sensitive: removed when the visit ends. */
  readonly #sensitiveFiles = new Set<string>();
  #renderedTemplates: ReadonlyMap<string, string> | undefined;
  /** Dry run: the template files already said to be written. */
  readonly #announced = new Set<string>();
  /**
   * The step events of a kapp with sensitive outputs, held back until its outputs are read: a step may print a
   * secret it writes to an output file before kapps knows it is one. Undefined: events go out as they come.
   */
  readonly #held: RunEvent[] | undefined;
  #heldChars = 0;
  #dropped = 0;

  constructor(ctx: VisitContext, kapp: KappModel, plan: VisitPlan, signal: AbortSignal) {
    this.#ctx = ctx;
    this.#kapp = kapp;
    this.#plan = plan;
    this.#signal = signal;
    this.#dryRun = ctx.options.dryRun;
    this.#held = !this.#dryRun && declaresSensitiveOutputs(kapp) ? [] : undefined;
  }

  /** Run `work`, adding its time to the visit's `part` when the run is timed (`KAPPS_TIMINGS`). */
  #timed<T>(part: string, work: () => T): T {
    const t = this.#ctx.options.timings;
    if (!t) return work();
    const t0 = t.now();
    try {
      return work();
    } finally {
      t.add(this.#kapp.id, part, t.now() - t0);
    }
  }

  async #timedAsync<T>(part: string, work: () => Promise<T>): Promise<T> {
    const t = this.#ctx.options.timings;
    if (!t) return work();
    const t0 = t.now();
    try {
      return await work();
    } finally {
      t.add(this.#kapp.id, part, t.now() - t0);
    }
  }

  /** Emit a step event, or hold it back while the kapp's sensitive outputs are not read yet. */
  #emitStep(event: RunEvent): void {
    const held = this.#held;
    if (held === undefined) {
      this.#ctx.emit(event);
      return;
    }
    if (event.type === 'step-output') {
      if (this.#heldChars + event.text.length > HOLD_LIMIT) {
        this.#dropped++;
        return;
      }
      this.#heldChars += event.text.length;
    }
    held.push(event);
  }

  /** Let the held events go, redacted with what the run knows now (the outputs just read included). */
  #release(): void {
    const held = this.#held;
    if (held === undefined) return;
    for (const event of held.splice(0)) this.#ctx.emit(event);
    this.#heldChars = 0;
    if (this.#dropped > 0) {
      this.#log(
        'warn',
        `${this.#dropped} line(s) of step output were dropped: more than ${HOLD_LIMIT} characters were printed before the kapp's sensitive outputs were read`,
      );
      this.#dropped = 0;
    }
  }

  /**
   * At the end of a visit, learn the secrets of sensitive output files still on disk (a step wrote them, a later
   * one failed) before the held events go; their files are deleted as when they are read.
   */
  async #learnLeftSecrets(): Promise<void> {
    if (this.#held === undefined || this.#held.length === 0) return;
    const { stack, redactor } = this.#ctx;
    try {
      await loadOutputs(stack, this.#kapp, stack.variables(this.#kapp, this.#runtime()), {
        mustExist: false,
        dryRun: false,
        redactor,
      });
    } catch {
      // Outputs that cannot be read teach nothing; the held lines go out redacted with what is known.
    }
  }

  /** Start the kapp, visit it, clean up and finish it. Never throws for the kapp's own failure. */
  async run(): Promise<KappResult> {
    const ctx = this.#ctx;
    const kapp = this.#kapp;
    const timings = ctx.options.timings;
    const visitStart = timings?.now();
    if (this.#plan.kappEvents !== 'finish') ctx.startedAt.set(kapp.id, Date.now());
    const started = ctx.startedAt.get(kapp.id) ?? Date.now();
    if (this.#plan.kappEvents !== 'finish') {
      ctx.emit({ type: 'kapp-started', time: now(), kapp: kapp.id, role: this.#plan.role });
    }
    let failure: VisitFailure | undefined;
    try {
      failure = await this.#visit();
    } catch (e) {
      failure = failureOf(e);
    }
    await this.#learnLeftSecrets();
    this.#release();
    if (failure?.detail) this.#log('error', failure.detail);
    await this.#removeSensitiveFiles();
    const result = this.#finish(failure, started);
    if (timings && visitStart !== undefined)
      timings.span('visit', visitStart, { kapp: kapp.id, status: result.status });
    return result;
  }

  /** The course of the visit: templates, the command's phases, then the outputs. */
  async #visit(): Promise<VisitFailure | undefined> {
    // Templates are written into the kapp's directory before any step; otherwise its first step makes it, where it
    // is spawned (`makeKappDir`), and a kapp that spawned none gets it once its phases are done.
    if (this.#plan.templates) {
      if (this.#kapp.descriptor.templates?.length) await this.#makeKappDir();
      await this.#timedAsync('render', () => this.#renderTemplates());
    }
    let failure: VisitFailure | undefined;
    for (const phase of this.#plan.phases) {
      failure = await this.#runPhase(phase, this.#plan.ignoreErrors);
      if (failure) break;
    }
    await this.#makeKappDir();
    return failure ?? this.#provideOutputs();
  }

  /** The kapp's directory, made if missing (once a visit; a dry run makes none). */
  async #makeKappDir(): Promise<void> {
    if (this.#dryRun || this.#kappDirMade) return;
    const dir = this.#kapp.cacheRoot;
    await this.#timedAsync('workspace', async () => {
      try {
        await mkdir(dir, { recursive: true });
      } catch (error) {
        throw new KappsError(cannotMakeDir(dir, error));
      }
    });
    this.#kappDirMade = true;
  }

  /** The kapp's `.outputs` view and rendered templates, as its variables see them now. */
  #runtime(): KappRuntime {
    return {
      outputs: viewFor(this.#ctx, this.#kapp),
      ...(this.#renderedTemplates ? { renderedTemplates: this.#renderedTemplates } : {}),
    };
  }

  #log(level: 'info' | 'warn' | 'error', message: string, shown = false): void {
    this.#ctx.emit({
      type: 'log',
      time: now(),
      level,
      ...(shown ? { shown: true } : {}),
      message,
      kapp: this.#kapp.id,
    });
  }

  /** Render the kapp's templates (a dry run says once where each would be written). */
  async #renderTemplates(): Promise<void> {
    // A kapp without templates renders none: it does not need its variables (and, as generate and preview, does not
    // fail on a variable nothing reads that cannot be rendered).
    if (!this.#kapp.descriptor.templates?.length) {
      this.#renderedTemplates = new Map();
      return;
    }
    const { stack } = this.#ctx;
    const rendered = await renderKappTemplates(stack, this.#kapp, stack.variables(this.#kapp, this.#runtime()), {
      dryRun: this.#dryRun,
    });
    this.#renderedTemplates = rendered.paths;
    if (this.#dryRun) {
      for (const [id, dest] of rendered.paths) {
        if (this.#announced.has(dest)) continue;
        this.#announced.add(dest);
        this.#log('info', `template '${id}' would be written to ${dest}`, true);
      }
    }
    for (const file of rendered.sensitive) this.#sensitiveFiles.add(file);
  }

  /** Load the kapp's declared outputs (none in a dry run) into its own outputs and the recordable ones. */
  async #loadOutputs(mustExist: boolean): Promise<void> {
    if (this.#kapp.outputIds.length === 0 || this.#dryRun) return;
    const { stack, redactor, ownOutputs } = this.#ctx;
    const vars = stack.variables(this.#kapp, this.#runtime());
    const loaded = await this.#timedAsync('outputs', () =>
      loadOutputs(stack, this.#kapp, vars, {
        mustExist,
        dryRun: this.#dryRun,
        redactor,
        loaded: this.#sensitiveLoaded,
      }),
    );
    for (const id of loaded.sensitive) this.#sensitiveLoaded.add(id);
    ownOutputs.set(this.#kapp.id, { ...ownOutputs.get(this.#kapp.id), ...loaded.values });
    this.#recordable = { ...this.#recordable, ...loaded.recordable };
  }

  #planPhase(phase: Phase): PlannedStep[] {
    return this.#timed('plan', () => this.#ctx.stack.planPhase(this.#kapp, phase, this.#runtime(), this.#dryRun));
  }

  /**
   * The phase as planned before its first step. A step may read an output that a `load_outputs` step before it
   * loads (`{{ len .outputs.this.out.token }}`): when planning fails, the phase is planned as a plan is, such a
   * field rendering `<no value>`, and each step is planned again when its turn comes, after the loads before it.
   */
  #firstPlan(phase: Phase): PlannedStep[] {
    try {
      return this.#planPhase(phase);
    } catch (e) {
      if (!(e instanceof ConfigError) || this.#kapp.outputIds.length === 0 || this.#dryRun) throw e;
      let lenient: PlannedStep[];
      try {
        lenient = this.#ctx.stack.planPhase(this.#kapp, phase, { ...this.#runtime(), planOnly: true }, false, false);
      } catch {
        throw e;
      }
      if (!lenient.some((s) => s.loadOutputs)) throw e;
      return lenient;
    }
  }

  /** Reach the steps of a phase in order: each is skipped or run; the first failure ends the phase. */
  async #runPhase(phase: Phase, ignoreErrors: boolean): Promise<VisitFailure | undefined> {
    const queue = new StepQueue(this.#firstPlan(phase));
    for (let step = queue.take(); step !== undefined; step = queue.take()) {
      if (this.#signal.aborted) return CANCELLED;
      const startedAt = new Date();
      if (!evaluateConditions(step.conditions, step.conditionSite)) {
        this.#skipStep(phase, step, startedAt);
        continue;
      }
      const ran = await this.#runStep(phase, step, startedAt, ignoreErrors);
      if (!ran.ok) return ran.error;
      if (step.loadOutputs && ran.value === 'succeeded' && !this.#dryRun && this.#kapp.outputIds.length > 0) {
        queue.replan(await this.#replan(phase), step);
      }
    }
    return undefined;
  }

  /** A step whose conditions are false. */
  #skipStep(phase: Phase, step: PlannedStep, startedAt: Date): void {
    this.#finishStep(phase, step, startedAt, {
      status: 'skipped',
      exitCode: null,
      durationMs: 0,
      timedOut: false,
      reason: 'conditions are false',
    });
  }

  /** Run a step (a dry run only announces it): how it ended, or why the visit stops. */
  async #runStep(
    phase: Phase,
    step: PlannedStep,
    startedAt: Date,
    ignoreErrors: boolean,
  ): Promise<Result<StepEnd['status']>> {
    const { stack, options, redactor } = this.#ctx;
    const kappId = this.#kapp.id;
    // An apply runs no step with `<no value>` in it (checked now: outputs loaded by earlier steps are in).
    if (stack.applyNoValue && !this.#dryRun) {
      const problems = stack.noValueErrors(this.#kapp, phase, [step]);
      if (problems.length) return { ok: false, error: failureOf(new ConfigError(problems)) };
    }
    this.#emitStep({
      type: 'step-started',
      time: startedAt.toISOString(),
      kapp: kappId,
      phase,
      step: step.name,
      command: redactor.text(step.command),
      args: redactor.list(step.args),
      workingDir: step.workingDir,
    });
    if (this.#dryRun) {
      this.#finishStep(phase, step, startedAt, { status: 'succeeded', exitCode: null, durationMs: 0, timedOut: false });
      return { ok: true, value: 'succeeded' };
    }
    const timings = options.timings;
    const spawnStart = timings?.now();
    // A step with no command spawns nothing (and makes no directory).
    const makeKappDir = !this.#kappDirMade && step.command !== '';
    if (makeKappDir) this.#kappDirMade = true;
    const outcome = await runStep(step, {
      kappId,
      kappDir: this.#kapp.cacheRoot,
      ...(makeKappDir ? { makeKappDir } : {}),
      phase,
      baseEnv: options.env,
      verbose: options.verbose,
      ignoreAllErrors: ignoreErrors,
      signal: this.#signal,
      ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
      redactor,
      ...(options.allOutput ? { allOutput: true } : {}),
      onOutput: (stream, text, hidden) =>
        this.#emitStep({
          type: 'step-output',
          time: now(),
          kapp: kappId,
          phase,
          step: step.name,
          stream,
          text,
          ...(hidden ? { hidden: true } : {}),
        }),
    });
    if (timings && spawnStart !== undefined) {
      // The step's round trip through the process server, and the part of it the command itself lived.
      timings.add(kappId, 'step', timings.now() - spawnStart);
      timings.add(kappId, 'child', outcome.durationMs);
      timings.add(kappId, 'steps', 1);
    }
    if (outcome.outputAbandoned) this.#log('warn', `${phase} step '${step.name}': ${outcome.outputAbandoned}`);
    this.#finishStep(phase, step, startedAt, {
      status: outcome.status,
      exitCode: outcome.exitCode,
      ...(outcome.signal ? { signal: outcome.signal } : {}),
      durationMs: outcome.durationMs,
      timedOut: outcome.timedOut,
      ...(step.timeout ? { timeoutMs: step.timeout * 1000 } : {}),
      ...(outcome.reason ? { reason: redactor.text(outcome.reason) } : {}),
      ...(outcome.status !== 'succeeded' && outcome.outputTail ? { outputTail: outcome.outputTail } : {}),
    });
    if (outcome.status === 'cancelled') return { ok: false, error: CANCELLED };
    if (outcome.status === 'failed') {
      const reason = `${phase} step '${step.name}' ${redactor.text(outcome.reason ?? 'failed')}`;
      return { ok: false, error: { status: 'failed', reason } };
    }
    return { ok: true, value: outcome.status };
  }

  /**
   * After a `load_outputs` step: load the outputs it wrote, render the templates again with them, and plan the
   * phase again (conditions and arguments may read the new outputs).
   */
  async #replan(phase: Phase): Promise<PlannedStep[]> {
    await this.#loadOutputs(false);
    this.#release();
    if (this.#plan.templates) await this.#renderTemplates();
    return this.#planPhase(phase);
  }

  /** The end of a reached step: its step-finished event (emitted nowhere else) and its record. */
  #finishStep(phase: Phase, step: PlannedStep, startedAt: Date, end: StepEnd): void {
    const time = now();
    this.#emitStep({
      type: 'step-finished',
      time,
      kapp: this.#kapp.id,
      phase,
      step: step.name,
      status: end.status,
      exitCode: end.exitCode,
      ...(end.signal ? { signal: end.signal } : {}),
      durationMs: end.durationMs,
      ...(end.timedOut ? { timedOut: true } : {}),
      ...(end.timeoutMs ? { timeoutMs: end.timeoutMs } : {}),
      ...(end.reason ? { reason: end.reason } : {}),
      ...(end.outputTail ? { outputTail: end.outputTail } : {}),
    });
    this.#steps.push({
      phase,
      name: step.name,
      status: end.status,
      exitCode: end.exitCode,
      startedAt: startedAt.toISOString(),
      endedAt: time,
      durationMs: end.durationMs,
      timedOut: end.timedOut,
    });
  }

  /** Afterwards, for kapps that declare outputs: run the output phase and load them. */
  async #provideOutputs(): Promise<VisitFailure | undefined> {
    const loading = this.#plan.loadOutputs;
    if (loading === 'no' || this.#kapp.outputIds.length === 0) return undefined;
    const lenient = loading.stepErrors === 'ignore';
    const failure = await this.#runPhase('output', lenient);
    if (failure) return failure;
    try {
      await this.#loadOutputs(loading.missing === 'error');
      this.#release();
    } catch (e) {
      // A plan goes on without outputs it cannot read (they stay empty maps), and says so.
      if (!lenient) return failureOf(e);
      this.#log('warn', `outputs not loaded: ${failureOf(e).reason}`);
    }
    if (this.#plan.templates) await this.#renderTemplates();
    return undefined;
  }

  /** Remove the sensitive files the visit rendered or its steps wrote (not in a dry run, which wrote none). */
  async #removeSensitiveFiles(): Promise<void> {
    if (this.#dryRun) return;
    if (this.#sensitiveFiles.size) await removeSensitiveTemplates([...this.#sensitiveFiles]);
    if (this.#kapp.outputIds.length === 0) return;
    const { stack } = this.#ctx;
    try {
      await removeSensitiveOutputFiles(stack, this.#kapp, stack.variables(this.#kapp, this.#runtime()));
    } catch {
      // Variables that cannot be rendered: neither can the output declarations, nor their paths.
    }
  }

  /** The kapp's `.outputs` view for its children, its kapp-finished event and its result. */
  #finish(failure: VisitFailure | undefined, started: number): KappResult {
    const ctx = this.#ctx;
    const kapp = this.#kapp;
    const status: KappStatus =
      failure === undefined
        ? 'succeeded'
        : failure.status === 'cancelled' || this.#signal.aborted
          ? 'cancelled'
          : 'failed';
    const reason = failure ? ctx.redactor.text(failure.reason) : undefined;
    ctx.views.set(kapp.id, viewFor(ctx, kapp));
    // A visit that only starts the kapp reports its end only when it failed (the later visit is then not made).
    if (this.#plan.kappEvents !== 'start' || status !== 'succeeded') {
      ctx.emit({
        type: 'kapp-finished',
        time: now(),
        kapp: kapp.id,
        status,
        ...(reason ? { reason } : {}),
        durationMs: Date.now() - started,
      });
    }
    return {
      id: kapp.id,
      status,
      ...(reason ? { reason } : {}),
      role: this.#plan.role,
      steps: this.#steps,
      // An ordinary output may pass a secret on (a connection string built from a password): redact it too.
      ...(this.#recordable ? { outputs: this.#ctx.redactor.value(this.#recordable) as GoMap } : {}),
    };
  }
}

/** Visit a kapp. Never throws for a kapp's own failure: it is the result. */
export function visitKapp(
  ctx: VisitContext,
  kapp: KappModel,
  plan: VisitPlan,
  signal: AbortSignal,
): Promise<KappResult> {
  return new KappVisit(ctx, kapp, plan, signal).run();
}
