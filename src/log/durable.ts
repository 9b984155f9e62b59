/**
 * Files the stores write so that a crash (kill -9, power loss) never leaves a half-written one: a record is written
 * whole to a temporary file, fsynced, then renamed (or linked) into place, and its directory fsynced so the new name
 * is durable too; a log is appended to, never rewritten. One helper for the release records and the runs server's
 * run files.
 */
import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Create `file` (mode 0600; it must not exist) holding `text`, fsynced before it is closed. */
export async function writeSynced(file: string, text: string): Promise<void> {
  const handle = await open(file, 'wx', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A fresh name for a temporary file beside `file` (readers ignore names starting with a dot and ending in .tmp). */
export function tempNameFor(file: string): string {
  return join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

/** Replace `file` with `text` atomically and durably: temp file fsynced, renamed over `file`, directory fsynced. */
export async function replaceDurably(file: string, text: string): Promise<void> {
  const temp = tempNameFor(file);
  await writeSynced(temp, text);
  try {
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(file));
}

/** fsync a directory, which makes a new name in it (a link, a rename) durable, not only the file's content. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => undefined);
  if (!handle) return;
  try {
    await handle.sync();
  } catch {
    // Some file systems refuse fsync on a directory; the rename itself is still atomic.
  } finally {
    await handle.close();
  }
}

/** Append `text` to `file` (created mode 0600), never through a symbolic link planted in its place. */
export async function appendNdjson(file: string, text: string): Promise<void> {
  const flags = fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT | fsConstants.O_NOFOLLOW;
  const handle = await open(file, flags, 0o600);
  try {
    await handle.writeFile(text, 'utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Append `text` to `file` (created mode 0600, never through a symbolic link) and fsync it before returning: the
 * append of a journal, durable once this resolves. A new file's name is made durable by the caller (`syncDirectory`).
 */
export async function appendSynced(file: string, text: string): Promise<void> {
  const flags = fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT | fsConstants.O_NOFOLLOW;
  const handle = await open(file, flags, 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.datasync();
  } finally {
    await handle.close();
  }
}
