/**
 * Field-level differences between two specs of one kapp (`kapps generate` form), with sensitive values masked.
 * Pure: no I/O. Used by the preview (recorded spec → spec now) and by `kapps release diff` (spec in A → spec in B).
 *
 * A change is `{path, from, to}`: `path` lists the segments leading to the value (`["dependsOn"]`,
 * `["apply_install", "helm-install"]` for a whole step, `["apply_install", "helm-install", "args"]`,
 * `["apply_install", "helm-install", "env", "DB_PASSWORD"]`, `["apply_install"]` for the order of a phase's steps);
 * `from` and `to` are the values before and after, `null` where absent.
 *
 * Sensitive values: the value of an environment variable whose name looks secret (password, secret, token,
 * credential, private key, API key, access key), the value of such an argument (`--password=…`, `--token …`,
 * `db.password=…`), the password of a URL (`scheme://user:password@host`), and values already redacted by a run
 * (`<sensitive>`). They are replaced by `(sensitive)`, or by `(sensitive, changed)` on the new side when the value
 * differs from the old one; the value itself never appears.
 */
import { PHASES } from '../vocabulary.js';
import type { SpecKapp, SpecStep } from '../plan/spec.js';
import { canonicalJson } from './canonical-json.js';
import type { JsonValue } from './types.js';

/** What replaces a sensitive value. */
export const SENSITIVE = '(sensitive)';
/** What replaces a sensitive value on the new side when it differs from the old one. */
export const SENSITIVE_CHANGED = '(sensitive, changed)';

/** One field-level change. */
export interface SpecChange {
  /** Segments leading to the value: phase, step name, field, env name; or `dependsOn`, `conditionsOk`. */
  path: string[];
  /** The old value (masked where sensitive); null when absent. */
  from: JsonValue;
  /** The new value (masked where sensitive); null when absent. */
  to: JsonValue;
}

/** Names of environment variables and options whose values are secret. */
const SECRET_NAME = /passw(or)?d|secret|token|credential|private[_-]?key|api[_-]?key|access[_-]?key/i;
/** A URL's password: `scheme://user:password@`. */
const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/?#@:\s]*):([^/?#\s]*)@/i;
/** Texts that are already masks (a recorded spec redacted elsewhere): never compared as values. */
const MASKS = ['<sensitive>', SENSITIVE, SENSITIVE_CHANGED];

/** Whether an environment variable or option name holds a secret. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

function isMask(value: string | undefined): boolean {
  return value !== undefined && MASKS.some((m) => value.includes(m));
}

/** Whether a sensitive value differs from its old side (absent there, or another value; masks never compare). */
function secretChanged(value: string, other: string | undefined): boolean {
  return other === undefined || (!isMask(other) && !isMask(value) && other !== value);
}

/**
 * Sensitive text replaced (a URL's password only, when the text is not sensitive as a whole). With `markChanges`,
 * `other` is the same value on the old side, and a sensitive value that differs is marked `(sensitive, changed)`.
 */
function maskText(value: string, sensitive: boolean, other: string | undefined, markChanges: boolean): string {
  if (sensitive) {
    if (isMask(value)) return value;
    return markChanges && secretChanged(value, other) ? SENSITIVE_CHANGED : SENSITIVE;
  }
  const url = URL_PASSWORD.exec(value);
  if (!url) return value;
  const otherUrl = other !== undefined ? URL_PASSWORD.exec(other) : null;
  const changed = markChanges && secretChanged(url[2] ?? '', otherUrl?.[2]);
  return value.replace(URL_PASSWORD, `$1:${changed ? SENSITIVE_CHANGED : SENSITIVE}@`);
}

/** A flag such as `--password` or `-token`, whose next argument is its value. */
function secretFlag(arg: string | undefined): boolean {
  return arg !== undefined && /^-{1,2}[\w.-]+$/.test(arg) && isSecretName(arg);
}

/** Mask one argument list; with `markChanges`, `other` is the old list (compared position by position). */
function maskArgs(args: readonly string[], other: readonly string[] | undefined, markChanges: boolean): string[] {
  return args.map((arg, i) => {
    const before = other?.[i];
    const assign = /^(-{0,2}[^=\s]+)=([\s\S]*)$/.exec(arg);
    const name = assign?.[1];
    if (name !== undefined && isSecretName(name)) {
      const oldValue = before?.startsWith(`${name}=`) ? before.slice(name.length + 1) : undefined;
      return `${name}=${maskText(assign?.[2] ?? '', true, oldValue, markChanges)}`;
    }
    if (secretFlag(args[i - 1]) && !arg.startsWith('-')) {
      return maskText(arg, true, secretFlag(other?.[i - 1]) ? before : undefined, markChanges);
    }
    return maskText(arg, false, before, markChanges);
  });
}

