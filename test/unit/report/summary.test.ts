import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../src/report/events.js';
import { palette } from '../../../src/report/format.js';
import { RunTally } from '../../../src/report/run-tally.js';
import { formatSummary, type SummaryOptions } from '../../../src/report/summary.js';
import { ev } from './support.js';

function summary(events: readonly RunEvent[], options: Partial<SummaryOptions> = {}): string[] {
  const tally = new RunTally();
  for (const event of events) tally.apply(event);
  return formatSummary(tally, { colors: palette(false), ...options });
}

const kapps = ['bootstrap:db', 'bootstrap:queue', 'web:app', 'web:worker'];

describe('formatSummary', () => {
  it('is one headline with the counts for a run that succeeded', () => {
    expect(
      summary([
        ev.runStarted(kapps.slice(0, 2)),
        ev.kappFinished('bootstrap:db', 1000, 'succeeded', 1000),
        ev.kappFinished('bootstrap:queue', 4000, 'succeeded', 3000),
        ev.runFinished(4200, 'succeeded', { succeeded: 2 }),
      ]),
    ).toEqual(['install succeeded in 4.2s: 2 succeeded, 0 failed, 0 skipped, 0 cancelled']);
  });

  it('lists failures with their step, exit code or timeout and output tail, then skips and cancellations, in run order', () => {
    // Finish events arrive in an order unlike the run's: the summary still follows the run's kapp order.
    const lines = summary([
      ev.runStarted(kapps, { command: 'delete', phases: ['apply_delete'] }),
      ev.stepFinished('web:worker', 900, 'drain', 900, { phase: 'apply_delete', status: 'cancelled', exitCode: null }),
      ev.kappFinished('web:worker', 900, 'cancelled', 950),
      ev.stepFinished('bootstrap:queue', 30_000, 'tf-destroy', 30_002, {
        phase: 'apply_delete',
        status: 'failed',
        exitCode: null,
        signal: 'SIGTERM',
        timedOut: true,
        timeoutMs: 30_000,
        outputTail: ['Destroying...', 'Still destroying... [30s elapsed]'],
      }),
      ev.kappFinished('bootstrap:queue', 30_000, 'failed', 30_002, 'apply_delete/tf-destroy timed out'),
      ev.stepFinished('bootstrap:db', 1_000, 'helm-delete', 1_000, {
        phase: 'apply_delete',
        status: 'failed',
        exitCode: 1,
        outputTail: ['Error: uninstall: Release not loaded: db: release: not found'],
      }),
      ev.kappFinished('bootstrap:db', 1_000, 'failed', 1_000),
      ev.kappFinished('web:app', 30_000, 'skipped', 0, 'dependency bootstrap:queue failed'),
      ev.runFinished(31_000, 'failed', { failed: 2, skipped: 1, cancelled: 1 }),
    ]);
    expect(lines).toEqual([
      'delete failed in 31.0s: 0 succeeded, 2 failed, 1 skipped, 1 cancelled',
      'Failed:',
      '  bootstrap:db: apply_delete/helm-delete: exit code 1',
      '    | Error: uninstall: Release not loaded: db: release: not found',
      '  bootstrap:queue: apply_delete/tf-destroy: timed out after 30 s',
      '    | Destroying...',
      '    | Still destroying... [30s elapsed]',
      'Skipped:',
      '  web:app: dependency bootstrap:queue failed',
      'Cancelled:',
      '  web:worker: stopped during apply_delete/drain after 0.9s',
    ]);
  });

  it('gives the reason of a failure that had no failed step, and of a cancellation between steps', () => {
    expect(
      summary([
        ev.runStarted(['m:a', 'm:b']),
        ev.kappFinished('m:a', 10, 'failed', 10, 'template values.yaml: undefined variable .x'),
        ev.kappFinished('m:b', 20, 'cancelled', 20, 'the run was cancelled'),
        ev.runFinished(20, 'cancelled', { failed: 1, cancelled: 1 }),
      ]).slice(1),
    ).toEqual([
      'Failed:',
      '  m:a: template values.yaml: undefined variable .x',
      'Cancelled:',
      '  m:b: the run was cancelled',
    ]);
  });

  it('tells a plan-only run that nothing destructive was done and how to apply', () => {
    const run = [ev.runStarted(['m:a'], { phases: ['plan_install'] }), ev.kappFinished('m:a', 10, 'succeeded', 10)];
    expect(summary([...run, ev.runFinished(20, 'succeeded', { succeeded: 1 })], { planOnly: true })).toEqual([
      'install succeeded in 0.0s: 1 succeeded, 0 failed, 0 skipped, 0 cancelled',
      'Plan only: nothing destructive was done. Rerun with --yes (-y) to apply.',
    ]);
    expect(summary([...run, ev.runFinished(20, 'failed', { succeeded: 1 })], { planOnly: true }).at(-1)).toBe(
      'Plan only: nothing destructive was done.',
    );
    expect(summary([...run, ev.runFinished(20, 'succeeded', { succeeded: 1 })])).toHaveLength(1);
  });

  it('says a dry run executed nothing', () => {
    expect(
      summary([
        ev.runStarted(['m:a'], { dryRun: true }),
        ev.kappFinished('m:a', 0, 'succeeded', 0),
        ev.runFinished(5, 'succeeded', { succeeded: 1 }),
      ]),
    ).toEqual([
      'install (dry run) succeeded in 0.0s: 1 succeeded, 0 failed, 0 skipped, 0 cancelled',
      'Dry run: nothing was executed.',
    ]);
  });

  it('accounts for kapps an aborted run left running or never started', () => {
    expect(
      summary(
        [
          ev.runStarted(['m:a', 'm:b', 'm:c']),
          ev.kappFinished('m:a', 10, 'succeeded', 10),
          ev.kappStarted('m:b', 10),
          ev.stepStarted('m:b', 10, 'apply', 'sleep', ['100']),
        ],
        { command: 'install' },
      ),
    ).toEqual([
      'install stopped before it finished: 1 succeeded, 0 failed, 1 skipped, 1 cancelled',
      'Skipped:',
      '  m:c: not started',
      'Cancelled:',
      '  m:b: did not finish',
    ]);
  });

  it('lists ignored step failures', () => {
    expect(
      summary([
        ev.runStarted(['m:a']),
        ev.stepFinished('m:a', 10, 'cleanup', 10, { status: 'ignored', exitCode: 4 }),
        ev.kappFinished('m:a', 10, 'succeeded', 10),
        ev.runFinished(10, 'succeeded', { succeeded: 1 }),
      ]).slice(1),
    ).toEqual(['Failures ignored:', '  m:a: apply_install/cleanup: exit code 4']);
  });
});
