/**
 * Preview: what an install would do to each kapp, computed from the stack's kapps and the state of the latest
 * release, without running anything. Pure: no I/O.
 *
 * Actions:
 * - `Create`: the kapp is not installed (no state entry, or its last status is not `installed`);
 * - `Update`: installed, but its spec digest differs from the recorded one;
 * - `UnChanged`: installed with the same spec digest;
 * - `Delete`: installed according to the state, but no longer in the stack;
 * - with a refresh (the live outputs read by the kapps' output phase): `Drifted`, an `UnChanged` kapp whose live
 *   outputs differ from the recorded ones; `Unknown`, an `UnChanged` kapp whose output phase failed.
 *
 * Rows come in the stack's order, then the deleted kapps by id, so the output is stable.
 */
import type { SpecKapp } from '../plan/spec.js';
import {
  diffKappSpecs,
  diffOutputValues,
  formatChangeLines,
  notRecorded,
  redactKappSpec,
  type SpecChange,
} from './spec-diff.js';
import type { JsonValue, ReleaseState } from './types.js';

/** The action preview predicts for one kapp. */
export type PreviewAction = 'Create' | 'Update' | 'UnChanged' | 'Delete' | 'Drifted' | 'Unknown';

/** The actions, in the order counts are listed. */
export const PREVIEW_ACTIONS: readonly PreviewAction[] = [
  'Create',
  'Update',
  'UnChanged',
  'Delete',
  'Drifted',
  'Unknown',
];

/** One row of a preview. */
export interface PreviewRow {
  /** Kapp id (`manifest:kapp`). */
  id: string;
  action: PreviewAction;
  /** `Drifted`: the outputs whose live value differs from the recorded one (masked where sensitive). */
  drift?: SpecChange[];
  /** `Unknown`: why the live outputs could not be read; `Update` of an unchanged dependent: whose outputs may change. */
  reason?: string;
  /** The kapp is otherwise unchanged, but reads outputs of these kapps, which change. */
  inputsFrom?: string[];
}

/** What a refresh read for one kapp: its live (non-sensitive, redacted) outputs, or why it could not. */
export type RefreshResult = { outputs: JsonValue } | { error: string };

/** One kapp of the preview document. */
export interface PreviewDocumentKapp {
  id: string;
  action: PreviewAction;
  /** The redacted spec of the kapp in the release that last recorded it; null when there is none. */
  from: SpecKapp | null;
  /** The redacted spec of the kapp now; null when it leaves the stack. */
  to: SpecKapp | null;
  /** Field-level changes from `from` to `to`. */
  changes: SpecChange[];
  /** Outputs whose live value differs from the recorded one (`Drifted`); empty otherwise. */
  drift: SpecChange[];
  /** Why the kapp is `Unknown`, or why an otherwise unchanged kapp is `Update` (its inputs may change); null otherwise. */
  reason: string | null;
  /** The digest of the kapp's spec now (keyed where secrets are concerned); null when it leaves the stack. */
  specDigest: string | null;
  /** Fields of the spec now that the release compared with did not record (it was written before them). */
  notRecorded: string[];
}

/** A kapp of the stack as preview needs it: its id and the digest of its spec (see `specDigest` in `canonical-json.ts`). */
export interface PreviewKapp {
  id: string;
  specDigest: string;
  /**
   * The digest of the spec in the form releases recorded before spec format 2 (steps and dependencies only): what a
   * state entry without `specFormat` is compared with. Default: `specDigest`.
   */
  legacyDigest?: string;
  /** The kapps (its dependencies) whose outputs it reads; a change to one of them may change its inputs. */
  inputsFrom?: readonly string[];
}

/**
 * The stable JSON shape of a preview (`-o json`): the stack, the project, the revision whose state the preview
 * compares with (null when the stack has no release yet) and one entry per kapp in row order.
 */
export interface PreviewDocument {
  stack: string;
  project: string;
  basedOnRevision: number | null;
  kapps: PreviewDocumentKapp[];
  /** The kapps whose output phase a refresh ran (stack order); null without `--refresh`. */
  refreshed: string[] | null;
  /** Whether any kapp's action is other than `UnChanged`. */
  hasChanges: boolean;
}

