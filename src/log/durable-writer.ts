/**
 * The durable writer: a worker thread of the runs server that does each of `durable.ts`'s writes (a file replaced
 * through a synced temporary file, a synced append, …) as one request, with synchronous calls. Done with the
 * asynchronous API on the server's own thread, such a write is a chain of five to eight thread-pool calls, each
 * waiting for the event loop to come round before the next starts; here the whole write is one round trip to the
 * worker, and the server's event loop is never blocked. Errors go back with Node's code, syscall and path, so that
 * callers see what the asynchronous calls would have given them.
 */
import { closeSync, constants, fdatasyncSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { parentPort } from 'node:worker_threads';
import type { DurableRequest, DurableResponse } from './durable.js';

function writeAll(fd: number, text: string): void {
  const buffer = Buffer.from(text, 'utf8');
  let done = 0;
  while (done < buffer.length) done += writeSync(fd, buffer, done, buffer.length - done);
}

function writeSynced(file: string, text: string): void {
  const fd = openSync(file, 'wx', 0o600);
  try {
    writeAll(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function syncDirectory(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, 'r');
  } catch {
    return;
  }
  try {
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the rename itself is still atomic.
  } finally {
    closeSync(fd);
  }
}

function append(file: string, text: string, sync: boolean): void {
  const fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  try {
    writeAll(fd, text);
    if (sync) fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function perform(req: DurableRequest): void {
  switch (req.op) {
    case 'create':
      writeSynced(req.file, req.text);
      return;
    case 'replace':
      writeSynced(req.temp, req.text);
      try {
        renameSync(req.temp, req.file);
      } catch (error) {
        try {
          unlinkSync(req.temp);
        } catch {
          // The rename's error is the one to report.
        }
        throw error;
      }
      syncDirectory(dirname(req.file));
      return;
    case 'append':
      append(req.file, req.text, req.sync);
      return;
    case 'sync-directory':
      syncDirectory(req.file);
      return;
  }
}

parentPort?.on('message', (req: DurableRequest) => {
  let response: DurableResponse;
  try {
    perform(req);
    response = { id: req.id };
  } catch (e) {
    const error = e as NodeJS.ErrnoException;
    response = {
      id: req.id,
      error: {
        message: error.message,
        ...(error.code !== undefined ? { code: error.code } : {}),
        ...(error.errno !== undefined ? { errno: error.errno } : {}),
        ...(error.syscall !== undefined ? { syscall: error.syscall } : {}),
        ...(error.path !== undefined ? { path: error.path } : {}),
      },
    };
  }
  parentPort?.postMessage(response);
});
