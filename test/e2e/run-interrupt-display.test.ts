/**
 * What Ctrl-C shows, on the built CLI: at the first one, at once and while the run still waits, that the run is
 * stopping, which kapps and steps it waits for and the grace period; at the second, what was killed, then the
 * summary. In plain mode (stderr), and on the live listr display under a pseudo-terminal (`script`), where Ctrl-C
 * is typed as the terminal's interrupt character, so it reaches kapps the way a user's does.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, cliEnv } from '../support/cli.js';
import { cleanupProjects, fake, fixtureProject, kapp, survivors, waitFor } from '../support/project.js';
import { markersKilledAfterEach } from '../support/processes.js';

afterAll(cleanupProjects);
const newMarker = markersKilledAfterEach();

/** a and b ignore SIGTERM once ready (so only a second Ctrl-C ends them before the grace period); c waits for a. */
function stubborn(marker: string) {
  const p = fixtureProject({ manifests: { web: { kapps: [] } } });
  const step = (tag: string) => ({
    apply_install: [
      fake('apply', tag, [
        '--ignore-term',
        '--fork-sleep',
        '60',
        `${marker}-${tag}`,
        '--write-file',
        p.path(`ready-${tag}`),
        'x',
        '--hang',
      ]),
    ],
  });
  p.write('manifests/web.yaml', {
    kapps: [kapp('a', step('a')), kapp('b', step('b')), kapp('c', step('c'), { depends_on: [{ id: 'a' }] })],
  });
  return p;
}

/** Terminal escape sequences (cursor moves, erases, colours). */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g');
const WAITING = 'Waiting for web:a (apply_install/apply), web:b (apply_install/apply) to stop.';
const KILLED = 'SIGINT again: killed (SIGKILL) web:a (apply_install/apply), web:b (apply_install/apply)';

describe('Ctrl-C', () => {
  it('plain mode: says at once what the run waits for, then what the second Ctrl-C killed, and the summary', async () => {
    const marker = newMarker();
    const p = stubborn(marker);
    const cli = p.start('install', ['-y', '--kill-grace', '600', '--reporter', 'plain']);
    await waitFor('both steps to be ready', () => p.exists('ready-a') && p.exists('ready-b'));
    cli.child.kill('SIGINT');
    await waitFor('the stopping message', () => cli.stderr().includes(WAITING));
    // Said while the run still waits (for up to 600 s), not when it ends.
    expect(cli.child.exitCode).toBeNull();
    expect(cli.stderr()).toContain('SIGINT: stopping the run: no new kapp will start.\n');
    expect(cli.stderr()).toContain(
      '2 running step(s) were sent SIGTERM; whatever is left of them gets SIGKILL after 600 s.',
    );
    cli.child.kill('SIGINT');
    const r = await cli.done;
    expect(r.code).toBe(130);
    expect(r.stderr).toContain(KILLED);
    expect(r.stdout).toMatch(/install cancelled in \S+: 0 succeeded, 0 failed, 1 skipped, 2 cancelled\n/);
    expect(r.stdout).toContain('web:c: not started: the run was cancelled');
    expect(r.stdout).toMatch(/Cancelled:\n {2}web:a: .*\n {2}web:b: /);
    expect(await survivors(marker)).toEqual([]);
  });

  it('live display: shows the stopping run on the list at once, then what was killed and the summary', async () => {
    const marker = newMarker();
    const p = stubborn(marker);
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const command = `stty cols 160 rows 40; exec ${[process.execPath, CLI, 'install', p.stackFile, 'dev', '-y', '--kill-grace', '600'].map(quote).join(' ')}`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: p.dir,
      env: cliEnv(p.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (out += c));
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const text = (from = 0) => out.slice(from).replace(ANSI, '').replace(/\r/g, '');
    await waitFor('both steps to be ready', () => p.exists('ready-a') && p.exists('ready-b'));
    await waitFor('the list', () => text().includes('web:b apply_install/apply'));
    child.stdin.write('\x03');
    await waitFor('the stopping message on the list', () => text().includes(WAITING));
    expect(child.exitCode).toBeNull();
    expect(text()).toContain('SIGINT: stopping the run: no new kapp will start.');
    expect(text()).toContain('SIGKILL after 600 s');
    const mark = out.length;
    child.stdin.write('\x03');
    expect(await closed).toBe(130);
    const end = text(mark);
    expect(end).toContain(KILLED);
    expect(end).toContain('web:a cancelled after');
    expect(end).toMatch(/install cancelled in \S+: 0 succeeded, 0 failed, 1 skipped, 2 cancelled\n/);
    expect(await survivors(marker)).toEqual([]);
    expect(existsSync(p.path('ready-c'))).toBe(false);
  });
});
