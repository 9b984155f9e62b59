/**
 * The one-line texts of the plain output, shared by the plain reporter, the listr fallback and the human side of
 * the JSON reporter. Every line about a kapp starts with `[<kapp id>]` so it can be grepped.
 */
import type {
  KappFinishedEvent,
  KappStartedEvent,
  LogEvent,
  RunStartedEvent,
  StepFinishedEvent,
  StepStartedEvent,
} from './events.js';
import { describeStepOutcome, formatCommandLine, formatDuration, stepLabel, type Palette } from './format.js';

/** `install stack dev: 3 kapps (plan_install, apply_install), 4 workers`, plus `, dry run`. */
export function runStartedLine(event: RunStartedEvent): string {
  const kapps = `${event.kapps.length} ${event.kapps.length === 1 ? 'kapp' : 'kapps'}`;
  const workers = `${event.workers} ${event.workers === 1 ? 'worker' : 'workers'}`;
  const dry = event.dryRun ? ', dry run' : '';
  return `${event.command} stack ${event.stack}: ${kapps} (${event.phases.join(', ')}), ${workers}${dry}`;
}

/** `[id] started`, or `[id] started (for its outputs)` for an ancestor run only to provide outputs. */
export function kappStartedLine(event: KappStartedEvent): string {
  return `[${event.kapp}] started${event.role === 'outputs' ? ' (for its outputs)' : ''}`;
}

/** `[id] phase/step: cmd args (started)`, or in a dry run `[id] phase/step would run: cmd args`. */
export function stepStartedLine(event: StepStartedEvent, dryRun: boolean): string {
  const label = stepLabel(event.phase, event.step);
  const commandLine = formatCommandLine(event.command, event.args);
  return dryRun
    ? `[${event.kapp}] ${label} would run: ${commandLine}`
    : `[${event.kapp}] ${label}: ${commandLine} (started)`;
}

/**
 * The line for a finished step, or undefined when it is not worth a line (a succeeded step of a dry run: the
 * "would run" line said it all).
 */
export function stepFinishedLine(event: StepFinishedEvent, dryRun: boolean, c: Palette): string | undefined {
  const head = `[${event.kapp}] ${stepLabel(event.phase, event.step)}`;
  const took = formatDuration(event.durationMs);
  switch (event.status) {
    case 'succeeded':
      return dryRun ? undefined : `${head} ${c.green('succeeded')} in ${took}`;
    case 'failed':
      return event.timedOut === true
        ? `${head} ${c.red('failed')}: ${describeStepOutcome(event)}`
        : `${head} ${c.red('failed')} in ${took}: ${describeStepOutcome(event)}`;
    case 'ignored':
      return `${head} ${c.yellow('failed')} in ${took} (ignored): ${describeStepOutcome(event)}`;
    case 'skipped':
      return `${head} ${c.yellow('skipped')}: ${describeStepOutcome(event)}`;
    case 'cancelled':
      return `${head} ${c.yellow('cancelled')} after ${took}`;
  }
}

/** `[id] succeeded in 2.1s`, `[id] failed in 2.1s: …`, `[id] skipped: …`, `[id] cancelled after 1.0s`. */
export function kappFinishedLine(event: KappFinishedEvent, dryRun: boolean, c: Palette): string {
  const head = `[${event.kapp}]`;
  const took = formatDuration(event.durationMs);
  const why = event.reason !== undefined && event.reason !== '' ? `: ${event.reason}` : '';
  switch (event.status) {
    case 'succeeded':
      return dryRun ? `${head} ${c.green('succeeded')} (dry run)` : `${head} ${c.green('succeeded')} in ${took}`;
    case 'failed':
      return `${head} ${c.red('failed')} in ${took}${why}`;
    case 'skipped':
      return `${head} ${c.yellow('skipped')}${why}`;
    case 'cancelled':
      return `${head} ${c.yellow('cancelled')} after ${took}${why}`;
  }
}

/** A message that is a printed diagnostic (`file:line:col: error: …`) already says its level. */
const DIAGNOSTIC_TEXT = /^[^\s][^\n]*:\d+:\d+: (?:error|warning): /;

/**
 * `warning: …`, `error: …`, or the bare message for info (and for a printed diagnostic, which says its level
 * itself); prefixed with `[id]` when the log is about a kapp.
 */
export function logLine(event: LogEvent, c: Palette): string {
  const prefix = event.kapp === undefined ? '' : `[${event.kapp}] `;
  if (event.level !== 'info' && DIAGNOSTIC_TEXT.test(event.message)) return `${prefix}${event.message}`;
  switch (event.level) {
    case 'warn':
      return `${prefix}${c.yellow('warning')}: ${event.message}`;
    case 'error':
      return `${prefix}${c.red('error')}: ${event.message}`;
    case 'info':
      return `${prefix}${event.message}`;
  }
}

/** Whether a log event is shown to a human: warnings and errors always, info only when verbose. */
export function showLog(event: LogEvent, verbose: boolean): boolean {
  return event.level !== 'info' || verbose || event.shown === true;
}
