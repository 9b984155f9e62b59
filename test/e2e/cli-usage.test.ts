/**
 * The command line's help and usage errors on the built CLI: what a user sees when a command is missing, an option
 * is misspelt or a value is wrong (exit 2, no stack trace), and example lines that are never cut in the middle.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const RUN_HELP = 'Run `kapps --help` for usage.\n';

describe('usage errors', () => {
  it('bare kapps prints the list of commands it refers to, then exits 2', async () => {
    const r = await runCli([]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Commands:\n  kapps install <stack-file> <stack-name> [workspace-dir]');
    expect(r.stderr.endsWith(`\n\nkapps: Name a command; see the list above.\n${RUN_HELP}`)).toBe(true);
  });

  it('kapps workspace alone lists its commands instead of a raw yargs message', async () => {
    const r = await runCli(['workspace']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('  kapps workspace create <stack-file> <stack-name>');
    expect(r.stderr).not.toContain('Not enough non-option arguments');
    expect(r.stderr.endsWith(`kapps: Name a workspace command: create.\n${RUN_HELP}`)).toBe(true);
  });

  it('a misspelt option gets a suggestion', async () => {
    const r = await runCli(['install', 'stacks.yaml', 'dev', '--yse']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`kapps: unknown option --yse (did you mean '--yes'?)\n${RUN_HELP}`);
    const two = await runCli(['delete', 'stacks.yaml', 'dev', '--ignore-erors', '--frobnicate']);
    expect(two.code).toBe(2);
    expect(two.stderr).toBe(
      `kapps: unknown options --ignore-erors (did you mean '--ignore-errors'?), --frobnicate\n${RUN_HELP}`,
    );
  });

  it.each([
    [['install', 's.yaml', 'dev', '-w', 'abc'], "--workers must be a whole number ≥ 1, got 'abc'"],
    [['install', 's.yaml', 'dev', '--workers', '0'], "--workers must be a whole number ≥ 1, got '0'"],
    [['output', 's.yaml', 'dev', '-w', '1.5'], "--workers must be a whole number ≥ 1, got '1.5'"],
    [['install', 's.yaml', 'dev', '--kill-grace', '-1'], "--kill-grace must be a number ≥ 0, got '-1'"],
    [['clean', 's.yaml', 'dev', '--kill-grace', 'soon'], "--kill-grace must be a number ≥ 0, got 'soon'"],
    [['release', 'show', 's.yaml', 'dev', '--revision', 'x'], "--revision must be a whole number ≥ 1, got 'x'"],
  ])('%j is a usage error before any file is read', async (args, message) => {
    const r = await runCli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`kapps: ${message}\n${RUN_HELP}`);
  });
});

describe('help', () => {
  it.each([['generate'], ['render'], ['install'], ['graph']])(
    'kapps %s --help prints each example command on one line',
    async (command) => {
      const r = await runCli([command, '--help']);
      expect(r.code).toBe(0);
      const examples = r.stdout.slice(r.stdout.indexOf('Examples:\n') + 'Examples:\n'.length).split('\n\n')[0] ?? '';
      const lines = examples.split('\n');
      expect(lines.length).toBeGreaterThan(0);
      // Every line starts a command (`kapps …`, or a pipe into kapps): none is the rest of a cut one.
      for (const line of lines) expect(line).toMatch(/^ {2}(kapps|echo) /);
    },
  );
});
