import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnStep } from '../../../src/process/spawn.js';
import { killAllProcessGroups, liveProcessGroups } from '../../../src/process/process-groups.js';
import { markersKilledAfterEach, processesMatching } from '../../support/processes.js';
import { waitFor } from '../../support/wait.js';
import { FIXTURE_PATH, markedSleepSeconds, survivors, waitForProcess } from './processes.js';

const dir = mkdtempSync(path.join(tmpdir(), 'kapps-spawn-'));
const env = { PATH: FIXTURE_PATH };
const marker = markersKilledAfterEach();

function sleepMarker(): string {
  const m = markedSleepSeconds();
  marker(`sleep ${m}`);
  return m;
}
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('spawnStep: exit status', () => {
  it('reports a zero exit', async () => {
    const r = await spawnStep({ command: 'kapps-fake', args: [], cwd: dir, env });
    expect(r).toMatchObject({ exitCode: 0, signal: null, timedOut: false, cancelled: false });
    expect(r.spawnError).toBeUndefined();
    expect(r.pid).toBeGreaterThan(0);
  });

  it('reports a non-zero exit code exactly', async () => {
    const r = await spawnStep({ command: 'kapps-fake', args: ['--exit', '3'], cwd: dir, env });
    expect(r).toMatchObject({ exitCode: 3, signal: null, timedOut: false, cancelled: false });
    const r255 = await spawnStep({ command: 'kapps-fake', args: ['--exit', '255'], cwd: dir, env });
    expect(r255.exitCode).toBe(255);
  });

  it('reports the signal that ended the process, with no exit code', async () => {
    const r = await spawnStep({ command: 'sh', args: ['-c', 'kill -USR1 $$'], cwd: dir, env });
    expect(r).toMatchObject({ exitCode: null, signal: 'SIGUSR1', timedOut: false, cancelled: false });
    expect(r.spawnError).toBeUndefined();
  });

  it('forgets the process group once the step is over', async () => {
    await spawnStep({ command: 'kapps-fake', args: [], cwd: dir, env });
    expect(liveProcessGroups()).toEqual([]);
  });
});

describe('spawnStep: what the process sees', () => {
  it('gets `input` on stdin, then end of file; without it, stdin is closed from the start', async () => {
    const echo = ['-e', 'let n = 0; process.stdin.on("data", (c) => (n += c.length)).on("end", () => console.log(n));'];
    const input = `{"kapps": []}\n${'x'.repeat(500_000)}`;
    const fed = await spawnStep({ command: process.execPath, args: echo, cwd: dir, env, input });
    expect(fed).toMatchObject({ exitCode: 0, outputTail: [String(Buffer.byteLength(input))] });
    const none = await spawnStep({ command: process.execPath, args: echo, cwd: dir, env });
    expect(none).toMatchObject({ exitCode: 0, outputTail: ['0'] });
  });

  it('does not fail a process that exits without reading its input', async () => {
    const r = await spawnStep({
      command: process.execPath,
      args: ['-e', 'console.log("done")'],
      cwd: dir,
      env,
      input: 'y'.repeat(2_000_000),
    });
    expect(r).toMatchObject({ exitCode: 0, outputTail: ['done'] });
    expect(r.spawnError).toBeUndefined();
  });

  it('passes exactly the given environment, and nothing else', async () => {
    const given = { ALPHA: '1', 'WITH SPACE': 'a b', EMPTY: '', MULTI: 'x\ny', UNICODE: 'é€' };
    const r = await spawnStep({ command: '/usr/bin/env', args: ['-0'], cwd: dir, env: given });
    const seen = r.stdout.toString('utf8').split('\0').filter(Boolean).sort();
    expect(seen).toEqual(
      Object.entries(given)
        .map(([k, v]) => `${k}=${v}`)
        .sort(),
    );
  });

  it('looks the command up on the PATH of the given environment, not on kapps’ own', async () => {
    const r = await spawnStep({ command: 'kapps-fake', args: ['--stdout', 'found'], cwd: dir, env });
    expect(r.stdout.toString()).toBe('found\n');
    const without = await spawnStep({ command: 'kapps-fake', args: [], cwd: dir, env: { PATH: '/usr/bin:/bin' } });
    expect(without.spawnErrorCode).toBe('ENOENT');
  });

  it('runs in the given working directory', async () => {
    const r = await spawnStep({ command: 'kapps-fake', args: ['--print-cwd'], cwd: dir, env });
    expect(r.stdout.toString().trim()).toBe(realpathSync(dir));
  });

  it('passes arguments literally: no shell expands, splits or chains them', async () => {
    const tricky = ['$HOME', '*', 'a b', "it's", '; echo injected', '`id`', '$(id)', ''];
    const r = await spawnStep({
      command: 'sh',
      args: ['-c', 'for a in "$@"; do printf "[%s]\\n" "$a"; done', 'sh', ...tricky],
      cwd: dir,
      env,
    });
    expect(r.stdout.toString()).toBe(tricky.map((a) => `[${a}]\n`).join(''));
  });

  it('gives the process no stdin', async () => {
    // `cat` with stdin closed to /dev/null reads end-of-file at once instead of waiting.
    const r = await spawnStep({ command: 'cat', args: [], cwd: dir, env });
    expect(r).toMatchObject({ exitCode: 0, timedOut: false });
    expect(r.stdout.length).toBe(0);
  });
});