/** The specs a document shows: now (by id, for kapps in the stack) and as recorded (by id). */
export interface PreviewSpecs {
  current: ReadonlyMap<string, SpecKapp>;
  recorded: ReadonlyMap<string, SpecKapp>;
  /** The spec now in the form of releases written before spec format 2, compared with a spec recorded that way. */
  legacy?: ReadonlyMap<string, SpecKapp>;
  /** The digest of each kapp's spec now. */
  digests?: ReadonlyMap<string, string>;
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
    const digest = entry?.specFormat === undefined ? (kapp.legacyDigest ?? kapp.specDigest) : kapp.specDigest;
    if (!entry || entry.status !== 'installed') action = 'Create';
    else action = entry.specDigest === digest ? 'UnChanged' : 'Update';
    rows.push({ id: kapp.id, action });
  }
  markChangedInputs(rows, kapps);
  const gone = Object.keys(state)
    .filter((id) => !inStack.has(id) && state[id]?.status === 'installed')
    .sort(compareIds);
  for (const id of gone) rows.push({ id, action: 'Delete' });
  return rows;
}

/**
 * An `UnChanged` kapp that reads the outputs of a kapp to create or update (or of one whose own inputs may change,
 * in stack order) becomes `Update`, with the reason: what its steps receive is only known once those run. A kapp to
 * update anyway gets the same reason.
 */
function markChangedInputs(rows: PreviewRow[], kapps: readonly PreviewKapp[]): void {
  const index = new Map(rows.map((row, i) => [row.id, i] as const));
  for (const kapp of kapps) {
    const i = index.get(kapp.id);
    const row = i === undefined ? undefined : rows[i];
    if (!row || i === undefined || (row.action !== 'UnChanged' && row.action !== 'Update') || !kapp.inputsFrom?.length)
      continue;
    const changed = kapp.inputsFrom.filter((id) => {
      const parent = index.get(id);
      const action = parent === undefined ? undefined : rows[parent]?.action;
      return action === 'Create' || action === 'Update';
    });
    if (changed.length) {
      rows[i] = {
        id: row.id,
        action: 'Update',
        reason: `inputs from ${changed.join(', ')} may change`,
        inputsFrom: changed,
      };
    }
  }
}

/**
 * Apply what a refresh read: an `UnChanged` kapp whose live outputs differ from those recorded in `lastState` is
 * `Drifted` (with the changed outputs), one whose output phase failed is `Unknown` (with the reason). Other rows,
 * and kapps not refreshed, are left as they are.
 */
export function applyRefresh(
  rows: readonly PreviewRow[],
  lastState: ReleaseState | undefined,
  refresh: ReadonlyMap<string, RefreshResult>,
): PreviewRow[] {
  return rows.map((row) => {
    const read = refresh.get(row.id);
    const entry = lastState && Object.hasOwn(lastState, row.id) ? lastState[row.id] : undefined;
    if (row.action !== 'UnChanged' || !read || !entry) return row;
    if ('error' in read) return { id: row.id, action: 'Unknown', reason: read.error };
    const drift = diffOutputValues(entry.outputs, read.outputs);
    return drift.length ? { id: row.id, action: 'Drifted', drift } : row;
  });
}

/** Whether a preview's rows change anything (any action but `UnChanged`). */
export function hasChanges(rows: readonly PreviewRow[]): boolean {
  return rows.some((row) => row.action !== 'UnChanged');
}

/**
 * Build the JSON document of a preview: per kapp, in row order, the redacted specs before and now and the
 * field-level changes between them. `refreshed`: the kapps a refresh read (null without a refresh).
 */
