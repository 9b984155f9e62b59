import { describe, expect, it } from 'vitest';
import { PlainReporter } from '../../../src/report/plain-reporter.js';
import { MemoryStream, ev, feed } from './support.js';

function plain(options: { verbose?: boolean; color?: boolean; planOnly?: boolean } = {}) {
  const out = new MemoryStream();
  const reporter = new PlainReporter({
    out,
    verbose: options.verbose ?? false,
    color: options.color ?? false,
    mode: { command: 'install', planOnly: options.planOnly },
  });
  return { out, reporter };
}

/** db fails, cache runs only for its outputs with an ignored failure, app is skipped. */
const failingRun = [
  ev.runStarted(['bootstrap:db', 'bootstrap:cache', 'web:app'], {
    phases: ['plan_install', 'apply_install'],
    dependsOn: { 'web:app': ['bootstrap:db'] },
  }),
  ev.kappStarted('bootstrap:db', 0),
  ev.stepStarted('bootstrap:db', 0, 'helm-install', 'sleep', ['1']),
  ev.stepOutput('bootstrap:db', 100, 'helm-install', 'hello\nwor'),
  ev.kappStarted('bootstrap:cache', 150, 'outputs'),
  ev.stepOutput('bootstrap:db', 200, 'helm-install', 'ld\r\npartial'),
  ev.stepFinished('bootstrap:db', 1000, 'helm-install', 1000, {
    status: 'failed',
    exitCode: 1,
    outputTail: ['hello', 'world', 'partial'],
  }),
  ev.kappFinished('bootstrap:db', 2100, 'failed', 2100, 'apply_install/helm-install failed'),
  ev.log(2100, 'warn', 'values file x.yaml not found', 'bootstrap:cache'),
  ev.log(2100, 'info', 'loaded 2 outputs', 'bootstrap:cache'),
  ev.stepStarted('bootstrap:cache', 2200, 'tf-apply', 'terraform', ['apply', '-var', 'name=my app']),
  ev.stepFinished('bootstrap:cache', 2700, 'tf-apply', 500, { status: 'ignored', exitCode: 2 }),
  ev.kappFinished('bootstrap:cache', 3000, 'succeeded', 2850),
  ev.kappFinished('web:app', 3000, 'skipped', 0, 'dependency bootstrap:db failed'),
  ev.runFinished(3200, 'failed', { succeeded: 1, failed: 1, skipped: 1 }),
];

