/**
 * Every field of a run step, end to end on the built CLI with fake commands: command lookup and the preflight
 * check, environment, working_dir, stdout/stderr files, print, expected_exit_code, ignore_errors,
 * `delete --ignore-errors`, timeout (whole process tree), load_outputs, conditions, call and merge_priority.
 */
import { chmodSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanupProjects,
  eventsOf,
  fake,
  fixtureProject,
  kapp,
  kappStatuses,
  stepLog,
  survivors,
} from '../support/project.js';
import { markersKilledAfterEach } from '../support/processes.js';

afterAll(cleanupProjects);
const newMarker = markersKilledAfterEach();

/** A project with one manifest `web` holding these kapps. */
const project = (...kapps: Record<string, unknown>[]) => fixtureProject({ manifests: { web: { kapps } } });

const started = (trace: readonly { event: string; tag: string }[]): string[] =>
  trace.filter((l) => l.event === 'start').map((l) => l.tag);

describe('command', () => {
  it('is looked up on PATH, or relative to the working directory when it has a slash', async () => {
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'k',
              {
                apply_install: [
                  fake('on-path', 'on-path'),
                  { name: 'relative', command: './run.sh', args: 'ok', working_dir: 'src/tools', print: 'true' },
                ],
              },
              { sources: [{ id: 'src', uri: '../kapps/k' }] },
            ),
          ],
        },
      },
      files: { 'kapps/k/tools/run.sh': '#!/bin/sh\necho "relative $1"\n' },
    });
    chmodSync(p.path('kapps/k/tools/run.sh'), 0o755);
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(started(r.trace)).toEqual(['on-path']);
    expect(r.stdout).toContain('[web:k] relative ok');
  });

  it('not found: an error naming the command, step and kapp before anything runs', async () => {
    const p = project(
      kapp('first', { apply_install: [fake('fine', 'first')] }),
      kapp(
        'second',
        { apply_install: [{ name: 'deploy', command: 'no-such-tool-e2e', args: 'x' }] },
        { depends_on: [{ id: 'first' }] },
      ),
    );
    const r = await p.run('install', ['-y']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("kapp web:second, apply_install step 'deploy': 'no-such-tool-e2e' not found on PATH");
    expect(r.trace).toEqual([]);
    expect(p.exists('.kapps-workspace/dev/web/first')).toBe(false);
  });

  it('--no-validate skips the check: the step fails when reached, naming command, step and kapp', async () => {
    const p = project(
      kapp('first', { apply_install: [fake('fine', 'first')] }),
      kapp(
        'second',
        { apply_install: [{ name: 'deploy', command: 'no-such-tool-e2e' }] },
        { depends_on: [{ id: 'first' }] },
      ),
    );
    const r = await p.runJson('install', ['-y', '--no-validate']);
    expect(r.code).toBe(1);
    expect(started(r.trace)).toEqual(['first']);
    const failed = eventsOf(r.events, 'step-finished').find((e) => e.kapp === 'web:second');
    expect(failed?.status).toBe('failed');
    expect(failed?.reason).toContain("'no-such-tool-e2e'");
    // The event names the step and kapp; the reason does not repeat them.
    expect(failed?.step).toBe('deploy');
    expect(failed?.kapp).toBe('web:second');
    expect(failed?.reason).toBe("command 'no-such-tool-e2e' not found on PATH");
  });
  it('the check covers the output phase of kapps that provide outputs, selected or not', async () => {
    const p = project(
      kapp(
        'db',
        { apply_install: [fake('apply', 'db')], output: [{ name: 'read-state', command: 'no-such-output-tool' }] },
        { outputs: [{ id: 'o', path: 'o.json', format: 'json' }] },
      ),
      kapp('api', { apply_install: [fake('apply', 'api')] }, { depends_on: [{ id: 'db' }] }),
    );
    for (const args of [['-y'], ['-y', '-i', 'web:api']]) {
      const r = await p.run('install', args);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("kapp web:db, output step 'read-state': 'no-such-output-tool' not found on PATH");
      expect(r.trace).toEqual([]);
    }
  });

  it('the check looks commands up on the PATH the step runs with', async () => {
    const p = project(
      kapp('k', {
        apply_install: [
          {
            name: 'tool',
            command: 'my-tool',
            args: 'hello',
            print: 'true',
            env_vars: { PATH: '{{ .kapp.cacheRoot }}/bin:/usr/bin:/bin' },
          },
        ],
      }),
    );
    p.write('.kapps-workspace/dev/web/k/bin/my-tool', '#!/bin/sh\necho "my-tool $1"\n');
    chmodSync(p.path('.kapps-workspace/dev/web/k/bin/my-tool'), 0o755);
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('[web:k] my-tool hello');
  });

  it('a dry run checks the commands looked up on PATH too', async () => {
    const p = project(
      kapp('k', {
        apply_install: [
          { name: 'deploy', command: 'no-such-tool-e2e' },
          { name: 'local', command: './not-fetched-yet.sh' },
        ],
      }),
    );
    const r = await p.run('install', ['-y', '-n']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "1 command(s) not found, nothing was run:\n  kapp web:k, apply_install step 'deploy': 'no-such-tool-e2e' not found on PATH\n",
    );
  });
});

