/**
 * Finds the file a command name would run, the way execvp(3) does, without running it: for `kapps validate`'s
 * "is every binary there?" check and for clear "not found on PATH" messages.
 *
 * Not its job: running anything, or following shell syntax (there is no shell; see `spawnStep`).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';

/** The search path execvp(3) falls back to when the environment has no PATH (glibc's and libuv's default). */
export const DEFAULT_PATH = '/usr/bin:/bin';

/** Where each bare name was found, per (name, PATH, cwd-if-PATH-is-relative). Only hits are kept. */
const cache = new Map<string, string>();

/** Options of `resolveCommand`. */
export interface ResolveCommandOptions {
  /** The directory the command would run in: the base for names with a `/` and for relative PATH entries. */
  readonly cwd: string;
  /** The PATH of the environment the command would run with; undefined means execvp's default, `/usr/bin:/bin`. */
  readonly pathEnv: string | undefined;
}

/** The PATH entries to search for a bare name, and its key in the cache. */
function lookup(command: string, opts: ResolveCommandOptions): { entries: string[]; key: string } {
  const pathEnv = opts.pathEnv ?? DEFAULT_PATH;
  const entries = pathEnv.split(path.delimiter);
  // A relative entry (including the empty one) depends on the cwd, so the cwd becomes part of the key.
  const relative = entries.some((entry) => !path.isAbsolute(entry));
  return { entries, key: relative ? `${command}\0${pathEnv}\0${opts.cwd}` : `${command}\0${pathEnv}` };
}

/**
 * What `resolveCommand`'s answer depends on besides the file system: the path a name with `/` names, or the bare
 * name with its PATH (and its cwd, when PATH holds a relative entry). Equal keys, equal answers at one moment.
 */
export function resolutionKey(command: string, opts: ResolveCommandOptions): string {
  return command.includes('/') ? path.resolve(opts.cwd, command) : lookup(command, opts).key;
}

/**
 * The absolute path of the executable regular file that `command` names, or undefined when there is none.
 *
 * - A name containing `/` is taken as a path, relative to `cwd`; PATH plays no part.
 * - A bare name is looked for in each PATH entry in order; an empty entry means the current directory, as in
 *   execvp(3). Directories and files without an execute bit for this process are passed over.
 *
 * Lookups of bare names are cached for the life of the process, but only when they succeed: a step may install
 * a tool that a later step runs, so "not found" is always checked again.
 */
export function resolveCommand(command: string, opts: ResolveCommandOptions): string | undefined {
  if (command === '') return undefined;
  if (command.includes('/')) {
    const candidate = path.resolve(opts.cwd, command);
    return isExecutableFile(candidate) ? candidate : undefined;
  }
  const { entries, key } = lookup(command, opts);
  const cached = cache.get(key);
  if (cached !== undefined && isExecutableFile(cached)) return cached;
  for (const entry of entries) {
    const candidate = path.resolve(opts.cwd, entry === '' ? '.' : entry, command);
    if (isExecutableFile(candidate)) {
      cache.set(key, candidate);
      return candidate;
    }
  }
  cache.delete(key);
  return undefined;
}

/**
 * `resolveCommand` without blocking: the same answer, the same cache, read with asynchronous calls (for a step about
 * to run, while other steps of the run are being reported).
 */
export async function resolveCommandAsync(command: string, opts: ResolveCommandOptions): Promise<string | undefined> {
  if (command === '') return undefined;
  if (command.includes('/')) {
    const candidate = path.resolve(opts.cwd, command);
    return (await isExecutableFileAsync(candidate)) ? candidate : undefined;
  }
  const { entries, key } = lookup(command, opts);
  const cached = cache.get(key);
  if (cached !== undefined && (await isExecutableFileAsync(cached))) return cached;
  for (const entry of entries) {
    const candidate = path.resolve(opts.cwd, entry === '' ? '.' : entry, command);
    if (await isExecutableFileAsync(candidate)) {
      cache.set(key, candidate);
      return candidate;
    }
  }
  cache.delete(key);
  return undefined;
}

/** Forgets every cached lookup (for tests, and after PATH directories change under a long-lived process). */
export function clearCommandCache(): void {
  cache.clear();
}

/** A regular file (symlinks followed) that this process may execute. */
function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function isExecutableFileAsync(file: string): Promise<boolean> {
  try {
    if (!(await stat(file)).isFile()) return false;
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