describe('spawnStep: output', () => {
  it('captures stdout and stderr separately', async () => {
    const r = await spawnStep({
      command: 'kapps-fake',
      args: ['--stdout', 'to out', '--stderr', 'to err'],
      cwd: dir,
      env,
    });
    expect(r.stdout.toString()).toBe('to out\n');
    expect(r.stderr.toString()).toBe('to err\n');
  });

  it('captures several megabytes on both streams, byte for byte', async () => {
    const r = await spawnStep({
      command: 'kapps-fake',
      args: ['--lines', '300000', 'stdout', '--lines', '200000', 'stderr'],
      cwd: dir,
      env,
    });
    const lines = (n: number): string => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join('');
    expect(r.stdout.length).toBeGreaterThan(3_000_000);
    expect(r.stdout.toString()).toBe(lines(300_000));
    expect(r.stderr.toString()).toBe(lines(200_000));
    expect(r.outputTail).toHaveLength(20);
  });

  it('keeps the last 20 lines of a large output as the tail', async () => {
    const r = await spawnStep({ command: 'kapps-fake', args: ['--lines', '300000', 'stdout'], cwd: dir, env });
    expect(r.outputTail).toEqual(Array.from({ length: 20 }, (_, i) => `line ${299_981 + i}`));
  });

  it('streams decoded chunks to onOutput, in order, without splitting a character', async () => {
    const seen: Record<string, string> = { stdout: '', stderr: '' };
    const r = await spawnStep({
      command: 'sh',
      // The euro sign's three bytes arrive in two writes, 100 ms apart.
      args: ['-c', 'printf "a\\342\\202"; sleep 0.1; printf "\\254b\\n"; printf "e\\n" >&2'],
      cwd: dir,
      env,
      onOutput: (stream, chunk) => {
        expect(chunk).not.toContain('\uFFFD');
        seen[stream] += chunk;
      },
    });
    expect(seen).toEqual({ stdout: 'a€b\n', stderr: 'e\n' });
    expect(r.stdout.toString('utf8')).toBe('a€b\n');
  });

  it('interleaves the tail of both streams in arrival order', async () => {
    const r = await spawnStep({
      command: 'kapps-fake',
      args: ['--stdout', 'one', '--sleep', '150', '--stderr', 'two', '--sleep', '150', '--stdout', 'three'],
      cwd: dir,
      env,
    });
    expect(r.outputTail).toEqual(['one', 'two', 'three']);
  });

  it('keeps a final line without a newline in the tail', async () => {
    const r = await spawnStep({ command: 'printf', args: ['first\\nlast'], cwd: dir, env });
    expect(r.outputTail).toEqual(['first', 'last']);
  });

  it('keeps only the tail when capture is off', async () => {
    const r = await spawnStep({
      command: 'kapps-fake',
      args: ['--lines', '30', 'stdout'],
      cwd: dir,
      env,
      captureOutput: false,
      tailLines: 2,
    });
    expect(r.stdout.length).toBe(0);
    expect(r.outputTail).toEqual(['line 29', 'line 30']);
  });

  it('stops the step and rethrows when onOutput throws', async () => {
    const m = marker();
    const run = spawnStep({
      command: 'kapps-fake',
      args: ['--fork-sleep', '60', m, '--stdout', 'boom', '--hang'],
      cwd: dir,
      env,
      killGraceMs: 500,
      onOutput: () => {
        throw new Error('reporter broke');
      },
    });
    await expect(run).rejects.toThrow('reporter broke');
    expect(await survivors(m)).toEqual([]);
  });
});