describe('environment', () => {
  it('is the process environment, then the unit env_vars, then the step env_vars (the step wins)', async () => {
    const p = project({
      id: 'k',
      run_units: {
        main: {
          env_vars: { E2E_UNIT: 'from-unit', E2E_BOTH: 'z-from-unit', E2E_OVER: 'z-unit' },
          apply_install: [
            fake(
              'env',
              'env',
              [
                '--print-env',
                'E2E_PROC',
                '--print-env',
                'E2E_UNIT',
                '--print-env',
                'E2E_BOTH',
                '--print-env',
                'E2E_OVER',
                '--print-env',
                'E2E_STEP',
              ],
              {
                env_vars: { E2E_BOTH: 'a-from-step', E2E_STEP: 'from-step' },
                stdout: 'env.txt',
              },
            ),
          ],
        },
      },
    });
    const r = await p.run('install', ['-y'], { env: { E2E_PROC: 'from-process', E2E_OVER: 'a-process' } });
    expect(r.code, r.stderr).toBe(0);
    expect(p.read('.kapps-workspace/dev/web/k/env.txt')).toBe(
      'E2E_PROC=from-process\nE2E_UNIT=from-unit\nE2E_BOTH=a-from-step\nE2E_OVER=z-unit\nE2E_STEP=from-step\n',
    );
  });
});

describe('working_dir, stdout and stderr', () => {
  it('working_dir is relative to the kapp cache root; the unit default applies unless the step sets one', async () => {
    const p = project({
      id: 'k',
      run_units: {
        main: {
          working_dir: 'unit-dir',
          apply_install: [
            { name: 'mkdirs', command: 'mkdir', args: '-p unit-dir step/dir', working_dir: '.' },
            fake('unit', 'unit', ['--print-cwd'], { stdout: 'cwd.txt' }),
            fake('step', 'step', ['--print-cwd'], { working_dir: 'step/dir', stdout: 'cwd.txt' }),
          ],
        },
      },
    });
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout).toBe(0);
    const root = p.path('.kapps-workspace/dev/web/k');
    expect(p.read('.kapps-workspace/dev/web/k/unit-dir/cwd.txt')).toBe(`${root}/unit-dir\n`);
    expect(p.read('.kapps-workspace/dev/web/k/step/dir/cwd.txt')).toBe(`${root}/step/dir\n`);
  });

  it('stdout and stderr files are relative to the working dir and written even when the step fails', async () => {
    const p = project(
      kapp('k', {
        apply_install: [
          { name: 'mkdir', command: 'mkdir', args: 'w' },
          fake('fails', 'fails', ['--stdout', 'to stdout', '--stderr', 'to stderr', '--exit', '3'], {
            working_dir: 'w',
            stdout: 'logs/out.txt',
            stderr: 'err.txt',
          }),
        ],
      }),
    );
    const r = await p.run('install', ['-y']);
    expect(r.code).toBe(1);
    expect(p.read('.kapps-workspace/dev/web/k/w/logs/out.txt')).toBe('to stdout\n');
    expect(p.read('.kapps-workspace/dev/web/k/w/err.txt')).toBe('to stderr\n');
  });
});

describe('print', () => {
  const printing = () =>
    project(
      kapp('k', {
        apply_install: [
          fake('verbose', 'v', ['--stdout', 'shown-when-verbose'], { print: 'verbose' }),
          fake('always', 'a', ['--stdout', 'shown-always'], { print: 'true' }),
          fake('text', 't', ['--stdout', 'shown-for-any-text'], { print: 'yes please' }),
          fake('never', 'n', ['--stdout', 'never-shown-false'], { print: 'false' }),
          fake('unset', 'u', ['--stdout', 'never-shown-unset']),
        ],
      }),
    );

  /** The output lines of kapp k (not the lines about its steps). */
  const outputLines = (stdout: string): string[] =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('[web:k] ') && !/^\[web:k\] (started|succeeded|apply_install\/)/.test(l));

  it('without -v: true and other text always, verbose/false/unset not', async () => {
    const r = await printing().run('install', ['-y']);
    expect(r.code).toBe(0);
    expect(outputLines(r.stdout)).toEqual(['[web:k] shown-always', '[web:k] shown-for-any-text']);
  });

  it('with -v: verbose output too, never false/unset', async () => {
    const r = await printing().run('install', ['-y', '-v']);
    expect(r.code).toBe(0);
    expect(outputLines(r.stdout)).toEqual([
      '[web:k] shown-when-verbose',
      '[web:k] shown-always',
      '[web:k] shown-for-any-text',
    ]);
  });
});

