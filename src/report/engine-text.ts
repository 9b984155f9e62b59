/**
 * The engine's events as text: the lines the CLI prints (messages on stderr, the release line on stdout) and the
 * runs server keeps in a run's log. See `EngineView` (src/engine/view.ts), which this view implements.
 */
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import type { PreviewDocument, PreviewRow } from '../release/preview.js';
import { formatNotRecorded, formatPreviewDetails, formatPreviewTable } from '../release/preview.js';
import { formatDiagnostics } from './diagnostic-printer.js';

/** A run recorded as a release (`EngineView.releaseRecorded`). */
export interface ReleaseRecordedEvent {
  readonly revision: number;
  readonly project: string;
  readonly stack: string;
  /** Where the project key came from (flag, configuration, stack file). */
  readonly projectSource: string;
  /** The release backend, described without credentials. */
  readonly where: string;
}

/** Where the text goes: messages about the run, and the line saying where it was recorded. Whole lines. */
export interface EngineTextStreams {
  message(text: string): void;
  result(text: string): void;
}

/** The line saying which kapps a refresh read. */
export function refreshLine(refreshed: readonly string[]): string {
  return refreshed.length
    ? `Refresh: ran the output phase of ${refreshed.join(', ')} to read their live outputs (nothing was changed).\n`
    : 'Refresh: no installed, unchanged kapp declares outputs; nothing was read.\n';
}

export class TextEngineView {
  constructor(private readonly streams: EngineTextStreams) {}

  stackWarnings(event: { readonly diagnostics: readonly Diagnostic[]; readonly cwd: string }): void {
    this.streams.message(`${formatDiagnostics(event.diagnostics, { cwd: event.cwd })}\n`);
  }

  sourceFetching(event: { readonly kapp: string; readonly source: string; readonly missing: boolean }): void {
    this.streams.message(
      `Fetching ${event.source} for ${event.kapp}${event.missing ? ' (not in the workspace)' : ''}...\n`,
    );
  }

  legacyHistory(event: { readonly hint: string }): void {
    this.streams.message(`warning: ${event.hint}\n`);
  }

  outputsRefreshed(event: { readonly kapps: readonly string[] }): void {
    this.streams.message(refreshLine(event.kapps));
  }

  previewShown(event: {
    readonly revision: number | null;
    readonly rows: readonly PreviewRow[];
    readonly document: PreviewDocument;
  }): void {
    const say = (text: string): void => this.streams.message(text);
    say(`Preview against ${event.revision === null ? 'no previous release' : `release ${event.revision}`}:\n`);
    say(formatPreviewTable(event.rows));
    const details = formatPreviewDetails(event.document);
    if (details) say(`\n${details}`);
    const note = formatNotRecorded(event.document);
    if (note) say(`\n${note}`);
    say('\n');
  }

  previewUnavailable(event: { readonly error: string }): void {
    this.streams.message(`warning: no preview: ${event.error}\n`);
  }

  releaseLogFailed(event: { readonly revision: number; readonly error: string }): void {
    this.streams.message(`warning: the log of release ${event.revision} could not be written: ${event.error}\n`);
  }

  rollbackPlanned(event: RollbackPlannedEvent): void {
    this.streams.message(rollbackText(event));
  }

  releaseRecorded(event: ReleaseRecordedEvent): void {
    this.streams.result(
      `Recorded as release ${event.revision} of ${event.project}/${event.stack} (project from ${event.projectSource}) in ${event.where}\n`,
    );
  }
}

/** A rollback as the engine computed it (see `EngineView.rollbackPlanned`). */
export interface RollbackPlannedEvent {
  readonly target: number;
  readonly latest: number;
  readonly forced: readonly string[];
  readonly absent: readonly string[];
  readonly unknown: readonly string[];
  readonly prune: boolean;
}

/** What a rollback will do beyond its preview: forced parts, kapps left alone or deleted. */
export function rollbackText(event: RollbackPlannedEvent): string {
  const lines = [`Rollback to revision ${event.target} (the latest is ${event.latest}).`];
  if (event.forced.length) {
    lines.push(`warning: --force: revision ${event.target} is not reproduced exactly:`);
    for (const reason of event.forced) lines.push(`  ${reason}`);
  }
  if (event.absent.length) {
    lines.push(
      event.prune
        ? `Kapps revision ${event.target} did not have, deleted after the install (--prune): ${event.absent.join(', ')}`
        : `Kapps revision ${event.target} did not have, left alone (--prune deletes them): ${event.absent.join(', ')}`,
    );
  }
  if (event.unknown.length)
    lines.push(
      `Kapps revision ${event.target} did not have and the stack no longer has, left alone: ${event.unknown.join(', ')}`,
    );
  return `${lines.join('\n')}\n`;
}
