/**
 * History views of releases, pure (no I/O): the `kapps release list` table and JSON, and the difference between
 * two releases (`kapps release diff`).
 *
 * A kapp is *present* in a release when the release's state has an entry for it whose status is not `deleted`.
 * Between releases A and B a kapp is added (present in B only), removed (present in A only) or changed (present in
 * both with a different spec digest, different outputs or a different status).
 */
import { canonicalJson } from './canonical-json.js';
import { formatOwner } from './owner.js';
import type { SpecKapp } from '../plan/spec.js';
import {
  diffKappSpecs,
  diffOutputValues,
  formatChange,
  formatChangeLines,
  notRecorded,
  portableLike,
  type SpecChange,
} from './spec-diff.js';
import type { JsonValue, KappState, KappStateStatus, Release, ReleaseSummary } from './types.js';

/** One row of `kapps release list -o json`. */
export interface ReleaseListEntry extends ReleaseSummary {
  /** finishedAt − createdAt in milliseconds; null while running. */
  durationMs: number | null;
}

/** The list entries of the summaries (same order). */
export function releaseListEntries(summaries: readonly ReleaseSummary[]): ReleaseListEntry[] {
  return summaries.map((summary) => ({ ...summary, durationMs: durationOf(summary) }));
}

/** The `kapps release list` table: one line per release, newest first, with a header; ends with a newline. */
export function formatReleaseTable(summaries: readonly ReleaseSummary[]): string {
  // The commit column only for a stack some of whose releases recorded one (a project from git, a git checkout).
  const withCommit = summaries.some((s) => s.source !== undefined);
  const header = ['REVISION', 'OPERATION', 'PHASE', 'KAPPS', 'OWNER', 'STARTED', 'DURATION'];
  if (withCommit) header.push('COMMIT');
  const rows = summaries.map((s) => {
    const duration = durationOf(s);
    const commit = withCommit
      ? [s.source ? `${shortSha(s.source.commit)}${s.source.dirty === true ? ' (dirty)' : ''}` : '-']
      : [];
    return [
      String(s.revision),
      s.rollbackOf !== undefined ? `${s.operation} (rollback of ${s.rollbackOf})` : s.operation,
      s.unlocked ? `${s.phase} (unlocked)` : s.phase,
      String(s.kappsCount),
      formatOwner(s.owner),
      formatTime(s.createdAt),
      duration === null ? 'running' : formatDuration(duration),
      ...commit,
    ];
  });
  return formatColumns([header, ...rows]);
}

/**
 * What `kapps release show` says of the approvals that let a release apply, one line each, oldest first:
 * `approved by alice at 2026-…: looks fine`, and `approvals skipped by break glass: ops (admin) at 2026-…`. Names
 * and comments are shown with control characters escaped (they come from API requests).
 */
export function formatReleaseApprovals(release: Pick<ReleaseSummary, 'approvals' | 'breakGlass'>): string[] {
  const lines = (release.approvals ?? []).map(
    (a) => `approved by ${printable(a.by)} at ${a.at}${a.comment ? `: ${printable(a.comment)}` : ''}`,
  );
  const glass = release.breakGlass;
  if (glass)
    lines.push(`approvals skipped by break glass: ${printable(glass.by)} (${printable(glass.role)}) at ${glass.at}`);
  return lines;
}

/** Text with its control characters (newlines, escapes) written as JSON escapes: one line, nothing a terminal runs. */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) =>
    c < ' ' ? JSON.stringify(c).slice(1, -1) : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A kapp's change between two releases. */
export interface KappChange {
  id: string;
  /** The spec digest differs. */
  spec: boolean;
  /** The outputs differ; lists the top-level output keys added, removed and changed when both are objects. */
  outputs: { added: string[]; removed: string[]; changed: string[] } | null;
  /** The status differs. */
  status: { from: KappStateStatus; to: KappStateStatus } | null;
  /** Field-level changes of the spec (empty when either recorded spec is unknown), sensitive values masked. */
  changes: SpecChange[];
  /** The outputs that differ, `{path: ["outputs", id], from, to}`, values masked where sensitive. */
  outputChanges: SpecChange[];
}

/** The spec of each kapp as recorded by the release that last changed its entry, for both sides of a diff. */
export interface DiffSpecs {
  from: ReadonlyMap<string, SpecKapp>;
  to: ReadonlyMap<string, SpecKapp>;
}

/** The difference between two releases of one stack (`-o json` of `kapps release diff`). */
export interface ReleaseDiff {
  project: string;
  stack: string;
  from: number;
  to: number;
  /** Present in `to` only, with their status there. */
  added: { id: string; status: KappStateStatus }[];
  /** Present in `from` only, with their status in `from` and (if any) in `to`. */
  removed: { id: string; status: KappStateStatus; now: KappStateStatus | null }[];
  changed: KappChange[];
  /** Present in both, the same. */
  unchanged: string[];
  /**
   * Kapps present in both whose entry one release recorded before spec format 2: compared on what both recorded
   * (steps and dependencies, paths made portable), `fields` naming what `revision` did not record.
   */
  notRecorded: { id: string; revision: number; fields: string[] }[];
}