describe('exit codes', () => {
  it('expected_exit_code: that code succeeds, any other (even 0) fails', async () => {
    const p = project(
      kapp('three', { apply_install: [fake('exits-3', 'three', ['--exit', '3'], { expected_exit_code: 3 })] }),
      kapp('zero', { apply_install: [fake('exits-0', 'zero', [], { expected_exit_code: 3 })] }),
    );
    const r = await p.runJson('install', ['-y', '--keep-going']);
    expect(r.code).toBe(1);
    expect(kappStatuses(r.events)).toEqual({
      'web:three': 'succeeded',
      'web:zero': "failed: apply_install step 'exits-0' exited with code 0, expected 3",
    });
  });

  it('ignore_errors: the failure is reported and the kapp goes on', async () => {
    const p = project(
      kapp('k', {
        apply_install: [
          fake('flaky', 'flaky', ['--stderr', 'flaky broke', '--exit', '2'], { ignore_errors: true }),
          fake('next', 'next'),
        ],
      }),
    );
    const r = await p.run('install', ['-y']);
    expect(r.code).toBe(0);
    expect(started(r.trace)).toEqual(['flaky', 'next']);
    expect(r.stdout).toContain('[web:k] apply_install/flaky failed');
    expect(r.stdout).toMatch(/Failures ignored:\n {2}web:k: apply_install\/flaky: exit code 2/);
  });

  it('delete without --ignore-errors: a failed step stops the kapp and the kapps it depends on are skipped', async () => {
    const p = deleting();
    const r = await p.runJson('delete', ['-y']);
    expect(r.code).toBe(1);
    expect(started(r.trace)).toEqual(['api-1']);
    expect(kappStatuses(r.events)).toEqual({
      'web:api': "failed: apply_delete step 'one' exited with code 1",
      'web:db': 'skipped: dependent web:api failed',
    });
  });

  it('delete --ignore-errors: the run goes on past failed steps', async () => {
    const p = deleting();
    const r = await p.runJson('delete', ['-y', '--ignore-errors']);
    expect(r.code).toBe(0);
    expect(started(r.trace)).toEqual(['api-1', 'api-2', 'db-1']);
    expect(stepLog(r.events)).toEqual([
      'web:api apply_delete/one ignored',
      'web:api apply_delete/two succeeded',
      'web:db apply_delete/one succeeded',
    ]);
  });
});

/** db ◄── api; api's first apply_delete step fails. */
function deleting() {
  return project(
    kapp('db', { apply_delete: [fake('one', 'db-1')] }),
    kapp(
      'api',
      { apply_delete: [fake('one', 'api-1', ['--exit', '1']), fake('two', 'api-2')] },
      { depends_on: [{ id: 'db' }] },
    ),
  );
}

describe('timeout', () => {
  it('stops the whole process tree of a step that forks and fails it as timed out', async () => {
    const marker = newMarker();
    const seconds = `60.${Math.floor(Math.random() * 1e6)}`;
    const p = project(
      kapp('k', {
        apply_install: [
          { name: 'forks', command: 'sh', args: `-c 'sleep ${seconds} & wait' ${marker}`, timeout: 1 },
          fake('after', 'after'),
        ],
      }),
    );
    const r = await p.runJson('install', ['-y', '--kill-grace', '1']);
    expect(r.code).toBe(1);
    const step = eventsOf(r.events, 'step-finished')[0];
    expect(step).toMatchObject({ status: 'failed', timedOut: true, reason: 'timed out after 1 s' });
    expect(started(r.trace)).toEqual([]);
    expect(await survivors(marker)).toEqual([]);
    expect(await survivors(seconds)).toEqual([]);
  });

  it('escalates to SIGKILL for processes that ignore SIGTERM', async () => {
    const marker = newMarker();
    const p = project(
      kapp('k', {
        apply_install: [
          fake('stubborn', 'stubborn', ['--ignore-term', '--fork-sleep', '60', marker, '--hang'], { timeout: 1 }),
        ],
      }),
    );
    const r = await p.runJson('install', ['-y', '--kill-grace', '1']);
    expect(r.code).toBe(1);
    expect(eventsOf(r.events, 'step-finished')[0]).toMatchObject({ status: 'failed', timedOut: true });
    expect(r.stdout).not.toContain('"status":"succeeded"');
    expect(await survivors(marker)).toEqual([]);
  });
});

