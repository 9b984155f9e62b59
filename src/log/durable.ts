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
import type { Worker } from 'node:worker_threads';

/** A request to the durable writer (`durable-writer.ts`): one whole write. */
export type DurableRequest =
  | { readonly id: number; readonly op: 'create'; readonly file: string; readonly text: string }
  | { readonly id: number; readonly op: 'replace'; readonly file: string; readonly temp: string; readonly text: string }
  | { readonly id: number; readonly op: 'append'; readonly file: string; readonly text: string; readonly sync: boolean }
  | { readonly id: number; readonly op: 'sync-directory'; readonly file: string };

/** A request before it is given its id. */
type DurableWrite = {
  [K in DurableRequest['op']]: Omit<Extract<DurableRequest, { op: K }>, 'id'>;
}[DurableRequest['op']];

/** The durable writer's answer: done, or Node's error as the call gave it. */
export interface DurableResponse {
  readonly id: number;
  readonly error?: {
    readonly message: string;
    readonly code?: string;
    readonly errno?: number;
    readonly syscall?: string;
    readonly path?: string;
  };
}

interface Writer {
  readonly worker: Worker;
  readonly pending: Map<number, { resolve: () => void; reject: (e: Error) => void }>;
}

/**
 * The process's durable writers, when started (`startDurableWriters`, by the runs server): each write goes to the
 * one with fewer writes in flight. None: each write is a chain of asynchronous calls on this thread.
 */
const writers: Writer[] = [];
let nextRequest = 1;

/**
 * Start two durable writers (worker threads; see `durable-writer.ts`) for this process's writes from now on: a
 * whole write becomes one round trip instead of a chain of thread-pool calls. Resolves once they run; a writer that
 * cannot start leaves the writes on this thread. Only a built kapps has the writer's module.
 */
export async function startDurableWriters(): Promise<void> {
  if (writers.length > 0) return;
  const module = new URL('./durable-writer.js', import.meta.url);
  if (!import.meta.url.endsWith('.js')) return;
  const { Worker } = await import('node:worker_threads');
  for (let i = 0; i < 2; i++) {
    let worker: Worker;
    try {
      worker = new Worker(module, { stdout: false, stderr: false });
    } catch {
      return;
    }
    const writer: Writer = { worker, pending: new Map() };
    worker.on('message', (m: DurableResponse) => {
      const p = writer.pending.get(m.id);
      if (!p) return;
      writer.pending.delete(m.id);
      if (writer.pending.size === 0) worker.unref();
      if (m.error) p.reject(Object.assign(new Error(m.error.message), m.error));
      else p.resolve();
    });
    const fail = (error: Error): void => {
      const at = writers.indexOf(writer);
      if (at >= 0) writers.splice(at, 1);
      for (const p of writer.pending.values()) p.reject(error);
      writer.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('the durable writer stopped')));
    // After the listeners, which ref it: idle, a writer keeps nothing alive.
    worker.unref();
    writers.push(writer);
  }
}

/** How many durable writers run (none until `startDurableWriters`, or when they could not start). */
export function durableWriterCount(): number {
  return writers.length;
}

/** Make a whole write through a durable writer; undefined when none runs. */
function viaWriter(req: DurableWrite): Promise<void> | undefined {
  let writer: Writer | undefined;
  for (const w of writers) if (!writer || w.pending.size < writer.pending.size) writer = w;
  if (!writer) return undefined;
  const chosen = writer;
  const id = nextRequest++;
  return new Promise<void>((resolve, reject) => {
    chosen.pending.set(id, { resolve, reject });
    chosen.worker.ref();
    chosen.worker.postMessage({ ...req, id });
  });
}

/** Create `file` (mode 0600; it must not exist) holding `text`, fsynced before it is closed. */
export async function writeSynced(file: string, text: string): Promise<void> {
  const written = viaWriter({ op: 'create', file, text });
  if (written) return written;
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
  const written = viaWriter({ op: 'replace', file, temp, text });
  if (written) return written;
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
  const synced = viaWriter({ op: 'sync-directory', file: dir });
  if (synced) return synced;
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
  const written = viaWriter({ op: 'append', file, text, sync: false });
  if (written) return written;
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
  const written = viaWriter({ op: 'append', file, text, sync: true });
  if (written) return written;
  const flags = fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT | fsConstants.O_NOFOLLOW;
  const handle = await open(file, flags, 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.datasync();
  } finally {
    await handle.close();
  }
}
