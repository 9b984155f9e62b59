/**
 * `kapps serve --config` with a project from git configured wrongly: it does not start, exits non-zero, and each
 * diagnostic names the file, the line and the field.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const dir = mkdtempSync(path.join(tmpdir(), 'kapps-git-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function serve(config: string) {
  const file = path.join(dir, 'server.yaml');
  writeFileSync(file, config);
  const r = await runCli(['serve', '--config', file, '--listen', '127.0.0.1:0', '--backend', path.join(dir, 'b')], {
    cwd: dir,
    killAfterMs: 20_000,
  });
  return { ...r, file };
}

const repo = (fields: string) => `projects:\n  - name: shop\n    repo:\n${fields}`;

describe('kapps serve --config: projects from git configured wrongly', () => {
  it.each([
    [
      'both stack_file and repo',
      'projects:\n  - name: shop\n    stack_file: stacks.yaml\n    repo:\n      url: file:///srv/infra.git\n      path: stacks.yaml\n',
      5,
      'a project takes `stack_file` or `repo`, not both (at projects[0].repo)',
    ],
    [
      'neither',
      'projects:\n  - name: shop\n',
      2,
      'a project needs `stack_file` (a file on this server) or `repo` (a git repository) (at projects[0].name)',
    ],
    [
      'credentials in the URL',
      repo('      url: https://bob:hunter2@git.example.com/infra.git\n      path: stacks.yaml\n'),
      4,
      'the URL holds a password or token: it would be written in clear (at projects[0].repo.url)',
    ],
    [
      'an option-like branch',
      repo('      url: file:///srv/infra.git\n      branch: -x\n      path: stacks.yaml\n'),
      5,
      'branch `-x` is refused: it starts with `-`, so git would read it as an option (at projects[0].repo.branch)',
    ],
    [
      'an unset token_env',
      repo(
        '      url: https://git.example.com/infra.git\n      path: stacks.yaml\n      token_env: KAPPS_TEST_UNSET_TOKEN\n',
      ),
      6,
      "`KAPPS_TEST_UNSET_TOKEN` is not set in the server's environment (at projects[0].repo.token_env)",
    ],
  ])('%s', async (_what, config, line, message) => {
    const r = await serve(config);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^server\\.yaml:${line}:\\d+: error: `));
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr).not.toContain('hunter2');
  });
});
