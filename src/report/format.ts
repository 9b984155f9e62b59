/**
 * Small text formatters shared by every human-facing reporter: durations, command lines, step labels and the
 * one-line description of a failed step. Pure functions; no colour (callers colour whole lines).
 */
import pc from 'picocolors';
import { quote } from 'shell-quote';
import type { StepFinishedEvent } from './events.js';
import type { Phase } from '../vocabulary.js';

/** A picocolors palette; every formatter is the identity when colours are off. */
export type Palette = ReturnType<typeof pc.createColors>;

/** The palette for a reporter: real colours only when `color` is true, whatever the environment says. */
export function palette(color: boolean): Palette {
  return pc.createColors(color);
}

/**
 * A duration given in milliseconds, for "took" texts: `0.0s` … `59.9s` (tenths, rounded down so a step never
 * looks longer than it was), then `1m05s`, then `1h02m03s`.
 */
export function formatDuration(ms: number): string {
  const safe = Number.isFinite(ms) && ms > 0 ? ms : 0;
  if (safe < 60_000) {
    const tenths = Math.floor(safe / 100);
    return `${Math.floor(tenths / 10)}.${tenths % 10}s`;
  }
  return formatClock(Math.floor(safe / 1000));
}

/** An elapsed time in milliseconds for a live display, in whole seconds: `0s`, `12s`, `1m05s`, `1h02m03s`. */
export function formatElapsed(ms: number): string {
  const seconds = Number.isFinite(ms) && ms > 0 ? Math.floor(ms / 1000) : 0;
  return seconds < 60 ? `${seconds}s` : formatClock(seconds);
}

function formatClock(totalSeconds: number): string {
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  const ss = String(seconds).padStart(2, '0');
  if (hours === 0) return `${minutes}m${ss}s`;
  return `${hours}h${String(minutes).padStart(2, '0')}m${ss}s`;
}

/** A timeout in milliseconds as the number of seconds a user configured: `30 s`, `1.5 s`. */
export function formatTimeout(ms: number): string {
  const seconds = Math.round(ms / 100) / 10;
  return `${Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1)} s`;
}

/** Characters a POSIX shell passes through unchanged inside a word, so such words need no quoting. */
const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;
/** The command word is stricter: a leading `NAME=` would make the shell read an assignment. */
const SAFE_COMMAND = /^[A-Za-z0-9_@%+:,./-]+$/;

/**
 * A command and its arguments as one line a user can paste into a shell. Only words that need quoting go through
 * shell-quote's `quote`, so `--set=a=b,c` stays readable while `a b` becomes `'a b'`.
 */
export function formatCommandLine(command: string, args: readonly string[]): string {
  const words = [SAFE_COMMAND.test(command) ? command : quote([command])];
  for (const arg of args) words.push(SAFE_WORD.test(arg) ? arg : quote([arg]));
  return words.join(' ');
}

/** How a step is named in every human output: `<phase>/<step>`, e.g. `apply_install/helm-install`. */
export function stepLabel(phase: Phase, step: string): string {
  return `${phase}/${step}`;
}

/**
 * Why a step did not succeed, in a few words: `timed out after 30 s`, `exit code 1`, `killed by SIGKILL`, or the
 * executor's own reason (spawn errors, skipped conditions).
 */
export function describeStepOutcome(event: StepFinishedEvent): string {
  if (event.timedOut === true) {
    return `timed out after ${formatTimeout(event.timeoutMs ?? event.durationMs)}`;
  }
  if (event.exitCode !== null && event.status !== 'skipped' && event.status !== 'cancelled') {
    return `exit code ${event.exitCode}`;
  }
  if (event.reason !== undefined && event.reason !== '') return event.reason;
  if (event.signal !== undefined) return `killed by ${event.signal}`;
  return event.status;
}

/** Remove ANSI escape sequences (colours, cursor moves) from text. */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007]*\u0007|\u009b[0-9;?]*[@-~]/g, '');
}
