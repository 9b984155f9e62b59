/**
 * A project's git repository, as one server instance holds it: a bare mirror in its data directory
 * (`<data-dir>/sources/<name>-<digest>/mirror.git`), fetched when a ref is resolved, and one working tree per
 * commit a run needs (`trees/<sha>`), removed when no run needs it any more. Two runs of different commits never
 * share a working tree; runs of one commit share a read-only view of it.
 *
 * Every value that reaches git is checked first (src/config/source-uri.ts) and placed where git cannot read it as
 * an option; git never prompts, uses only the allowed transports, and gets an HTTPS token (`token_env`) through its
 * environment (`http.extraHeader` by `GIT_CONFIG_*`), never on a command line, in a file or in a message.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { gitRefProblem, gitRepoProblem } from '../../config/source-uri.js';
import { KappsError } from '../../diagnostics/errors.js';
import { redactCredentials } from '../../diagnostics/redact.js';
import type { CommandRunner } from '../../workspace/git-source.js';
import type { RunCommit } from '../../api/index.js';

/** How long one git command may take (a fetch of a large repository included). */
const GIT_TIMEOUT_MS = 120_000;
/** Bytes of a file read from a commit (a stack file, sugarkube-conf.yaml). */
const MAX_FILE_BYTES = 8 * 1024 * 1024;

/** A ref resolved to a commit. */
export interface ResolvedCommit {
  /** The ref it was resolved from (the default branch's name when none was asked for). */
  readonly ref: string;
  readonly sha: string;
  readonly subject: string;
  /** `Name <email>`. */
  readonly author: string;
}

/** The commit a run works at, as runs show it: the repository without credentials, and the resolved commit. */
export function runCommit(url: string, resolved: ResolvedCommit): RunCommit {
  return { repo: redactCredentials(url), ...resolved };
}

/** A working tree of one commit, held until `release` is called. */
export interface Checkout {
  readonly dir: string;
  release(): Promise<void>;
}

/** A ref or commit git could not find, or refused: a client's mistake (a 400 naming `ref`). */
export class UnknownRefError extends KappsError {}

/** Fetching or reading the repository failed (network, credentials, a damaged mirror): the server's problem. */
export class RepositoryError extends KappsError {}

