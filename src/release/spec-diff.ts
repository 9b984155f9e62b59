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
import type { SpecKapp, SpecSource, SpecStep, SpecTemplate } from '../plan/spec.js';
import { KEYED_MASK, SECRET_NAME, URL_PASSWORD } from '../plan/secrets.js';
import { portablePath } from '../plan/complete-spec.js';
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
  /** A template's changed lines (`- old`, `+ new`): non-sensitive templates whose content both sides recorded. */
  lines?: string[];
}
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
  const masked = args.map((arg, i) => {
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
  // Nothing masked: the list given (most steps' arguments hold no secret, and a big stack has many steps).
  return masked.every((arg, i) => arg === args[i]) ? (args as string[]) : masked;
}

function maskEnv(
  env: Readonly<Record<string, string>>,
  other: Readonly<Record<string, string>> | undefined,
  markChanges: boolean,
): Record<string, string> {
  let out: Record<string, string> | undefined;
  for (const name in env) {
    if (!Object.hasOwn(env, name)) continue;
    const value = env[name] as string;
    const before = other && Object.hasOwn(other, name) ? other[name] : undefined;
    const masked = maskText(value, isSecretName(name), before, markChanges);
    if (masked !== value) (out ??= { ...env })[name] = masked;
  }
  // Nothing masked: the map given.
  return out ?? env;
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
  return showMasks(redactedSteps(kapp, other), other ? () => canonicalJson(other) : null);
}

/**
 * As `redactKappSpec`, for a kapp planned now (`kapps generate`) rather than read from a record: such a spec holds
 * no keyed mask to show, so it is not searched for one.
 */
export function redactPlannedKapp(kapp: SpecKapp): SpecKapp {
  return redactedSteps(kapp, undefined);
}

function redactedSteps(kapp: SpecKapp, other: SpecKapp | null | undefined): SpecKapp {
  const phases = {} as SpecKapp['phases'];
  for (const phase of PHASES) {
    const steps = kapp.phases[phase] ?? [];
    if (!other || steps.length === 0) {
      // Nothing to match a step with: each masked on its own (a big stack has tens of thousands of steps).
      phases[phase] = steps.map((step) => redactStep(step));
      continue;
    }
    const olds = keyedSteps(other.phases[phase] ?? []);
    phases[phase] = [...keyedSteps(steps)].map(([key, step]) => redactStep(step, olds.get(key) ?? undefined));
  }
  return { ...kapp, dependsOn: [...kapp.dependsOn], phases };
}

/**
 * Plain data with the keyed masks of a recorded spec (`(sensitive#…)`) shown as `(sensitive)`, or, when `other` (the
 * old side's text) is given and does not hold the same mask, as `(sensitive, changed)`. The digests never show.
 */
export function showMasks<T>(value: T, other: string | (() => string) | null): T {
  // Most specs hold no keyed mask: they are given back as they are (nothing of them is changed afterwards), and the
  // old side's text is only made for a spec that holds one.
  if (!holdsKeyedMask(value)) return value;
  let oldText: string | null | undefined = typeof other === 'function' ? undefined : other;
  const old = (): string | null => (oldText === undefined ? (oldText = (other as () => string)()) : oldText);
  const show = (text: string): string =>
    text.includes('(sensitive#')
      ? text.replace(KEYED_MASK, (mask) => {
          const before = old();
          return before !== null && !before.includes(mask) ? SENSITIVE_CHANGED : SENSITIVE;
        })
      : text;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return show(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, m] of Object.entries(v)) out[k] = walk(m);
      return out;
    }
    return v;
  };
  return walk(value) as T;
}

/** Whether any text of plain data holds a keyed mask (`(sensitive#…)`). */
function holdsKeyedMask(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('(sensitive#');
  if (value === null || typeof value !== 'object') return false;
  // Serialising is native and much faster than walking the objects; a mask can only be in a string.
  return JSON.stringify(value).includes('(sensitive#');
}

/**
 * A stack's spec with the values whose names look secret masked, as the preview shows them: what `kapps generate`
 * prints and a release records (whether a kapp changed is decided by the digests of the full specs).
 */
export function redactStackSpec<T extends { kapps: SpecKapp[] }>(spec: T): T {
  return { ...spec, kapps: spec.kapps.map((k) => redactKappSpec(k)) };
}

/**
 * Steps by key: the name, `name#2`, `name#3`, … for repeated names. A key already taken (a step may be named `a#2`
 * itself, in another run unit than two steps named `a`) moves the repeat on to the next free number: every step keeps
 * a key of its own.
 */
