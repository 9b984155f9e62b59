/**
 * The walk on the built CLI: the worker count and where it comes from, kapps starting as soon as their dependencies
 * are done in manifest order, the failure policy (and --keep-going), and SIGINT/SIGTERM. Order is read from the
 * fakes' trace and the NDJSON events, never from wall-clock limits.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  cleanupProjects,
  eventsOf,
  fake,
  fixtureProject,
  kapp,
  kappStatuses,
  killMatching,
  survivors,
  uniqueMarker,
  waitFor,
  type TraceLine,
} from '../support/project.js';

afterAll(cleanupProjects);
const markers: string[] = [];
afterEach(() => {
  for (const m of markers.splice(0)) killMatching(m);
});

const project = (...kapps: Record<string, unknown>[]) => fixtureProject({ manifests: { web: { kapps } } });
const step = (tag: string, args: string[] = []) => ({ apply_install: [fake('apply', tag, args)] });
const order = (trace: readonly TraceLine[]): string[] => trace.map((l) => `${l.event} ${l.tag}`);

describe('workers', () => {
  /** Three independent kapps: a waits until b has started (a file b writes). */
  const overlapping = () => {
    const p = project(kapp('a', {}), kapp('b', {}), kapp('c', step('c')));
    p.write('manifests/web.yaml', {
      kapps: [
        kapp('a', step('a', ['--wait-file', p.path('b-started'), '10000'])),
        kapp('b', step('b', ['--write-file', p.path('b-started'), 'x'])),
        kapp('c', step('c')),
      ],
    });
    return p;
  };

  it('--workers 2 runs independent kapps at the same time', async () => {
    const p = overlapping();
    const r = await p.runJson('install', ['-y', '--workers', '2']);
    expect(r.code, r.stderr).toBe(0);
    expect(eventsOf(r.events, 'run-started')[0]?.workers).toBe(2);
    const types = r.events
      .filter((e) => e.type === 'kapp-started' || e.type === 'kapp-finished')
      .map((e) => `${e.type} ${'kapp' in e ? e.kapp : ''}`);
    // b started before a finished; c waited for a free worker.
    expect(types.indexOf('kapp-started web:b')).toBeLessThan(types.indexOf('kapp-finished web:a'));
    expect(order(r.trace).indexOf('start c')).toBeGreaterThan(
      Math.min(order(r.trace).indexOf('end a'), order(r.trace).indexOf('end b')),
    );
  });

  it('--workers 1 runs one kapp at a time, in manifest order', async () => {
    const p = project(kapp('z', step('z')), kapp('y', step('y')), kapp('x', step('x')));
    const r = await p.runJson('install', ['-y', '--workers', '1']);
    expect(r.code).toBe(0);
    expect(order(r.trace)).toEqual(['start z', 'end z', 'start y', 'end y', 'start x', 'end x']);
  });

  it('defaults to num_workers, then KAPPS_WORKERS overrides it, then --workers overrides both', async () => {
    const p = fixtureProject({ manifests: { web: { kapps: [kapp('a', step('a'))] } }, config: { num_workers: 3 } });
    const workers = async (args: string[], env: Record<string, string> = {}) =>
      eventsOf((await p.runJson('install', ['-y', ...args], { env })).events, 'run-started')[0]?.workers;
    expect(await workers([])).toBe(3);
    expect(await workers([], { KAPPS_WORKERS: '2' })).toBe(2);
    expect(await workers(['--workers', '4'], { KAPPS_WORKERS: '2' })).toBe(4);
  });

  it('refuses a worker count that is not a whole number of at least 1', async () => {
    const p = project(kapp('a', step('a')));
    const r = await p.run('install', ['-y'], { env: { KAPPS_WORKERS: 'many' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('kapps: KAPPS_WORKERS must be a whole number ≥ 1, got "many"\n');
    expect(r.trace).toEqual([]);
  });
});

describe('readiness', () => {
  it('starts a kapp as soon as its own dependencies are done, not when a whole level is', async () => {
    // a ──► b      c (independent) waits until b has started: b must not wait for c.
    const p = project(kapp('a', {}));
    p.write('manifests/web.yaml', {
      kapps: [
        kapp('a', step('a')),
        kapp('c', step('c', ['--wait-file', p.path('b-started'), '10000'])),
        kapp('b', step('b', ['--write-file', p.path('b-started'), 'x']), { depends_on: [{ id: 'a' }] }),
      ],
    });
    const r = await p.runJson('install', ['-y', '--workers', '3']);
    expect(r.code, r.stdout).toBe(0);
    expect(order(r.trace).indexOf('start b')).toBeLessThan(order(r.trace).indexOf('end c'));
  });

  it('starts ready kapps in manifest order', async () => {
    // c ──► a; b is ready from the start, but a comes first in the manifest.
    const p = project(kapp('c', step('c')), kapp('a', step('a'), { depends_on: [{ id: 'c' }] }), kapp('b', step('b')));
    const r = await p.run('install', ['-y', '--workers', '1']);
    expect(r.code).toBe(0);
    expect(r.trace.filter((l) => l.event === 'start').map((l) => l.tag)).toEqual(['c', 'a', 'b']);
  });
});

describe('selection', () => {
  it('a selected kapp whose conditions are false is skipped, and the kapps after it still run', async () => {
    const p = project(
      kapp('off', step('off'), { conditions: ['false'] }),
      kapp('after', step('after'), { depends_on: [{ id: 'off' }] }),
    );
    const r = await p.runJson('install', ['-y']);
    expect(r.code).toBe(0);
    expect(r.trace.filter((l) => l.event === 'start').map((l) => l.tag)).toEqual(['after']);
    expect(kappStatuses(r.events)).toEqual({ 'web:off': 'skipped: conditions failed', 'web:after': 'succeeded' });
  });

  it('--parents processes the ancestors of the selected kapps too', async () => {
    const p = project(
      kapp('db', step('db')),
      kapp('api', step('api'), { depends_on: [{ id: 'db' }] }),
      kapp('web', step('web'), { depends_on: [{ id: 'api' }] }),
    );
    const without = await p.run('install', ['-y', '-i', 'web:api']);
    expect(without.trace.filter((l) => l.event === 'start').map((l) => l.tag)).toEqual(['api']);
    const withParents = await p.run('install', ['-y', '-i', 'web:api', '--parents']);
    expect(withParents.trace.filter((l) => l.event === 'start').map((l) => l.tag)).toEqual(['db', 'api']);
  });
});

describe('failures', () => {
  /**
   * ```
   *   a (fails once b runs) ──► c        b (runs while a fails)        d (waits for a worker)
   * ```
   */
  const failing = (marker: string) => {
    const p = project(kapp('a', {}));
    // Every step carries the marker (a second --tag does nothing), to check that none is left behind.
    const m = ['--tag', marker];
    p.write('manifests/web.yaml', {
      kapps: [
        kapp('a', step('a', [...m, '--wait-file', p.path('b-started'), '10000', '--stderr', 'a broke', '--exit', '4'])),
        kapp(
          'b',
          step('b', [...m, '--write-file', p.path('b-started'), 'x', '--wait-file', p.path('a-done'), '10000']),
        ),
        kapp('c', step('c', m), { depends_on: [{ id: 'a' }] }),
        kapp('d', step('d', m)),
      ],
    });
    return p;
  };

  it('starts no new kapps, lets running ones finish, reports the others skipped and exits 1', async () => {
    const marker = uniqueMarker();
    markers.push(marker);
    const p = failing(marker);
    // b finishes only once a has failed (the test writes the file b waits for).
    const cli = p.start('install', ['-y', '--workers', '2', '--reporter', 'json']);
    await waitFor('a to fail', () => cli.stdout().includes('"kapp":"web:a","status":"failed"'));
    p.write('a-done', 'x');
    const r = await cli.done;
    expect(r.code).toBe(1);
    // Only a and b ever started; b ran to its end after a had failed.
    expect(order(r.trace).sort()).toEqual(['end a', 'end b', 'start a', 'start b']);
    expect(order(r.trace).indexOf('end b')).toBeGreaterThan(order(r.trace).indexOf('end a'));
    expect(kappStatuses(r.events)).toEqual({
      'web:a': "failed: apply_install step 'apply' exited with code 4",
      'web:b': 'succeeded',
      'web:c': 'skipped: dependency web:a failed',
      'web:d': 'skipped: not started: the run stopped after web:a failed',
    });
    expect(eventsOf(r.events, 'run-finished')[0]).toMatchObject({
      status: 'failed',
      counts: { succeeded: 1, failed: 1, skipped: 2, cancelled: 0 },
    });
    expect(await survivors(marker)).toEqual([]);
  });

  it('--keep-going runs every kapp not downstream of the failure, and still exits 1', async () => {
    const marker = uniqueMarker();
    markers.push(marker);
    const p = failing(marker);
    p.write('a-done', 'x');
    const r = await p.runJson('install', ['-y', '--workers', '2', '--keep-going']);
    expect(r.code).toBe(1);
    expect(kappStatuses(r.events)).toEqual({
      'web:a': "failed: apply_install step 'apply' exited with code 4",
      'web:b': 'succeeded',
      'web:c': 'skipped: dependency web:a failed',
      'web:d': 'succeeded',
    });
    expect(await survivors(marker)).toEqual([]);
  });

  it('prints the failed step with its last output lines in the summary', async () => {
    const p = project(kapp('k', step('k', ['--lines', '30', 'stdout', '--exit', '3'])));
    const r = await p.run('install', ['-y']);
    expect(r.code).toBe(1);
    const summary = r.stdout.slice(r.stdout.indexOf('install failed'));
    expect(summary).toMatch(
      /^install failed in \d+\.\ds: 0 succeeded, 1 failed, 0 skipped, 0 cancelled\nFailed:\n {2}web:k: apply_install\/apply: exit code 3\n/,
    );
    expect(summary).toContain('    | line 30\n');
    expect(summary).toContain('    | line 11\n');
    expect(summary).not.toContain('| line 10\n');
  });
});

describe('signals', () => {
  /** a and b hang (each with a forked grandchild carrying the marker); c waits for a. */
  const hanging = (marker: string, extra: string[] = []) =>
    project(
      kapp('a', step('a', [...extra, '--fork-sleep', '60', `${marker}-a`, '--hang'])),
      kapp('b', step('b', [...extra, '--fork-sleep', '60', `${marker}-b`, '--hang'])),
      kapp('c', step('c'), { depends_on: [{ id: 'a' }] }),
    );

  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s stops starting kapps, stops the running steps and exits 130',
    async (signal) => {
      const marker = uniqueMarker();
      markers.push(marker);
      const p = hanging(marker);
      const cli = p.start('install', ['-y', '--kill-grace', '1', '--reporter', 'json']);
      await waitFor('both steps to start', () => p.traceLines().filter((l) => l.event === 'start').length === 2);
      cli.child.kill(signal);
      const r = await cli.done;
      expect(r.code).toBe(130);
      expect(kappStatuses(r.events)).toEqual({
        'web:a': 'cancelled: cancelled',
        'web:b': 'cancelled: cancelled',
        'web:c': 'skipped: not started: the run was cancelled',
      });
      expect(eventsOf(r.events, 'run-finished')[0]?.status).toBe('cancelled');
      expect(r.trace.filter((l) => l.tag === 'c')).toEqual([]);
      expect(await survivors(marker)).toEqual([]);
    },
  );

  it('a second signal kills every step at once and exits 130 without waiting', async () => {
    const marker = uniqueMarker();
    markers.push(marker);
    // The steps ignore SIGTERM and the grace period is long: only the second signal's SIGKILL ends them quickly.
    const p = hanging(marker, ['--ignore-term']);
    const cli = p.start('install', ['-y', '--kill-grace', '600', '--reporter', 'json']);
    await waitFor('both steps to start', () => p.traceLines().filter((l) => l.event === 'start').length === 2);
    cli.child.kill('SIGINT');
    await waitFor('the first signal to be taken', () => cli.stderr().includes('SIGINT: stopping'));
    cli.child.kill('SIGINT');
    const r = await cli.done;
    expect(r.code).toBe(130);
    expect(await survivors(marker)).toEqual([]);
  });
});
