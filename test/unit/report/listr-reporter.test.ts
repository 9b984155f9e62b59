import { afterEach, describe, expect, it, vi } from 'vitest';
import { ListrReporter, type ListrReporterOptions } from '../../../src/report/listr-reporter.js';
import { stripAnsi } from '../../../src/report/format.js';
import { MemoryStream, T0, ev, hasColour } from './support.js';

/** Let listr2's task functions run up to their next await. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The frames log-update drew: each chunk that carries text, with escapes removed and the final newline dropped. */
function frames(stream: MemoryStream): string[] {
  return stream.chunks
    .map((chunk) => stripAnsi(chunk))
    .filter((text) => text.trim() !== '')
    .map((text) => text.replace(/\n$/, ''));
}

function lastFrame(stream: MemoryStream): string | undefined {
  return frames(stream).at(-1);
}

function terminal(extra: Partial<ListrReporterOptions> = {}) {
  const stdout = new MemoryStream({ tty: true });
  const stderr = new MemoryStream();
  let now = T0 + 3000;
  const reporter = new ListrReporter({
    stdout,
    stderr,
    isTTY: true,
    verbose: false,
    color: false,
    mode: { command: 'install' },
    now: () => now,
    tickMs: 0,
    animate: false,
    frameMs: 0,
    ...extra,
  });
  return { stdout, stderr, reporter, setNow: (ms: number) => (now = T0 + ms) };
}

const stack = ['bootstrap:db', 'bootstrap:cache', 'web:app'];
const dependsOn = { 'web:app': ['bootstrap:db', 'bootstrap:cache'] };

afterEach(() => {
  vi.useRealTimers();
});

