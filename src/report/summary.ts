/**
 * The end-of-run summary every reporter prints: a headline with the counts per status, then the failed kapps (with
 * the failed step, its exit code or timeout, and the last lines of its output), ignored step failures, skipped and
 * cancelled kapps with their reasons, and the dry-run or plan-only notes. Kapps appear in the run's order, so the
 * text is the same for the same events whatever the timing. It only formats; reporters decide where it goes.
 */
import type { KappRecord, RunTally, StatusCounts } from './run-tally.js';
import { describeStepOutcome, formatDuration, stepLabel, type Palette } from './format.js';

/** What the summary needs besides the events. */
export interface SummaryOptions {
  /** The command, if `run-started` did not arrive or to override it. */
  readonly command?: string;
  /** The run only planned (install/delete without `--yes`): add the note on how to apply. */
  readonly planOnly?: boolean;
  /** Colours for the headline and section titles (identity functions when colours are off). */
  readonly colors: Palette;
}

/** The note printed after a plan-only run that succeeded. */
export const PLAN_ONLY_NOTE = 'Plan only: nothing destructive was done. Rerun with --yes (-y) to apply.';
/** The note printed after a plan-only run that did not succeed. */
export const PLAN_ONLY_FAILED_NOTE = 'Plan only: nothing destructive was done.';
/** The note printed after a dry run. */
export const DRY_RUN_NOTE = 'Dry run: nothing was executed.';

/** Render the summary as lines of text (no trailing newline). */
export function formatSummary(tally: RunTally, options: SummaryOptions): string[] {
  const c = options.colors;
  const records = tally.records();
  const counts: StatusCounts = tally.finished ? { ...tally.finished.counts } : tally.counts();
  const unfinished = records.filter((r) => r.finished === undefined);
  if (!tally.finished) {
    // Without run-finished the run was aborted: a kapp still running was cut short, one never started was skipped.
    for (const r of unfinished) counts[r.state === 'running' ? 'cancelled' : 'skipped'] += 1;
  }

  const command = options.command ?? tally.command ?? 'run';
  const what = tally.dryRun ? `${command} (dry run)` : command;
  const countText =
    `${counts.succeeded} succeeded, ${counts.failed} failed, ` +
    `${counts.skipped} skipped, ${counts.cancelled} cancelled`;
  let headline: string;
  let status: string;
  if (tally.finished) {
    status = tally.finished.status;
    headline = `${what} ${status} in ${formatDuration(tally.finished.durationMs)}: ${countText}`;
  } else {
    status = 'stopped';
    headline = `${what} stopped before it finished: ${countText}`;
  }
  const tint = status === 'succeeded' ? c.green : status === 'failed' ? c.red : c.yellow;
  const lines = [c.bold(tint(headline))];

  const failed = records.filter((r) => r.finished?.status === 'failed');
  if (failed.length > 0) {
    lines.push(c.bold(c.red('Failed:')));
    for (const r of failed) lines.push(...failedLines(r, c));
  }
  const ignored = records.filter((r) => r.ignoredSteps.length > 0);
  if (ignored.length > 0) {
    lines.push(c.bold(c.yellow('Failures ignored:')));
    for (const r of ignored) {
      for (const step of r.ignoredSteps) {
        lines.push(`  ${r.id}: ${stepLabel(step.phase, step.step)}: ${describeStepOutcome(step)}`);
      }
    }
  }
  const skipped = records.filter((r) => r.finished?.status === 'skipped' || (!tally.finished && r.state === 'pending'));
  if (skipped.length > 0) {
    lines.push(c.bold(c.yellow('Skipped:')));
    for (const r of skipped) lines.push(`  ${r.id}: ${r.finished?.reason ?? 'not started'}`);
  }
  const cancelled = records.filter(
    (r) => r.finished?.status === 'cancelled' || (!tally.finished && r.state === 'running'),
  );
  if (cancelled.length > 0) {
    lines.push(c.bold(c.yellow('Cancelled:')));
    for (const r of cancelled) lines.push(`  ${r.id}: ${cancelledText(r)}`);
  }

  if (tally.dryRun) lines.push(DRY_RUN_NOTE);
  if (options.planOnly === true) lines.push(status === 'succeeded' ? PLAN_ONLY_NOTE : PLAN_ONLY_FAILED_NOTE);
  return lines;
}

function failedLines(r: KappRecord, c: Palette): string[] {
  const step = r.failedStep;
  if (!step) return [`  ${r.id}: ${r.finished?.reason ?? 'failed'}`];
  const lines = [`  ${r.id}: ${stepLabel(step.phase, step.step)}: ${describeStepOutcome(step)}`];
  for (const line of step.outputTail ?? []) lines.push(c.dim(`    | ${line}`.trimEnd()));
  return lines;
}

function cancelledText(r: KappRecord): string {
  const step = r.cancelledStep;
  if (step) return `stopped during ${stepLabel(step.phase, step.step)} after ${formatDuration(step.durationMs)}`;
  if (r.finished?.reason !== undefined) return r.finished.reason;
  return r.finished ? 'cancelled' : 'did not finish';
}
