/**
 * The git commands of a git source, seen through a recording runner: every value from configuration comes after
 * `--end-of-options`, and a hostile value that reached `acquireGitSource` without the loader's check (a caller
 * bug) is still refused before any git command runs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireGitSource, type CommandRunner } from '../../../src/workspace/git-source.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function recorder() {
  const calls: string[][] = [];
  const run: CommandRunner = (command, args) => {
    calls.push([command, ...args]);
    return Promise.resolve({ exitCode: 0, stdout: '', stderr: '' });
  };
  const dir = mkdtempSync(path.join(tmpdir(), 'kapps-git-unit-'));
  dirs.push(dir);
  return { calls, run, checkout: path.join(dir, 'checkout') };
}

describe('acquireGitSource', () => {
  it('puts the repository and the ref after --end-of-options', async () => {
    const { calls, run, checkout } = recorder();
    await acquireGitSource(run, { repo: '/srv/repo.git', path: 'kapps/k', ref: 'v1' }, checkout, {
      update: false,
      what: 'kapp web:k, source k',
    });
    expect(calls).toEqual([
      ['git', 'init', '-q'],
      ['git', 'remote', 'add', '--end-of-options', 'origin', '/srv/repo.git'],
      ['git', 'fetch', '--depth=1', '--tags', '--end-of-options', 'origin', 'v1'],
      ['git', 'config', '--end-of-options', 'core.sparseCheckout', 'true'],
      ['git', '-c', 'advice.detachedHead=false', 'checkout', '-q', '--detach', 'FETCH_HEAD', '--'],
    ]);
  });

  it.each([
    { repo: '/srv/repo.git', path: 'k', ref: '--upload-pack=touch /tmp/x', refused: 'ref `--upload-pack' },
    { repo: '/srv/repo.git', path: 'k', ref: '-c core.sshCommand=x', refused: 'ref `-c core' },
    { repo: '/srv/repo.git', path: 'k', ref: 'a..b', refused: 'ref `a..b`' },
    { repo: '/srv/repo.git', path: 'k', ref: 'v1\n-x', refused: 'ref `v1' },
    { repo: '/srv/repo.git', path: 'k', ref: 'v1\u0000', refused: 'ref `v1' },
    { repo: '/srv/repo.git', path: 'k', ref: 'main:refs/heads/x', refused: 'ref `main:' },
    { repo: '/srv/repo.git', path: 'k', ref: '+main', refused: 'ref `+main`' },
    { repo: '--upload-pack=touch /tmp/x', path: 'k', ref: 'v1', refused: 'repository `--upload-pack' },
    { repo: 'ext::sh -c touch% /tmp/x', path: 'k', ref: 'v1', refused: 'repository `ext::' },
    { repo: 'fd::17', path: 'k', ref: 'v1', refused: 'repository `fd::17`' },
    { repo: 'ssh://-oProxyCommand=x/r.git', path: 'k', ref: 'v1', refused: 'repository `ssh://-o' },
    { repo: '-oProxyCommand=x:r.git', path: 'k', ref: 'v1', refused: 'repository `-o' },
    { repo: 'user@-oProxyCommand=x:r.git', path: 'k', ref: 'v1', refused: 'repository `user@-o' },
    { repo: 'gopher://host/r.git', path: 'k', ref: 'v1', refused: 'repository `gopher:' },
    { repo: '/srv/repo.git', path: '../../etc', ref: 'v1', refused: 'path `../../etc`' },
  ])('refuses $refused… before running git', async ({ refused, ...source }) => {
    const { calls, run, checkout } = recorder();
    await expect(
      acquireGitSource(run, source, checkout, { update: false, what: 'kapp web:k, source k' }),
    ).rejects.toThrow(`kapp web:k, source k: ${refused}`);
    expect(calls).toEqual([]);
  });
});