function maskEnv(
  env: Readonly<Record<string, string>>,
  other: Readonly<Record<string, string>> | undefined,
  markChanges: boolean,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const before = other && Object.hasOwn(other, name) ? other[name] : undefined;
    out[name] = maskText(value, isSecretName(name), before, markChanges);
  }
  return out;
}

/**
 * A step with its sensitive values masked. With `other` (the same step on the old side), the new side's sensitive
 * values that differ are marked `(sensitive, changed)`.
 */
export function redactStep(step: SpecStep, other?: SpecStep): SpecStep {
  const mark = other !== undefined;
  const out: SpecStep = {
    ...step,
    command: maskText(step.command, false, other?.command, mark),
    args: maskArgs(step.args, other?.args, mark),
    env: maskEnv(step.env, other?.env, mark),
    workingDir: maskText(step.workingDir, false, other?.workingDir, mark),
  };
  if (step.conditions) out.conditions = step.conditions.map((c, i) => maskText(c, false, other?.conditions?.[i], mark));
  return out;
}

/** The spec of a kapp with every sensitive value masked (`other`: the old spec, to mark changed values). */
export function redactKappSpec(kapp: SpecKapp, other?: SpecKapp | null): SpecKapp {
  const phases = {} as SpecKapp['phases'];
  for (const phase of PHASES) {
    const olds = other ? keyedSteps(other.phases[phase] ?? []) : undefined;
    phases[phase] = [...keyedSteps(kapp.phases[phase] ?? [])].map(([key, step]) =>
      redactStep(step, olds?.get(key) ?? undefined),
    );
  }
  return { ...kapp, dependsOn: [...kapp.dependsOn], phases };
}

/**
 * A stack's spec with the values whose names look secret masked, as the preview shows them: what `kapps generate`
 * prints and a release records (whether a kapp changed is decided by the digests of the full specs).
 */
export function redactStackSpec<T extends { kapps: SpecKapp[] }>(spec: T): T {
  return { ...spec, kapps: spec.kapps.map((k) => redactKappSpec(k)) };
}

/** Steps by key: the name, `name#2`, `name#3`, … for repeated names. */
function keyedSteps(steps: readonly SpecStep[]): Map<string, SpecStep> {
  const out = new Map<string, SpecStep>();
  const seen = new Map<string, number>();
  for (const step of steps) {
    const n = (seen.get(step.name) ?? 0) + 1;
    seen.set(step.name, n);
    out.set(n === 1 ? step.name : `${step.name}#${n}`, step);
  }
  return out;
}

/** The fields of a step compared one by one, in the order changes are listed. */
const STEP_FIELDS = [
  'command',
  'args',
  'workingDir',
  'timeout',
  'expectedExitCode',
  'conditions',
  'ignoreErrors',
  'loadOutputs',
  'stdout',
  'stderr',
  'print',
  'unit',
  'mergePriority',
] as const satisfies readonly (keyof SpecStep)[];

const same = (a: unknown, b: unknown): boolean => canonicalJson(a ?? null) === canonicalJson(b ?? null);

const asJson = (value: unknown): JsonValue => (value === undefined ? null : (value as JsonValue));

/**
 * The field-level changes from `from` to `to` (either may be null: a kapp created or deleted), in a stable order:
 * `dependsOn`, `conditionsOk`, then phase by phase: removed steps, added steps, the order of the remaining steps,
 * and for each step in both, its changed fields (env one variable at a time).
 */
export function diffKappSpecs(from: SpecKapp | null, to: SpecKapp | null): SpecChange[] {
  const changes: SpecChange[] = [];
  if (!same(from?.dependsOn ?? null, to?.dependsOn ?? null)) {
    changes.push({ path: ['dependsOn'], from: asJson(from?.dependsOn ?? null), to: asJson(to?.dependsOn ?? null) });
  }
  if (from && to && from.conditionsOk !== to.conditionsOk) {
    changes.push({ path: ['conditionsOk'], from: from.conditionsOk, to: to.conditionsOk });
  }
  for (const phase of PHASES) {
    const olds = keyedSteps(from?.phases[phase] ?? []);
    const news = keyedSteps(to?.phases[phase] ?? []);
    for (const [key, step] of olds) {
      if (!news.has(key)) changes.push({ path: [phase, key], from: asJson(redactStep(step)), to: null });
    }
    for (const [key, step] of news) {
      if (!olds.has(key)) changes.push({ path: [phase, key], from: null, to: asJson(redactStep(step)) });
    }
    const oldOrder = [...olds.keys()].filter((k) => news.has(k));
    const newOrder = [...news.keys()].filter((k) => olds.has(k));
    if (!same(oldOrder, newOrder)) changes.push({ path: [phase], from: oldOrder, to: newOrder });
    for (const [key, after] of news) {
      const before = olds.get(key);
      if (!before) continue;
      const maskedBefore = redactStep(before);
      const maskedAfter = redactStep(after, before);
      for (const field of STEP_FIELDS) {
        if (same(before[field], after[field])) continue;
        changes.push({ path: [phase, key, field], from: asJson(maskedBefore[field]), to: asJson(maskedAfter[field]) });
      }
      const names = [...new Set([...Object.keys(before.env), ...Object.keys(after.env)])].sort(compareText);
      for (const name of names) {
        const a = Object.hasOwn(before.env, name) ? before.env[name] : undefined;
        const b = Object.hasOwn(after.env, name) ? after.env[name] : undefined;
        if (a === b || (a !== undefined && b !== undefined && isMask(a))) continue;
        changes.push({
          path: [phase, key, 'env', name],
          from: a === undefined ? null : (maskedBefore.env[name] ?? null),
          to: b === undefined ? null : (maskedAfter.env[name] ?? null),
        });
      }
    }
  }
  return changes;
}

