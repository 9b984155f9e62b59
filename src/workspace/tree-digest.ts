/**
 * The digest of a file tree as a source yields it: sha256 over each entry's path (relative, sorted), kind and
 * content (a symlink by its target), leaving out `.git` and the paths `skip` names (files kapps generates).
 */
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/** Entries read at most; a larger tree has no digest (null), rather than a preview that never ends. */
const MAX_ENTRIES = 20_000;

/**
 * The digest (hex) of the tree at `root` (a file or a directory); null when it cannot be read or is too large.
 * `skip(rel)` leaves out a path relative to `root` (with `/`).
 */
export function treeDigest(root: string, skip: (rel: string) => boolean = () => false): string | null {
  const hash = createHash('sha256');
  let count = 0;
  const visit = (abs: string, rel: string): boolean => {
    if (++count > MAX_ENTRIES) return false;
    const st = lstatSync(abs);
    if (st.isSymbolicLink()) {
      hash.update(`l\u0000${rel}\u0000${readlinkSync(abs)}\n`);
    } else if (st.isDirectory()) {
      hash.update(`d\u0000${rel}\n`);
      for (const name of readdirSync(abs).sort()) {
        const childRel = rel === '' ? name : `${rel}/${name}`;
        if (name === '.git' || skip(childRel)) continue;
        if (!visit(path.join(abs, name), childRel)) return false;
      }
    } else if (st.isFile()) {
      const content = createHash('sha256').update(readFileSync(abs)).digest('hex');
      hash.update(`f\u0000${rel}\u0000${(st.mode & 0o111) !== 0 ? 'x' : '-'}\u0000${content}\n`);
    }
    return true;
  };
  try {
    return visit(root, '') ? hash.digest('hex') : null;
  } catch {
    return null;
  }
}
