/**
 * The workspace: `<workspace>/<manifest>/<kapp>/` is a kapp's cache root; its sources live inside it (file sources
 * as up-to-date copies at `<cacheRoot>/<sourceId>/`, git sources as checkouts under `.sugarkube/<fqId>/` with a
 * `<sourceId>` symlink), and its `sugarkube.yaml` is found there.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
  type Dirent,
} from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { KappsError } from '../diagnostics/errors.js';
import { syncDirectory } from './file-source.js';
import { acquireGitSource, checkoutMarker, isCheckoutOf, linkSource, type CommandRunner } from './git-source.js';

/** A source of a kapp, resolved to something the workspace can fetch. */
export type ResolvedSource =
  | {
      readonly kind: 'file';
      readonly id: string;
      readonly path: string;
      /** The uri as written in the configuration. */
      readonly uri?: string;
    }
  | {
      readonly kind: 'git';
      readonly id: string;
      readonly fqId: string;
      readonly repo: string;
      readonly path: string;
      readonly ref: string;
      /** A commit the source is pinned to (see `GitSource.pin`). */
      readonly pin?: string;
      /** The uri as written in the configuration. */
      readonly uri?: string;
    };

export interface KappSources {
  /** `manifest:kapp`, for messages. */
  readonly fqId: string;
  readonly cacheRoot: string;
  readonly sources: readonly ResolvedSource[];
}

/** Where a source's files are inside the workspace. */
export function sourceDir(cacheRoot: string, source: ResolvedSource): string {
  return path.join(cacheRoot, source.id || (source.kind === 'git' ? source.fqId : 'source'));
}

/** Where the manifest of a file source's copy is kept: beside the copy, under the cache root's `.sugarkube/`. */
export function fileSourceManifest(cacheRoot: string, source: ResolvedSource): string {
  return path.join(cacheRoot, '.sugarkube', '.file-sources', `${path.basename(sourceDir(cacheRoot, source))}.json`);
}

/** File sources synced at once (each is a few metadata reads; a copy only for what changed). */
const FILE_SYNC_CONCURRENCY = 8;

/**
 * Fill the workspace for these kapps. File sources are always synced (what is unchanged since the last sync is
 * neither copied nor written, see `file-source.ts`); git sources are fetched when missing or when kapps' own
 * checkout was made from another ref, and updated when `update` is set (`kapps workspace create`, `--fetch`). A
 * source present in a form kapps did not make (a checkout under `.sugarkube/` without kapps' marker, or a folder or
 * link at `<cacheRoot>/<source id>`) is used as it is; with `update` such a checkout is brought to the ref too, a
 * folder is never replaced.
 *
 * Returns whether anything in the workspace changed (a file copied or removed, a git source fetched or linked):
 * when nothing did, what was read from the workspace before is still true.
 */
export async function ensureWorkspace(
  kapps: readonly KappSources[],
  options: {
    update: boolean;
    run: CommandRunner;
    /** Aborting it stops a running git command (the fetch then fails). */
    signal?: AbortSignal;
    onFetch?: (fqId: string, source: ResolvedSource) => void;
  },
): Promise<{ changed: boolean }> {
  const signal = options.signal;
  const run: CommandRunner = (command, args, o) => options.run(command, args, { ...o, ...(signal ? { signal } : {}) });
  let changed = false;
  // File sources first, several kapps at a time; the first failure in kapp order is the one reported.
  const files = kapps.flatMap((kapp) =>
    kapp.sources.flatMap((source) => (source.kind === 'file' ? [{ kapp, source }] : [])),
  );
  const failures: Error[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < files.length; i = next++) {
      if (signal?.aborted || failures.length > 0) return;
      const { kapp, source } = files[i] as { kapp: KappSources; source: ResolvedSource };
      try {
        if (await syncFileSource(kapp, source)) changed = true;
      } catch (e) {
        failures[i] = e instanceof Error ? e : new Error(String(e));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(FILE_SYNC_CONCURRENCY, files.length) }, worker));
  const failure = failures.find((e) => e !== undefined);
  if (failure !== undefined) throw failure;
  for (const kapp of kapps) {
    if (signal?.aborted) return { changed };
    const gits = kapp.sources.filter((s) => s.kind === 'git');
    if (gits.length === 0) continue;
    await mkdir(kapp.cacheRoot, { recursive: true });
    await Promise.all(
      gits.map(async (source) => {
        const what = `kapp ${kapp.fqId}, source ${source.id}`;
        const checkout = path.join(kapp.cacheRoot, '.sugarkube', source.fqId);
        // A source folder (or link) put in the workspace by hand, with no checkout of kapps behind it: used as it is.
        if (!existsSync(path.join(checkout, '.git')) && isDir(sourceDir(kapp.cacheRoot, source))) return;
        // One fetch into a checkout at a time (two runs, or two kapps processes, filling one fresh workspace).
        await withCheckoutLock(checkout, what, signal, async () => {
          if (options.update || !isCheckoutOf(checkout, checkoutMarker(source))) options.onFetch?.(kapp.fqId, source);
          const acquired = await acquireGitSource(run, source, checkout, { update: options.update, what });
          if (acquired !== 'present') changed = true;
          if (
            linkSource(kapp.cacheRoot, source.id || source.fqId, path.join(checkout, source.path.replace(/^\/+/, '')))
          )
            changed = true;
        });
      }),
    );
  }
  return { changed };
}

