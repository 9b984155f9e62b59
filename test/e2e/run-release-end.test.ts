/**
 * Every way a run can end closes its release, on the built CLI and on both backends: the terminal closed (SIGHUP),
 * SIGQUIT, a reader of kapps' output that goes away early (`kapps install -y … | head -3`) with each reporter.
 * After each, the release is closed and the next run is not refused. And kill -9, where nothing of kapps can run:
 * no step process is left, in both spawn modes. The signal tests run REPEAT times (default 3; set
 * KAPPS_E2E_SIGNAL_REPEAT for more).
 */
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { BACKENDS, allReleases, cleanup, freshBackend } from '../fixtures/release/harness.js';
import { CLI, cliEnv } from '../support/cli.js';
import {
  cleanupProjects,
  fake,
  fixtureProject,
  kapp,
  processesMatching,
  survivors,
  waitFor,
} from '../support/project.js';
import { markersKilledAfterEach } from '../support/processes.js';

afterAll(() => {
  cleanupProjects();
  cleanup();
});
const newMarker = markersKilledAfterEach();

const REPEAT = Math.max(1, Number(process.env.KAPPS_E2E_SIGNAL_REPEAT ?? 3));
const ROUNDS = Array.from({ length: REPEAT }, (_, i) => i + 1);
const PROJECT = ['--project', 'procs'];

/** a and b hang (each with a forked grandchild carrying the marker in its command line); c waits for a. */
function hanging(marker: string) {
  const step = (tag: string) => ({
    apply_install: [fake('apply', tag, ['--fork-sleep', '60', `${marker}-${tag}`, '--hang'])],
  });
  return fixtureProject({
    manifests: {
      web: { kapps: [kapp('a', step('a')), kapp('b', step('b')), kapp('c', step('c'), { depends_on: [{ id: 'a' }] })] },
    },
  });
}

/** Three kapps in a chain printing many lines each, so that output goes on after a reader has gone. */
function chatty() {
  const step = (tag: string) => ({
    apply_install: [
      fake('apply', tag, ['--lines', '200', 'stdout', '--sleep', '100', '--lines', '200', 'stderr'], {
        print: 'always',
      }),
    ],
  });
  return fixtureProject({
    manifests: {
      web: {
        kapps: [
          kapp('a', step('a')),
          kapp('b', step('b'), { depends_on: [{ id: 'a' }] }),
          kapp('c', step('c'), { depends_on: [{ id: 'b' }] }),
        ],
      },
    },
  });
}

describe.each(BACKENDS)('every way a run ends closes its release (%s backend)', (kind) => {
  describe.each(['SIGHUP', 'SIGQUIT'] as const)('%s', (signal) => {
    it.each(ROUNDS)('cancels the release, stops every step and exits 130 (round %i)', async () => {
      const backend = await freshBackend(kind);
      const marker = newMarker();
      const p = hanging(marker);
      const cli = p.start('install', ['-y', '--kill-grace', '1', '--reporter', 'plain', ...PROJECT], {
        env: backend.env,
      });
      await waitFor('both steps to start', () => p.traceLines().filter((l) => l.event === 'start').length === 2);
      cli.child.kill(signal);
      const r = await cli.done;
      expect(r.code, r.stderr).toBe(130);
      expect(r.stderr).toContain(`${signal}: stopping the run`);
      expect(r.stdout).toMatch(/install cancelled in \S+: 0 succeeded, 0 failed, 1 skipped, 2 cancelled/);
      expect((await allReleases(backend, 'procs')).map((x) => x.phase)).toEqual(['cancelled']);
      expect(await survivors(marker)).toEqual([]);
    });
  });

  describe.each(['plain', 'json', 'listr'] as const)('stdout closed by its reader (--reporter %s)', (reporter) => {
    it('goes on to the end of the run, closes the release, and the next run is not refused', async () => {
      const backend = await freshBackend(kind);
      const p = chatty();
      const child = spawn(
        process.execPath,
        [CLI, 'install', p.stackFile, 'dev', '-y', '--reporter', reporter, ...PROJECT],
        {
          cwd: p.dir,
          env: cliEnv({ ...p.env, ...backend.env }),
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      // Like `| head -3`: read a little (the listr reporter writes only its summary there), then close the pipe.
      let seen = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        seen += c;
        if (seen.split('\n').length > 3) child.stdout.destroy();
      });
      if (reporter === 'listr') child.stdout.destroy();
      const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
      expect(code, stderr).toBe(0);
      expect(stderr).toContain('kapps: stdout was closed (EPIPE); nothing more is written there, the command goes on');
      expect((await allReleases(backend, 'procs')).map((x) => x.phase)).toEqual(['succeeded']);
      // Every kapp ran to its end.
      expect(
        p
          .traceLines()
          .filter((l) => l.event === 'end')
          .map((l) => l.tag),
      ).toEqual(['a', 'b', 'c']);
      const next = await p.run('install', ['-y', '--reporter', 'plain', ...PROJECT], { env: backend.env });
      expect(next.code, next.stderr).toBe(0);
      expect((await allReleases(backend, 'procs')).map((x) => x.phase)).toEqual(['succeeded', 'succeeded']);
    });
  });
});

describe.each([
  ['the process server', {}],
  ['KAPPS_INPROCESS_SPAWN=1', { KAPPS_INPROCESS_SPAWN: '1' }],
] as const)('kill -9 of kapps (%s)', (_name, env) => {
  it.each(ROUNDS)('leaves no step process behind (round %i)', async () => {
    const marker = newMarker();
    const p = hanging(marker);
    const cli = p.start('install', ['-y', '--reporter', 'plain'], { env });
    await waitFor('both steps to start', () => p.traceLines().filter((l) => l.event === 'start').length === 2);
    await waitFor('the forked processes', () => processesMatching(marker).length === 4);
    cli.child.kill('SIGKILL');
    await cli.done;
    expect(await survivors(marker, 2000)).toEqual([]);
  });
});