export function previewDocument(
  stack: string,
  project: string,
  basedOnRevision: number | null,
  rows: readonly PreviewRow[],
  specs: PreviewSpecs = { current: new Map(), recorded: new Map() },
  refreshed: readonly string[] | null = null,
): PreviewDocument {
  const kapps = rows.map((row): PreviewDocumentKapp => {
    const to = row.action === 'Delete' ? null : (specs.current.get(row.id) ?? null);
    const from = row.action === 'Create' && !specs.recorded.has(row.id) ? null : (specs.recorded.get(row.id) ?? null);
    // A kapp to create is compared with nothing: every step it declares is new.
    const base = row.action === 'Create' ? null : from;
    // A spec recorded before format 2 is compared with the spec now in its own form (only what both recorded).
    const missing = base && to ? notRecorded(base, to) : [];
    const compared = missing.length ? (specs.legacy?.get(row.id) ?? to) : to;
    const shownFrom = from ? redactKappSpec(from) : null;
    return {
      id: row.id,
      action: row.action,
      from: shownFrom,
      // The same spec on both sides (a kapp left unchanged) is shown the same: no value of it changed.
      to: to ? (to === from && base === from ? shownFrom : redactKappSpec(to, base)) : null,
      // The same spec (a kapp left unchanged is shown with the spec it has now) has no changes.
      changes: (from === null && to === null) || base === compared ? [] : diffKappSpecs(base, compared),
      drift: row.drift ? [...row.drift] : [],
      reason: row.reason ?? null,
      specDigest: to ? (specs.digests?.get(row.id) ?? null) : null,
      notRecorded: missing,
    };
  });
  return {
    stack,
    project,
    basedOnRevision,
    kapps,
    refreshed: refreshed ? [...refreshed] : null,
    hasChanges: hasChanges(rows),
  };
}

/**
 * The field-level details under the table: for each kapp to create, the steps of `apply_install` it will run; for
 * each to update, its changes; for each to delete, the steps of `apply_delete` recorded for it; for `Drifted` and
 * `Unknown`, the changed outputs or the reason. Empty when there is nothing to show; ends with a newline otherwise.
 */
export function formatPreviewDetails(doc: PreviewDocument, options: { diff?: boolean } = {}): string {
  const lines: string[] = [];
  for (const kapp of doc.kapps) {
    let shown: SpecChange[] = [];
    let mark = '~';
    switch (kapp.action) {
      case 'UnChanged':
        continue;
      case 'Create':
        mark = '+';
        shown = kapp.changes.filter((c) => c.path[0] === 'apply_install' && c.path.length === 2);
        break;
      case 'Delete':
        mark = '-';
        shown = (kapp.from?.phases.apply_delete ?? []).map((step) => ({
          path: ['apply_delete', step.name],
          from: step as unknown as JsonValue,
          to: null,
        }));
        break;
      case 'Update':
        shown = kapp.changes;
        break;
      case 'Drifted':
        mark = '!';
        shown = kapp.drift;
        break;
      case 'Unknown':
        mark = '?';
        break;
    }
    lines.push(`${mark} ${kapp.id} (${kapp.action})${kapp.reason !== null ? `: ${kapp.reason}` : ''}`);
    for (const change of shown) lines.push(...formatChangeLines(change, '    ', options.diff ?? false));
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

/**
 * The line saying which kapps were compared with a spec recorded before sources, templates and variables were
 * (their steps and dependencies only); empty when there are none.
 */
export function formatNotRecorded(doc: PreviewDocument): string {
  const ids = doc.kapps.filter((k) => k.notRecorded.length > 0).map((k) => k.id);
  if (ids.length === 0 || doc.basedOnRevision === null) return '';
  const fields = doc.kapps.find((k) => k.notRecorded.length > 0)?.notRecorded ?? [];
  return (
    `Note: the release that recorded ${ids.join(', ')} did not record their ${fields.join(', ')}; ` +
    'compared their steps and dependencies only.\n'
  );
}

/**
 * A plain two-column table (`ID`, `ACTION`) of the rows, one line each, ending with a newline; with no rows, a
 * single line saying so.
 */
export function formatPreviewTable(rows: readonly PreviewRow[]): string {
  if (rows.length === 0) return 'No kapps to preview.\n';
  const width = Math.max(2, ...rows.map((row) => row.id.length));
  const lines = [`${'ID'.padEnd(width)}  ACTION`];
  for (const row of rows) {
    const why = row.action === 'Update' && row.reason !== undefined ? ` (${row.reason})` : '';
    lines.push(`${row.id.padEnd(width)}  ${row.action}${why}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Count the rows per action, e.g. for a one-line summary. */
export function countActions(rows: readonly PreviewRow[]): Record<PreviewAction, number> {
  const counts = { Create: 0, Update: 0, UnChanged: 0, Delete: 0 } as Record<PreviewAction, number>;
  for (const row of rows) counts[row.action] = (counts[row.action] ?? 0) + 1;
  return counts;
}

/** Order ids by UTF-16 code units, the same on every machine (no locale). */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