/** Sync one file source into its kapp's cache root; whether anything was copied or removed. */
async function syncFileSource(kapp: KappSources, source: ResolvedSource): Promise<boolean> {
  const what = `kapp ${kapp.fqId}, source ${source.id}`;
  let st;
  try {
    st = await stat(source.path);
  } catch {
    throw new KappsError(`${what}: ${source.path} does not exist`);
  }
  await mkdir(kapp.cacheRoot, { recursive: true });
  const dest = sourceDir(kapp.cacheRoot, source);
  const to = st.isDirectory() ? dest : path.join(dest, path.basename(source.path));
  const r = await syncDirectory(source.path, to, fileSourceManifest(kapp.cacheRoot, source));
  return r.copied + r.removed > 0;
}

/** How long a fetch waits for another one into the same checkout (a git fetch may take minutes). */
const LOCK_WAIT_MS = 10 * 60_000;
const LOCK_POLL_MS = 100;

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid in a lock file, or undefined when it cannot be read (being written, or gone). */
function lockHolder(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Run `fn` holding `<checkout>.lock` (created with O_EXCL, holding this process's pid): fetches into one checkout,
 * from this process or another, take turns. A lock whose process is gone is taken over.
 */
async function withCheckoutLock<T>(
  checkout: string,
  what: string,
  signal: AbortSignal | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  const file = `${checkout}.lock`;
  mkdirSync(path.dirname(file), { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    let fd: number | undefined;
    try {
      fd = openSync(file, 'wx', 0o600);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    if (fd !== undefined) {
      try {
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      break;
    }
    const holder = lockHolder(file);
    if (holder !== undefined && !pidAlive(holder)) {
      rmSync(file, { force: true });
      continue;
    }
    if (signal?.aborted) throw new KappsError(`${what}: interrupted while waiting for another fetch into ${checkout}`);
    if (Date.now() > deadline) {
      throw new KappsError(
        `${what}: another fetch into ${checkout} has held ${file} for ${LOCK_WAIT_MS / 60_000} minutes${holder ? ` (process ${holder})` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
  try {
    return await fn();
  } finally {
    rmSync(file, { force: true });
  }
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Find the kapp's `sugarkube.yaml`: first at the top of each source directory (declaration order), then anywhere
 * under the cache root without following symlinks (where Sugarkube looked). Several candidates in that search are an
 * error listing them. Returns undefined when the kapp has none (a kapp defined in its manifest alone).
 */
export function findKappConfig(
  cacheRoot: string,
  sources: readonly ResolvedSource[],
  fqId: string,
): string | undefined {
  for (const source of sources) {
    const candidate = path.join(sourceDir(cacheRoot, source), 'sugarkube.yaml');
    if (existsSync(candidate)) return candidate;
  }
  // One listing a directory, with each entry's type as lstat gives it (no stat of each entry, nor of the root).
  let top: Dirent[];
  try {
    top = readdirSync(cacheRoot, { withFileTypes: true });
  } catch (e) {
    // No directory (missing, a file…): nothing to find; a directory that cannot be listed is an error.
    if (isDir(cacheRoot)) throw e;
    return undefined;
  }
  const found: string[] = [];
  const visit = (dir: string, entries: Dirent[]): void => {
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const p = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        if (entry.name !== '.git') visit(p, readdirSync(p, { withFileTypes: true }));
      } else if (entry.name === 'sugarkube.yaml') found.push(p);
    }
  };
  visit(cacheRoot, top);
  if (found.length > 1) {
    throw new KappsError(`kapp ${fqId}: several sugarkube.yaml files in its workspace directory: ${found.join(', ')}`);
  }
  return found[0];
}