describe('spawnStep: timeouts', () => {
  it('kills the whole tree of a forking step and reports timedOut', async () => {
    const seconds = sleepMarker();
    const r = await spawnStep({
      command: 'sh',
      args: ['-c', `sleep ${seconds} & wait`],
      cwd: dir,
      env,
      timeoutMs: 300,
    });
    expect(r).toMatchObject({ timedOut: true, cancelled: false, exitCode: null, signal: 'SIGTERM' });
    expect(await survivors(`sleep ${seconds}`)).toEqual([]);
  });

  it('kills the forked grandchildren of a node step too', async () => {
    const m = marker();
    const r = await spawnStep({
      command: 'kapps-fake',
      args: ['--fork-sleep', '60', m, '--fork-sleep', '60', m, '--hang'],
      cwd: dir,
      env,
      timeoutMs: 500,
    });
    expect(r).toMatchObject({ timedOut: true, cancelled: false });
    expect(await survivors(m)).toEqual([]);
  });

  it('does not time out a step that finishes in time', async () => {
    const r = await spawnStep({ command: 'kapps-fake', args: [], cwd: dir, env, timeoutMs: 30_000 });
    expect(r).toMatchObject({ timedOut: false, exitCode: 0 });
  });

  it('treats a timeout beyond what a timer can hold (about 25 days) as no timeout, not as an instant one', async () => {
    const r = await spawnStep({
      command: 'kapps-fake',
      args: ['--sleep', '200'],
      cwd: dir,
      env,
      timeoutMs: 40 * 24 * 3600 * 1000,
    });
    expect(r).toMatchObject({ timedOut: false, exitCode: 0 });
  });
});

describe('spawnStep: SIGKILL after the grace period', () => {
  it('escalates to SIGKILL when the step ignores SIGTERM', async () => {
    const m = marker();
    const controller = new AbortController();
    const r = await spawnStep({
      command: 'kapps-fake',
      args: ['--ignore-term', '--tag', m, '--stdout', 'ready', '--hang'],
      cwd: dir,
      env,
      killGraceMs: 200,
      signal: controller.signal,
      // Stop it only once its SIGTERM handler is in place.
      onOutput: (_stream, chunk) => chunk.includes('ready') && controller.abort(),
    });
    expect(r).toMatchObject({ cancelled: true, exitCode: null, signal: 'SIGKILL' });
    expect(await survivors(m)).toEqual([]);
  });

  it('kills a group member that ignores SIGTERM and no longer holds the pipes', async () => {
    const seconds = sleepMarker();
    const controller = new AbortController();
    const r = await spawnStep({
      command: 'sh',
      // The subshell ignores SIGTERM, says "ready" on the pipe, then becomes a `sleep` with no pipe open;
      // the leader (`wait`) dies of the SIGTERM at once, which closes the step's output.
      args: ['-c', `(trap "" TERM; echo ready >&3; exec sleep ${seconds} 3>&-) 3>&1 >/dev/null 2>&1 & wait`],
      cwd: dir,
      env,
      killGraceMs: 300,
      signal: controller.signal,
      onOutput: (_stream, chunk) => chunk.includes('ready') && controller.abort(),
    });
    expect(r).toMatchObject({ cancelled: true, signal: 'SIGTERM' });
    // spawnStep returned only after the SIGKILL of the rest of the group.
    expect(await survivors(`sleep ${seconds}`, 200)).toEqual([]);
  });
});

