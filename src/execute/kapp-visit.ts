/**
 * One visit of one kapp during a run: render its templates, run the steps of the phases the command asks for (each
 * step's conditions evaluated when it is reached, outputs loaded after `load_outputs` steps and the remaining steps
 * re-planned with them), then load its outputs when the command needs them. Emits the kapp's events.
 */
import { mkdirSync } from 'node:fs';
import { ConfigError, KappsError } from '../diagnostics/errors.js';
import { evaluateConditions } from '../plan/go-bool.js';
import type { PlannedStep } from '../plan/steps.js';
import { formatDiagnostics } from '../report/diagnostic-printer.js';
import type { KappRole, KappStatus, Phase, StepStatus } from '../vocabulary.js';
import type { KappModel } from '../stack/kapp-model.js';
import type { Stack } from '../stack/stack.js';
import { newGoMap, type GoMap } from '../go-value/value.js';
import { outputsView, withPlaceholders } from '../vars/outputs.js';
import { loadOutputs, removeSensitiveOutputFiles } from './outputs.js';
import type { Redactor } from './redact.js';
import { runStep } from './step-runner.js';
import { removeSensitiveTemplates, renderKappTemplates } from './templates.js';
import type { EmitEvent, KappResult, RunOptions } from './types.js';
import type { StepRecord } from '../release/types.js';

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

class StepFailure extends Error {
  constructor(
    message: string,
    readonly status: 'failed' | 'cancelled',
  ) {
    super(message);
  }
}

/** Identifies a planned step within its phase across re-plans. */
const stepKey = (s: PlannedStep): string => `${s.unit}\u0000${s.declaredIn}\u0000${s.name}`;

/** The `.outputs` view of a kapp from its parents' views and its own outputs (placeholders for missing ones). */
export function viewFor(ctx: VisitContext, kapp: KappModel): GoMap {
  const node = ctx.stack.planNode(kapp.id);
  const parents = (node?.dependsOn ?? [])
    .map((p) => ({ manifestId: ctx.stack.kapp(p).manifestId, view: ctx.views.get(p) }))
    .filter((p): p is { manifestId: string; view: GoMap } => p.view !== undefined);
  const own = withPlaceholders(ctx.ownOutputs.get(kapp.id) ?? newGoMap(), kapp.outputIds);
  return outputsView({ manifestId: kapp.manifestId, kappId: kapp.kappId, values: own }, parents);
}

function describe(e: unknown): { reason: string; detail?: string } {
  if (e instanceof ConfigError) {
    return { reason: e.diagnostics[0]?.message ?? e.message, detail: formatDiagnostics(e.diagnostics) };
  }
  if (e instanceof StepFailure || e instanceof KappsError) return { reason: e.message };
  // Anything else (a file that cannot be written, a bug) still ends the kapp as failed, with the message.
  return { reason: e instanceof Error ? e.message : String(e) };
}

