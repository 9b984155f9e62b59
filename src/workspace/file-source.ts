/**
 * File sources: a directory on disk (a path relative to the manifest, or `file://`). The workspace holds a copy, so
 * state a kapp writes next to its files (terraform state, rendered templates) stays in the workspace and never in the
 * kapp library. The copy is brought up to date on every run: changed files are copied again, files the kapp created
 * in the workspace are left alone, nothing is deleted.
 */
import {
  copyFileSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  statSync,
  symlinkSync,
  utimesSync,
} from 'node:fs';
import path from 'node:path';

/** Copy `from` (a directory or a file) into `to`, recursively, copying only files that are missing or differ in size or mtime. Returns the number of files copied. */
export function syncDirectory(from: string, to: string): number {
  let copied = 0;
  const visit = (src: string, dst: string): void => {
    const st = lstatSync(src);
    if (st.isSymbolicLink()) {
      try {
        lstatSync(dst);
      } catch {
        symlinkSync(readlinkSync(src), dst);
        copied++;
      }
      return;
    }
    if (st.isDirectory()) {
      mkdirSync(dst, { recursive: true });
      for (const name of readdirSync(src).sort()) visit(path.join(src, name), path.join(dst, name));
      return;
    }
    if (!st.isFile()) return;
    let same: boolean;
    try {
      const dt = statSync(dst);
      same = dt.size === st.size && Math.trunc(dt.mtimeMs) === Math.trunc(st.mtimeMs);
    } catch {
      same = false;
    }
    if (!same) {
      copyFileSync(src, dst);
      // Keep the source's mtime so the next sync sees the two as equal.
      utimesSync(dst, st.atime, st.mtime);
      copied++;
    }
  };
  visit(from, to);
  return copied;
}
