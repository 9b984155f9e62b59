/**
 * Test helpers for reporters: in-memory streams (optionally posing as a terminal) and builders for scripted event
 * sequences with fixed timestamps.
 */
import { Writable } from 'node:stream';
import type {
  KappFinishedEvent,
  KappStartedEvent,
  LogEvent,
  RunEvent,
  RunFinishedEvent,
  RunStartedEvent,
  StepFinishedEvent,
  StepOutputEvent,
  StepStartedEvent,
} from '../../../src/report/events.js';
import type { Phase } from '../../../src/vocabulary.js';
import { stripAnsi } from '../../../src/report/format.js';

/** A writable stream that keeps everything written to it. */
export class MemoryStream extends Writable {
  readonly chunks: string[] = [];
  isTTY?: boolean;
  columns?: number;
  rows?: number;

  constructor(options: { tty?: boolean } = {}) {
    super();
    if (options.tty === true) {
      this.isTTY = true;
      this.columns = 100;
      this.rows = 60;
    }
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.chunks.push(chunk.toString());
    callback();
  }

  /** Everything written, as is. */
  raw(): string {
    return this.chunks.join('');
  }

  /** Everything written, without ANSI escapes. */
  text(): string {
    return stripAnsi(this.raw());
  }

  /** The text as lines (without the final empty line after the last newline). */
  lines(): string[] {
    const lines = this.text().split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    return lines;
  }
}

/** The fixed start of every scripted run. */
export const T0 = Date.parse('2030-01-02T03:04:05.000Z');

/** An ISO timestamp `ms` after T0. */
export function at(ms: number): string {
  return new Date(T0 + ms).toISOString();
}

/** Builders for each event type, with times given as ms after T0. */
export const ev = {
  runStarted(kapps: readonly string[], extra: Partial<Omit<RunStartedEvent, 'type' | 'kapps'>> = {}): RunStartedEvent {
    return {
      type: 'run-started',
      time: at(0),
      command: 'install',
      stack: 'dev',
      phases: ['apply_install'],
      kapps,
      workers: 4,
      dryRun: false,
      ...extra,
    };
  },
  kappStarted(kapp: string, ms: number, role: KappStartedEvent['role'] = 'selected'): KappStartedEvent {
    return { type: 'kapp-started', time: at(ms), kapp, role };
  },
  stepStarted(
    kapp: string,
    ms: number,
    step: string,
    command: string,
    args: readonly string[] = [],
    phase: Phase = 'apply_install',
  ): StepStartedEvent {
    return { type: 'step-started', time: at(ms), kapp, phase, step, command, args, workingDir: '/work/ws' };
  },
  stepOutput(
    kapp: string,
    ms: number,
    step: string,
    text: string,
    stream: 'stdout' | 'stderr' = 'stdout',
    phase: Phase = 'apply_install',
  ): StepOutputEvent {
    return { type: 'step-output', time: at(ms), kapp, phase, step, stream, text };
  },
  stepFinished(
    kapp: string,
    ms: number,
    step: string,
    durationMs: number,
    extra: Partial<Omit<StepFinishedEvent, 'type' | 'kapp' | 'step' | 'durationMs'>> = {},
  ): StepFinishedEvent {
    return {
      type: 'step-finished',
      time: at(ms),
      kapp,
      phase: 'apply_install',
      step,
      status: 'succeeded',
      exitCode: 0,
      durationMs,
      ...extra,
    };
  },
  kappFinished(
    kapp: string,
    ms: number,
    status: KappFinishedEvent['status'],
    durationMs: number,
    reason?: string,
  ): KappFinishedEvent {
    return reason === undefined
      ? { type: 'kapp-finished', time: at(ms), kapp, status, durationMs }
      : { type: 'kapp-finished', time: at(ms), kapp, status, durationMs, reason };
  },
  log(ms: number, level: LogEvent['level'], message: string, kapp?: string): LogEvent {
    return kapp === undefined
      ? { type: 'log', time: at(ms), level, message }
      : { type: 'log', time: at(ms), level, message, kapp };
  },
  runFinished(
    ms: number,
    status: RunFinishedEvent['status'],
    counts: Partial<RunFinishedEvent['counts']> = {},
  ): RunFinishedEvent {
    return {
      type: 'run-finished',
      time: at(ms),
      status,
      counts: { succeeded: 0, failed: 0, skipped: 0, cancelled: 0, ...counts },
      durationMs: ms,
    };
  },
};

/** Whether text carries colour codes (SGR sequences); cursor movements do not count. */
export function hasColour(text: string): boolean {
  // eslint-disable-next-line no-control-regex
  return /\u001b\[[0-9;]*m/.test(text);
}

/** Feed events to a reporter in order. */
export function feed(reporter: { onEvent(e: RunEvent): void }, events: readonly RunEvent[]): void {
  for (const event of events) reporter.onEvent(event);
}