/** Visit a kapp. Never throws for a kapp's own failure: it is the result. */
export async function visitKapp(
  ctx: VisitContext,
  kapp: KappModel,
  plan: VisitPlan,
  signal: AbortSignal,
): Promise<KappResult> {
  const { stack, options, emit, redactor } = ctx;
  if (plan.kappEvents !== 'finish') ctx.startedAt.set(kapp.id, Date.now());
  const started = ctx.startedAt.get(kapp.id) ?? Date.now();
  const steps: StepRecord[] = [];
  const dryRun = options.dryRun;
  let recordable: GoMap | undefined;
  let sensitiveFiles: string[] = [];
  let renderedTemplates: ReadonlyMap<string, string> | undefined;
  if (plan.kappEvents !== 'finish') emit({ type: 'kapp-started', time: now(), kapp: kapp.id, role: plan.role });

  const runtime = () => ({
    outputs: viewFor(ctx, kapp),
    ...(renderedTemplates ? { renderedTemplates } : {}),
  });
  /** Dry run: the template files already said to be written. */
  const announced = new Set<string>();
  const renderTemplates = (): void => {
    const rendered = renderKappTemplates(stack, kapp, stack.variables(kapp, runtime()), { dryRun });
    renderedTemplates = rendered.paths;
    if (dryRun) {
      for (const [id, dest] of rendered.paths) {
        if (announced.has(dest)) continue;
        announced.add(dest);
        emit({
          type: 'log',
          time: now(),
          level: 'info',
          shown: true,
          message: `template '${id}' would be written to ${dest}`,
          kapp: kapp.id,
        });
      }
    }
    sensitiveFiles = [...new Set([...sensitiveFiles, ...rendered.sensitive])];
  };
  const load = (mustExist: boolean): void => {
    if (kapp.outputIds.length === 0 || dryRun) return;
    const loaded = loadOutputs(stack, kapp, stack.variables(kapp, runtime()), { mustExist, dryRun, redactor });
    ctx.ownOutputs.set(kapp.id, { ...ctx.ownOutputs.get(kapp.id), ...loaded.values });
    recordable = { ...recordable, ...loaded.recordable };
  };

  const runPhase = async (phase: Phase, ignoreErrors: boolean): Promise<void> => {
    let planned: PlannedStep[] = stack.planPhase(kapp, phase, runtime(), dryRun);
    /** Steps of this phase reached so far (run or skipped). */
    const done = new Set<string>();
    for (let i = 0; i < planned.length; i++) {
      const step = planned[i] as PlannedStep;
      done.add(stepKey(step));
      if (signal.aborted) throw new StepFailure('cancelled', 'cancelled');
      const stepStarted = new Date();
      const record = (status: StepStatus, exitCode: number | null, durationMs: number, timedOut: boolean): void => {
        steps.push({
          phase,
          name: step.name,
          status,
          exitCode,
          startedAt: stepStarted.toISOString(),
          endedAt: now(),
          durationMs,
          timedOut,
        });
      };
      if (!evaluateConditions(step.conditions, step.conditionSite)) {
        emit({
          type: 'step-finished',
          time: now(),
          kapp: kapp.id,
          phase,
          step: step.name,
          status: 'skipped',
          exitCode: null,
          durationMs: 0,
          reason: 'conditions are false',
        });
        record('skipped', null, 0, false);
        continue;
      }
      // An apply runs no step with `<no value>` in it (checked now: outputs loaded by earlier steps are in).
      if (stack.applyNoValue && !dryRun) {
        const problems = stack.noValueErrors(kapp, phase, [step]);
        if (problems.length) throw new ConfigError(problems);
      }
      emit({
        type: 'step-started',
        time: stepStarted.toISOString(),
        kapp: kapp.id,
        phase,
        step: step.name,
        command: redactor.text(step.command),
        args: redactor.list(step.args),
        workingDir: step.workingDir,
      });
      if (dryRun) {
        emit({
          type: 'step-finished',
          time: now(),
          kapp: kapp.id,
          phase,
          step: step.name,
          status: 'succeeded',
          exitCode: null,
          durationMs: 0,
        });
        record('succeeded', null, 0, false);
        continue;
      }
      const outcome = await runStep(step, {
        kappId: kapp.id,
        kappDir: kapp.cacheRoot,
        phase,
        baseEnv: options.env,
        verbose: options.verbose,
        ignoreAllErrors: ignoreErrors,
        signal,
        ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
        redactor,
        ...(options.allOutput ? { allOutput: true } : {}),
        onOutput: (stream, text, hidden) =>
          emit({
            type: 'step-output',
            time: now(),
            kapp: kapp.id,
            phase,
            step: step.name,
            stream,
            text,
            ...(hidden ? { hidden: true } : {}),
          }),
      });
      if (outcome.outputAbandoned) {
        emit({
          type: 'log',
          time: now(),
          level: 'warn',
          message: `${phase} step '${step.name}': ${outcome.outputAbandoned}`,
          kapp: kapp.id,
        });
      }
      emit({
        type: 'step-finished',
        time: now(),
        kapp: kapp.id,
        phase,
        step: step.name,
        status: outcome.status,
        exitCode: outcome.exitCode,
        ...(outcome.signal ? { signal: outcome.signal } : {}),
        durationMs: outcome.durationMs,
        ...(outcome.timedOut ? { timedOut: true } : {}),
        ...(step.timeout ? { timeoutMs: step.timeout * 1000 } : {}),
        ...(outcome.reason ? { reason: redactor.text(outcome.reason) } : {}),
        ...(outcome.status !== 'succeeded' && outcome.outputTail ? { outputTail: outcome.outputTail } : {}),
      });
      record(outcome.status, outcome.exitCode, outcome.durationMs, outcome.timedOut);
      if (outcome.status === 'cancelled') throw new StepFailure('cancelled while running', 'cancelled');
      if (outcome.status === 'failed') {
        throw new StepFailure(`${phase} step '${step.name}' ${redactor.text(outcome.reason ?? 'failed')}`, 'failed');
      }
      if (step.loadOutputs && outcome.status === 'succeeded' && kapp.outputIds.length > 0) {
        load(false);
        if (plan.templates) renderTemplates();
        // Re-plan the rest of the phase with the new outputs and go on after this step. Should the new list no
        // longer hold it (its unit's conditions changed), go on with the steps of the new list not run yet.
        const replanned = stack.planPhase(kapp, phase, runtime(), dryRun);
        const at = replanned.findIndex((s) => stepKey(s) === stepKey(step));
        if (at >= 0) {
          planned = replanned;
          i = at;
        } else {
          planned = replanned.filter((s) => !done.has(stepKey(s)));
          i = -1;
        }
      }
    }
  };

  let status: KappStatus = 'succeeded';
  let reason: string | undefined;
  try {
    if (!dryRun) mkdirSync(kapp.cacheRoot, { recursive: true });
    if (plan.templates) renderTemplates();
    for (const phase of plan.phases) await runPhase(phase, plan.ignoreErrors);
    if (plan.loadOutputs !== 'no' && kapp.outputIds.length > 0) {
      const lenient = plan.loadOutputs.stepErrors === 'ignore';
      await runPhase('output', lenient);
      try {
        load(plan.loadOutputs.missing === 'error');
      } catch (e) {
        // A plan goes on without outputs it cannot read (they stay empty maps), and says so.
        if (!lenient) throw e;
        emit({
          type: 'log',
          time: now(),
          level: 'warn',
          message: `outputs not loaded: ${describe(e).reason}`,
          kapp: kapp.id,
        });
      }
      if (plan.templates) renderTemplates();
    }
  } catch (e) {
    if (e instanceof StepFailure && e.status === 'cancelled') {
      status = 'cancelled';
      reason = 'cancelled';
    } else {
      const d = describe(e);
      status = signal.aborted ? 'cancelled' : 'failed';
      reason = d.reason;
      if (d.detail) emit({ type: 'log', time: now(), level: 'error', message: d.detail, kapp: kapp.id });
    }
  } finally {
    if (!dryRun && sensitiveFiles.length) removeSensitiveTemplates(sensitiveFiles);
    if (!dryRun && kapp.outputIds.length > 0) {
      try {
        removeSensitiveOutputFiles(stack, kapp, stack.variables(kapp, runtime()));
      } catch {
        // Variables that cannot be rendered: neither can the output declarations, nor their paths.
      }
    }
  }
  ctx.views.set(kapp.id, viewFor(ctx, kapp));
  // A visit that only starts the kapp reports its end only when it failed (the later visit is then not made).
  if (plan.kappEvents !== 'start' || status !== 'succeeded') {
    emit({
      type: 'kapp-finished',
      time: now(),
      kapp: kapp.id,
      status,
      ...(reason ? { reason: redactor.text(reason) } : {}),
      durationMs: Date.now() - started,
    });
  }
  return {
    id: kapp.id,
    status,
    ...(reason ? { reason: redactor.text(reason) } : {}),
    role: plan.role,
    steps,
    // An ordinary output may pass a secret on (a connection string built from a password): redact it too.
    ...(recordable ? { outputs: redactor.value(recordable) as GoMap } : {}),
  };
}
