import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../../src/report/events.js';
import { JsonReporter } from '../../../src/report/json-reporter.js';
import { MemoryStream, ev, feed } from './support.js';

const run: RunEvent[] = [
  ev.runStarted(['bootstrap:db', 'web:app'], { dependsOn: { 'web:app': ['bootstrap:db'] } }),
  ev.kappStarted('bootstrap:db', 0),
  ev.stepStarted('bootstrap:db', 0, 'helm-install', 'helm', ['upgrade', '--install', 'db', '.']),
  ev.stepOutput('bootstrap:db', 5, 'helm-install', 'Error: \u001b[31mboom\u001b[0m "quoted"\n', 'stderr'),
  ev.log(6, 'warn', 'chart is deprecated', 'bootstrap:db'),
  ev.log(6, 'info', 'recorded release 7'),
  ev.stepFinished('bootstrap:db', 900, 'helm-install', 895, {
    status: 'failed',
    exitCode: 1,
    reason: 'exit code 1 (expected 0)',
    outputTail: ['Error: boom "quoted"'],
  }),
  ev.kappFinished('bootstrap:db', 900, 'failed', 900),
  ev.kappFinished('web:app', 900, 'skipped', 0, 'dependency bootstrap:db failed'),
  ev.runFinished(1000, 'failed', { failed: 1, skipped: 1 }),
];

function json(verbose = false) {
  const stdout = new MemoryStream();
  const stderr = new MemoryStream();
  const reporter = new JsonReporter({ stdout, stderr, verbose, color: false, mode: { command: 'install' } });
  return { stdout, stderr, reporter };
}

describe('JsonReporter', () => {
  it('writes every event, unchanged, as one JSON line on stdout and nothing else', async () => {
    const { stdout, reporter } = json();
    feed(reporter, run);
    await reporter.close();
    const raw = stdout.raw();
    expect(raw.endsWith('\n')).toBe(true);
    const lines = raw.slice(0, -1).split('\n');
    expect(lines).toHaveLength(run.length);
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual(run);
    // Timestamps are passed through as the executor gave them.
    expect((JSON.parse(lines[0] ?? '') as { time: string }).time).toBe('2030-01-02T03:04:05.000Z');
    // Control characters inside event text are JSON-escaped, so no raw escape byte reaches stdout.
    expect(raw).not.toContain('\u001b');
  });

  it('puts warnings and the summary on stderr', async () => {
    const { stderr, reporter } = json();
    feed(reporter, run);
    await reporter.close();
    expect(stderr.lines()).toEqual([
      '[bootstrap:db] warning: chart is deprecated',
      'install failed in 1.0s: 0 succeeded, 1 failed, 1 skipped, 0 cancelled',
      'Failed:',
      '  bootstrap:db: apply_install/helm-install: exit code 1',
      '    | Error: boom "quoted"',
      'Skipped:',
      '  web:app: dependency bootstrap:db failed',
    ]);
  });

  it('shows info logs on stderr only when verbose, but always in the NDJSON', () => {
    const quiet = json(false);
    feed(quiet.reporter, run);
    expect(quiet.stderr.text()).not.toContain('recorded release 7');
    expect(quiet.stdout.text()).toContain('"message":"recorded release 7"');

    const verbose = json(true);
    feed(verbose.reporter, run);
    expect(verbose.stderr.lines()).toContain('recorded release 7');
  });

  it('writes nothing more after close', async () => {
    const { stdout, reporter } = json();
    feed(reporter, run);
    await reporter.close();
    const before = stdout.raw();
    reporter.onEvent(ev.log(2000, 'warn', 'late'));
    await reporter.close();
    expect(stdout.raw()).toBe(before);
  });
});
