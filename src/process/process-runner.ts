/**
 * `runProcess`: what the rest of kapps calls to run a process. In the built CLI it hands the request to a
 * process server (a small child process: forking from it costs a fraction of forking from kapps itself, whose
 * memory holds the whole stack), and falls back to `spawnStep` in this process when no server is available
 * (running from sources, or `KAPPS_INPROCESS_SPAWN=1`). Same contract as `spawnStep`.
 */
import type { ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { registerProcessGroup, unregisterProcessGroup } from './process-groups.js';
import { onServerMessage, sendRequest, sendRequests, type ServerRequest } from './server-protocol.js';
import { forkProcessServer, spawnStep, type SpawnRequest, type SpawnResult } from './spawn.js';

interface Pending {
  readonly req: SpawnRequest;
  readonly server: Server;
  readonly done: () => void;
  readonly resolve: (r: SpawnResult) => void;
  readonly reject: (e: unknown) => void;
  pid?: number;
  callbackError?: unknown;
}

/**
 * A process server, whether it has said it listens, the number of requests it is running, and the runs to send it at
 * the end of this turn.
 */
interface Server {
  readonly child: ChildProcess;
  ready: boolean;
  load: number;
  outbox: ServerRequest[] | undefined;
}

/**
 * The servers, started as the load needs them: a request goes to the least loaded server that listens (to a starting
 * one only while none listens yet), and one more starts, for the requests that follow, once every server runs
 * `STEPS_PER_SERVER` requests and there are fewer than `maxServers()`. One spawn blocks its server's event loop until
 * the new process has exec'd (2 to 7 ms), so on a machine with several cores a few servers start many steps faster
 * than one; a server costs a Node process's start (about 0.1 s of a core), which a run of a few kapps does not win
 * back.
 */
const servers: Server[] = [];
let serverFailed = false;
let nextId = 1;
const pending = new Map<number, Pending>();

const serverModule = new URL('./process-server.js', import.meta.url);

/**
 * Whether this module runs built (a `.js` file beside `process-server.js`): run from its TypeScript sources (the unit
 * tests), there is no server to fork. (`serverModule` always ends in `.js`: it is this module's URL that tells.)
 */
const built = import.meta.url.endsWith('.js');

function usable(): boolean {
  return !serverFailed && process.env.KAPPS_INPROCESS_SPAWN !== '1' && built;
}

/** At most one server per core, and at most 4. */
function maxServers(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

/** The requests a server runs before another one is started beside it. */
const STEPS_PER_SERVER = 4;

/** The servers worth starting for `concurrent` steps at once: one per `STEPS_PER_SERVER`, at most `maxServers()`. */
function serversFor(concurrent: number): number {
  return Math.max(1, Math.min(maxServers(), Math.ceil(concurrent / STEPS_PER_SERVER)));
}

/** A Buffer over the same memory (a Buffer arrives through the channel as a plain Uint8Array). */
function toBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** A server with requests in flight keeps kapps alive; an idle one does not. */
function setRef(server: Server): void {
  const channel = server.child.channel as { ref?: () => void; unref?: () => void } | undefined;
  if (server.load > 0) channel?.ref?.();
  else channel?.unref?.();
}

function finished(id: number, p: Pending): void {
  pending.delete(id);
  p.done();
  if (p.pid !== undefined) unregisterProcessGroup(p.pid);
  p.server.load--;
  setRef(p.server);
}

function failAll(server: Server, reason: string): void {
  for (const [id, p] of pending) {
    if (p.server !== server) continue;
    // The server that supervised this step is gone: nothing would stop the step's process group any more.
    if (p.pid !== undefined) {
      try {
        process.kill(-p.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    finished(id, p);
    p.reject(new Error(`the process server stopped: ${reason}`));
  }
}

function startServer(): Server {
  const child = forkProcessServer(serverModule.pathname);
  const server: Server = { child, ready: false, load: 0, outbox: undefined };
  onServerMessage(child, (m) => {
    if (m.type === 'ready') {
      server.ready = true;
      return;
    }
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
          send(server, { type: 'cancel', id: m.id });
        }
        break;
      case 'result': {
        finished(m.id, p);
        if (p.callbackError !== undefined) p.reject(p.callbackError);
        else p.resolve({ ...m.result, stdout: toBuffer(m.result.stdout), stderr: toBuffer(m.result.stderr) });
        break;
      }
      case 'error':
        finished(m.id, p);
        p.reject(new Error(m.message));
        break;
    }
  });
  child.on('exit', (code, signal) => {
    servers.splice(servers.indexOf(server), 1);
    serverFailed = true;
    failAll(server, signal ? `killed by ${signal}` : `exit code ${String(code)}`);
  });
  child.on('error', () => {
    serverFailed = true;
  });
  servers.push(server);
  return server;
}

function pickServer(): Server {
  let best: Server | undefined;
  let busy = true;
  for (const s of servers) {
    if (s.load < STEPS_PER_SERVER) busy = false;
    if (!best || (s.ready && !best.ready) || (s.ready === best.ready && s.load < best.load)) best = s;
  }
  if (!best) return startServer();
  if (busy && servers.length < maxServers()) setRef(startServer());
  return best;
}

/**
 * Runs are sent once this turn of the event loop is over, together (the visits that reach their step in the same
 * turn share one write); anything else goes at once, after the runs queued before it (a cancel follows its run).
 */
function send(server: Server, message: ServerRequest): void {
  if (message.type !== 'run') {
    flushOutbox(server);
    sendRequest(server.child, message);
    return;
  }
  if (server.outbox) {
    server.outbox.push(message);
    return;
  }
  server.outbox = [message];
  setImmediate(() => flushOutbox(server));
}

function flushOutbox(server: Server): void {
  const box = server.outbox;
  server.outbox = undefined;
  if (box) sendRequests(server.child, box);
}

/**
 * KAPPS_INPROCESS_SPAWN=1: kapps starts steps itself, and a process server is kept only as a watchdog that is told
 * the process group of each running step, and stops those groups when kapps goes away without doing it (killed
 * with SIGKILL, say): its IPC channel closes then, whatever killed kapps.
 */
let watchdog: ChildProcess | undefined;
let watchdogReady: Promise<void> | undefined;

/** How long to wait for the watchdog to start before running steps without it, in milliseconds. */
const WATCHDOG_START_MS = 10_000;

/**
 * Start the watchdog once, and resolve when it is listening (a step started before that could outlive a kapps killed
 * while the watchdog was still loading). Resolves too when it cannot start: steps then run without it.
 */
function startWatchdog(): Promise<void> {
  if (watchdogReady) return watchdogReady;
  watchdogReady = new Promise<void>((resolve) => {
    if (!built) return resolve();
    let child: ChildProcess;
    try {
      child = forkProcessServer(serverModule.pathname);
    } catch {
      return resolve();
    }
    const unref = (): void => (child.channel as { unref?: () => void } | undefined)?.unref?.();
    const timer = setTimeout(() => {
      unref();
      resolve();
    }, WATCHDOG_START_MS);
    timer.unref();
    onServerMessage(child, (m) => {
      if (m.type !== 'ready') return;
      clearTimeout(timer);
      watchdog = child;
      unref();
      resolve();
    });
    child.on('error', () => resolve());
    child.on('exit', () => {
      watchdog = undefined;
      resolve();
    });
  });
  return watchdogReady;
}

function watch(message: ServerRequest): void {
  if (watchdog) sendRequest(watchdog, message);
}

async function spawnWatched(req: SpawnRequest): Promise<SpawnResult> {
  await startWatchdog();
  let pgid: number | undefined;
  try {
    return await spawnStep({
      ...req,
      onStart: (pid) => {
        pgid = pid;
        watch({ type: 'watch', pgid: pid });
        req.onStart?.(pid);
      },
    });
  } finally {
    if (pgid !== undefined) watch({ type: 'unwatch', pgid });
  }
}

/**
 * Start the process servers a run of `concurrent` steps at once needs (`serversFor`), those not running yet, so that
 * their start (a Node process, tens of milliseconds) overlaps what a run does before its first step (reading the
 * stack, taking the lock) instead of delaying the first steps. Idle, they keep nothing alive. With
 * KAPPS_INPROCESS_SPAWN=1 the watchdog is started instead.
 */
export function warmProcessServers(concurrent: number): void {
  if (process.env.KAPPS_INPROCESS_SPAWN === '1') {
    void startWatchdog();
    return;
  }
  if (!usable()) return;
  const wanted = serversFor(concurrent);
  while (servers.length < wanted) setRef(startServer());
}

/** Run a process; see `spawnStep` for the contract. */
export function runProcess(req: SpawnRequest): Promise<SpawnResult> {
  if (process.env.KAPPS_INPROCESS_SPAWN === '1') return spawnWatched(req);
  if (!usable()) return spawnStep(req);
  if (req.signal?.aborted) return spawnStep(req);
  const server = pickServer();
  const id = nextId++;
  const { signal, onOutput, onStart: _onStart, ...plain } = req;
  return new Promise<SpawnResult>((resolve, reject) => {
    const onAbort = (): void => send(server, { type: 'cancel', id });
    signal?.addEventListener('abort', onAbort, { once: true });
    pending.set(id, { req, server, resolve, reject, done: () => signal?.removeEventListener('abort', onAbort) });
    server.load++;
    setRef(server);
    send(server, { type: 'run', id, req: plain, stream: onOutput !== undefined });
  });
}
