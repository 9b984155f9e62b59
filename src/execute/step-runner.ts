/**
 * Running one planned step: resolve its command, build its environment (the process environment, then the unit's
 * and the step's `env_vars` — the step wins), spawn it without a shell in its working directory with its timeout,
 * stream the output the step's `print` setting shows, write its `stdout`/`stderr` capture files (even when it
 * fails), and judge the exit code against `expected_exit_code`.
 */
import type { PlannedStep } from '../plan/steps.js';
import type { Phase, StepStatus } from '../vocabulary.js';
import { runProcess } from '../process/process-runner.js';
import type { SpawnResult } from '../process/spawn.js';
import type { StepRefusal } from '../process/step-checks.js';
import { ConfinementError, writeConfinedFile, type PathUse } from '../workspace/confine.js';
import type { Redactor } from './redact.js';

/** What happened to a step. */
export interface StepOutcome {
  readonly status: Exclude<StepStatus, 'skipped'>;
  readonly exitCode: number | null;
  readonly signal?: string;
  readonly timedOut: boolean;
  readonly durationMs: number;
  /** One line saying why it failed. */
  readonly reason?: string;
  readonly outputTail?: readonly string[];
  /** The captured stdout (for callers that need it, e.g. outputs written by `stdout:`). */
  readonly result?: SpawnResult;
  /** kapps stopped waiting for the step's output (something outside its process group held it): why. */
  readonly outputAbandoned?: string;
}

export interface StepRunContext {
  readonly kappId: string;
  /** The kapp's directory in the workspace: capture files must lie inside it. */
  readonly kappDir: string;
  /** Make `kappDir` (if missing) just before the spawn: the kapp's first step, when nothing made it before. */
  readonly makeKappDir?: boolean;
  readonly phase: Phase;
  readonly baseEnv: Readonly<Record<string, string>>;
  readonly verbose: boolean;
  /** `--ignore-errors`: failures are reported and passed over. */
  readonly ignoreAllErrors: boolean;
  readonly signal: AbortSignal;
  readonly killGraceMs?: number;
  readonly redactor: Redactor;
  /** Also pass on the output the step's `print` does not show (marked hidden), for a run's log. */
  readonly allOutput?: boolean;
  /** Output as it arrives: what the user should see, and with `allOutput` the rest, `hidden`. */
  readonly onOutput: (stream: 'stdout' | 'stderr', text: string, hidden: boolean) => void;
}

/** Whether output of a step with this `print` setting is shown: `verbose` with -v, `false`/empty never, other text always. */
export function showsOutput(print: string | undefined, verbose: boolean): boolean {
  if (print === undefined || print === '' || print === 'false') return false;
  if (print === 'verbose') return verbose;
  return true;
}

async function writeCapture(
  file: string,
  content: Buffer,
  ctx: StepRunContext,
  use: PathUse,
): Promise<string | undefined> {
  try {
    await writeConfinedFile(ctx.kappDir, file, content, 0o644, use);
    return undefined;
  } catch (e) {
    if (e instanceof ConfinementError) return e.message;
    return `cannot write ${file}: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/** Longest partial line held back before it is passed on anyway, in characters. */
const MAX_PARTIAL_LINE = 65_536;

/**
 * Passes output on in whole lines, so that a secret is never cut in two by a chunk boundary (and so escapes
 * redaction). A partial line is held until its newline, the end of the step, or until it grows too long.
 */
class OutputLines {
  readonly #partial = { stdout: '', stderr: '' };
  constructor(private readonly emit: (stream: 'stdout' | 'stderr', text: string) => void) {}

  push(stream: 'stdout' | 'stderr', text: string): void {
    const all = this.#partial[stream] + text;
    const cut = all.lastIndexOf('\n') + 1;
    const rest = all.slice(cut);
    if (cut > 0) this.emit(stream, all.slice(0, cut));
    if (rest.length > MAX_PARTIAL_LINE) {
      this.emit(stream, rest);
      this.#partial[stream] = '';
    } else this.#partial[stream] = rest;
  }

  flush(): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      if (this.#partial[stream] !== '') this.emit(stream, this.#partial[stream]);
      this.#partial[stream] = '';
    }
  }
}

/** The sentence saying why a step was not started (it failed a check made before its spawn). */
function refusalReason(step: PlannedStep, refused: StepRefusal): string {
  if (refused.kind === 'escape') {
    return `working_dir ${refused.dir} leads to ${refused.real}, outside the kapp's directory ${refused.root}; steps run only inside it`;
  }
  const where = step.command.includes('/') ? `relative to ${step.workingDir}` : 'on PATH';
  // The kapp and the step are named by whoever reports the reason (`<kapp> failed: <phase>/<step>: …`).
  return `command '${step.command}' not found ${where}`;
}

