/**
 * `runProcess`: what the rest of kapps calls to run a process. In the built CLI it hands the request to the
 * process server (a small child process: forking from it costs a fraction of forking from kapps itself, whose
 * memory holds the whole stack), and falls back to `spawnStep` in this process when the server is not available
 * (running from sources, or `KAPPS_INPROCESS_SPAWN=1`). Same contract as `spawnStep`.
 */
import type { ChildProcess } from 'node:child_process';
import { registerProcessGroup, unregisterProcessGroup } from './process-groups.js';
import type { ServerRequest } from './process-server.js';
import { forkProcessServer, spawnStep, type SpawnRequest, type SpawnResult } from './spawn.js';

type ServerMessage =
  | { type: 'started'; id: number; pid: number }
  | { type: 'output'; id: number; stream: 'stdout' | 'stderr'; text: string }
  | { type: 'result'; id: number; result: SpawnResult }
  | { type: 'error'; id: number; message: string };

interface Pending {
  readonly req: SpawnRequest;
  readonly done: () => void;
  readonly resolve: (r: SpawnResult) => void;
  readonly reject: (e: unknown) => void;
  pid?: number;
  callbackError?: unknown;
}

let server: ChildProcess | undefined;
let serverFailed = false;
let nextId = 1;
const pending = new Map<number, Pending>();

const serverModule = new URL('./process-server.js', import.meta.url);

function usable(): boolean {
  return !serverFailed && process.env.KAPPS_INPROCESS_SPAWN !== '1' && serverModule.pathname.endsWith('.js');
}

function toBuffer(b: unknown): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b as Uint8Array);
}

function setRef(active: boolean): void {
  const channel = server?.channel as { ref?: () => void; unref?: () => void } | undefined;
  if (active) channel?.ref?.();
  else channel?.unref?.();
}

function failAll(reason: string): void {
  for (const [id, p] of pending) {
    pending.delete(id);
    p.done();
    if (p.pid !== undefined) unregisterProcessGroup(p.pid);
    p.reject(new Error(`the process server stopped: ${reason}`));
  }
}

function startServer(): ChildProcess {
  const child = forkProcessServer(serverModule.pathname);
  child.on('message', (m: ServerMessage) => {
    const p = pending.get(m.id);
    if (!p) return;
    switch (m.type) {
      case 'started':
        p.pid = m.pid;
        registerProcessGroup(m.pid);
        break;
      case 'output':
        if (p.callbackError !== undefined) break;
        try {
          p.req.onOutput?.(m.stream, m.text);
        } catch (error) {
          p.callbackError = error;
          send({ type: 'cancel', id: m.id });
        }
        break;
      case 'result': {
        pending.delete(m.id);
        p.done();
        if (p.pid !== undefined) unregisterProcessGroup(p.pid);
        if (pending.size === 0) setRef(false);
        if (p.callbackError !== undefined) p.reject(p.callbackError);
        else p.resolve({ ...m.result, stdout: toBuffer(m.result.stdout), stderr: toBuffer(m.result.stderr) });
        break;
      }
      case 'error':
        pending.delete(m.id);
        p.done();
        if (p.pid !== undefined) unregisterProcessGroup(p.pid);
        if (pending.size === 0) setRef(false);
        p.reject(new Error(m.message));
        break;
    }
  });
  child.on('exit', (code, signal) => {
    server = undefined;
    serverFailed = true;
    failAll(signal ? `killed by ${signal}` : `exit code ${String(code)}`);
  });
  child.on('error', () => {
    serverFailed = true;
  });
  return child;
}

function send(message: ServerRequest): void {
  server?.send(message);
}

/** Run a process; see `spawnStep` for the contract. */
export function runProcess(req: SpawnRequest): Promise<SpawnResult> {
  if (!usable()) return spawnStep(req);
  if (req.signal?.aborted) return spawnStep(req);
  server ??= startServer();
  const id = nextId++;
  const { signal, onOutput, onStart: _onStart, ...plain } = req;
  return new Promise<SpawnResult>((resolve, reject) => {
    const onAbort = (): void => send({ type: 'cancel', id });
    signal?.addEventListener('abort', onAbort, { once: true });
    pending.set(id, { req, resolve, reject, done: () => signal?.removeEventListener('abort', onAbort) });
    setRef(true);
    send({ type: 'run', id, req: plain, stream: onOutput !== undefined });
  });
}
