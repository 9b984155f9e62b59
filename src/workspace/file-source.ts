/**
 * File sources: a directory on disk (a path relative to the manifest, or `file://`). The workspace holds a copy, so
 * state a kapp writes next to its files (terraform state, rendered templates) stays in the workspace and never in the
 * kapp library. The copy is brought up to date on every run: changed and added files are copied, files the source no
 * longer has are removed from the copy, files the kapp created in the workspace are left alone (a link where the
 * source now has a file or a directory is replaced). Links are copied as links and nothing is ever written through
 * one.
 *
 * What the last sync copied is kept in a manifest beside the copy (relative path, kind, size, modification time and
 * mode of the source entry, and the identity of the copy it made): an entry whose source and copy both still match
 * it is not copied again, so a run over unchanged sources reads the two trees' metadata and writes nothing. Only
 * entries in the manifest are ever removed: a file a step made is never in it.
 *
 * Everything here is asynchronous: a server filling one run's workspace keeps serving the others.
 */
import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import {
  copyFile,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rename,
  rmdir,
  stat,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';

/** One entry the last sync made: the source's metadata when copied, and the copy's identity right after. */
interface Entry {
  /** `f` file, `l` link, `d` directory. */
  readonly k: 'f' | 'l' | 'd';
  /** Source size, modification time (ms) and mode (files); the link's target (links). */
  readonly s?: number;
  readonly m?: number;
  readonly o?: number;
  readonly t?: string;
  /** The copy's inode, size and modification time right after the copy (files). */
  readonly di?: number;
  readonly ds?: number;
  readonly dm?: number;
}

interface Manifest {
  readonly v: 1;
  /** The source it was made from (resolved path): another source means nothing in it counts as a match. */
  readonly from: string;
  readonly entries: Record<string, Entry>;
}

/** What a sync did. */
export interface SyncResult {
  /** Files and links written. */
  readonly copied: number;
  /** Entries removed because the source no longer has them. */
  readonly removed: number;
}

async function readManifest(file: string): Promise<Manifest | undefined> {
  try {
    const m = JSON.parse(await readFile(file, 'utf8')) as Manifest;
    return m && m.v === 1 && typeof m.from === 'string' && typeof m.entries === 'object' ? m : undefined;
  } catch {
    return undefined;
  }
}

async function lstatOrUndefined(p: string): Promise<Stats | undefined> {
  try {
    return await lstat(p);
  } catch {
    return undefined;
  }
}

type Kind = 'missing' | 'link' | 'dir' | 'file' | 'other';

function kindOf(st: Stats | undefined): Kind {
  if (!st) return 'missing';
  if (st.isSymbolicLink()) return 'link';
  if (st.isDirectory()) return 'dir';
  return st.isFile() ? 'file' : 'other';
}

/** Whether the copy of a file is still the one the last sync made from a source entry with this metadata. */
function unchangedFile(old: Entry | undefined, src: Stats, dst: Stats | undefined): boolean {
  return (
    old !== undefined &&
    old.k === 'f' &&
    old.s === src.size &&
    old.m === src.mtimeMs &&
    old.o === src.mode &&
    dst !== undefined &&
    dst.isFile() &&
    old.di === dst.ino &&
    old.ds === dst.size &&
    old.dm === dst.mtimeMs
  );
}

/**
 * Bring the copy at `to` up to date with `from` (a directory or a file), recursively, keeping what was copied in
 * `manifestFile` (outside the copy). Entries whose source and copy
 * match the manifest of the last sync are left as they are; the others are copied; entries of the last sync the
 * source no longer has are removed (a directory only when nothing else is left in it).
 *
 * Symbolic links in the source are copied as links (the same target text), never followed. Nothing is written
 * through a link in the destination: where the source now has a file or a directory and the copy has a link (left
 * by an earlier sync, or made by a step), the link is removed and a real file or directory takes its place. `from`
 * itself may be a link (it is the user's choice of directory); `to` is handled like everything below it.
 */
export async function syncDirectory(from: string, to: string, manifestFile: string): Promise<SyncResult> {
  const previous = await readManifest(manifestFile);
  const old = previous && previous.from === path.resolve(from) ? previous.entries : {};
  const entries: Record<string, Entry> = {};
  let copied = 0;

  const visit = async (src: string, dst: string, rel: string, top: boolean): Promise<void> => {
    const [st, dt] = await Promise.all([top ? stat(src) : lstat(src), lstatOrUndefined(dst)]);
    const there = kindOf(dt);
    if (st.isSymbolicLink()) {
      const target = await readlink(src);
      if (there === 'link' && (await readlink(dst)) === target) {
        entries[rel] = { k: 'l', t: target };
        return;
      }
      if (there === 'dir' || there === 'other') return; // never delete a tree the kapp made
      if (there !== 'missing') await unlink(dst);
      await symlink(target, dst);
      entries[rel] = { k: 'l', t: target };
      copied++;
      return;
    }
    if (st.isDirectory()) {
      if (there === 'link' || there === 'file' || there === 'other') await unlink(dst);
      if (there !== 'dir') await mkdir(dst);
      entries[rel] = { k: 'd' };
      const names = (await readdir(src)).sort();
      await Promise.all(
        names.map((name) =>
          visit(path.join(src, name), path.join(dst, name), rel === '' ? name : `${rel}/${name}`, false),
        ),
      );
      return;
    }
    if (!st.isFile()) return;
    if (there === 'dir') return; // a directory the kapp made where the source now has a file: left alone
    const before = old[rel];
    if (unchangedFile(before, st, dt)) {
      entries[rel] = before as Entry;
      return;
    }
    // Never through a link: a link put at `dst` since the check above makes the copy fail.
    if (there !== 'missing') await unlink(dst);
    await copyFile(src, dst, constants.COPYFILE_EXCL);
    const made = await lstat(dst);
    entries[rel] = { k: 'f', s: st.size, m: st.mtimeMs, o: st.mode, di: made.ino, ds: made.size, dm: made.mtimeMs };
    copied++;
  };

  await mkdir(path.dirname(to), { recursive: true });
  await visit(from, to, '', true);

  // What the last sync made and the source no longer has: removed while the copy is still what was made (deepest
  // first, so a directory is empty when its turn comes; one a step put files in stays).
  let removed = 0;
  const gone = Object.keys(old)
    .filter((rel) => !(rel in entries))
    .sort((a, b) => b.length - a.length);
  for (const rel of gone) {
    const entry = old[rel] as Entry;
    const dst = rel === '' ? to : path.join(to, rel);
    const dt = await lstatOrUndefined(dst);
    try {
      if (entry.k === 'd' && dt?.isDirectory()) {
        await rmdir(dst);
        removed++;
      } else if (entry.k === 'l' && dt?.isSymbolicLink() && (await readlink(dst)) === entry.t) {
        await unlink(dst);
        removed++;
      } else if (entry.k === 'f' && dt?.isFile() && dt.ino === entry.di && dt.mtimeMs === entry.dm) {
        await unlink(dst);
        removed++;
      }
    } catch {
      // A directory a step put files in (or something changed under us): left as it is.
    }
  }

  const manifest: Manifest = { v: 1, from: path.resolve(from), entries };
  await mkdir(path.dirname(manifestFile), { recursive: true });
  const tmp = `${manifestFile}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, JSON.stringify(manifest));
  await rename(tmp, manifestFile);
  return { copied, removed };
}