describe('ListrReporter on a terminal', () => {
  it('draws a line per kapp: waiting, running with its step and elapsed time, then final states', async () => {
    const { stdout, stderr, reporter } = terminal();
    reporter.onEvent(ev.runStarted(stack, { dependsOn }));
    await reporter.displayed();
    expect(lastFrame(stdout)).toBe(
      ['◼ bootstrap:db queued', '◼ bootstrap:cache queued', '◼ web:app waiting on bootstrap:db, bootstrap:cache'].join(
        '\n',
      ),
    );

    reporter.onEvent(ev.kappStarted('bootstrap:db', 0));
    reporter.onEvent(ev.stepStarted('bootstrap:db', 0, 'helm-install', 'helm', ['upgrade']));
    reporter.onEvent(ev.stepOutput('bootstrap:db', 10, 'helm-install', 'Release "db" does not exist.\nInstalling'));
    reporter.onEvent(ev.kappStarted('bootstrap:cache', 1000));
    reporter.onEvent(ev.log(1000, 'warn', 'cache: no values file'));
    expect(lastFrame(stdout)).toBe(
      [
        '❯ bootstrap:db apply_install/helm-install (3s)',
        '  › Release "db" does not exist.',
        '❯ bootstrap:cache running (2s)',
        '◼ web:app waiting on bootstrap:db, bootstrap:cache',
      ].join('\n'),
    );

    reporter.onEvent(ev.stepFinished('bootstrap:db', 1000, 'helm-install', 1000));
    reporter.onEvent(ev.kappFinished('bootstrap:db', 1000, 'succeeded', 1000));
    await settle();
    expect(lastFrame(stdout)).toBe(
      [
        '✔ bootstrap:db succeeded in 1.0s',
        '❯ bootstrap:cache running (2s)',
        '◼ web:app waiting on bootstrap:cache',
      ].join('\n'),
    );

    reporter.onEvent(
      ev.stepFinished('bootstrap:cache', 2000, 'tf-apply', 1000, {
        status: 'failed',
        exitCode: 3,
        outputTail: ['Error: no credentials'],
      }),
    );
    reporter.onEvent(ev.kappFinished('bootstrap:cache', 2000, 'failed', 1000));
    reporter.onEvent(ev.kappFinished('web:app', 2000, 'skipped', 0, 'dependency bootstrap:cache failed'));
    reporter.onEvent(ev.runFinished(2100, 'failed', { succeeded: 1, failed: 1, skipped: 1 }));
    await reporter.close();

    expect(lastFrame(stdout)).toBe(
      [
        '',
        'install failed in 2.1s: 1 succeeded, 1 failed, 1 skipped, 0 cancelled',
        'Failed:',
        '  bootstrap:cache: apply_install/tf-apply: exit code 3',
        '    | Error: no credentials',
        'Skipped:',
        '  web:app: dependency bootstrap:cache failed',
      ].join('\n'),
    );
    // The final list, then the summary: the list is drawn once more in full when the display ends.
    const texts = frames(stdout);
    expect(texts.at(-2)).toBe(
      [
        '✔ bootstrap:db succeeded in 1.0s',
        '✖ bootstrap:cache failed in 1.0s: apply_install/tf-apply: exit code 3',
        '↓ web:app skipped: dependency bootstrap:cache failed',
      ].join('\n'),
    );
    // The warning written while the list was drawn is held back and printed after it, on stderr.
    expect(stderr.raw()).toBe('warning: cache: no values file\n');
    // No colour codes with colours off (cursor movements are not colours).
    expect(hasColour(stdout.raw())).toBe(false);
  });

  it('colours the icons only when colours are on', async () => {
    for (const color of [true, false]) {
      const { stdout, reporter } = terminal({ color });
      reporter.onEvent(ev.runStarted(['m:a', 'm:b']));
      await reporter.displayed();
      reporter.onEvent(ev.kappFinished('m:a', 10, 'succeeded', 10));
      reporter.onEvent(ev.kappFinished('m:b', 10, 'failed', 10, 'boom'));
      reporter.onEvent(ev.runFinished(10, 'failed', { succeeded: 1, failed: 1 }));
      await reporter.close();
      // The list as drawn one last time when the display ends.
      const final = stdout.chunks.filter((chunk) => chunk.includes('m:a succeeded')).at(-1) ?? '';
      if (color) {
        expect(final).toContain('\u001b[32m✔\u001b[39m m:a succeeded in 0.0s');
        expect(final).toContain('\u001b[31m✖\u001b[39m m:b failed in 0.0s: boom');
      } else {
        expect(final).toBe('✔ m:a succeeded in 0.0s\n✖ m:b failed in 0.0s: boom\n');
      }
    }
  });

  it('redraws elapsed times on its own while kapps run', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { stdout, reporter, setNow } = terminal({ tickMs: 1000 });
    reporter.onEvent(ev.runStarted(['m:a']));
    await reporter.displayed();
    reporter.onEvent(ev.kappStarted('m:a', 0));
    reporter.onEvent(ev.stepStarted('m:a', 0, 'apply', 'sleep', ['100']));
    setNow(65_000);
    vi.advanceTimersByTime(1000);
    expect(lastFrame(stdout)).toBe('❯ m:a apply_install/apply (1m05s)');
    await reporter.close();
  });

  it('coalesces a burst of changes into one redraw', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { stdout, reporter } = terminal({ frameMs: 100 });
    reporter.onEvent(ev.runStarted(['m:a']));
    await reporter.displayed();
    vi.advanceTimersByTime(1000);
    const drawn = frames(stdout).length;
    expect(lastFrame(stdout)).toBe('◼ m:a waiting');
    reporter.onEvent(ev.kappStarted('m:a', 0));
    for (let i = 1; i <= 50; i++) reporter.onEvent(ev.stepOutput('m:a', i, 'apply', `line ${i}\n`));
    expect(frames(stdout)).toHaveLength(drawn);
    vi.advanceTimersByTime(100);
    expect(frames(stdout)).toHaveLength(drawn + 1);
    expect(lastFrame(stdout)).toBe(
      ['❯ m:a running (3s)', '  › line 46', '  › line 47', '  › line 48', '  › line 49', '  › line 50'].join('\n'),
    );
    vi.useRealTimers();
    await reporter.close();
  });

  it('shows every kapp running at once, however many: listr2 does not cap concurrency', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `m:k${String(i).padStart(2, '0')}`);
    const { stdout, reporter } = terminal();
    reporter.onEvent(ev.runStarted(ids, { workers: 20 }));
    // Bounded wait: were listr2 to hold tasks back, the frame below would show it instead of hanging.
    await Promise.race([reporter.displayed(), new Promise((resolve) => setTimeout(resolve, 5000))]);
    for (const id of ids) reporter.onEvent(ev.kappStarted(id, 0));
    const frame = lastFrame(stdout)?.split('\n') ?? [];
    expect(frame).toEqual(ids.map((id) => `❯ ${id} running (3s)`));
    await reporter.close();
  });

  it('keeps the commands of a dry run under each kapp', async () => {
    const { stdout, reporter } = terminal();
    reporter.onEvent(ev.runStarted(['bootstrap:db'], { dryRun: true }));
    await reporter.displayed();
    reporter.onEvent(ev.kappStarted('bootstrap:db', 0));
    reporter.onEvent(
      ev.stepStarted('bootstrap:db', 0, 'helm-install', 'helm', ['upgrade', '--install', 'db', 'my chart']),
    );
    reporter.onEvent(ev.stepFinished('bootstrap:db', 0, 'helm-install', 0));
    reporter.onEvent(ev.kappFinished('bootstrap:db', 0, 'succeeded', 0));
    reporter.onEvent(ev.runFinished(0, 'succeeded', { succeeded: 1 }));
    await reporter.close();
    expect(frames(stdout).at(-2)).toBe(
      [
        '✔ bootstrap:db succeeded (dry run)',
        "  › apply_install/helm-install would run: helm upgrade --install db 'my chart'",
      ].join('\n'),
    );
    expect(lastFrame(stdout)).toBe(
      [
        '',
        'install (dry run) succeeded in 0.0s: 1 succeeded, 0 failed, 0 skipped, 0 cancelled',
        'Dry run: nothing was executed.',
      ].join('\n'),
    );
  });

  it('shows kapps an aborted run left behind, when closed before they finished', async () => {
    const { stdout, reporter } = terminal({ mode: { command: 'install', planOnly: true } });
    reporter.onEvent(ev.runStarted(['m:a', 'm:b', 'm:c'], { dependsOn: { 'm:c': ['m:b'] } }));
    await reporter.displayed();
    reporter.onEvent(ev.kappStarted('m:a', 0));
    reporter.onEvent(ev.kappFinished('m:a', 500, 'succeeded', 500));
    reporter.onEvent(ev.kappStarted('m:b', 500));
    reporter.onEvent(ev.stepFinished('m:b', 900, 'apply', 400, { status: 'cancelled', exitCode: null }));
    await reporter.close();
    expect(frames(stdout).slice(-2)).toEqual([
      ['✔ m:a succeeded in 0.5s', '✖ m:b did not finish', '↓ m:c not started'].join('\n'),
      [
        '',
        'install stopped before it finished: 1 succeeded, 0 failed, 1 skipped, 1 cancelled',
        'Skipped:',
        '  m:c: not started',
        'Cancelled:',
        '  m:b: stopped during apply_install/apply after 0.4s',
        'Plan only: nothing destructive was done.',
      ].join('\n'),
    ]);
  });

  it('leaves SIGINT to its owner: no signal listener is added', async () => {
    const before = process.listenerCount('SIGINT');
    const { reporter } = terminal();
    reporter.onEvent(ev.runStarted(['m:a']));
    await reporter.displayed();
    expect(process.listenerCount('SIGINT')).toBe(before);
    await reporter.close();
  });
});

