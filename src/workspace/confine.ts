/**
 * Keeping what kapps writes, reads back and deletes for a kapp inside that kapp's directory of the workspace (its
 * cache root): template destinations, step `stdout`/`stderr` capture files, output files (read, and deleted when
 * sensitive). A path is refused when it lies outside the directory as written (`..`, an absolute path elsewhere) or
 * once symbolic links are resolved (a link inside the directory pointing out of it is never written through).
 * Files are created with O_NOFOLLOW in a parent directory whose real path has been checked, so a link put in the
 * file's place is not followed either. Every file-system call here is asynchronous: runs share one event loop.
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { KappsError } from '../diagnostics/errors.js';

/** What a confined path is for, to name in errors: `kapp dev:web: template 'values' dest`. */
export interface PathUse {
  /** The kapp's fully-qualified id. */
  readonly kapp: string;
  /** The field, e.g. `template 'values' dest`, `step 'apply' stdout`, `output 'url' path`. */
  readonly field: string;
}

/** A path kapps refuses to use for a kapp. */
export class ConfinementError extends KappsError {}

/** Whether `p` is `root` or below it, comparing the paths as written (both absolute). */
export function isInside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** Why `file` (absolute, resolved) may not be used for a kapp whose directory is `root`, or undefined. */
export function outsideProblem(root: string, file: string): string | undefined {
  if (file === root) return "is the kapp's directory itself, not a file in it";
  return isInside(root, file) ? undefined : `is outside the kapp's directory ${root}`;
}

function refuse(use: PathUse, file: string, why: string): never {
  throw new ConfinementError(
    `kapp ${use.kapp}: ${use.field} ${file} ${why}; kapps only writes, reads back and deletes files inside the kapp's directory of the workspace`,
  );
}

async function realOrUndefined(p: string): Promise<string | undefined> {
  try {
    return await realpath(p);
  } catch {
    return undefined;
  }
}

/**
 * Check `file` for a kapp whose directory is `root`: inside it as written, and every existing directory on the way
 * (symbolic links resolved) inside its real path. Returns the real path of the deepest existing ancestor of the
 * file's directory, or undefined when the kapp's directory does not exist yet.
 */
async function checkParents(root: string, file: string, use: PathUse): Promise<{ realRoot: string } | undefined> {
  const problem = outsideProblem(root, file);
  if (problem) refuse(use, file, problem);
  const realRoot = await realOrUndefined(root);
  if (realRoot === undefined) return undefined;
  const parts = path
    .relative(root, path.dirname(file))
    .split(path.sep)
    .filter((s) => s !== '');
  let dir = root;
  for (const part of parts) {
    dir = path.join(dir, part);
    let st;
    try {
      st = await lstat(dir);
    } catch {
      break; // does not exist: mkdir creates real directories from here on
    }
    if (st.isSymbolicLink()) {
      const real = await realOrUndefined(dir);
      if (real === undefined || !isInside(realRoot, real)) {
        refuse(use, file, `goes through the symbolic link ${dir}, which points outside the kapp's directory`);
      }
    }
  }
  return { realRoot };
}

/** The real path of `file`'s directory, created if missing, after checking it lies inside the kapp's directory. */
async function realParent(root: string, file: string, use: PathUse): Promise<string> {
  const checked = await checkParents(root, file, use);
  await mkdir(path.dirname(file), { recursive: true });
  const realRoot = checked?.realRoot ?? (await realpath(root));
  const parent = await realpath(path.dirname(file));
  if (!isInside(realRoot, parent)) {
    refuse(use, file, `is in ${parent}, outside the kapp's directory once symbolic links are resolved`);
  }
  return parent;
}

/** Check a path kapps will write for a kapp, without touching anything (for dry runs and plans). */
export async function checkConfined(root: string, file: string, use: PathUse): Promise<void> {
  await checkParents(root, file, use);
  const real = await realOrUndefined(file);
  if (real !== undefined && !isInside((await realOrUndefined(root)) ?? root, real)) {
    refuse(use, file, "is a symbolic link pointing outside the kapp's directory");
  }
}

/**
 * Write `content` to `file` inside the kapp's directory `root` (creating missing directories), never through a
 * symbolic link: an existing link at `file` is refused. The file gets `mode` when it is created.
 */
export async function writeConfinedFile(
  root: string,
  file: string,
  content: string | Uint8Array,
  mode: number,
  use: PathUse,
): Promise<void> {
  const target = path.join(await realParent(root, file, use), path.basename(file));
  let handle: FileHandle;
  try {
    handle = await open(
      target,
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
      mode,
    );
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') {
      refuse(use, file, 'is a symbolic link; kapps does not write through links');
    }
    throw e;
  }
  try {
    // A private file stays private even when it existed before with a wider mode.
    if ((mode & 0o077) === 0) await handle.chmod(mode);
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}

/**
 * The path to read `file` from for a kapp: the file itself once its real path is checked to lie inside the kapp's
 * directory (a missing file is returned as is: the caller reports it).
 */
export async function confinedReadPath(root: string, file: string, use: PathUse): Promise<string> {
  await checkParents(root, file, use);
  const real = await realOrUndefined(file);
  if (real === undefined) return file;
  const realRoot = (await realOrUndefined(root)) ?? root;
  if (!isInside(realRoot, real)) refuse(use, file, `is a symbolic link to ${real}, outside the kapp's directory`);
  return real;
}

/**
 * Delete `file` inside the kapp's directory: a symbolic link at `file` is removed itself, never what it points
 * to, and nothing is deleted through a linked directory pointing outside.
 */
export async function removeConfinedFile(root: string, file: string, use: PathUse): Promise<void> {
  const checked = await checkParents(root, file, use);
  if (!checked) return;
  const parent = await realOrUndefined(path.dirname(file));
  if (parent === undefined) return;
  if (!isInside(checked.realRoot, parent)) refuse(use, file, `is in ${parent}, outside the kapp's directory`);
  await rm(path.join(parent, path.basename(file)), { force: true });
}

/**
 * The text of `file`, read without blocking, or undefined when it does not exist; a file larger than `maxBytes` is
 * refused (`what`: how to name it in that error) before any of it is read.
 */
export async function readFileUpTo(file: string, maxBytes: number, what: string): Promise<string | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const { size } = await handle.stat();
    const tooLarge = (bytes: number) =>
      new KappsError(`${what} is ${bytes} bytes, more than the ${maxBytes} bytes kapps reads of such a file`);
    if (size > maxBytes) throw tooLarge(size);
    // Read at most maxBytes + 1: a file that grows meanwhile is refused too, never read whole.
    const pieces: Buffer[] = [];
    let total = 0;
    for (;;) {
      const piece = Buffer.allocUnsafe(Math.min(Math.max(size - total, 0) + 1, maxBytes + 1 - total, 1 << 20));
      const { bytesRead } = await handle.read(piece, 0, piece.length, null);
      if (bytesRead === 0) break;
      pieces.push(piece.subarray(0, bytesRead));
      total += bytesRead;
      if (total > maxBytes) throw tooLarge(total);
    }
    return Buffer.concat(pieces, total).toString('utf8');
  } finally {
    await handle.close();
  }
}
