/**
 * Drift, as a pure comparison: the outputs each installed kapp reads now against those its release recorded,
 * output by output and field by field, less what an ignore rule or a noisy mark leaves out. Used by `kapps drift`
 * and by the runs server's drift checks (which keep the history, the episodes and the noisy marks).
 *
 * - An ignore rule names kapps (`infra:*`) and dotted output paths (`endpoint`, `info.last_seen`, `*.timestamp`,
 *   `**.etag`); a rule's path ignores everything under it.
 * - An output is noisy when two consecutive reads of it disagree with each other and neither equals the recorded
 *   value, with no release between them: it changes on every read (a timestamp), so its changes are not drift. A
 *   drift that happens once (read as recorded, then as changed) is never taken for noise.
 */
import { createHash } from 'node:crypto';
import type { JsonValue, ReleaseState } from './types.js';
import { canonicalJson } from './canonical-json.js';
import { maskOutputValue, SENSITIVE, SENSITIVE_CHANGED } from './spec-diff.js';
import type { PreviewRow, RefreshResult } from './preview.js';

/** An output change that is not drift (see the server's `drift.ignore`). */
export interface DriftIgnore {
  readonly kapp: string;
  readonly outputs: readonly string[];
}

/** One output that differs: its path (`["outputs", "endpoint", "host"]`), as recorded and as read, masked. */
export interface DriftChange {
  path: string[];
  from: JsonValue;
  to: JsonValue;
}

export interface DriftKapp {
  id: string;
  state: 'drifted' | 'unknown' | 'inSync';
  changes: DriftChange[];
  ignored: string[][];
  noisy: string[][];
  reason: string | null;
}

/** A drift report (the API's `driftReportSchema`). */
export interface DriftReport {
  project: string;
  stack: string;
  state: 'inSync' | 'drifted' | 'unknown';
  checkedAt: string;
  basedOnRevision: number | null;
  kapps: DriftKapp[];
  pending: { id: string; action: string }[];
  read: string[];
  reason: string | null;
  readDigests: Record<string, Record<string, string>>;
}

/** An output path marked noisy. */
export interface NoisyPath {
  readonly kapp: string;
  readonly path: readonly string[];
}