/** Run a step that has passed its conditions. */
export async function runStep(step: PlannedStep, ctx: StepRunContext): Promise<StepOutcome> {
  const env: Record<string, string> = { ...ctx.baseEnv, ...step.env };
  const failedStatus = step.ignoreErrors || ctx.ignoreAllErrors ? 'ignored' : 'failed';
  if (step.command === '') {
    return {
      status: failedStatus,
      exitCode: null,
      timedOut: false,
      durationMs: 0,
      reason: `step '${step.name}' of kapp ${ctx.kappId} names no command`,
    };
  }
  const show = showsOutput(step.print, ctx.verbose);
  const lines =
    show || ctx.allOutput
      ? new OutputLines((stream, text) => ctx.onOutput(stream, ctx.redactor.text(text), !show))
      : undefined;
  // Checked where it is spawned, just before: its working directory stays in the kapp's directory (symbolic links
  // resolved), and its command is found (on PATH for a bare name); it is spawned by its absolute path.
  const result = await runProcess({
    command: step.command,
    args: step.args,
    cwd: step.workingDir,
    env,
    confineTo: ctx.kappDir,
    ...(ctx.makeKappDir ? { makeDir: ctx.kappDir } : {}),
    ...(step.timeout ? { timeoutMs: step.timeout * 1000 } : {}),
    ...(ctx.killGraceMs !== undefined ? { killGraceMs: ctx.killGraceMs } : {}),
    signal: ctx.signal,
    // The whole output is only needed for capture files; the tail is kept either way.
    captureOutput: step.stdout !== undefined || step.stderr !== undefined,
    ...(lines ? { onOutput: (stream: 'stdout' | 'stderr', text: string) => lines.push(stream, text) } : {}),
  });
  lines?.flush();
  if (result.refused) {
    return {
      status: failedStatus,
      exitCode: null,
      timedOut: false,
      durationMs: 0,
      reason: refusalReason(step, result.refused),
    };
  }
  const captureProblems: string[] = [];
  if (step.stdout) {
    const p = await writeCapture(step.stdout, result.stdout, ctx, {
      kapp: ctx.kappId,
      field: `step '${step.name}' stdout`,
    });
    if (p) captureProblems.push(p);
  }
  if (step.stderr) {
    const p = await writeCapture(step.stderr, result.stderr, ctx, {
      kapp: ctx.kappId,
      field: `step '${step.name}' stderr`,
    });
    if (p) captureProblems.push(p);
  }
  const base = {
    exitCode: result.exitCode,
    ...(result.signal ? { signal: result.signal } : {}),
    timedOut: result.timedOut,
    durationMs: Math.round(result.durationMs),
    outputTail: ctx.redactor.list(result.outputTail),
    result,
    ...(result.outputAbandoned ? { outputAbandoned: result.outputAbandoned } : {}),
  };
  if (result.cancelled) return { ...base, status: 'cancelled', reason: 'cancelled' };
  let reason: string | undefined;
  if (result.spawnError) reason = result.spawnError;
  else if (result.timedOut) reason = `timed out after ${step.timeout ?? 0} s`;
  else if (result.exitCode === null) reason = `killed by ${result.signal ?? 'a signal'}`;
  else if (result.exitCode !== step.expectedExitCode) {
    reason =
      step.expectedExitCode === 0
        ? `exited with code ${result.exitCode}`
        : `exited with code ${result.exitCode}, expected ${step.expectedExitCode}`;
  } else if (captureProblems.length) reason = captureProblems.join('; ');
  if (reason === undefined) return { ...base, status: 'succeeded' };
  return { ...base, status: failedStatus, reason };
}