describe('PlainReporter', () => {
  it('prints one greppable line per event, then the summary', async () => {
    const { out, reporter } = plain();
    feed(reporter, failingRun);
    await reporter.close();
    expect(out.raw().split('\n')).toEqual([
      'install stack dev: 3 kapps (plan_install, apply_install), 4 workers',
      '[bootstrap:db] started',
      '[bootstrap:db] apply_install/helm-install: sleep 1 (started)',
      '[bootstrap:db] hello',
      '[bootstrap:cache] started (for its outputs)',
      '[bootstrap:db] world',
      '[bootstrap:db] partial',
      '[bootstrap:db] apply_install/helm-install failed in 1.0s: exit code 1',
      '[bootstrap:db] failed in 2.1s: apply_install/helm-install failed',
      '[bootstrap:cache] warning: values file x.yaml not found',
      "[bootstrap:cache] apply_install/tf-apply: terraform apply -var 'name=my app' (started)",
      '[bootstrap:cache] apply_install/tf-apply failed in 0.5s (ignored): exit code 2',
      '[bootstrap:cache] succeeded in 2.8s',
      '[web:app] skipped: dependency bootstrap:db failed',
      '',
      'install failed in 3.2s: 1 succeeded, 1 failed, 1 skipped, 0 cancelled',
      'Failed:',
      '  bootstrap:db: apply_install/helm-install: exit code 1',
      '    | hello',
      '    | world',
      '    | partial',
      'Failures ignored:',
      '  bootstrap:cache: apply_install/tf-apply: exit code 2',
      'Skipped:',
      '  web:app: dependency bootstrap:db failed',
      '',
    ]);
  });

  it('shows info logs only when verbose', async () => {
    const { out, reporter } = plain({ verbose: true });
    feed(reporter, failingRun);
    await reporter.close();
    const lines = out.lines();
    const warning = lines.indexOf('[bootstrap:cache] warning: values file x.yaml not found');
    expect(lines[warning + 1]).toBe('[bootstrap:cache] loaded 2 outputs');
  });

  it('keeps a partial output line until the step finishes, and prints blank lines as the bare prefix', () => {
    const { out, reporter } = plain();
    feed(reporter, [
      ev.runStarted(['m:k'], { workers: 1 }),
      ev.kappStarted('m:k', 0),
      ev.stepStarted('m:k', 0, 's', 'echo'),
      ev.stepOutput('m:k', 1, 's', 'one\n\ntw'),
      ev.stepOutput('m:k', 2, 's', 'o', 'stderr'),
      ev.stepOutput('m:k', 3, 's', 'o'),
    ]);
    expect(out.lines()).toEqual([
      'install stack dev: 1 kapp (apply_install), 1 worker',
      '[m:k] started',
      '[m:k] apply_install/s: echo (started)',
      '[m:k] one',
      '[m:k]',
    ]);
    reporter.onEvent(ev.stepFinished('m:k', 4, 's', 4));
    expect(out.lines().slice(5)).toEqual(['[m:k] two', '[m:k] o', '[m:k] apply_install/s succeeded in 0.0s']);
  });

  it('prints what a dry run would run, quoted for a shell, and says nothing was executed', async () => {
    const { out, reporter } = plain();
    feed(reporter, [
      ev.runStarted(['bootstrap:db'], { dryRun: true }),
      ev.kappStarted('bootstrap:db', 0),
      ev.stepStarted('bootstrap:db', 0, 'helm-install', 'helm', [
        'upgrade',
        '--install',
        'db',
        './charts/db',
        '--set',
        'image.tag=1.2',
        '--description',
        'first install',
      ]),
      ev.stepFinished('bootstrap:db', 0, 'helm-install', 0),
      ev.kappFinished('bootstrap:db', 0, 'succeeded', 0),
      ev.runFinished(10, 'succeeded', { succeeded: 1 }),
    ]);
    await reporter.close();
    expect(out.lines()).toEqual([
      'install stack dev: 1 kapp (apply_install), 4 workers, dry run',
      '[bootstrap:db] started',
      "[bootstrap:db] apply_install/helm-install would run: helm upgrade --install db ./charts/db --set image.tag=1.2 --description 'first install'",
      '[bootstrap:db] succeeded (dry run)',
      '',
      'install (dry run) succeeded in 0.0s: 1 succeeded, 0 failed, 0 skipped, 0 cancelled',
      'Dry run: nothing was executed.',
    ]);
  });

  it('prints timeouts, skipped steps and cancellations', () => {
    const { out, reporter } = plain();
    feed(reporter, [
      ev.runStarted(['a:slow', 'a:cond', 'a:long']),
      ev.stepFinished('a:slow', 30_000, 'wait', 30_004, {
        status: 'failed',
        exitCode: null,
        signal: 'SIGTERM',
        timedOut: true,
        timeoutMs: 30_000,
      }),
      ev.stepFinished('a:cond', 10, 'maybe', 0, { status: 'skipped', exitCode: null, reason: 'conditions false' }),
      ev.stepFinished('a:long', 1200, 'apply', 1200, { status: 'cancelled', exitCode: null, signal: 'SIGTERM' }),
      ev.kappFinished('a:long', 1200, 'cancelled', 1234),
    ]);
    expect(out.lines().slice(1)).toEqual([
      '[a:slow] apply_install/wait failed: timed out after 30 s',
      '[a:cond] apply_install/maybe skipped: conditions false',
      '[a:long] apply_install/apply cancelled after 1.2s',
      '[a:long] cancelled after 1.2s',
    ]);
  });

  it('writes colour codes only when colours are on', async () => {
    const plainRun = plain({ color: false });
    feed(plainRun.reporter, failingRun);
    await plainRun.reporter.close();
    expect(plainRun.out.raw()).not.toContain('\u001b[');

    const coloured = plain({ color: true });
    feed(coloured.reporter, failingRun);
    await coloured.reporter.close();
    expect(coloured.out.raw()).toContain('\u001b[31mfailed\u001b[39m');
    expect(coloured.out.text()).toBe(plainRun.out.raw());
  });

  it('prints no summary when the run never started, and only one summary however often it is closed', async () => {
    const idle = plain();
    idle.reporter.onEvent(ev.log(0, 'error', 'no stack named dev'));
    await idle.reporter.close();
    expect(idle.out.raw()).toBe('error: no stack named dev\n');

    const { out, reporter } = plain();
    feed(reporter, failingRun);
    await reporter.close();
    await reporter.close();
    reporter.onEvent(ev.log(4000, 'warn', 'late'));
    expect(out.text().match(/^install failed in/gm)).toHaveLength(1);
    expect(out.text()).not.toContain('late');
  });
});
