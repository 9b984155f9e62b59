/**
 * File sources: a directory on disk (a path relative to the manifest, or `file://`). The workspace holds a copy, so
 * state a kapp writes next to its files (terraform state, rendered templates) stays in the workspace and never in the
 * kapp library. The copy is brought up to date on every run: changed files are copied again, files the kapp created
 * in the workspace are left alone, no file or directory is deleted (a link where the source now has a file or a
 * directory is replaced). Links are copied as links and nothing is ever written through one.
 */
import {
  constants,
  copyFileSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
} from 'node:fs';
import path from 'node:path';

/** What is at `p`, without following a symbolic link there. */
function kindAt(p: string): 'missing' | 'link' | 'dir' | 'file' | 'other' {
  let st;
  try {
    st = lstatSync(p);
  } catch {
    return 'missing';
  }
  if (st.isSymbolicLink()) return 'link';
  if (st.isDirectory()) return 'dir';
  return st.isFile() ? 'file' : 'other';
}

/**
 * Copy `from` (a directory or a file) into `to`, recursively, copying only files that are missing or differ in size
 * or mtime. Returns the number of files copied.
 *
 * Symbolic links in the source are copied as links (the same target text), never followed. Nothing is written
 * through a link in the destination: where the source now has a file or a directory and the copy has a link (left
 * by an earlier sync, or made by a step), the link is removed and a real file or directory takes its place. `from`
 * itself may be a link (it is the user's choice of directory); `to` is handled like everything below it.
 */
export function syncDirectory(from: string, to: string): number {
  let copied = 0;
  const visit = (src: string, dst: string, top: boolean): void => {
    const st = top ? statSync(src) : lstatSync(src);
    const there = kindAt(dst);
    if (st.isSymbolicLink()) {
      const target = readlinkSync(src);
      if (there === 'link' && readlinkSync(dst) === target) return;
      if (there === 'dir' || there === 'other') return; // never delete a tree the kapp made
      if (there !== 'missing') unlinkSync(dst);
      symlinkSync(target, dst);
      copied++;
      return;
    }
    if (st.isDirectory()) {
      if (there === 'link' || there === 'file' || there === 'other') unlinkSync(dst);
      if (there !== 'dir') mkdirSync(dst);
      for (const name of readdirSync(src).sort()) visit(path.join(src, name), path.join(dst, name), false);
      return;
    }
    if (!st.isFile()) return;
    if (there === 'link' || there === 'other') unlinkSync(dst);
    if (there === 'dir') return; // a directory the kapp made where the source now has a file: left alone
    let same = false;
    if (there === 'file') {
      const dt = lstatSync(dst);
      same = dt.size === st.size && Math.trunc(dt.mtimeMs) === Math.trunc(st.mtimeMs);
    }
    if (!same) {
      // Never through a link: a link put at `dst` since the check above makes the copy fail.
      if (there === 'file') unlinkSync(dst);
      copyFileSync(src, dst, constants.COPYFILE_EXCL);
      // Keep the source's mtime so the next sync sees the two as equal.
      utimesSync(dst, st.atime, st.mtime);
      copied++;
    }
  };
  mkdirSync(path.dirname(to), { recursive: true });
  visit(from, to, true);
  return copied;
}