/** Compare the states of release `a` (older or not) and release `b`. Ids are sorted. */
export function diffReleases(a: Release, b: Release, specs?: DiffSpecs): ReleaseDiff {
  const present = (release: Release, id: string): KappState | undefined => {
    const entry = Object.hasOwn(release.state, id) ? release.state[id] : undefined;
    return entry && entry.status !== 'deleted' ? entry : undefined;
  };
  const ids = [...new Set([...Object.keys(a.state), ...Object.keys(b.state)])].sort(compareIds);
  const diff: ReleaseDiff = {
    project: b.project,
    stack: b.stack,
    from: a.revision,
    to: b.revision,
    added: [],
    removed: [],
    changed: [],
    unchanged: [],
    notRecorded: [],
  };
  for (const id of ids) {
    const before = present(a, id);
    const after = present(b, id);
    if (!before && !after) continue;
    if (!before && after) diff.added.push({ id, status: after.status });
    else if (before && !after) diff.removed.push({ id, status: before.status, now: b.state[id]?.status ?? null });
    else if (before && after) {
      const change: KappChange = {
        id,
        spec: before.specDigest !== after.specDigest,
        outputs: diffOutputs(before.outputs, after.outputs),
        status: before.status !== after.status ? { from: before.status, to: after.status } : null,
        changes: [],
        outputChanges: [],
      };
      const specA = specs?.from.get(id);
      const specB = specs?.to.get(id);
      const oldA = before.specFormat === undefined;
      if (oldA !== (after.specFormat === undefined) && specA && specB) {
        // One side recorded before spec format 2: its digest covers another form of the spec and its paths are the
        // machine's, so the specs themselves are compared, on what both recorded, the old one's paths made portable.
        const [old, other] = oldA ? [specA, specB] : [specB, specA];
        const portable = portableLike(old, other);
        change.changes = oldA ? diffKappSpecs(portable, other) : diffKappSpecs(other, portable);
        change.spec = change.changes.length > 0;
        const fields = notRecorded(portable, other);
        if (fields.length) diff.notRecorded.push({ id, revision: oldA ? a.revision : b.revision, fields });
      } else if (change.spec && specA && specB) change.changes = diffKappSpecs(specA, specB);
      if (change.outputs) change.outputChanges = diffOutputValues(before.outputs, after.outputs);
      if (change.spec || change.outputs || change.status) diff.changed.push(change);
      else diff.unchanged.push(id);
    }
  }
  return diff;
}

/** The readable form of a diff; ends with a newline. */
export function formatReleaseDiff(diff: ReleaseDiff): string {
  const lines = [`Release ${diff.from} → ${diff.to} of ${diff.project}/${diff.stack}`];
  for (const kapp of diff.added) lines.push(`+ ${kapp.id} (added, ${kapp.status})`);
  for (const kapp of diff.removed) {
    lines.push(`- ${kapp.id} (removed; was ${kapp.status}${kapp.now ? `, now ${kapp.now}` : ''})`);
  }
  for (const kapp of diff.changed) {
    const parts: string[] = [];
    if (kapp.status) parts.push(`status ${kapp.status.from} → ${kapp.status.to}`);
    if (kapp.spec) parts.push('spec changed');
    if (kapp.outputs) {
      const keys = [
        ...kapp.outputs.added.map((k) => `+${k}`),
        ...kapp.outputs.removed.map((k) => `-${k}`),
        ...kapp.outputs.changed.map((k) => `~${k}`),
      ];
      parts.push(keys.length ? `outputs changed (${keys.join(', ')})` : 'outputs changed');
    }
    lines.push(`~ ${kapp.id}: ${parts.join('; ')}`);
    // A template's changed lines are shown under it (masked where sensitive).
    for (const change of kapp.changes) lines.push(...formatChangeLines(change, '    ', true));
    for (const change of kapp.outputChanges) lines.push(`    ${formatChange(change)}`);
  }
  const changes = diff.added.length + diff.removed.length + diff.changed.length;
  if (changes === 0) lines.push('No differences.');
  lines.push(`${changes} changed, ${diff.unchanged.length} unchanged`);
  const byRevision = new Map<number, { ids: string[]; fields: string[] }>();
  for (const entry of diff.notRecorded) {
    const seen = byRevision.get(entry.revision) ?? { ids: [], fields: entry.fields };
    seen.ids.push(entry.id);
    byRevision.set(entry.revision, seen);
  }
  for (const [revision, { ids, fields }] of byRevision) {
    lines.push(
      `Note: release ${revision} did not record the ${fields.join(', ')} of ${ids.join(', ')}; ` +
        'compared their steps and dependencies only.',
    );
  }
  return `${lines.join('\n')}\n`;
}

function diffOutputs(a: JsonValue, b: JsonValue): KappChange['outputs'] {
  if (canonicalJson(a) === canonicalJson(b)) return null;
  if (!isObject(a) || !isObject(b)) return { added: [], removed: [], changed: [] };
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort(compareIds);
  const out = { added: [] as string[], removed: [] as string[], changed: [] as string[] };
  for (const key of keys) {
    const inA = Object.hasOwn(a, key);
    const inB = Object.hasOwn(b, key);
    if (!inA) out.added.push(key);
    else if (!inB) out.removed.push(key);
    else if (canonicalJson(a[key]) !== canonicalJson(b[key])) out.changed.push(key);
  }
  return out;
}

function isObject(value: JsonValue): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function durationOf(summary: ReleaseSummary): number | null {
  if (summary.finishedAt === undefined) return null;
  const ms = Date.parse(summary.finishedAt) - Date.parse(summary.createdAt);
  return Number.isFinite(ms) ? Math.max(0, ms) : null;
}

/** `2026-01-31T12:00:00Z`: an ISO time without milliseconds. */
export function formatTime(iso: string): string {
  return iso.replace(/\.\d+Z$/, 'Z');
}

/** A duration for tables: `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 03 min`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${String(seconds % 60).padStart(2, '0')} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

function formatColumns(rows: readonly string[][]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  const lines = rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
  return `${lines.join('\n')}\n`;
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The short form of a commit SHA, as kapps prints it (12 hex digits). */
function shortSha(sha: string): string {
  return sha.slice(0, 12);
}