function keyedSteps(steps: readonly SpecStep[]): Map<string, SpecStep> {
  const out = new Map<string, SpecStep>();
  const seen = new Map<string, number>();
  for (const step of steps) {
    let n = (seen.get(step.name) ?? 0) + 1;
    let key = n === 1 ? step.name : `${step.name}#${n}`;
    while (out.has(key)) key = `${step.name}#${++n}`;
    seen.set(step.name, n);
    out.set(key, step);
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

/** Whether two values are the same data: texts, numbers and booleans compared as they are, the rest canonically. */
const same = (a: unknown, b: unknown): boolean => {
  const x = a ?? null;
  const y = b ?? null;
  if (x === y) return true;
  if (x === null || y === null || typeof x !== 'object' || typeof y !== 'object') return false;
  if (Array.isArray(x) && Array.isArray(y)) {
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!same(x[i], y[i])) return false;
    return true;
  }
  return canonicalJson(x) === canonicalJson(y);
};

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
      // Masked only when something of the step changed.
      let masked: { before: SpecStep; after: SpecStep } | undefined;
      const maskedSteps = (): { before: SpecStep; after: SpecStep } =>
        (masked ??= { before: redactStep(before), after: redactStep(after, before) });
      for (const field of STEP_FIELDS) {
        if (same(before[field], after[field])) continue;
        const { before: maskedBefore, after: maskedAfter } = maskedSteps();
        changes.push({ path: [phase, key, field], from: asJson(maskedBefore[field]), to: asJson(maskedAfter[field]) });
      }
      const names = [...new Set([...Object.keys(before.env), ...Object.keys(after.env)])].sort(compareText);
      for (const name of names) {
        const a = Object.hasOwn(before.env, name) ? before.env[name] : undefined;
        const b = Object.hasOwn(after.env, name) ? after.env[name] : undefined;
        if (a === b || (a !== undefined && b !== undefined && isMask(a))) continue;
        changes.push({
          path: [phase, key, 'env', name],
          from: a === undefined ? null : (maskedSteps().before.env[name] ?? null),
          to: b === undefined ? null : (maskedSteps().after.env[name] ?? null),
        });
      }
    }
  }
  if (bothRecorded(from, to)) {
    diffSources(from?.sources ?? [], to?.sources ?? [], changes);
    diffTemplates(from?.templates ?? [], to?.templates ?? [], changes);
    diffVars(['vars'], from?.vars ?? {}, to?.vars ?? {}, changes);
  }
  // A mask on the new side that the old spec holds nowhere stands for a changed secret.
  if (changes.length === 0) return changes;
  const oldText = from ? canonicalJson(from) : null;
  return changes.map((c) => {
    const out: SpecChange = { ...c, from: showMasks(c.from, null), to: showMasks(c.to, oldText) };
    if (c.lines) out.lines = c.lines.map((line) => showMasks(line, line.startsWith('+') ? oldText : null));
    return out;
  });
}

/** The fields of spec format 2 that a spec written before it did not record. */
export const FORMAT_2_FIELDS = ['sources', 'templates', 'vars'] as const;

/** Whether both sides (a missing side counts) recorded sources, templates and variables. */
function bothRecorded(from: SpecKapp | null, to: SpecKapp | null): boolean {
  if (!from && !to) return false;
  return (from === null || from.sources !== undefined) && (to === null || to.sources !== undefined);
}

/** The fields of spec format 2 the old side did not record while the new side has them (empty when both did). */
export function notRecorded(from: SpecKapp | null, to: SpecKapp | null): string[] {
  if (!from || !to || from.sources !== undefined || to.sources === undefined) return [];
  return [...FORMAT_2_FIELDS];
}

const ROOT_NAME = /\$\{(?:kapp_dir|workspace|stack_dir)\}/g;

/**
 * The spec `old`, recorded before spec format 2 with the recording machine's absolute paths, with those paths made
 * portable as `portable` (a later spec of the same kapp) records them. Each root (`${kapp_dir}`, `${workspace}`,
 * `${stack_dir}`) is learnt where both hold a string at the same place (a step's working directory, capture files,
 * arguments, environment, conditions) and the portable one names the root once, the texts around it being the same;
 * then every string of the old steps has those roots replaced (longest first). A root never learnt stays as written.
 */
