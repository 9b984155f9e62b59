/**
 * What the engine tells whoever drives it, as typed events: the driver's view decides how (and whether) each is
 * shown. The engine formats no text; the text view (`src/report/engine-text.ts`) says each event as the CLI prints
 * it, and is the view of a context that gives none.
 */
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type { PreviewDocument, PreviewRow } from '../release/index.js';
import { TextEngineView } from '../report/engine-text.js';
import type { EngineContext } from './context.js';
import type { ReleaseRecordedEvent, RollbackPlannedEvent } from '../report/engine-text.js';

export interface EngineView {
  /** Warnings about the stack not said yet in this context (its files, relative to `cwd`). */
  stackWarnings(event: { readonly diagnostics: readonly Diagnostic[]; readonly cwd: string }): void;
  /** A git source is being fetched into the workspace (`missing`: fetched because a planning command reads it). */
  sourceFetching(event: { readonly kapp: string; readonly source: string; readonly missing: boolean }): void;
  /** The store holds a history under the former default project (`hint` says what to do). */
  legacyHistory(event: { readonly hint: string }): void;
  /** A refresh ran the output phase of `kapps` to read their live outputs (none: nothing was read). */
  outputsRefreshed(event: { readonly kapps: readonly string[] }): void;
  /** The preview before a plan, against release `revision` (null: no release yet). */
  previewShown(event: {
    readonly revision: number | null;
    readonly rows: readonly PreviewRow[];
    readonly document: PreviewDocument;
  }): void;
  /** The preview before a plan could not be computed (`error` is redacted); the plan goes on. */
  previewUnavailable(event: { readonly error: string }): void;
  /** Lines of release `revision`'s log could not be written (`error` is redacted); the run goes on. */
  releaseLogFailed(event: { readonly revision: number; readonly error: string }): void;
  /**
   * A rollback to revision `target` was computed: what it applies on top of what (`forced`: why it is not an exact
   * reproduction), and the kapps installed now that the target did not have (`absent`: deleted when `prune`;
   * `unknown`: not in today's stack, left alone).
   */
  rollbackPlanned(event: RollbackPlannedEvent): void;
  /** The run was recorded as release `revision` of `project`/`stack` (after its summary). */
  releaseRecorded(event: ReleaseRecordedEvent): void;
}

/** The view of `ctx`: its own, or the text view writing to its `message` and `result` streams. */
export function viewOf(ctx: EngineContext): EngineView {
  return ctx.view ?? new TextEngineView(ctx);
}