/** What the previous check read (the server keeps it): its release and the digest of each output path. */
export interface PreviousRead {
  readonly basedOnRevision: number | null;
  readonly digests: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

export interface DriftInput {
  project: string;
  stack: string;
  checkedAt: string;
  /** The preview's rows (after nothing was refreshed): pending changes are those not `UnChanged`. */
  rows: readonly PreviewRow[];
  /** The latest release's revision and state; null: no release yet. */
  basedOnRevision: number | null;
  state: ReleaseState | undefined;
  /** The outputs read per kapp (or why they could not be). */
  live: ReadonlyMap<string, RefreshResult>;
  ignore?: readonly DriftIgnore[];
  noisy?: readonly NoisyPath[];
  previous?: PreviousRead;
}

/** Output changes listed per kapp at the most (the rest said in one line). */
const MAX_CHANGES = 200;
/** How deep output values are compared and digested; below, a value is compared whole. */
const MAX_DEPTH = 8;
/** Output paths digested per kapp at the most; beyond, only the top-level outputs are. */
const MAX_DIGESTS = 500;

/** The drift report of one check, and the output paths this check found noisy. */
export function evaluateDrift(input: DriftInput): { report: DriftReport; newlyNoisy: NoisyPath[] } {
  const pending = input.rows.filter((r) => r.action !== 'UnChanged').map((r) => ({ id: r.id, action: r.action }));
  const base = {
    project: input.project,
    stack: input.stack,
    checkedAt: input.checkedAt,
    basedOnRevision: input.basedOnRevision,
    pending,
    read: [...input.live.keys()],
  };
  if (input.basedOnRevision === null || !input.state) {
    return {
      report: {
        ...base,
        state: 'unknown',
        kapps: [],
        reason: 'the stack has no release to compare with',
        readDigests: {},
      },
      newlyNoisy: [],
    };
  }
  const state = input.state;
  const readDigests: Record<string, Record<string, string>> = {};
  const newlyNoisy: NoisyPath[] = [];
  const kapps: DriftKapp[] = [];
  for (const [id, read] of input.live) {
    if ('error' in read) {
      kapps.push({ id, state: 'unknown', changes: [], ignored: [], noisy: [], reason: read.error });
      continue;
    }
    const recorded = Object.hasOwn(state, id) ? (state[id]?.outputs ?? {}) : {};
    const digests = outputDigests(read.outputs);
    readDigests[id] = digests;
    const noisyNow = noisyPaths(id, digests, outputDigests(recorded), input);
    newlyNoisy.push(...noisyNow.map((path) => ({ kapp: id, path })));
    const marks = [...(input.noisy ?? []).filter((n) => n.kapp === id).map((n) => n.path), ...noisyNow];
    const rules = (input.ignore ?? []).filter((r) => kappMatches(r.kapp, id)).flatMap((r) => r.outputs);
    const kapp = classify(id, outputChanges(recorded, read.outputs), rules, marks);
    if (kapp) kapps.push(kapp);
  }
  const order = new Map(input.rows.map((r, i) => [r.id, i] as const));
  kapps.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  const stateOf = kapps.some((k) => k.state === 'drifted')
    ? 'drifted'
    : kapps.some((k) => k.state === 'unknown')
      ? 'unknown'
      : 'inSync';
  const unknown = kapps.filter((k) => k.state === 'unknown').length;
  return {
    report: {
      ...base,
      state: stateOf,
      kapps,
      reason: stateOf === 'unknown' ? `the outputs of ${unknown} kapp(s) could not be read` : null,
      readDigests,
    },
    newlyNoisy,
  };
}

/** A kapp's entry of the report: its changes split into drift, ignored and noisy; undefined when nothing differs. */
function classify(
  id: string,
  changes: DriftChange[],
  rules: readonly string[],
  marks: readonly (readonly string[])[],
): DriftKapp | undefined {
  if (changes.length === 0) return undefined;
  const out: DriftKapp = { id, state: 'inSync', changes: [], ignored: [], noisy: [], reason: null };
  for (const change of changes) {
    const dotted = change.path.slice(1);
    if (rules.some((rule) => pathMatches(rule, dotted))) out.ignored.push(change.path);
    else if (marks.some((mark) => startsWith(change.path, mark))) out.noisy.push(change.path);
    else out.changes.push(change);
  }
  if (out.changes.length > MAX_CHANGES) {
    const more = out.changes.length - MAX_CHANGES;
    out.changes = out.changes.slice(0, MAX_CHANGES);
    out.changes.push({ path: ['outputs', '…'], from: null, to: `${more} more change(s) not listed` });
  }
  if (out.changes.length > 0) out.state = 'drifted';
  return out;
}

/** The output changes between two output maps, field by field (objects descended into), values masked. */
export function outputChanges(from: JsonValue, to: JsonValue): DriftChange[] {
  const out: DriftChange[] = [];
  descend(isObject(from) ? from : {}, isObject(to) ? to : {}, ['outputs'], out, 0);
  return out;
}

function descend(
  a: { [key: string]: JsonValue },
  b: { [key: string]: JsonValue },
  path: string[],
  out: DriftChange[],
  depth: number,
): void {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  for (const key of keys) {
    const before = Object.hasOwn(a, key) ? (a[key] as JsonValue) : null;
    const after = Object.hasOwn(b, key) ? (b[key] as JsonValue) : null;
    if (canonicalJson(before) === canonicalJson(after)) continue;
    const at = [...path, key];
    if (isObject(before) && isObject(after) && depth < MAX_DEPTH) {
      descend(before, after, at, out, depth + 1);
      continue;
    }
    const masked = maskOutputValue(after);
    out.push({
      path: at,
      from: maskOutputValue(before),
      to: masked === SENSITIVE && before !== null ? SENSITIVE_CHANGED : masked,
    });
  }
}

/**
 * A digest of each output path's value (`endpoint.host` → sha256), masked values digested as masks (a secret's
 * digest is never kept). Paths are dotted; only objects are descended into.
 */
export function outputDigests(outputs: JsonValue): Record<string, string> {
  const out: Record<string, string> = {};
  const leaves: [string, JsonValue][] = [];
  const walk = (value: JsonValue, path: string[], depth: number): void => {
    if (isObject(value) && depth < MAX_DEPTH && maskOutputValue(value) === value) {
      for (const key of Object.keys(value).sort()) walk(value[key] as JsonValue, [...path, key], depth + 1);
    } else if (path.length > 0) {
      leaves.push([path.join('.'), value]);
    }
  };
  walk(outputs, [], 0);
  const chosen: [string, JsonValue][] =
    leaves.length <= MAX_DIGESTS ? leaves : isObject(outputs) ? Object.entries(outputs).slice(0, MAX_DIGESTS) : [];
  for (const [key, value] of chosen) out[key] = digest(maskOutputValue(value));
  return out;
}

function digest(value: JsonValue): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex').slice(0, 32);
}

/**
 * The output paths of kapp `id` this read finds noisy: read differently by the previous check (of the same release)
 * and now, neither read equal to the recorded value.
 */
function noisyPaths(
  id: string,
  now: Readonly<Record<string, string>>,
  recorded: Readonly<Record<string, string>>,
  input: DriftInput,
): string[][] {
  const previous = input.previous;
  if (!previous || previous.basedOnRevision !== input.basedOnRevision) return [];
  const before = previous.digests[id];
  if (!before) return [];
  const out: string[][] = [];
  for (const [key, value] of Object.entries(now)) {
    const then = before[key];
    if (then === undefined || then === value) continue;
    if (recorded[key] === value || recorded[key] === then) continue;
    out.push(['outputs', ...key.split('.')]);
  }
  return out;
}

/** Whether `path` begins with `prefix`. */
function startsWith(path: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= path.length && prefix.every((p, i) => path[i] === p);
}

/** Whether a kapp pattern (`infra:*`, `*`) matches `id`: `*` stands for any text. */
export function kappMatches(pattern: string, id: string): boolean {
  return globRegExp(pattern, '.*').test(id);
}

/**
 * Whether an output pattern matches a dotted path or one of its parents: segments compared one by one, `*` within a
 * segment standing for any text of it, a `**` segment for any number of segments.
 */
export function pathMatches(pattern: string, path: readonly string[]): boolean {
  const segments = pattern.split('.');
  const match = (i: number, j: number): boolean => {
    if (i === segments.length) return true; // the pattern is a prefix: everything under it matches
    if (j === path.length) return segments.slice(i).every((s) => s === '**') && i < segments.length;
    const segment = segments[i]!;
    if (segment === '**') return match(i + 1, j) || match(i, j + 1);
    return globRegExp(segment, '.*').test(path[j]!) && match(i + 1, j + 1);
  };
  return match(0, 0);
}

function globRegExp(pattern: string, star: string): RegExp {
  const body = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join(star);
  return new RegExp(`^${body}$`, 's');
}

function isObject(value: JsonValue): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
