/**
 * The sample project (samples/demo with the kapps library) run end to end by the built CLI, as the README's quick
 * start does: install --one-shot, output, clean and delete -y, with and without terraform on PATH.
 */
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../support/cli.js';
import { isRunning } from '../support/processes.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
const pidFiles: string[] = [];

afterAll(() => {
  // A safety net for failed runs: no server of the sample outlives the tests.
  for (const file of pidFiles) {
    const pid = readPid(file);
    if (pid && isRunning(pid)) process.kill(pid, 'SIGKILL');
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The first file named `name` in a directory of PATH. */
function onPath(name: string, pathEnv = process.env.PATH ?? ''): string | undefined {
  for (const dir of pathEnv.split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      if (statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

const TERRAFORM = onPath('terraform');
/** Each test runs the CLI several times, terraform included; a loaded machine needs the room. */
const SLOW = { timeout: 240_000 };

/** A copy of the sample and the kapps library in a temp dir (the sample reaches the kapps by relative paths). */
function copySample() {
  const root = mkdtempSync(join(tmpdir(), 'kapps-sample-e2e-'));
  dirs.push(root);
  const demo = join(root, 'samples', 'demo');
  cpSync(join(REPO, 'samples', 'demo'), demo, { recursive: true, filter: (src) => !src.includes('.kapps-workspace') });
  cpSync(join(REPO, 'kapps'), join(root, 'kapps'), { recursive: true });
  const ws = join(demo, '.kapps-workspace', 'local');
  const site = join(ws, 'web', 'site', 'static-site');
  const pidFile = join(site, '.run', 'server.pid');
  pidFiles.push(pidFile);
  return {
    root,
    stackFile: join(demo, 'stacks.yaml'),
    ws,
    site,
    pidFile,
    terraformDir: join(ws, 'infra', 'site-config', 'site-config'),
    home: join(root, 'kapps-home'),
  };
}

/** A PATH without terraform: a directory with links to the commands the sample's steps run, then every PATH entry
 * that has no terraform in it. */
function pathWithoutTerraform(root: string): string {
  const bin = join(root, 'bin');
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, 'node'));
  const find = onPath('find');
  if (find) symlinkSync(find, join(bin, 'find'));
  const rest = (process.env.PATH ?? '').split(delimiter).filter((d) => d && !existsSync(join(d, 'terraform')));
  return [bin, ...rest].join(delimiter);
}

/** A TCP port nobody listens on right now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

function readPid(file: string): number | undefined {
  try {
    return Number(readFileSync(file, 'utf8').trim()) || undefined;
  } catch {
    return undefined;
  }
}

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(3000) }).then(
    () => true,
    () => false,
  );
}

async function page(port: number): Promise<{ status: number; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: await res.text() };
}

/** Files under `dir` whose names start with _generated_. */
function generatedFiles(dir: string): string[] {
  const found: string[] = [];
  const visit = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isDirectory()) visit(p);
      else if (entry.name.startsWith('_generated_')) found.push(p);
    }
  };
  if (existsSync(dir)) visit(dir);
  return found;
}

/** The position of a line in the output, failing with the output when it is not there. */
function lineIndex(r: CliResult, text: string): number {
  const at = r.stdout.indexOf(text);
  expect(at, `expected to find ${JSON.stringify(text)} in:\n${r.stdout}\n${r.stderr}`).toBeGreaterThanOrEqual(0);
  return at;
}

function expectOk(r: CliResult): void {
  expect(r.code, `exit code ${String(r.code)}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`).toBe(0);
}

describe('the sample project (samples/demo)', () => {
  it('installs, reports, cleans and deletes without terraform on PATH, skipping the terraform kapp', SLOW, async () => {
    const s = copySample();
    const port = await freePort();
    const env = { KAPPS_HOME: s.home, HOME: s.root, DEMO_PORT: String(port), PATH: pathWithoutTerraform(s.root) };
    const cli = (...args: string[]) => runCli(args, { env, cwd: s.root, killAfterMs: 120_000 });

    const install = await cli('install', '--one-shot', s.stackFile, 'local');
    expectOk(install);
    // The terraform kapp is skipped by the terraform program's condition; the rest runs.
    expect(install.stdout).toContain('[infra:site-config] skipped: conditions failed');
    expect(install.stdout).toContain('[web:smoke-public] skipped: conditions failed');
    expect(install.stdout).not.toContain('[infra:site-config] started');
    expect(install.stdout).toMatch(/install succeeded in .*: 2 succeeded, 0 failed, 2 skipped/);
    expect(install.stdout).toContain('[web:smoke] apply_install/page-has-text succeeded');

    const pid = readPid(s.pidFile);
    expect(pid).toBeDefined();
    expect(isRunning(pid as number)).toBe(true);
    const served = await page(port);
    expect(served.status).toBe(200);
    // The fallback title from provider vars, and no build id (no terraform outputs).
    expect(served.body).toContain('<title>kapps demo</title>');
    expect(served.body).toContain('<dd id="build">none</dd>');

    const output = await cli('output', s.stackFile, 'local');
    expectOk(output);
    expect(output.stdout).toContain('[infra:site-config] skipped: conditions failed');
    expect(output.stdout).toContain(`"url": "http://127.0.0.1:${port}/"`);

    const clean = await cli('clean', s.stackFile, 'local');
    expectOk(clean);
    expect(generatedFiles(s.ws)).toEqual([]);

    const list = await cli('release', 'list', s.stackFile, 'local');
    expectOk(list);
    expect(list.stdout).toMatch(/^1\s+install\s+succeeded\s+2\s/m);

    const del = await cli('delete', '-y', s.stackFile, 'local');
    expectOk(del);
    expect(del.stdout).toContain('[infra:site-config] skipped: conditions failed');
    expect(isRunning(pid as number)).toBe(false);
    expect(await listening(port)).toBe(false);
    expect(existsSync(join(s.site, 'public', 'index.html'))).toBe(false);
    expect(existsSync(join(s.site, '.run'))).toBe(false);
  });

  it(
    'installs with terraform on PATH: terraform outputs reach the page and the smoke test, then undoes it all',
    SLOW,
    async (ctx) => {
      if (!TERRAFORM) {
        process.stderr.write(
          '\n[sample e2e] terraform is not on PATH: the terraform part of the sample (outputs reaching the page) was NOT checked here.\n\n',
        );
        ctx.skip();
      }
      const s = copySample();
      const port = await freePort();
      const env = { KAPPS_HOME: s.home, HOME: s.root, DEMO_PORT: String(port) };
      const cli = (...args: string[]) => runCli(args, { env, cwd: s.root, killAfterMs: 120_000 });

      const install = await cli('install', '--one-shot', s.stackFile, 'local');
      expectOk(install);
      expect(install.stdout).toMatch(/install succeeded in .*: 3 succeeded, 0 failed, 1 skipped/);
      expect(install.stdout).toContain('[web:smoke-public] skipped: conditions failed');
      // The call: tf-init and tf-output run inside apply_install.
      expect(lineIndex(install, '[infra:site-config] apply_install/tf-init:')).toBeLessThan(
        lineIndex(install, '[infra:site-config] apply_install/tf-apply:'),
      );
      expect(lineIndex(install, '[infra:site-config] apply_install/tf-apply:')).toBeLessThan(
        lineIndex(install, '[infra:site-config] apply_install/tf-output:'),
      );
      // Program steps (check-port, start, wait-healthy) and the kapp's own (check-page, publish) by merge_priority.
      const order = [
        '[web:site] plan_install/check-port:',
        '[web:site] plan_install/check-page:',
        '[web:site] apply_install/publish:',
        '[web:site] apply_install/start:',
        '[web:site] apply_install/wait-healthy:',
        '[web:site] apply_install/open-browser skipped: conditions are false',
      ].map((text) => lineIndex(install, text));
      expect(order).toEqual([...order].sort((a, b) => a - b));
      // Cross-manifest dependency: the site starts after the terraform kapp finished.
      expect(lineIndex(install, '[infra:site-config] succeeded')).toBeLessThan(
        lineIndex(install, '[web:site] started'),
      );
      // expected_exit_code: 4 makes the 404 probe a success.
      expect(install.stdout).toContain('[web:smoke] apply_install/unknown-page-is-404 succeeded');

      // Terraform's outputs, as recorded in the release, are on the served page.
      const tfOutput = JSON.parse(
        readFileSync(join(s.terraformDir, '_generated_terraform_output.json'), 'utf8'),
      ) as Record<string, { value: string }>;
      const buildId = tfOutput.build_id?.value ?? '';
      expect(buildId).toMatch(/^[0-9a-f-]{36}$/);
      expect(tfOutput.title?.value).toBe('kapps demo (local)');
      const shown = await cli('release', 'show', s.stackFile, 'local', '-o', 'json');
      expectOk(shown);
      const release = JSON.parse(shown.stdout) as {
        revision: number;
        operation: string;
        phase: string;
        state: Record<string, { status: string; outputs?: { terraform?: { build_id?: { value?: string } } } }>;
      };
      expect(release).toMatchObject({ revision: 1, operation: 'install', phase: 'succeeded' });
      expect(release.state['infra:site-config']?.outputs?.terraform?.build_id?.value).toBe(buildId);
      const served = await page(port);
      expect(served.status).toBe(200);
      expect(served.body).toContain('<title>kapps demo (local)</title>');
      expect(served.body).toContain(`<dd id="build">${buildId}</dd>`);
      // The smoke test checked the title it got from web:site's output.
      expect(install.stdout).toContain("[web:smoke] the page contains 'kapps demo (local)'");

      const pid = readPid(s.pidFile);
      expect(pid).toBeDefined();
      expect(isRunning(pid as number)).toBe(true);

      // Installing again changes nothing: same server, same terraform resource.
      const again = await cli('install', '--one-shot', s.stackFile, 'local');
      expectOk(again);
      expect(again.stdout).toContain(`already running at http://127.0.0.1:${port}/ (pid ${String(pid)})`);
      expect(readPid(s.pidFile)).toBe(pid);
      expect((await page(port)).body).toContain(`<dd id="build">${buildId}</dd>`);

      // output: runs the output phases, which write the output files.
      rmSync(join(s.site, '_generated_service.json'));
      const output = await cli('output', s.stackFile, 'local');
      expectOk(output);
      const service = JSON.parse(readFileSync(join(s.site, '_generated_service.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      expect(service).toMatchObject({ url: `http://127.0.0.1:${port}/`, running: true, pid });

      // clean: removes the generated files; the published site keeps being served.
      expect(generatedFiles(s.ws).length).toBeGreaterThan(0);
      const clean = await cli('clean', s.stackFile, 'local');
      expectOk(clean);
      expect(generatedFiles(s.ws)).toEqual([]);
      expect((await page(port)).status).toBe(200);

      const list = await cli('release', 'list', s.stackFile, 'local');
      expectOk(list);
      expect(list.stdout).toMatch(/^2\s+install\s+succeeded/m);

      // delete -y: the server is stopped and its files removed; terraform destroys its resource.
      const del = await cli('delete', '-y', s.stackFile, 'local');
      expectOk(del);
      expect(del.stdout).toContain(`stopped the server (pid ${String(pid)})`);
      expect(del.stdout).toContain('[infra:site-config] apply_delete/tf-destroy succeeded');
      expect(lineIndex(del, '[web:site] apply_delete/remove-files succeeded')).toBeLessThan(
        lineIndex(del, '[infra:site-config] apply_delete/tf-destroy:'),
      );
      expect(isRunning(pid as number)).toBe(false);
      expect(await listening(port)).toBe(false);
      expect(existsSync(s.pidFile)).toBe(false);
      expect(existsSync(join(s.site, 'public', 'index.html'))).toBe(false);
      const state = JSON.parse(readFileSync(join(s.terraformDir, 'terraform.tfstate'), 'utf8')) as {
        resources: unknown[];
      };
      expect(state.resources).toEqual([]);
      const after = await cli('release', 'list', s.stackFile, 'local');
      expect(after.stdout).toMatch(/^3\s+delete\s+succeeded/m);
    },
  );

  it('fails the install clearly when the port is taken, and starts nothing', SLOW, async () => {
    const s = copySample();
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    const port = address !== null && typeof address !== 'string' ? address.port : 0;
    try {
      const env = { KAPPS_HOME: s.home, HOME: s.root, DEMO_PORT: String(port), PATH: pathWithoutTerraform(s.root) };
      const r = await runCli(['install', '--one-shot', s.stackFile, 'local'], {
        env,
        cwd: s.root,
        killAfterMs: 120_000,
      });
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(`port ${port} on 127.0.0.1 is already in use by another program`);
      expect(r.stdout).toContain('web:site: plan_install/check-port: exit code 1');
      expect(r.stdout).toContain('[web:smoke] skipped: dependency web:site failed');
      expect(existsSync(s.pidFile)).toBe(false);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
