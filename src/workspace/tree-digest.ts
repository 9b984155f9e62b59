/**
 * The digest of a file tree as a source yields it: sha256 over each entry's path (relative, sorted), kind and
 * content (a symlink by its target), leaving out `.git` and the paths `skip` names (files kapps generates). Read
 * without blocking: a run's other kapps go on meanwhile.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';

/** Entries read at most; a larger tree has no digest (null), rather than a preview that never ends. */
const MAX_ENTRIES = 20_000;

/**
 * The digest (hex) of the tree at `root` (a file or a directory); null when it cannot be read or is too large.
 * `skip(rel)` leaves out a path relative to `root` (with `/`).
 */
export async function treeDigest(root: string, skip: (rel: string) => boolean = () => false): Promise<string | null> {
  const hash = createHash('sha256');
  let count = 0;
  const visit = async (abs: string, rel: string): Promise<boolean> => {
    if (++count > MAX_ENTRIES) return false;
    const st = await lstat(abs);
    if (st.isSymbolicLink()) {
      hash.update(`l\u0000${rel}\u0000${await readlink(abs)}\n`);
    } else if (st.isDirectory()) {
      hash.update(`d\u0000${rel}\n`);
      for (const name of (await readdir(abs)).sort()) {
        const childRel = rel === '' ? name : `${rel}/${name}`;
        if (name === '.git' || skip(childRel)) continue;
        if (!(await visit(path.join(abs, name), childRel))) return false;
      }
    } else if (st.isFile()) {
      const content = createHash('sha256')
        .update(await readFile(abs))
        .digest('hex');
      hash.update(`f\u0000${rel}\u0000${(st.mode & 0o111) !== 0 ? 'x' : '-'}\u0000${content}\n`);
    }
    return true;
  };
  try {
    return (await visit(root, '')) ? hash.digest('hex') : null;
  } catch {
    return null;
  }
}