/**
 * A recorded or live output value with sensitive text masked: `(sensitive)` for a value holding a run's
 * `<sensitive>` mark, and a URL's password in a text.
 */
export function maskOutputValue(value: JsonValue): JsonValue {
  if (canonicalJson(value).includes('<sensitive>')) return SENSITIVE;
  // A URL with a password in an ordinary output: the password goes.
  return typeof value === 'string' ? maskText(value, false, undefined, false) : value;
}

/** The changes between two output maps (by output id, sorted), values masked where sensitive. */
export function diffOutputValues(from: JsonValue, to: JsonValue): SpecChange[] {
  if (!isObject(from) || !isObject(to)) {
    return same(from, to) ? [] : [{ path: ['outputs'], from: maskOutputValue(from), to: maskOutputValue(to) }];
  }
  const a = from;
  const b = to;
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort(compareText);
  const out: SpecChange[] = [];
  for (const key of keys) {
    const before = Object.hasOwn(a, key) ? (a[key] as JsonValue) : null;
    const after = Object.hasOwn(b, key) ? (b[key] as JsonValue) : null;
    if (same(before, after)) continue;
    const maskedAfter = maskOutputValue(after);
    out.push({
      path: ['outputs', key],
      from: maskOutputValue(before),
      to: maskedAfter === SENSITIVE && before !== null ? SENSITIVE_CHANGED : maskedAfter,
    });
  }
  return out;
}

function isObject(value: JsonValue): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value for a one-line display: `(none)`, a quoted text, arguments joined by spaces and quoted, or JSON. */
export function formatChangeValue(value: JsonValue, field?: string): string {
  if (value === null) return '(none)';
  if (typeof value === 'string')
    return value === SENSITIVE || value === SENSITIVE_CHANGED ? value : JSON.stringify(value);
  if (field === 'args' && Array.isArray(value)) return JSON.stringify(value.map((v) => textOf(v)).join(' '));
  return JSON.stringify(value);
}

/** The command line of a (masked) step, for `+`/`-` lines: the command and its arguments. */
function stepLine(value: JsonValue): string {
  if (!isObject(value)) return formatChangeValue(value);
  const command = typeof value.command === 'string' ? value.command : '';
  const args = Array.isArray(value.args) ? value.args.filter((a): a is string => typeof a === 'string') : [];
  return [command, ...args].join(' ');
}

/**
 * One change as a line, terraform-style: `+ apply_install/helm: helm upgrade …` (step added), `- …` (removed),
 * `~ apply_install/helm-install args: "--version 1.2" → "--version 1.3"`, `~ apply_install order: a, b → b, a`.
 */
export function formatChange(change: SpecChange): string {
  const [first, second, field, ...rest] = change.path;
  if (change.path.length === 2 && first !== 'outputs') {
    const sign = change.from === null ? '+' : change.to === null ? '-' : '~';
    return `${sign} ${first ?? ''}/${second ?? ''}: ${stepLine(change.from === null ? change.to : change.from)}`;
  }
  if (change.path.length === 1 && first !== 'dependsOn' && first !== 'conditionsOk' && first !== 'outputs') {
    const list = (v: JsonValue): string =>
      Array.isArray(v) ? v.map((x) => textOf(x)).join(', ') : formatChangeValue(v);
    return `~ ${first ?? ''} order: ${list(change.from)} → ${list(change.to)}`;
  }
  const where =
    change.path.length >= 3 ? `${first ?? ''}/${second ?? ''} ${[field, ...rest].join('.')}` : change.path.join('.');
  const sign = change.from === null ? '+' : change.to === null ? '-' : '~';
  return `${sign} ${where}: ${formatChangeValue(change.from, field)} → ${formatChangeValue(change.to, field)}`;
}

/** A list item as text: itself when a string, else its JSON. */
function textOf(value: JsonValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
