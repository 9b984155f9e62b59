/**
 * Preview: what an install would do to each kapp, computed from the stack's kapps and the state of the latest
 * release, without running anything. Pure: no I/O.
 *
 * Actions:
 * - `Create`: the kapp is not installed (no state entry, or its last status is not `installed`);
 * - `Update`: installed, but its spec digest differs from the recorded one;
 * - `UnChanged`: installed with the same spec digest;
 * - `Delete`: installed according to the state, but no longer in the stack.
 *
 * Rows come in the stack's order, then the deleted kapps by id, so the output is stable.
 */
import { createHash } from 'node:crypto';
import type { SpecKapp } from '../plan/spec.js';
import { canonicalJson } from './canonical-json.js';
import type { ReleaseState } from './types.js';

/** The action preview predicts for one kapp. */
export type PreviewAction = 'Create' | 'Update' | 'UnChanged' | 'Delete';

/** One row of a preview. */
export interface PreviewRow {
  /** Kapp id (`manifest:kapp`). */
  id: string;
  action: PreviewAction;
}

/** A kapp of the stack as preview needs it: its id and the digest of its spec (see `specDigest`). */
export interface PreviewKapp {
  id: string;
  specDigest: string;
}

/**
 * The stable JSON shape of a preview (`-o json`): the stack, the project, the revision whose state the preview
 * compares with (null when the stack has no release yet) and one entry per kapp in row order.
 */
export interface PreviewDocument {
  stack: string;
  project: string;
  basedOnRevision: number | null;
  kapps: PreviewRow[];
}

/**
 * sha256 (lowercase hex) of the kapp's canonical spec JSON (keys sorted), leaving out the `selected` flag, which
 * says how the kapp was chosen rather than what it is.
 */
export function specDigest(kapp: SpecKapp): string {
  const { selected: _selected, ...rest } = kapp;
  return createHash('sha256').update(canonicalJson(rest)).digest('hex');
}

/** The preview rows for the stack's `kapps` (in stack order) against the latest release's state. */
export function computePreview(kapps: readonly PreviewKapp[], lastState: ReleaseState | undefined): PreviewRow[] {
  const state = lastState ?? {};
  const rows: PreviewRow[] = [];
  const inStack = new Set<string>();
  for (const kapp of kapps) {
    inStack.add(kapp.id);
    const entry = Object.hasOwn(state, kapp.id) ? state[kapp.id] : undefined;
    let action: PreviewAction;
    if (!entry || entry.status !== 'installed') action = 'Create';
    else action = entry.specDigest === kapp.specDigest ? 'UnChanged' : 'Update';
    rows.push({ id: kapp.id, action });
  }
  const gone = Object.keys(state)
    .filter((id) => !inStack.has(id) && state[id]?.status === 'installed')
    .sort(compareIds);
  for (const id of gone) rows.push({ id, action: 'Delete' });
  return rows;
}

/** Build the JSON document of a preview. */
export function previewDocument(
  stack: string,
  project: string,
  basedOnRevision: number | null,
  rows: readonly PreviewRow[],
): PreviewDocument {
  return { stack, project, basedOnRevision, kapps: rows.map((row) => ({ id: row.id, action: row.action })) };
}

/**
 * A plain two-column table (`ID`, `ACTION`) of the rows, one line each, ending with a newline; with no rows, a
 * single line saying so.
 */
export function formatPreviewTable(rows: readonly PreviewRow[]): string {
  if (rows.length === 0) return 'No kapps to preview.\n';
  const width = Math.max(2, ...rows.map((row) => row.id.length));
  const lines = [`${'ID'.padEnd(width)}  ACTION`];
  for (const row of rows) lines.push(`${row.id.padEnd(width)}  ${row.action}`);
  return `${lines.join('\n')}\n`;
}

/** Count the rows per action, e.g. for a one-line summary. */
export function countActions(rows: readonly PreviewRow[]): Record<PreviewAction, number> {
  const counts: Record<PreviewAction, number> = { Create: 0, Update: 0, UnChanged: 0, Delete: 0 };
  for (const row of rows) counts[row.action]++;
  return counts;
}

/** Order ids by UTF-16 code units, the same on every machine (no locale). */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