describe('spawnStep: cancellation', () => {
  it('kills the tree and reports cancelled when the signal aborts', async () => {
    const m = marker();
    const controller = new AbortController();
    const run = spawnStep({
      command: 'kapps-fake',
      args: ['--fork-sleep', '60', m, '--stdout', 'ready', '--hang'],
      cwd: dir,
      env,
      signal: controller.signal,
    });
    await waitForProcess(m);
    controller.abort();
    const r = await run;
    expect(r).toMatchObject({ cancelled: true, timedOut: false, exitCode: null, signal: 'SIGTERM' });
    expect(await survivors(m)).toEqual([]);
  });

  it('stops a grandchild that keeps the output pipes open after its parent exited', async () => {
    const m = marker();
    const pids = path.join(dir, `${m}.pids`);
    const controller = new AbortController();
    const run = spawnStep({
      command: 'kapps-fake',
      args: ['--stdout', 'parent done', '--fork-sleep', '60', m],
      cwd: dir,
      env: { ...env, FAKE_PIDS: pids },
      signal: controller.signal,
    });
    // Wait until the parent has gone and only the grandchild (which holds stdout and stderr) is left.
    await waitFor('the parent to end, leaving only the grandchild', () => {
      const alive = processesMatching(m);
      return alive.length === 1 && existsSync(pids) && readFileSync(pids, 'utf8').trim() === String(alive[0]);
    });
    controller.abort();
    const r = await run;
    // The parent itself exited 0; the step was still running, because its output had not ended.
    expect(r).toMatchObject({ cancelled: true, exitCode: 0, signal: null });
    expect(r.stdout.toString()).toBe('parent done\n');
    expect(await survivors(m)).toEqual([]);
  });

  it('starts nothing when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const file = path.join(dir, 'should-not-exist');
    const r = await spawnStep({
      command: 'kapps-fake',
      args: ['--write-file', file, 'x'],
      cwd: dir,
      env,
      signal: controller.signal,
    });
    expect(r).toMatchObject({ cancelled: true, exitCode: null, signal: null });
    expect(r.pid).toBeUndefined();
  });

  it('lets killAllProcessGroups kill every running step at once', async () => {
    const m = marker();
    const runs = [1, 2].map(() =>
      spawnStep({ command: 'kapps-fake', args: ['--fork-sleep', '60', m, '--hang'], cwd: dir, env }),
    );
    await waitForProcess(m);
    await waitFor('both process groups to be registered', () => liveProcessGroups().length >= 2);
    expect(killAllProcessGroups('SIGKILL')).toBe(2);
    const results = await Promise.all(runs);
    expect(results.map((r) => r.signal)).toEqual(['SIGKILL', 'SIGKILL']);
    expect(await survivors(m)).toEqual([]);
    expect(liveProcessGroups()).toEqual([]);
  });
});