export function portableLike(old: SpecKapp, portable: SpecKapp): SpecKapp {
  const roots = new Map<string, string>();
  const learn = (before: string | undefined, after: string | undefined): void => {
    if (before === undefined || after === undefined) return;
    const found = [...after.matchAll(ROOT_NAME)];
    const match = found[0];
    if (found.length !== 1 || match === undefined) return;
    const name = match[0];
    const prefix = after.slice(0, match.index);
    const suffix = after.slice(match.index + name.length);
    if (before.length < prefix.length + suffix.length + 2) return;
    if (!before.startsWith(prefix) || !before.endsWith(suffix)) return;
    const dir = before.slice(prefix.length, before.length - suffix.length);
    if (dir.startsWith('/') && !roots.has(name)) roots.set(name, dir);
  };
  const learnAll = (a: readonly string[] | undefined, b: readonly string[] | undefined): void => {
    if (a && b && a.length === b.length) a.forEach((text, i) => learn(text, b[i]));
  };
  for (const phase of PHASES) {
    const news = keyedSteps(portable.phases[phase] ?? []);
    for (const [key, before] of keyedSteps(old.phases[phase] ?? [])) {
      const after = news.get(key);
      if (!after) continue;
      learn(before.workingDir, after.workingDir);
      learn(before.stdout, after.stdout);
      learn(before.stderr, after.stderr);
      learnAll(before.args, after.args);
      learnAll(before.conditions, after.conditions);
      for (const [name, value] of Object.entries(before.env)) learn(value, after.env[name]);
    }
  }
  if (roots.size === 0) return old;
  const pairs = [...roots].map(([name, dir]) => [dir, name] as const).sort((a, b) => b[0].length - a[0].length);
  const phases = {} as SpecKapp['phases'];
  for (const phase of PHASES) {
    phases[phase] = (old.phases[phase] ?? []).map((step) => portableStrings(step, pairs) as SpecStep);
  }
  return { ...old, phases };
}

function portableStrings(value: unknown, roots: readonly (readonly [string, string])[]): unknown {
  if (typeof value === 'string') return portablePath(value, roots);
  if (Array.isArray(value)) return value.map((v) => portableStrings(v, roots));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) out[key] = portableStrings(member, roots);
    return out;
  }
  return value;
}

function sourceView(s: SpecSource): JsonValue {
  const out: Record<string, JsonValue> = { uri: s.uri, kind: s.kind };
  if (s.ref !== undefined) out.ref = s.ref;
  if (s.commit !== undefined) out.commit = s.commit;
  if (s.digest !== undefined) out.digest = s.digest;
  return out;
}

function diffSources(a: readonly SpecSource[], b: readonly SpecSource[], changes: SpecChange[]): void {
  const olds = new Map(a.map((s) => [s.id, s] as const));
  const news = new Map(b.map((s) => [s.id, s] as const));
  for (const id of [...new Set([...olds.keys(), ...news.keys()])]) {
    const before = olds.get(id);
    const after = news.get(id);
    if (before && after && same(sourceView(before), sourceView(after))) continue;
    changes.push({
      path: ['sources', id],
      from: before ? sourceView(before) : null,
      to: after ? sourceView(after) : null,
    });
  }
}

function templateView(t: SpecTemplate): JsonValue {
  return { source: t.source, dest: t.dest, sensitive: t.sensitive, lineCount: t.lineCount, digest: t.digest };
}

function diffTemplates(a: readonly SpecTemplate[], b: readonly SpecTemplate[], changes: SpecChange[]): void {
  const olds = new Map(a.map((t) => [t.id, t] as const));
  const news = new Map(b.map((t) => [t.id, t] as const));
  for (const id of [...new Set([...olds.keys(), ...news.keys()])]) {
    const before = olds.get(id);
    const after = news.get(id);
    if (before && after && same(templateView(before), templateView(after))) continue;
    const change: SpecChange = {
      path: ['templates', id],
      from: before ? templateView(before) : null,
      to: after ? templateView(after) : null,
    };
    const sensitive = (before?.sensitive ?? false) || (after?.sensitive ?? false);
    if (!sensitive && (before === undefined || before.lines) && (after === undefined || after.lines)) {
      change.lines = lineDiff(before?.lines ?? [], after?.lines ?? []);
    }
    changes.push(change);
  }
}

