/**
 * The git checkout a stack file lives in: what a release records of it (the commit, whether it had local changes,
 * where the stack file is), whether a recorded commit is still there, and a copy of the checkout at a recorded
 * commit (what a rollback opens). Git runs through the engine's git runner, every value after `--` or
 * `--end-of-options`, never read as an option.
 */
import { realpathSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { KappsError } from '../diagnostics/errors.js';
import type { CommandRunner } from '../workspace/git-source.js';

/** What a release records of the checkout its stack file was read in. */
export interface CheckoutSource {
  /** The `origin` remote's URL without credentials, else the checkout's top folder. */
  readonly repo: string;
  /** The full SHA of HEAD. */
  readonly commit: string;
  /** Tracked changes, or untracked files not ignored (the workspace and a file backend inside it left out). */
  readonly dirty: boolean;
  /** The stack file relative to the top of the checkout, `/`-separated. */
  readonly path: string;
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** git's output, or undefined when it fails or cannot be run (what a release records of a checkout is optional). */
async function gitOut(run: CommandRunner, args: readonly string[], cwd: string): Promise<string | undefined> {
  try {
    const r = await run('git', args, { cwd, timeoutMs: 30_000 });
    return r.exitCode === 0 ? r.stdout : undefined;
  } catch {
    return undefined;
  }
}

/** A URL without its user information (`https://user:token@host/x` → `https://host/x`). */
function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i, '$1');
}

/** Whether `inner` is `outer` or inside it. */
function isInside(inner: string, outer: string): boolean {
  const rel = path.relative(outer, inner);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** The top folder of the git checkout holding `dir`, or undefined when it is in none. */
export async function checkoutTop(run: CommandRunner, dir: string): Promise<string | undefined> {
  const top = await gitOut(run, ['rev-parse', '--show-toplevel'], dir);
  return top?.trim() ? real(top.trim()) : undefined;
}

/**
 * What a release records of the checkout holding `stackFile` (absolute); undefined when the stack file is in no git
 * checkout or the checkout has no commit yet. `leaveOut` (absolute folders: the stack's workspace, a file backend)
 * do not make it dirty.
 */
export async function checkoutSource(
  run: CommandRunner,
  stackFile: string,
  leaveOut: readonly string[],
): Promise<CheckoutSource | undefined> {
  const file = path.join(real(path.dirname(stackFile)), path.basename(stackFile));
  const top = await checkoutTop(run, path.dirname(file));
  if (!top) return undefined;
  const commit = (await gitOut(run, ['rev-parse', '--verify', '--end-of-options', 'HEAD^{commit}'], top))?.trim();
  if (!commit || !SHA.test(commit)) return undefined;
  const origin = (await gitOut(run, ['config', '--get', '--end-of-options', 'remote.origin.url'], top))?.trim();
  const excludes = leaveOut
    .map(real)
    .filter((dir) => isInside(dir, top) && dir !== top)
    .map((dir) => `:(top,exclude,literal)${path.relative(top, dir).split(path.sep).join('/')}`);
  const status = await gitOut(run, ['status', '--porcelain', '-z', '--', ':(top)', ...excludes], top);
  return {
    repo: origin ? withoutCredentials(origin) : top,
    commit,
    // A status that cannot be read is not a clean one.
    dirty: status === undefined || status !== '',
    path: path.relative(top, file).split(path.sep).join('/'),
  };
}

/** Whether `commit` (a full SHA) is an object of the repository holding `dir`. */
export async function hasCommit(run: CommandRunner, dir: string, commit: string): Promise<boolean> {
  if (!SHA.test(commit)) return false;
  return (await gitOut(run, ['cat-file', '-e', '--end-of-options', `${commit}^{commit}`], dir)) !== undefined;
}

/** A copy of a checkout at one commit, removed by `remove`. */
export interface CommitCopy {
  /** The copy's top folder. */
  readonly dir: string;
  remove(): Promise<void>;
}

/**
 * A copy of the checkout `top` at `commit`, in a new folder under `parent`: `git clone --shared --no-checkout`, then
 * a checkout of the commit (detached).
 */
export async function copyAtCommit(
  run: CommandRunner,
  top: string,
  commit: string,
  parent: string,
): Promise<CommitCopy> {
  if (!SHA.test(commit)) throw new KappsError(`the recorded commit ${JSON.stringify(commit)} is not a full SHA`);
  const dir = await mkdtemp(path.join(parent, '.kapps-rollback-'));
  const remove = (): Promise<void> => rm(dir, { recursive: true, force: true });
  const git = async (args: readonly string[], cwd: string): Promise<void> => {
    const r = await run('git', args, { cwd, timeoutMs: 120_000 });
    if (r.exitCode !== 0) {
      const detail = (r.error ?? r.stderr.trim()) || `exit code ${String(r.exitCode)}`;
      throw new KappsError(`cannot check out commit ${commit} of ${top}: git ${args[0] ?? ''} failed: ${detail}`);
    }
  };
  try {
    await git(['clone', '-q', '--shared', '--no-checkout', '--', top, dir], parent);
    await git(['-c', 'advice.detachedHead=false', 'checkout', '-q', '--detach', commit, '--'], dir);
  } catch (e) {
    await remove();
    throw e;
  }
  return { dir, remove };
}