describe('ListrReporter without a terminal (fallback renderer)', () => {
  it('writes nothing to stdout while the run goes, all its lines to stderr, then only the summary on stdout', async () => {
    const stdout = new MemoryStream();
    const stderr = new MemoryStream();
    const reporter = new ListrReporter({
      stdout,
      stderr,
      isTTY: false,
      verbose: false,
      color: false,
      mode: { command: 'install' },
    });
    reporter.onEvent(ev.runStarted(['bootstrap:db', 'web:app'], { dependsOn: { 'web:app': ['bootstrap:db'] } }));
    await reporter.displayed();
    reporter.onEvent(ev.kappStarted('bootstrap:db', 0));
    reporter.onEvent(ev.stepStarted('bootstrap:db', 0, 'helm-install', 'helm', ['upgrade', '--install', 'db', '.']));
    reporter.onEvent(ev.stepOutput('bootstrap:db', 10, 'helm-install', 'installing\n'));
    reporter.onEvent(
      ev.stepFinished('bootstrap:db', 1000, 'helm-install', 1000, {
        status: 'failed',
        exitCode: 1,
        outputTail: ['installing'],
      }),
    );
    reporter.onEvent(ev.kappFinished('bootstrap:db', 1000, 'failed', 1000));
    await settle();
    reporter.onEvent(ev.kappFinished('web:app', 1000, 'skipped', 0, 'dependency bootstrap:db failed'));
    await settle();
    reporter.onEvent(ev.log(1000, 'error', 'release not recorded'));
    reporter.onEvent(ev.runFinished(1100, 'failed', { failed: 1, skipped: 1 }));
    expect(stdout.raw()).toBe('');
    await reporter.close();

    expect(stderr.lines()).toEqual([
      '❯ bootstrap:db queued',
      '❯ web:app waiting on bootstrap:db',
      '› [bootstrap:db] started',
      '› [bootstrap:db] apply_install/helm-install: helm upgrade --install db . (started)',
      '› [bootstrap:db] installing',
      '› [bootstrap:db] apply_install/helm-install failed in 1.0s: exit code 1',
      '✖ bootstrap:db [FAILED: failed in 1.0s: apply_install/helm-install: exit code 1]',
      '↓ web:app [SKIPPED: dependency bootstrap:db failed]',
      'error: release not recorded',
    ]);
    expect(stdout.lines()).toEqual([
      '',
      'install failed in 1.1s: 0 succeeded, 1 failed, 1 skipped, 0 cancelled',
      'Failed:',
      '  bootstrap:db: apply_install/helm-install: exit code 1',
      '    | installing',
      'Skipped:',
      '  web:app: dependency bootstrap:db failed',
    ]);
    expect(stderr.raw()).not.toContain('\u001b[');
  });
});
