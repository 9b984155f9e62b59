import { describe, expect, it } from 'vitest';
import { createReporter, resolveReporterKind, type ReporterKind } from '../../../src/report/create-reporter.js';
import type { RunEvent } from '../../../src/report/events.js';
import { MemoryStream, ev, feed } from './support.js';

const run: RunEvent[] = [
  ev.runStarted(['m:a']),
  ev.kappStarted('m:a', 0),
  ev.kappFinished('m:a', 1000, 'succeeded', 1000),
  ev.runFinished(1000, 'succeeded', { succeeded: 1 }),
];

async function drive(kind: ReporterKind, isTTY: boolean) {
  const stdout = new MemoryStream({ tty: isTTY });
  const stderr = new MemoryStream();
  const reporter = await createReporter({
    kind,
    stdout,
    stderr,
    isTTY,
    verbose: false,
    color: false,
    mode: { command: 'install', planOnly: true },
  });
  feed(reporter, run);
  await reporter.close();
  return { stdout: stdout.text(), stderr: stderr.text() };
}

const summary =
  'install succeeded in 1.0s: 1 succeeded, 0 failed, 0 skipped, 0 cancelled\n' +
  'Plan only: nothing destructive was done. Rerun with --yes (-y) to apply.\n';

describe('createReporter', () => {
  it('auto prints plain lines when stdout is not a terminal', async () => {
    const { stdout, stderr } = await drive('auto', false);
    expect(stdout).toBe(
      'install stack dev: 1 kapp (apply_install), 4 workers\n' +
        '[m:a] started\n' +
        '[m:a] succeeded in 1.0s\n' +
        `\n${summary}`,
    );
    expect(stderr).toBe('');
  });

  it('auto draws the listr2 display on a terminal', async () => {
    const { stdout } = await drive('auto', true);
    expect(stdout).toContain('✔ m:a succeeded in 1.0s\n');
    expect(stdout.endsWith(`\n${summary}`)).toBe(true);
  });

  it('json prints NDJSON on stdout and the summary on stderr', async () => {
    const { stdout, stderr } = await drive('json', true);
    expect(
      stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual(run);
    expect(stderr).toBe(summary);
  });

  it('an explicit kind wins over the terminal check', () => {
    expect(resolveReporterKind('auto', true)).toBe('listr');
    expect(resolveReporterKind('auto', false)).toBe('plain');
    expect(resolveReporterKind('plain', true)).toBe('plain');
    expect(resolveReporterKind('listr', false)).toBe('listr');
  });
});
