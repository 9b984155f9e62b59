import { describe, expect, it } from 'vitest';
import { createRunLog, type LogLine } from '../../../src/engine/run-log.js';
import type { RunEvent } from '../../../src/report/events.js';

const time = '2026-11-25T10:00:00.000Z';

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
});
