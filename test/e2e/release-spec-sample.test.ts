/**
 * The complete spec on the sample project (samples/demo with the kapps library and the real terraform), on the built
 * CLI and a real `kapps serve`: nothing changes after an apply, after `kapps clean`, from a second checkout of the
 * project at another path, nor in the server's preview after the CLI's apply; a provider variable that reaches a
 * kapp only through a template (`site_name`) previews as an Update of that kapp, with the template's changed line,
 * and of the kapp that reads its outputs.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../support/cli.js';
import { isRunning } from '../support/processes.js';
import { api, startServer, stopAllServers, waitForRun } from '../support/server.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
const SLOW = { timeout: 240_000 };

/** A copy of the sample and the kapps library (the sample reaches them by relative paths). */
function copySample(): { root: string; demo: string } {
  const root = mkdtempSync(join(tmpdir(), 'kapps-spec-sample-'));
  dirs.push(root);
  const demo = join(root, 'samples', 'demo');
  cpSync(join(REPO, 'samples', 'demo'), demo, { recursive: true, filter: (src) => !src.includes('.kapps-workspace') });
  cpSync(join(REPO, 'kapps'), join(root, 'kapps'), { recursive: true });
  return { root, demo };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

const first = copySample();
const home = join(first.root, 'kapps-home');
let env: Record<string, string> = {};
const pidFile = join(first.demo, '.kapps-workspace', 'local', 'web', 'site', 'static-site', '.run', 'server.pid');

afterAll(async () => {
  await stopAllServers();
  // The sample's site server is stopped by `delete -y`; this is the safety net of a failed test.
  try {
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    if (pid && isRunning(pid)) process.kill(pid, 'SIGKILL');
  } catch {
    // no server was started
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const kapps = (args: string[], cwd = first.demo): Promise<CliResult> =>
  runCli(args, { cwd, env, killAfterMs: 200_000 });

function noChanges(r: CliResult, revision: number): void {
  expect(r.stdout + r.stderr).toBe(`No changes: the 3 kapp(s) match release ${revision}.\n`);
  expect(r.code).toBe(0);
}

describe.sequential('the spec of the sample project', () => {
  it('an apply, then nothing to change: after clean, and from a second checkout at another path', SLOW, async () => {
    env = { KAPPS_HOME: home, DEMO_PORT: String(await freePort()) };
    const applied = await kapps(['install', 'stacks.yaml', 'local', '-y']);
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    noChanges(await kapps(['preview', 'stacks.yaml', 'local', '--detailed-exitcode']), 1);

    // `clean` removes the generated files (the tfvars file, terraform's output, the page): the spec stays.
    const cleaned = await kapps(['clean', 'stacks.yaml', 'local']);
    expect(cleaned.code, cleaned.stderr).toBe(0);
    expect(cleaned.stdout).toContain('_generated_');
    noChanges(await kapps(['preview', 'stacks.yaml', 'local', '--detailed-exitcode']), 1);

    // The same project checked out elsewhere, with no workspace yet, against the same release history.
    const second = copySample();
    noChanges(await kapps(['preview', 'stacks.yaml', 'local', '--detailed-exitcode'], second.demo), 1);
  });

  it('the server previews the stack the CLI applied: no changes', SLOW, async () => {
    const server = await startServer({
      args: ['--project', `kapps-demo=${join(first.demo, 'stacks.yaml')}`, '--backend', home],
      env,
      cwd: first.demo,
    });
    const c = api(server.url);
    const run = await c.post('/api/v1/runs', { type: 'preview', project: 'kapps-demo', stack: 'local' });
    expect(run.status, JSON.stringify(run.body)).toBe(202);
    const done = await waitForRun(c, run.body.id!, undefined, 120_000);
    expect(done.status, JSON.stringify(done)).toBe('succeeded');
    const doc = await c.get<{ hasChanges: boolean; basedOnRevision: number; kapps: { id: string; action: string }[] }>(
      `/api/v1/runs/${run.body.id}/result`,
    );
    expect(doc.body).toMatchObject({ hasChanges: false, basedOnRevision: 1 });
    expect(doc.body.kapps.map((k) => `${k.id} ${k.action}`)).toEqual([
      'infra:site-config UnChanged',
      'web:site UnChanged',
      'web:smoke UnChanged',
    ]);
    await server.stop();
  });

  it(
    'a provider variable used only by a template: Update of its kapp and of the kapp reading its outputs',
    SLOW,
    async () => {
      const values = join(first.demo, 'providers', 'values.yaml');
      writeFileSync(values, readFileSync(values, 'utf8').replace('site_name: kapps demo', 'site_name: kapps show'));
      const r = await kapps(['preview', 'stacks.yaml', 'local', '--diff', '--detailed-exitcode']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toContain(
        [
          'Preview against release 1:',
          'ID                 ACTION',
          'infra:site-config  Update',
          'web:site           Update (inputs from infra:site-config may change)',
          'web:smoke          Update (inputs from web:site may change)',
        ].join('\n'),
      );
      expect(r.stdout).toContain(
        '~ infra:site-config (Update)\n' +
          '    ~ template terraform/vars.auto.tfvars.json.tpl → site-config/_generated_vars.auto.tfvars.json: ' +
          '1 line changed\n' +
          '        -   "site_name": "kapps demo"\n' +
          '        +   "site_name": "kapps show"\n' +
          '    ~ vars.site_name: "kapps demo" → "kapps show"\n',
      );
      expect(r.stdout).toContain('~ web:smoke (Update): inputs from web:site may change\n');

      // --changed-only installs what the preview named; afterwards nothing is left to change.
      const changed = await kapps(['install', 'stacks.yaml', 'local', '-y', '--changed-only']);
      expect(changed.code, changed.stdout + changed.stderr).toBe(0);
      expect(changed.stdout).toMatch(/install succeeded .*: 3 succeeded/);
      noChanges(await kapps(['preview', 'stacks.yaml', 'local']), 2);

      const deleted = await kapps(['delete', 'stacks.yaml', 'local', '-y']);
      expect(deleted.code, deleted.stdout + deleted.stderr).toBe(0);
    },
  );
});
