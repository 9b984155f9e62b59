/**
 * Real `kapps serve` processes for end-to-end tests: the built CLI on a free loopback port with a temp backend,
 * and a small HTTP client.
 *
 * ```ts
 * const server = await startServer({ args: ['--project', `shop=${p.dir}/stacks.yaml`] });
 * try {
 *   const r = await api(server.url).post('/api/v1/runs', { type: 'generate', project: 'shop', stack: 'dev' });
 *   expect(r.status).toBe(202);
 * } finally {
 *   await server.stop();
 * }
 * ```
 * Every server started is also stopped by `stopAllServers()` (call it in `afterEach`), so none outlives its test.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers, asserted on by the tests */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogLine, Problem, Run } from '../../src/api/index.js';
import { CLI, cliEnv } from './cli.js';

export interface StartServerOptions {
  /** Arguments after `serve` (`--listen 127.0.0.1:0` and `--backend <temp dir>` are added unless given). */
  readonly args?: string[];
  readonly env?: Record<string, string>;
  readonly cwd?: string;
  /** How long to wait for the start line (ms; default 20 s). */
  readonly startTimeoutMs?: number;
}

export interface TestServer {
  readonly url: string;
  readonly pid: number;
  /** The backend directory (when the helper made it). */
  readonly backend: string | undefined;
  stdout(): string;
  stderr(): string;
  /** Send `signal` (default SIGTERM) and wait for the exit (SIGKILL after 20 s). */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null }>;
  kill9(): void;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const live = new Set<TestServer>();
const tempDirs: string[] = [];

/** Start `kapps serve`; resolves once it printed its start line, rejects (with its stderr) if it exits first. */
export function startServer(options: StartServerOptions = {}): Promise<TestServer> {
  const args = [...(options.args ?? [])];
  if (!args.includes('--listen')) args.push('--listen', '127.0.0.1:0');
  let backend: string | undefined;
  const env = options.env ?? {};
  if (!args.includes('--backend') && env.KAPPS_BACKEND === undefined) {
    backend = mkdtempSync(join(tmpdir(), 'kapps-serve-'));
    tempDirs.push(backend);
    args.push('--backend', backend);
  }
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI, 'serve', ...args], {
    cwd: options.cwd,
    env: cliEnv({ KAPPS_HOME: backend ?? env.KAPPS_HOME ?? join(tmpdir(), 'kapps-serve-home'), ...env }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end();
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return new Promise<TestServer>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kapps serve did not start within ${options.startTimeoutMs ?? 20_000} ms:\n${err}`));
    }, options.startTimeoutMs ?? 20_000);
    const onData = (): void => {
      const m = /^kapps serve: listening on (http:\/\/\S+)\n/m.exec(out);
      if (!m?.[1]) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      const server: TestServer = {
        url: m[1],
        pid: child.pid ?? -1,
        backend,
        stdout: () => out,
        stderr: () => err,
        stop: async (signal = 'SIGTERM') => {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
          const { code } = await exited;
          clearTimeout(kill);
          live.delete(server);
          return { code };
        },
        kill9: () => {
          child.kill('SIGKILL');
        },
        exited,
      };
      live.add(server);
      void exited.then(() => live.delete(server));
      resolve(server);
    };
    child.stdout.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`kapps serve exited (${code ?? signal}) before listening:\n${err}`));
    });
  });
}

/** Stop every server still running (SIGKILL) and remove the temp backends: for `afterEach`. */
export async function stopAllServers(): Promise<void> {
  const servers = [...live];
  for (const s of servers) s.kill9();
  await Promise.all(servers.map((s) => s.exited));
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

export interface ApiResponse<T = unknown> {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON when the answer is JSON (incl. problem+json), else the text. */
  readonly body: T;
}

/**
 * What an answer may hold, loosely: a run, a page of runs, a problem, a log chunk… (tests name the fields they
 * assert on; pass a type argument for anything else).
 */
export type ApiBody = Partial<Run> &
  Partial<Omit<Problem, 'type' | 'status'>> & {
    readonly type?: string;
    readonly status?: string | number;
    readonly runs?: Run[];
    readonly nextCursor?: string | null;
    readonly lines?: LogLine[];
    readonly nextOffset?: number;
    readonly complete?: boolean;
    readonly offset?: number;
  } & Record<string, unknown>;

export interface ApiClient {
  get<T = ApiBody>(path: string, headers?: Record<string, string>): Promise<ApiResponse<T>>;
  post<T = ApiBody>(path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse<T>>;
}

async function answer<T>(response: Response): Promise<ApiResponse<T>> {
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  const body = (/json/.test(type) && text !== '' ? JSON.parse(text) : text) as T;
  return { status: response.status, headers: response.headers, body };
}

/** A client of the server at `url`, sending `Authorization: Bearer <token>` when a token is given. */
export function api(url: string, token?: string): ApiClient {
  const auth: Record<string, string> = token !== undefined ? { authorization: `Bearer ${token}` } : {};
  return {
    get: async (path, headers = {}) => answer(await fetch(`${url}${path}`, { headers: { ...auth, ...headers } })),
    post: async (path, body, headers = {}) =>
      answer(
        await fetch(`${url}${path}`, {
          method: 'POST',
          headers: { ...auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        }),
      ),
  };
}

/** One Server-Sent Event. */
export interface SseEvent {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: any;
}

/** Read the event stream of a run until it ends (or `until` says stop, or `timeoutMs` passes); returns events and comments. */
export async function readEvents(
  url: string,
  options: {
    token?: string;
    headers?: Record<string, string>;
    until?: (e: SseEvent) => boolean;
    timeoutMs?: number;
  } = {},
): Promise<{ status: number; contentType: string | null; events: SseEvent[]; comments: string[]; ended: boolean }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 20_000);
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let ended = false;
  const response = await fetch(url, {
    headers: { ...(options.token ? { authorization: `Bearer ${options.token}` } : {}), ...options.headers },
    signal: controller.signal,
  });
  try {
    if (!response.body) return { status: response.status, contentType: null, events, comments, ended };
    const decoder = new TextDecoder();
    let buffer = '';
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    outer: for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      buffer += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let id: string | undefined;
        let event = 'message';
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) comments.push(line.slice(1).trim());
          else if (line.startsWith('id: ')) id = line.slice(4);
          else if (line.startsWith('event: ')) event = line.slice(7);
          else if (line.startsWith('data: ')) data += line.slice(6);
        }
        if (!data) continue;
        const e: SseEvent = { id, event, data: JSON.parse(data) as unknown };
        events.push(e);
        if (options.until?.(e)) {
          await reader.cancel();
          break outer;
        }
      }
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
  }
  return { status: response.status, contentType: response.headers.get('content-type'), events, comments, ended };
}

/** Poll `GET /api/v1/runs/{id}` until `done(run)` (default: a final status); fails after `timeoutMs`. */
export async function waitForRun(
  client: ApiClient,
  id: string,
  done: (run: Run) => boolean = (r) => ['succeeded', 'failed', 'cancelled', 'errored'].includes(r.status),
  timeoutMs = 30_000,
): Promise<Run> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await client.get<Run>(`/api/v1/runs/${id}`);
    if (r.status === 200 && done(r.body)) return r.body;
    if (Date.now() > deadline) throw new Error(`run ${id} not done in ${timeoutMs} ms: ${JSON.stringify(r.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
