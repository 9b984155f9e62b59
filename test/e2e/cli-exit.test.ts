/**
 * How the CLI's process ends (src/cli/exit-fast.ts): once a command is done it ends at its `exit` event, through
 * `process.reallyExit` (what `process.exit` calls), instead of tearing Node's environment down — with everything
 * written, the same exit code, and any `exit` listener added after kapps' own still run.
 *
 * A module loaded before the CLI (`node --import`) reports each `process.reallyExit` call on stderr; Node's
 * ordinary end does not call it.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, cliEnv, type CliResult } from '../support/cli.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'kapps-exit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const REPORT = path.join(dir, 'report-really-exit.mjs');
writeFileSync(
  REPORT,
  "import { writeSync } from 'node:fs';\n" +
    'const really = process.reallyExit;\n' +
    'process.reallyExit = (code) => { writeSync(2, `reallyExit(${code})\\n`); really.call(process, code); };\n',
);
// Adds an `exit` listener right after the first one added after it (the CLI's own).
const LATE = path.join(dir, 'late-exit-listener.mjs');
writeFileSync(
  LATE,
  "import { writeSync } from 'node:fs';\n" +
    'let added = false;\n' +
    "process.on('newListener', (event) => {\n" +
    "  if (event !== 'exit' || added) return;\n" +
    '  added = true;\n' +
    "  queueMicrotask(() => process.on('exit', (code) => writeSync(2, `late listener: ${code}\\n`)));\n" +
    '});\n',
);

function run(
  args: readonly string[],
  imports: readonly string[],
  cwd = dir,
  env: Record<string, string> = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...imports.flatMap((i) => ['--import', i]), CLI, ...args], {
      cwd,
      env: cliEnv({ KAPPS_HOME: path.join(dir, 'home'), ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/**
 * A stack of `count` kapps in one manifest, each with one `true` step (installed) and each but the first depending
 * on the one before it when `chain`; its JSON document is about 1 KB a kapp.
 */
function writeStack(name: string, count: number): string {
  const stack = path.join(dir, name);
  mkdirSync(path.join(stack, 'manifests'), { recursive: true });
  writeFileSync(
    path.join(stack, 'stacks.yaml'),
    'bench:\n  provider: local\n  provisioner: none\n  cluster: bench\n  manifests:\n    - uri: manifests/m.yaml\n',
  );
  const kapps = Array.from(
    { length: count },
    (_, i) =>
      `  - id: k${i}\n` +
      (i > 0 ? `    depends_on:\n      - id: m:k${i - 1}\n` : '') +
      '    run_units:\n      step:\n        apply_install:\n          - name: run\n            command: true\n',
  );
  writeFileSync(path.join(stack, 'manifests', 'm.yaml'), `kapps:\n${kapps.join('')}`);
  return stack;
}

const big = writeStack('big', 300);
const small = writeStack('small', 3);

describe('the end of the CLI process', () => {
  it('ends at its exit event once a command is done, with its whole output written', async () => {
    // About 300 KB: more than a pipe holds, so the CLI waits for the reader as it writes.
    const r = await run(['generate', '-o', 'json', 'stacks.yaml', 'bench'], [REPORT], big);
    expect(r.stderr).toBe('reallyExit(0)\n');
    expect(r.code).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(200_000);
    const doc = JSON.parse(r.stdout) as { kapps: { id: string }[] };
    expect(doc.kapps).toHaveLength(300);
    expect(doc.kapps.at(-1)?.id).toBe('m:k299');
  });

  it('ends with the exit code of a failed command, its message written', async () => {
    const r = await run(['generate', 'stacks.yaml', 'nope'], [REPORT], small);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      'error: no stack called `nope` in stack file `stacks.yaml`; valid stack names are: bench\nreallyExit(1)\n',
    );
  });

  it('ends after a run with its release recorded and its steps done; so does its process server', async () => {
    // Loaded by kapps and by the process server it forks (whose stderr is kapps'), which ends after kapps.
    const r = await run(['install', '-y', '--reporter', 'plain', 'stacks.yaml', 'bench'], [], small, {
      NODE_OPTIONS: `--import=${REPORT}`,
    });
    expect(r.stderr).toBe('reallyExit(0)\nreallyExit(0)\n');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('install succeeded');
    const list = await run(['release', 'list', 'stacks.yaml', 'bench', '-o', 'json'], [], small);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject([{ revision: 1, phase: 'succeeded' }]);
  });

  it('lets an exit listener added after its own run, and then ends as Node does', async () => {
    const r = await run(['generate', 'stacks.yaml', 'nope'], [REPORT, LATE], small);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('late listener: 1\n');
    expect(r.stderr).not.toContain('reallyExit');
  });
});
