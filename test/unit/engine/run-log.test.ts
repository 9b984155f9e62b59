import { describe, expect, it } from 'vitest';
import { createRunLog, type LogLine } from '../../../src/engine/run-log.js';
import type { RunEvent } from '../../../src/report/events.js';
import { charactersSplit } from '../../support/split-count.js';

const time = '2026-11-25T10:00:00.000Z';

/** What the step `dump` of web:api printed to stdout in one write. */
const output = (text: string): RunEvent => ({
  type: 'step-output',
  time,
  kapp: 'web:api',
  phase: 'apply_install',
  step: 'dump',
  stream: 'stdout',
  text,
});

describe('the run log', () => {
  it('keeps the plain lines of the run and each step line tagged with its kapp, phase, step and stream', async () => {
    const lines: LogLine[] = [];
    const log = createRunLog((l) => lines.push(l), { command: 'install' });
    const events: RunEvent[] = [
      {
        type: 'run-started',
        time,
        command: 'install',
        stack: 'dev',
        phases: ['apply_install'],
        kapps: ['web:api'],
        workers: 1,
        dryRun: false,
      },
      { type: 'kapp-started', time, kapp: 'web:api', role: 'selected' },
      {
        type: 'step-started',
        time,
        kapp: 'web:api',
        phase: 'apply_install',
        step: 'deploy',
        command: 'helm',
        args: ['upgrade'],
        workingDir: '/w',
      },
      {
        type: 'step-output',
        time,
        kapp: 'web:api',
        phase: 'apply_install',
        step: 'deploy',
        stream: 'stdout',
        text: 'one\ntw',
      },
      {
        type: 'step-output',
        time,
        kapp: 'web:api',
        phase: 'apply_install',
        step: 'deploy',
        stream: 'stderr',
        text: 'warn\n',
      },
      {
        type: 'step-output',
        time,
        kapp: 'web:api',
        phase: 'apply_install',
        step: 'deploy',
        stream: 'stdout',
        text: 'o',
      },
      {
        type: 'step-finished',
        time,
        kapp: 'web:api',
        phase: 'apply_install',
        step: 'deploy',
        status: 'succeeded',
        exitCode: 0,
        durationMs: 5,
      },
      { type: 'kapp-finished', time, kapp: 'web:api', status: 'succeeded', durationMs: 6 },
      {
        type: 'run-finished',
        time,
        status: 'succeeded',
        counts: { succeeded: 1, failed: 0, skipped: 0, cancelled: 0 },
        durationMs: 7,
      },
    ];
    for (const e of events) log.onEvent(e);
    await log.close();
    const steps = lines.filter((l) => l.stream !== 'kapps');
    expect(steps.map((l) => [l.stream, l.kapp, l.phase, l.step, l.text])).toEqual([
      ['stdout', 'web:api', 'apply_install', 'deploy', 'one'],
      ['stderr', 'web:api', 'apply_install', 'deploy', 'warn'],
      ['stdout', 'web:api', 'apply_install', 'deploy', 'two'],
    ]);
    const kapps = lines.filter((l) => l.stream === 'kapps').map((l) => l.text);
    // The plain reporter's lines, without the step output it would print itself, then the summary.
    expect(kapps.some((t) => t.includes('web:api') && t.includes('deploy'))).toBe(true);
    expect(kapps.some((t) => t.includes('one'))).toBe(false);
    expect(kapps.join('\n')).toMatch(/1 succeeded/);
    expect(lines.every((l) => !l.text.includes('\n'))).toBe(true);
  });

  it('cuts step output into lines across writes, a long line written in many pieces searched once', async () => {
    const lines: LogLine[] = [];
    const log = createRunLog((l) => lines.push(l), { maxLineLength: 10 });
    // A \r\n split between two writes ends one line; a line longer than 10 characters comes in pieces.
    for (const text of ['a\r', '\nb\r\r\nc', 'd\n', '0123456789abcd', 'ef\n']) log.onEvent(output(text));
    await log.close();
    expect(lines.map((l) => l.text)).toEqual(['a', 'b\r', 'cd', '0123456789', 'abcdef']);

    // 2,000 writes of 100 characters without a line end, with no limit on a line's length given:
    // what is searched for line ends is what was written, not all that came before it each time.
    const long: LogLine[] = [];
    const unlimited = createRunLog((l) => long.push(l));
    const searched = charactersSplit(() => {
      for (let i = 0; i < 2000; i++) unlimited.onEvent(output('x'.repeat(100)));
    });
    await unlimited.close();
    expect(searched).toBeLessThanOrEqual(2000 * 100);
    expect(long.filter((l) => l.stream === 'stdout').map((l) => l.text)).toEqual(['x'.repeat(200_000)]);
  });

  it('never cuts a character written as a surrogate pair when it cuts a long line into pieces', async () => {
    const lines: LogLine[] = [];
    const log = createRunLog((l) => lines.push(l), { maxLineLength: 10 });
    for (const text of ['012345678\u{1F600}xy', '\n']) log.onEvent(output(text));
    await log.close();
    const texts = lines.filter((l) => l.stream === 'stdout').map((l) => l.text);
    expect(texts).toEqual(['012345678', '\u{1F600}xy']);
    expect(texts.every((t) => t.isWellFormed())).toBe(true);
  });
});
