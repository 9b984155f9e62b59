/**
 * Turning a produced step into a `PlannedStep`: unit defaults, typed fields written as templates, absolute paths
 * and tokenised arguments.
 */
import path from 'node:path';
import { isInside, outsideProblem } from '../workspace/confine.js';
import { error, type Diagnostic, type SourceLocation } from '../diagnostics/diagnostic.js';
import type { RunStepConfig } from '../config/types.js';
import { tokeniseArgs } from './args.js';
import type { ProducedStep } from './calls.js';
import { parseGoBool } from './go-bool.js';
import type { PlannedStep, PlannedStepLocations } from './planned-step.js';
import { describeStep, quoteValue, stepConditionSite, type Locate, type StepRef } from './step-context.js';

/** The priority of a step that sets none. */
export const DEFAULT_MERGE_PRIORITY = 255;

const YAML_WORDS: ReadonlyMap<string, boolean> = new Map([
  ['yes', true],
  ['Yes', true],
  ['YES', true],
  ['no', false],
  ['No', false],
  ['NO', false],
]);

/** A whole number ≥ 0 from a YAML number or rendered text (surrounding whitespace allowed, as YAML would). */
export function parseWholeNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value === 'bigint')
    return value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (!/^[0-9]+$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** A boolean from YAML or rendered text: a Go boolean spelling or `yes`/`no` (surrounding whitespace allowed). */
export function parseFlag(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  return parseGoBool(text) ?? YAML_WORDS.get(text);
}

/** `p` made absolute against `base`, normalised, without a trailing separator. */
function absolute(base: string, p: string): string {
  if (p === '.' || p === '') return trimSeparator(path.normalize(base));
  return trimSeparator(path.isAbsolute(p) ? path.normalize(p) : path.join(base, p));
}

function trimSeparator(p: string): string {
  if (!p.endsWith(path.sep)) return p;
  return p.length > path.parse(p).root.length ? p.slice(0, -1) : p;
}

/** Converts produced steps, reporting each bad field of each declared step once. */
export class StepConverter {
  private readonly reported = new Set<string>();
  /** The kapp's directory (`cacheRoot`) as a working directory, once asked for. */
  #kappDir: string | undefined;

  constructor(
    private readonly kappId: string,
    private readonly cacheRoot: string,
    private readonly locate: Locate,
    private readonly problems: Diagnostic[],
  ) {}

  private report(ref: StepRef, field: string, message: string, hint?: string): void {
    const key = `${ref.unitIndex}/${ref.phase}/${ref.index}/${field}`;
    if (this.reported.has(key)) return;
    this.reported.add(key);
    const location = this.locate(ref.step, field) ?? this.locate(ref.step);
    this.problems.push(error(`${describeStep(ref, this.kappId)}: ${message}`, location, hint ? { hint } : {}));
  }

  /** The absolute capture file of `stdout`/`stderr`, undefined when unset, null when outside the kapp's directory (reported). */
  private captureFile(ref: StepRef, field: 'stdout' | 'stderr', workingDir: string): string | undefined | null {
    const value = ref.step[field];
    if (!value) return undefined;
    const file = absolute(workingDir, value);
    const problem = outsideProblem(this.cacheRoot, file);
    if (!problem) return file;
    this.report(
      ref,
      field,
      `'${field}' file ${file} ${problem}`,
      "kapps writes capture files only inside the kapp's directory of the workspace (`{{ .kapp.cacheRoot }}`)",
    );
    return null;
  }

  /** The absolute working directory of a step, null when outside the kapp's directory (reported). */
  private workingDirOf(ref: StepRef): string | null {
    const written = ref.step.working_dir || ref.unit.working_dir || '.';
    // Most steps name no directory: the kapp's own, normalised once for all of them.
    if (written === '.') return (this.#kappDir ??= absolute(this.cacheRoot, '.'));
    const dir = absolute(this.cacheRoot, written);
    const problem = isInside(this.cacheRoot, dir) ? undefined : `is outside the kapp's directory ${this.cacheRoot}`;
    if (!problem) return dir;
    this.report(
      ref,
      'working_dir',
      `'working_dir' ${dir} ${problem}`,
      "steps run only inside the kapp's directory of the workspace (`{{ .kapp.cacheRoot }}`)",
    );
    return null;
  }

  /** The field's number, undefined when unset, null when invalid (reported). */
  private wholeNumber(ref: StepRef, field: 'timeout' | 'expected_exit_code', what: string): number | undefined | null {
    const value: unknown = ref.step[field];
    if (value === undefined || value === '') return undefined;
    const n = parseWholeNumber(value);
    if (n !== undefined) return n;
    this.report(ref, field, `'${field}' must be ${what} (0 or more), but it is ${quoteValue(value)}`);
    return null;
  }

  /** The field's value (false when unset), null when invalid (reported). */
  private flag(ref: StepRef, field: 'ignore_errors' | 'load_outputs'): boolean | null {
    const value: unknown = ref.step[field];
    if (value === undefined || value === '') return false;
    const b = parseFlag(value);
    if (b !== undefined) return b;
    this.report(ref, field, `'${field}' must be true or false, but it is ${quoteValue(value)}`);
    return null;
  }

  /** The planned step for `produced`, or undefined when one of its fields is invalid (reported). */
  convert(produced: ProducedStep): PlannedStep | undefined {
    const { ref } = produced;
    const { step, unit } = ref;

    const tokens = tokeniseArgs(step.args ?? '');
    if (!tokens.ok) this.report(ref, 'args', `${tokens.message} (args: ${JSON.stringify(step.args)})`, tokens.hint);
    const timeout = this.wholeNumber(ref, 'timeout', 'a whole number of seconds');
    const expectedExitCode = this.wholeNumber(ref, 'expected_exit_code', 'a whole number');
    const ignoreErrors = this.flag(ref, 'ignore_errors');
    const loadOutputs = this.flag(ref, 'load_outputs');
    const workingDir = this.workingDirOf(ref);
    const stdout = workingDir === null ? null : this.captureFile(ref, 'stdout', workingDir);
    const stderr = workingDir === null ? null : this.captureFile(ref, 'stderr', workingDir);
    if (
      workingDir === null ||
      !tokens.ok ||
      timeout === null ||
      expectedExitCode === null ||
      ignoreErrors === null ||
      loadOutputs === null ||
      stdout === null ||
      stderr === null
    ) {
      return undefined;
    }

    const env: Record<string, string> = { ...step.env_vars };
    if (unit.env_vars) for (const name in unit.env_vars) if (!(name in env)) env[name] = unit.env_vars[name] as string;
    const binaries =
      step.binaries?.length || unit.binaries?.length
        ? [...new Set([...(step.binaries ?? []), ...(unit.binaries ?? [])])]
        : [];
    const locate = this.locate;
    const locations = new StepLocations(locate, step, produced.via);

    const planned: PlannedStep = {
      unit: unit.name,
      declaredIn: ref.phase,
      name: step.name ?? '',
      command: step.command ?? '',
      args: tokens.args,
      env,
      workingDir,
      expectedExitCode: expectedExitCode ?? 0,
      ignoreErrors,
      loadOutputs,
      conditions: step.conditions ? [...step.conditions] : [],
      conditionSite: stepConditionSite(ref, this.kappId, locate),
      mergePriority: produced.priority ?? DEFAULT_MERGE_PRIORITY,
      binaries,
      locations,
    };
    // Optional fields are set only when configured (assignments are cheaper than spreads in a hot loop).
    const optional = planned as { -readonly [K in keyof PlannedStep]: PlannedStep[K] };
    if (stdout) optional.stdout = stdout;
    if (stderr) optional.stderr = stderr;
    if (step.print) optional.print = step.print;
    if (timeout) optional.timeout = timeout;
    return planned;
  }
}

/** A planned step's locations, looked up when a diagnostic reads them. */
class StepLocations implements PlannedStepLocations {
  readonly #locate: Locate;
  readonly #step: RunStepConfig;
  readonly #via: readonly StepRef[];
  constructor(locate: Locate, step: RunStepConfig, via: readonly StepRef[]) {
    this.#locate = locate;
    this.#step = step;
    this.#via = via;
  }
  get step(): SourceLocation | undefined {
    return this.#locate(this.#step);
  }
  get command(): SourceLocation | undefined {
    return this.#step.command === undefined ? undefined : this.#locate(this.#step, 'command');
  }
  get args(): SourceLocation | undefined {
    return this.#step.args === undefined ? undefined : this.#locate(this.#step, 'args');
  }
  get via(): readonly (SourceLocation | undefined)[] {
    return this.#via.map((r) => this.#locate(r.step, 'call') ?? this.#locate(r.step));
  }
}