/** What git says when a repository wants credentials it was not given (HTTPS or SSH). */
const NEEDS_CREDENTIALS =
  /could not read (Username|Password)|Authentication failed|HTTP Basic: Access denied|returned error: 40[13]|Permission denied \(publickey/;

/** A hint after git's message when the repository asked for credentials. */
function credentialsHint(detail: string): string {
  return NEEDS_CREDENTIALS.test(detail)
    ? ' (the repository asks for credentials: name the variable holding an HTTPS token in `repo.token_env`, or give the user the server runs as an SSH key or a credential helper)'
    : '';
}

const SHA_PATTERN = /^[0-9a-f]{40}$/;
const SHORT_SHA_PATTERN = /^[0-9a-f]{7,40}$/;

/** The folder a repository's mirror and trees are kept in: its name (for people) and a digest of its URL. */
export function repositoryFolder(url: string): string {
  const name = basename(url.replace(/[/:]+$/, '').replace(/\.git$/, '')).replace(/[^A-Za-z0-9._-]/g, '_') || 'repo';
  return `${name.slice(0, 40)}-${createHash('sha256').update(url).digest('hex').slice(0, 16)}`;
}

/** The repository's name, as a release project is named after it (`infra` for `git@host:acme/infra.git`). */
export function repositoryName(url: string): string {
  return (
    basename(
      url
        .replace(/[/:]+$/, '')
        .replace(/\.git$/, '')
        .replace(/^.*:/, (m) => (m.includes('/') ? m : '')),
    ) || 'repo'
  );
}

export interface RepositoryOptions {
  readonly url: string;
  /** `<data-dir>/sources/<folder>`. */
  readonly dir: string;
  /** Runs git with the environment it needs (credentials included); see `gitEnvironment`. */
  readonly git: CommandRunner;
}

export class GitRepository {
  readonly url: string;
  readonly #dir: string;
  readonly #mirror: string;
  readonly #git: CommandRunner;
  /** Fetches and tree changes run one at a time. */
  #chain: Promise<unknown> = Promise.resolve();
  /** The runs holding each working tree. */
  readonly #holders = new Map<string, number>();
  #ready: Promise<void> | undefined;

  constructor(options: RepositoryOptions) {
    const problem = gitRepoProblem(options.url);
    if (problem) throw new RepositoryError(`repository \`${redactCredentials(options.url)}\` is refused: ${problem}`);
    this.url = options.url;
    this.#dir = options.dir;
    this.#mirror = join(options.dir, 'mirror.git');
    this.#git = options.git;
  }

  /** The URL as shown: without credentials. */
  get shownUrl(): string {
    return redactCredentials(this.url);
  }

  /**
   * Fetch the repository and resolve `ref` (a branch, a tag, a commit SHA, or a full ref such as
   * `refs/pull/7/head`; the default branch when undefined) to a commit.
   */
  resolve(ref: string | undefined, signal?: AbortSignal): Promise<ResolvedCommit> {
    return this.#serial(async () => {
      await this.#ensureMirror();
      if (ref !== undefined) {
        const problem = gitRefProblem(ref);
        if (problem) throw new UnknownRefError(`ref \`${ref}\` is refused: ${problem}`);
      }
      const wanted = ref ?? (await this.#defaultBranch(signal));
      await this.#fetch(wanted, signal);
      const sha = await this.#revParse(wanted);
      if (sha === undefined) throw new UnknownRefError(`\`${wanted}\` is no branch, tag or commit of ${this.shownUrl}`);
      return { ref: wanted, sha, ...(await this.#describe(sha)) };
    });
  }

  /** A file of commit `sha` (undefined when the commit has no such file). */
  async readFile(sha: string, path: string): Promise<string | undefined> {
    if (!SHA_PATTERN.test(sha)) throw new RepositoryError(`\`${sha}\` is not a commit SHA`);
    await this.#serial(() => this.#ensureMirror());
    const r = await this.#git('git', ['--git-dir', this.#mirror, 'cat-file', 'blob', `${sha}:${path}`], {
      cwd: this.#dir,
      timeoutMs: GIT_TIMEOUT_MS,
    });
    if (r.exitCode !== 0) return undefined;
    if (Buffer.byteLength(r.stdout) > MAX_FILE_BYTES)
      throw new RepositoryError(`${path} at ${sha.slice(0, 12)} is larger than ${MAX_FILE_BYTES} bytes`);
    return r.stdout;
  }

  /** A working tree of commit `sha`, made when no run holds one yet; `release` it when done. */
  checkout(sha: string, signal?: AbortSignal): Promise<Checkout> {
    if (!SHA_PATTERN.test(sha)) return Promise.reject(new RepositoryError(`\`${sha}\` is not a commit SHA`));
    const dir = join(this.#dir, 'trees', sha);
    return this.#serial(async () => {
      await this.#ensureMirror();
      const held = this.#holders.get(sha) ?? 0;
      if (held === 0) {
        await rm(dir, { recursive: true, force: true });
        await this.#run(['worktree', 'prune'], 'prune its working trees', signal);
        if (!(await this.#has(sha))) await this.#fetch(sha, signal);
        await mkdir(join(this.#dir, 'trees'), { recursive: true });
        await this.#run(['worktree', 'add', '--detach', '--', dir, sha], `check out ${sha.slice(0, 12)}`, signal);
      }
      this.#holders.set(sha, held + 1);
      let released = false;
      return {
        dir,
        release: () => {
          if (released) return Promise.resolve();
          released = true;
          return this.#release(sha, dir);
        },
      };
    });
  }

  /** Remove working trees no run holds (left by a server that stopped): at start. */
  async removeStaleTrees(): Promise<void> {
    await this.#serial(async () => {
      const trees = join(this.#dir, 'trees');
      const names = existsSync(trees) ? await readdir(trees) : [];
      for (const name of names)
        if (!this.#holders.has(name)) await rm(join(trees, name), { recursive: true, force: true });
      if (existsSync(this.#mirror)) await this.#run(['worktree', 'prune'], 'prune its working trees');
    });
  }

  #release(sha: string, dir: string): Promise<void> {
    return this.#serial(async () => {
      const held = (this.#holders.get(sha) ?? 1) - 1;
      if (held > 0) {
        this.#holders.set(sha, held);
        return;
      }
      this.#holders.delete(sha);
      await rm(dir, { recursive: true, force: true });
      await this.#run(['worktree', 'prune'], 'prune its working trees');
    });
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(work, work);
    this.#chain = next.catch(() => undefined);
    return next;
  }

  #ensureMirror(): Promise<void> {
    this.#ready ??= (async () => {
      if (existsSync(join(this.#mirror, 'HEAD'))) return;
      await mkdir(this.#dir, { recursive: true });
      await rm(this.#mirror, { recursive: true, force: true });
      await this.#git('git', ['init', '--quiet', '--bare', '--', this.#mirror], {
        cwd: this.#dir,
        timeoutMs: GIT_TIMEOUT_MS,
      }).then((r) => {
        if (r.exitCode !== 0) throw new RepositoryError(`cannot make a mirror of ${this.shownUrl}: ${r.stderr.trim()}`);
      });
    })().catch((error: unknown) => {
      this.#ready = undefined;
      throw error;
    });
    return this.#ready;
  }

  /** The remote's default branch (`main`). */
  async #defaultBranch(signal?: AbortSignal): Promise<string> {
    const out = await this.#run(['ls-remote', '--symref', '--', this.url, 'HEAD'], 'read its default branch', signal);
    const m = /^ref: refs\/heads\/(\S+)\s+HEAD$/m.exec(out);
    if (!m?.[1]) throw new RepositoryError(`${this.shownUrl} names no default branch: set \`repo.branch\``);
    return m[1];
  }

  /** Fetch the branches and tags (and `wanted` itself when it is a full ref or a commit git serves by id). */
  async #fetch(wanted: string, signal?: AbortSignal): Promise<void> {
    const refspecs = ['+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'];
    if (wanted.startsWith('refs/') && !/^refs\/(heads|tags)\//.test(wanted)) refspecs.push(`+${wanted}:${wanted}`);
    await this.#run(
      ['fetch', '--quiet', '--prune', '--no-tags', '--no-write-fetch-head', '--', this.url, ...refspecs],
      'fetch',
      signal,
    );
    if (SHA_PATTERN.test(wanted) && !(await this.#has(wanted))) {
      // Servers that allow it give a commit no branch or tag holds (a pull request's head, say).
      await this.#git(
        'git',
        ['--git-dir', this.#mirror, 'fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--', this.url, wanted],
        { cwd: this.#dir, timeoutMs: GIT_TIMEOUT_MS, ...(signal ? { signal } : {}) },
      );
    }
  }

  async #has(sha: string): Promise<boolean> {
    const r = await this.#git('git', ['--git-dir', this.#mirror, 'cat-file', '-e', `${sha}^{commit}`], {
      cwd: this.#dir,
      timeoutMs: GIT_TIMEOUT_MS,
    });
    return r.exitCode === 0;
  }

  /** The commit `wanted` names in the mirror: a branch, a tag, a full ref or a (short) SHA. */
  async #revParse(wanted: string): Promise<string | undefined> {
    const candidates = wanted.startsWith('refs/') ? [wanted] : [`refs/heads/${wanted}`, `refs/tags/${wanted}`];
    if (SHORT_SHA_PATTERN.test(wanted)) candidates.push(wanted);
    for (const candidate of candidates) {
      const r = await this.#git(
        'git',
        ['--git-dir', this.#mirror, 'rev-parse', '--verify', '--quiet', '--end-of-options', `${candidate}^{commit}`],
        { cwd: this.#dir, timeoutMs: GIT_TIMEOUT_MS },
      );
      const sha = r.stdout.trim();
      if (r.exitCode === 0 && SHA_PATTERN.test(sha)) return sha;
    }
    return undefined;
  }

  async #describe(sha: string): Promise<{ subject: string; author: string }> {
    const out = await this.#run(['log', '-1', '--format=%s%x00%an <%ae>', sha, '--'], 'describe the commit');
    const [subject = '', author = ''] = out.replace(/\n$/, '').split('\0');
    return { subject: subject.slice(0, 500), author: author.slice(0, 300) };
  }

  async #run(args: readonly string[], what: string, signal?: AbortSignal): Promise<string> {
    const r = await this.#git('git', ['--git-dir', this.#mirror, ...args], {
      cwd: this.#dir,
      timeoutMs: GIT_TIMEOUT_MS,
      ...(signal ? { signal } : {}),
    });
    if (r.exitCode !== 0) {
      const detail = redactCredentials((r.error ?? r.stderr.trim()) || `exit code ${String(r.exitCode)}`);
      throw new RepositoryError(`${this.shownUrl}: could not ${what}: ${detail}${credentialsHint(detail)}`);
    }
    return r.stdout;
  }
}
