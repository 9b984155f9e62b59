import { describe, expect, it } from 'vitest';
import { RunProgress } from '../../../src/cli/run-progress.js';
import type { RunEvent } from '../../../src/report/events.js';

const time = new Date().toISOString();

function started(): RunProgress {
  const p = new RunProgress();
  const events: RunEvent[] = [
    {
      type: 'run-started',
      time,
      command: 'install',
      stack: 'dev',
      phases: ['apply_install'],
      kapps: ['web:a', 'web:b', 'web:c', 'web:d'],
      workers: 5,
      dryRun: false,
    },
    { type: 'kapp-started', time, kapp: 'web:a', role: 'selected' },
    { type: 'kapp-started', time, kapp: 'web:b', role: 'selected' },
    { type: 'kapp-started', time, kapp: 'web:d', role: 'selected' },
    { type: 'kapp-finished', time, kapp: 'web:d', status: 'succeeded', durationMs: 1 },
    {
      type: 'step-started',
      time,
      kapp: 'web:a',
      phase: 'apply_install',
      step: 'deploy',
      command: 'helm',
      args: [],
      workingDir: '/w',
    },
  ];
  for (const e of events) p.apply(e);
  return p;
}

describe('RunProgress', () => {
  it('says which kapps and steps a stopping run waits for, and the grace period', () => {
    expect(started().stoppingText('SIGHUP', 3000)).toBe(
      [
        'SIGHUP: stopping the run: no new kapp will start.',
        '  Waiting for web:a (apply_install/deploy), web:b to stop.',
        '  1 running step(s) were sent SIGTERM; whatever is left of them gets SIGKILL after 3 s.',
        '  Press Ctrl-C again to kill them at once.',
      ].join('\n'),
    );
    expect(new RunProgress().stoppingText('SIGINT', 3000)).toContain('No step is running.');
  });

  it('ends the run now: each kapp listed gets one kapp-finished, then run-finished with the counts', () => {
    const p = started();
    expect(p.killedText('SIGINT', 2)).toBe(
      'SIGINT again: killed (SIGKILL) web:a (apply_install/deploy), web:b (2 process group(s)).',
    );
    const events = p.endNow('killed by a second SIGINT');
    expect(events.map((e) => `${e.type} ${'kapp' in e ? e.kapp : ''} ${'status' in e ? e.status : ''}`)).toEqual([
      'step-finished web:a cancelled',
      'kapp-finished web:a cancelled',
      'kapp-finished web:b cancelled',
      'kapp-finished web:c skipped',
      'run-finished  cancelled',
    ]);
    expect(events.at(-1)).toMatchObject({ counts: { succeeded: 1, failed: 0, skipped: 1, cancelled: 2 } });
    expect(p.active).toBe(false);
    // Once ended, nothing more.
    expect(p.endNow('again')).toEqual([]);
  });

  it('an internal error ends the run as failed', () => {
    expect(started().endNow('kapps stopped on an internal error', 'failed').at(-1)).toMatchObject({
      type: 'run-finished',
      status: 'failed',
    });
  });
});
