/**
 * Keeping what kapps writes, reads back and deletes for a kapp inside that kapp's directory of the workspace (its
 * cache root): template destinations, step `stdout`/`stderr` capture files, output files (read, and deleted when
 * sensitive). A path is refused when it lies outside the directory as written (`..`, an absolute path elsewhere) or
 * once symbolic links are resolved (a link inside the directory pointing out of it is never written through).
 * Files are created with O_NOFOLLOW in a parent directory whose real path has been checked, so a link put in the
 * file's place is not followed either.
 */
import {
  closeSync,
  constants,
  fchmodSync,
  lstatSync,
  mkdirSync,
  openSync,
  realpathSync,
  rmSync,
  writeSync,
} from 'node:fs';
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

function realOrUndefined(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/**
 * Check `file` for a kapp whose directory is `root`: inside it as written, and every existing directory on the way
 * (symbolic links resolved) inside its real path. Returns the real path of the deepest existing ancestor of the
 * file's directory, or undefined when the kapp's directory does not exist yet.
 */
function checkParents(root: string, file: string, use: PathUse): { realRoot: string } | undefined {
  const problem = outsideProblem(root, file);
  if (problem) refuse(use, file, problem);
  const realRoot = realOrUndefined(root);
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
      st = lstatSync(dir);
    } catch {
      break; // does not exist: mkdir creates real directories from here on
    }
    if (st.isSymbolicLink()) {
      const real = realOrUndefined(dir);
      if (real === undefined || !isInside(realRoot, real)) {
        refuse(use, file, `goes through the symbolic link ${dir}, which points outside the kapp's directory`);
      }
    }
  }
  return { realRoot };
}

/** The real path of `file`'s directory, created if missing, after checking it lies inside the kapp's directory. */
function realParent(root: string, file: string, use: PathUse): string {
  const checked = checkParents(root, file, use);
  mkdirSync(path.dirname(file), { recursive: true });
  const realRoot = checked?.realRoot ?? realpathSync(root);
  const parent = realpathSync(path.dirname(file));
  if (!isInside(realRoot, parent)) {
    refuse(use, file, `is in ${parent}, outside the kapp's directory once symbolic links are resolved`);
  }
  return parent;
}

/** Check a path kapps will write for a kapp, without touching anything (for dry runs and plans). */
export function checkConfined(root: string, file: string, use: PathUse): void {
  checkParents(root, file, use);
  const real = realOrUndefined(file);
  if (real !== undefined && !isInside(realOrUndefined(root) ?? root, real)) {
    refuse(use, file, "is a symbolic link pointing outside the kapp's directory");
  }
}

/**
 * Write `content` to `file` inside the kapp's directory `root` (creating missing directories), never through a
 * symbolic link: an existing link at `file` is refused. The file gets `mode` when it is created.
 */
export function writeConfinedFile(
  root: string,
  file: string,
  content: string | Uint8Array,
  mode: number,
  use: PathUse,
): void {
  const target = path.join(realParent(root, file, use), path.basename(file));
  let fd: number;
  try {
    fd = openSync(target, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') {
      refuse(use, file, 'is a symbolic link; kapps does not write through links');
    }
    throw e;
  }
  try {
    // A private file stays private even when it existed before with a wider mode.
    if ((mode & 0o077) === 0) fchmodSync(fd, mode);
    const data = typeof content === 'string' ? Buffer.from(content) : content;
    let off = 0;
    while (off < data.length) off += writeSync(fd, data, off, data.length - off);
  } finally {
    closeSync(fd);
  }
}

/**
 * The path to read `file` from for a kapp: the file itself once its real path is checked to lie inside the kapp's
 * directory (a missing file is returned as is: the caller reports it).
 */
export function confinedReadPath(root: string, file: string, use: PathUse): string {
  checkParents(root, file, use);
  const real = realOrUndefined(file);
  if (real === undefined) return file;
  const realRoot = realOrUndefined(root) ?? root;
  if (!isInside(realRoot, real)) refuse(use, file, `is a symbolic link to ${real}, outside the kapp's directory`);
  return real;
}

/**
 * Delete `file` inside the kapp's directory: a symbolic link at `file` is removed itself, never what it points
 * to, and nothing is deleted through a linked directory pointing outside.
 */
export function removeConfinedFile(root: string, file: string, use: PathUse): void {
  const checked = checkParents(root, file, use);
  if (!checked) return;
  const parent = realOrUndefined(path.dirname(file));
  if (parent === undefined) return;
  if (!isInside(checked.realRoot, parent)) refuse(use, file, `is in ${parent}, outside the kapp's directory`);
  rmSync(path.join(parent, path.basename(file)), { force: true });
}