function diffVars(at: string[], a: unknown, b: unknown, changes: SpecChange[]): void {
  if (isPlainObject(a) && isPlainObject(b)) {
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort(compareText)) {
      const inA = Object.hasOwn(a, key);
      const inB = Object.hasOwn(b, key);
      if (inA && inB) diffVars([...at, key], a[key], b[key], changes);
      else changes.push({ path: [...at, key], from: inA ? asJson(a[key]) : null, to: inB ? asJson(b[key]) : null });
    }
    return;
  }
  if (!same(a, b)) changes.push({ path: at, from: asJson(a), to: asJson(b) });
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Lines of a longest-common-subsequence diff: `- ` removed, `+ ` added (unchanged lines left out). */
export function lineDiff(a: readonly string[], b: readonly string[]): string[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const x = a.slice(start, endA);
  const y = b.slice(start, endB);
  // lengths[i][j]: the LCS of x[i..] and y[j..] (templates are bounded, so this stays small).
  const lengths: number[][] = Array.from({ length: x.length + 1 }, () => new Array<number>(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) {
      const row = lengths[i] as number[];
      row[j] = x[i] === y[j] ? (lengths[i + 1]?.[j + 1] ?? 0) + 1 : Math.max(lengths[i + 1]?.[j] ?? 0, row[j + 1] ?? 0);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      i++;
      j++;
    } else if (j >= y.length || (i < x.length && (lengths[i + 1]?.[j] ?? 0) >= (lengths[i]?.[j + 1] ?? 0))) {
      out.push(`- ${x[i] ?? ''}`);
      i++;
    } else {
      out.push(`+ ${y[j] ?? ''}`);
      j++;
    }
  }
  return out;
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
  if (first === 'sources' && change.path.length === 2) return formatSourceChange(change);
  if (first === 'templates' && change.path.length === 2) return formatTemplateChange(change);
  if (first === 'vars') {
    const sign = change.from === null ? '+' : change.to === null ? '-' : '~';
    return `${sign} ${change.path.join('.')}: ${formatChangeValue(change.from)} → ${formatChangeValue(change.to)}`;
  }
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

/** One change and, with `diff`, a template's changed lines under it (indented by `indent`). */
export function formatChangeLines(change: SpecChange, indent: string, diff: boolean): string[] {
  const lines = [`${indent}${formatChange(change)}`];
  if (diff && change.lines) for (const line of change.lines) lines.push(`${indent}    ${line}`);
  return lines;
}

function field(value: JsonValue, name: string): JsonValue {
  return isObject(value) && Object.hasOwn(value, name) ? (value[name] ?? null) : null;
}

function textField(value: JsonValue, name: string): string {
  const v = field(value, name);
  return typeof v === 'string' ? v : '';
}

/** `wordpress-0.1.0 (a1b2c3d)`, or the short file digest of a file source. */
function sourceState(value: JsonValue): string {
  const ref = field(value, 'ref');
  const commit = field(value, 'commit');
  if (typeof ref === 'string') {
    return `${ref} (${typeof commit === 'string' ? commit.slice(0, 7) : 'not resolved'})`;
  }
  return field(value, 'digest') === null ? 'files not read' : 'files';
}

/** `~ source kapps.git//incubator/wordpress: wordpress-0.1.0 (a1b2c3d) → wordpress-0.2.0 (e4f5a6b)`. */
function formatSourceChange(change: SpecChange): string {
  const uri = (v: JsonValue): string => textField(v, 'uri');
  if (change.from === null) return `+ source ${uri(change.to)}: ${sourceState(change.to)}`;
  if (change.to === null) return `- source ${uri(change.from)}`;
  const name = uri(change.from) === uri(change.to) ? uri(change.to) : `${uri(change.from)} → ${uri(change.to)}`;
  const before = sourceState(change.from);
  const after = sourceState(change.to);
  if (before === after || (before === 'files' && after === 'files not read')) {
    if (uri(change.from) !== uri(change.to) && same(field(change.from, 'digest'), field(change.to, 'digest'))) {
      return `~ source ${name}`;
    }
    // The same ref and commit: the files of the path changed.
    return `~ source ${name}: files changed`;
  }
  return `~ source ${name}: ${before} → ${after}`;
}

/** `~ template values.yaml → _generated_values.yaml: 2 lines changed`. */
function formatTemplateChange(change: SpecChange): string {
  const side = change.to ?? change.from;
  const dest = textField(side, 'dest').replace(/^\$\{kapp_dir\}\//, '');
  const name = `template ${textField(side, 'source')} → ${dest}`;
  const count = field(side, 'lineCount');
  if (change.from === null) return `+ ${name} (${typeof count === 'number' ? plural(count, 'line') : 'new'})`;
  if (change.to === null) return `- ${name}`;
  if (field(change.to, 'sensitive') === true || field(change.from, 'sensitive') === true) {
    return `~ ${name}: changed (sensitive)`;
  }
  if (field(change.to, 'digest') === null) return `~ ${name}: rendered during the run (it reads outputs)`;
  if (change.lines) {
    const removed = change.lines.filter((l) => l.startsWith('-')).length;
    const added = change.lines.length - removed;
    return `~ ${name}: ${plural(Math.max(removed, added), 'line')} changed`;
  }
  return `~ ${name}: changed`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** A list item as text: itself when a string, else its JSON. */
function textOf(value: JsonValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