describe('spawnStep: commands that cannot start', () => {
  it('reports a command missing from PATH without throwing', async () => {
    const r = await spawnStep({ command: 'kapps-no-such-command', args: [], cwd: dir, env });
    expect(r).toMatchObject({ exitCode: null, signal: null, spawnErrorCode: 'ENOENT', timedOut: false });
    expect(r.spawnError).toBe(`cannot run kapps-no-such-command: command not found on PATH (${FIXTURE_PATH})`);
    expect(r.pid).toBeUndefined();
  });

  it('reports a missing path', async () => {
    const r = await spawnStep({ command: './nope.sh', args: [], cwd: dir, env });
    expect(r.spawnErrorCode).toBe('ENOENT');
    expect(r.spawnError).toBe('cannot run ./nope.sh: no such file');
  });

  it('reports a file that is not executable (EACCES)', async () => {
    const file = path.join(dir, 'not-executable.sh');
    writeFileSync(file, '#!/bin/sh\necho hi\n');
    chmodSync(file, 0o644);
    const r = await spawnStep({ command: file, args: [], cwd: dir, env });
    expect(r).toMatchObject({ exitCode: null, spawnErrorCode: 'EACCES' });
    expect(r.spawnError).toMatch(/^cannot run .*not-executable\.sh: permission denied/);
  });

  it('reports a script whose interpreter is missing', async () => {
    const file = path.join(dir, 'bad-interpreter.sh');
    writeFileSync(file, '#!/no/such/interpreter\necho hi\n');
    chmodSync(file, 0o755);
    const r = await spawnStep({ command: file, args: [], cwd: dir, env });
    expect(r.spawnErrorCode).toBe('ENOENT');
    expect(r.spawnError).toBe(`cannot run ${file}: the interpreter named on its #! line was not found`);
  });

  it('reports a missing working directory', async () => {
    const missing = path.join(dir, 'no-such-dir');
    const r = await spawnStep({ command: 'kapps-fake', args: [], cwd: missing, env });
    expect(r.spawnError).toBe(`cannot run kapps-fake: the working directory ${missing} does not exist`);
  });

  it('reports an argument Node refuses (a NUL byte) as a spawn error', async () => {
    const r = await spawnStep({ command: 'kapps-fake', args: ['a\0b'], cwd: dir, env });
    expect(r.exitCode).toBeNull();
    expect(r.spawnError).toMatch(/^cannot run kapps-fake: /);
  });
});

describe('spawnStep: the checks of confineTo, in kapps (asynchronous) and in the process server (synchronous)', () => {
  const kappDir = mkdtempSync(path.join(dir, 'kapp-'));
  const outside = mkdtempSync(path.join(tmpdir(), 'kapps-outside-'));
  afterAll(() => rmSync(outside, { recursive: true, force: true }));
  const touched = path.join(outside, 'touched');
  const link = path.join(kappDir, 'out');
  symlinkSync(outside, link);

  for (const syncChecks of [false, true]) {
    const how = syncChecks ? 'synchronous' : 'asynchronous';
    it(`${how}: runs a command found on PATH, by its absolute path, in the kapp's directory`, async () => {
      const r = await spawnStep(
        { command: 'sh', args: ['-c', 'echo "$0"; pwd'], cwd: kappDir, env, confineTo: kappDir },
        { syncChecks },
      );
      expect(r.refused).toBeUndefined();
      expect(r.exitCode).toBe(0);
      const [argv0, cwd] = r.stdout.toString().trim().split('\n');
      expect(path.isAbsolute(argv0 ?? '')).toBe(true);
      expect(cwd).toBe(realpathSync(kappDir));
    });

    it(`${how}: refuses a working directory that leads out of the kapp's directory, starting nothing`, async () => {
      const r = await spawnStep(
        { command: 'touch', args: [touched], cwd: link, env, confineTo: kappDir },
        { syncChecks },
      );
      expect(r.refused).toEqual({
        kind: 'escape',
        dir: link,
        real: realpathSync(outside),
        root: realpathSync(kappDir),
      });
      expect(r.pid).toBeUndefined();
      expect(existsSync(touched)).toBe(false);
    });

    it(`${how}: refuses a command that is not found, starting nothing`, async () => {
      const r = await spawnStep(
        { command: 'kapps-no-such-command', args: [], cwd: kappDir, env, confineTo: kappDir },
        { syncChecks },
      );
      expect(r.refused).toEqual({ kind: 'not-found' });
      expect(r).toMatchObject({ exitCode: null, signal: null, cancelled: false, timedOut: false });
      expect(r.spawnError).toBeUndefined();
    });
  }
});
