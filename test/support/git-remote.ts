/**
 * A fixture project kept in git: its folder becomes a work tree whose commits are pushed to a bare repository on
 * disk, the remote a server's `repo:` names (`file://…/remote.git`). Real git, no network.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { FixtureProject } from './project.js';

export interface GitRemote {
  /** `file://<root>/remote.git`. */
  readonly url: string;
  readonly bare: string;
  /** Write files (relative to the project folder; objects as YAML by the project's `write`), commit, push; the SHA. */
  commit(message: string, files?: Record<string, unknown>, branch?: string): string;
  /** The SHA a branch of the remote points at. */
  head(branch?: string): string;
  /** Run git in the project folder. */
  git(...args: string[]): string;
}

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Ada Lovelace',
  GIT_AUTHOR_EMAIL: 'ada@example.com',
  GIT_COMMITTER_NAME: 'Ada Lovelace',
  GIT_COMMITTER_EMAIL: 'ada@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
};

/** Put `p`'s folder under git (branch `main`), push it to a new bare repository, and return the remote. */
export function gitRemote(p: FixtureProject, branch = 'main'): GitRemote {
  const bare = path.join(p.root, 'remote.git');
  const env = { ...process.env, ...GIT_ENV, HOME: p.env.HOME ?? p.root };
  const git = (cwd: string, ...args: string[]): string =>
    execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  mkdirSync(bare, { recursive: true });
  git(bare, 'init', '--quiet', '--bare', '--initial-branch', branch);
  git(p.dir, 'init', '--quiet', '--initial-branch', branch);
  writeFileSync(path.join(p.dir, '.gitignore'), '.kapps-workspace/\n');
  git(p.dir, 'add', '-A');
  git(p.dir, 'commit', '--quiet', '-m', 'First stack');
  git(p.dir, 'remote', 'add', 'origin', bare);
  git(p.dir, 'push', '--quiet', 'origin', branch);
  return {
    url: `file://${bare}`,
    bare,
    commit(message, files = {}, to = branch) {
      const current = git(p.dir, 'rev-parse', '--abbrev-ref', 'HEAD');
      if (current !== to) git(p.dir, 'checkout', '--quiet', '-B', to);
      for (const [rel, content] of Object.entries(files)) p.write(rel, content);
      git(p.dir, 'add', '-A');
      git(p.dir, 'commit', '--quiet', '--allow-empty', '-m', message);
      git(p.dir, 'push', '--quiet', '--force', 'origin', to);
      return git(p.dir, 'rev-parse', 'HEAD');
    },
    head: (b = branch) => git(bare, 'rev-parse', `refs/heads/${b}`),
    git: (...args) => git(p.dir, ...args),
  };
}