describe('load_outputs and conditions', () => {
  it('loads declared outputs after the step and renders the remaining steps and their conditions with them', async () => {
    const p = project(
      kapp(
        'k',
        {
          apply_install: [
            fake('before', 'before', ['--stdout', 'before={{ .outputs.this.info.name }}'], { print: 'true' }),
            fake('write', 'write', ['--write-file', 'info.json', '{"name":"alpha","go":"true"}'], {
              load_outputs: true,
            }),
            fake('uses', 'uses', ['--stdout', 'after={{ .outputs.this.info.name }}'], { print: 'true' }),
            fake('gated', 'gated', [], {
              conditions: ['{{ if .outputs.this.info.go }}{{ .outputs.this.info.go }}{{ else }}false{{ end }}'],
            }),
            fake('off', 'off', [], { conditions: ['{{ if .outputs.this.info.name }}false{{ else }}true{{ end }}'] }),
          ],
        },
        { outputs: [{ id: 'info', path: 'info.json', format: 'json' }] },
      ),
    );
    const r = await p.runJson('install', ['-y', '--allow-no-value']);
    expect(r.code, r.stderr).toBe(0);
    expect(started(r.trace)).toEqual(['before', 'write', 'uses', 'gated']);
    const shown = eventsOf(r.events, 'step-output').map((e) => e.text);
    expect(shown).toEqual(['before=<no value>\n', 'after=alpha\n']);
    expect(stepLog(r.events)).toEqual([
      'web:k apply_install/before succeeded',
      'web:k apply_install/write succeeded',
      'web:k apply_install/uses succeeded',
      'web:k apply_install/gated succeeded',
      'web:k apply_install/off skipped',
    ]);
  });

  it('re-planning after load_outputs neither skips nor repeats steps when the step list changes', async () => {
    // Once `info` is loaded, unit `first`'s conditions turn false: the re-planned list no longer holds `write`.
    const p = project({
      id: 'k',
      outputs: [{ id: 'info', path: 'info.json', format: 'json' }],
      run_units: {
        first: {
          conditions: ['{{ if .outputs.this.info.name }}false{{ else }}true{{ end }}'],
          apply_install: [
            fake('write', 'write', ['--write-file', 'info.json', '{"name":"alpha"}'], {
              load_outputs: true,
              merge_priority: 1,
            }),
          ],
        },
        second: {
          apply_install: [fake('b1', 'b1', [], { merge_priority: 2 }), fake('b2', 'b2', [], { merge_priority: 3 })],
        },
      },
    });
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(started(r.trace)).toEqual(['write', 'b1', 'b2']);
  });

  it('a condition may read a whole output loaded by an earlier step', async () => {
    const p = project(
      kapp(
        'k',
        {
          apply_install: [
            fake('write', 'write', ['--write-file', 'flag.txt', 'true'], { load_outputs: true }),
            fake('gated', 'gated', [], { conditions: ['{{ .outputs.this.flag }}'] }),
          ],
        },
        { outputs: [{ id: 'flag', path: 'flag.txt', format: 'text' }] },
      ),
    );
    const r = await p.run('install', ['-y']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(started(r.trace)).toEqual(['write', 'gated']);
  });

  it('a step whose conditions are false is skipped and reported', async () => {
    const p = project(
      kapp('k', {
        apply_install: [
          fake('no', 'no', [], { conditions: ['true', 'false'] }),
          fake('yes', 'yes', [], { conditions: ['true'] }),
        ],
      }),
    );
    const r = await p.runJson('install', ['-y']);
    expect(r.code).toBe(0);
    expect(started(r.trace)).toEqual(['yes']);
    expect(eventsOf(r.events, 'step-finished')[0]).toMatchObject({ step: 'no', status: 'skipped' });
  });
});

describe('call and merge_priority', () => {
  it('orders steps by merge_priority (unset last) and expands calls in place', async () => {
    const p = project({
      id: 'k',
      run_units: {
        tf: {
          output: [fake('tf-output', 'tf-output')],
          apply_install: [
            fake('tf-apply', 'tf-apply', [], { merge_priority: 10 }),
            { call: 'output', merge_priority: 15 },
          ],
        },
        helm: {
          apply_install: [
            fake('last', 'last'),
            fake('helm-install', 'helm-install', [], { merge_priority: 30 }),
            fake('first', 'first', [], { merge_priority: 0 }),
          ],
        },
      },
    });
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout).toBe(0);
    expect(started(r.trace)).toEqual(['first', 'tf-apply', 'tf-output', 'helm-install', 'last']);
  });
});
