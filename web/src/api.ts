/**
 * The page's only way to the server: the public `/api/v1` API, with the token from the session as
 * `Authorization: Bearer`. The event stream is read with fetch streaming (EventSource cannot send headers).
 */
import type {
  Fleet,
  LogChunk,
  LogLine,
  NotificationList,
  Problem,
  ProjectList,
  Release,
  ReleaseList,
  ReleasePage,
  Run,
  RunList,
  RunListQuery,
  StackDrift,
  StackSummary,
  SubmitRun,
  UnlockResult,
  Whoami,
} from '../../src/api/index';
import { isFinalRunState, roleAllows } from '../../src/api/constants';
import { SseParser, type SseMessage } from '../../src/api/sse-parse';

const TOKEN_KEY = 'kapps.token';

export function getToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** A failed call: the server's problem document, or why the server could not be reached. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly problem?: Problem,
  ) {
    super(message);
  }
  get slug(): string {
    return this.problem?.type.split('/').pop() ?? (this.status === 0 ? 'unreachable' : 'error');
  }
}

/** A sentence for the user about a failed call. */
export function describeError(error: unknown): string {
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error);
  if (error.status === 0) return `The server cannot be reached (${error.message}). Is kapps serve running?`;
  if (error.status === 401) return 'Not logged in: the server refused the token. Log in again.';
  if (error.status === 403)
    return `Not allowed: your token's role may not do this${error.problem?.detail ? ` (${error.problem.detail})` : ''}.`;
  if (error.slug === 'stale-preview')
    return `This preview is stale: the stack changed since it ran. Start a new preview.${error.problem?.detail ? ` (${error.problem.detail})` : ''}`;
  const p = error.problem;
  return p ? `${p.title}${p.detail ? `: ${p.detail}` : ''} (${p.status})` : `${error.message} (${error.status})`;
}

/** Called when the server says the token is missing or wrong (the app goes back to the login page). */
let onUnauthorized: () => void = () => {};
export function setUnauthorizedHandler(handler: () => void): void {
  onUnauthorized = handler;
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const token = getToken();
  return { ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra };
}

async function request(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiError(0, error instanceof Error ? error.message : String(error));
  }
  if (!res.ok) {
    let problem: Problem | undefined;
    try {
      const data: unknown = await res.json();
      if (data && typeof data === 'object' && 'title' in data) problem = data as Problem;
    } catch {
      // not a problem document
    }
    if (res.status === 401) onUnauthorized();
    if (res.status >= 502 && res.status <= 504 && !problem) throw new ApiError(0, `HTTP ${res.status}`);
    throw new ApiError(res.status, problem?.title ?? res.statusText, problem);
  }
  return res;
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  return (await (await request('GET', path, undefined, signal)).json()) as T;
}

export async function getText(path: string): Promise<{ type: string; text: string }> {
  const res = await request('GET', path);
  return { type: res.headers.get('content-type') ?? '', text: await res.text() };
}

export async function postJson<T>(path: string, body: unknown = {}): Promise<T> {
  return (await (await request('POST', path, body)).json()) as T;
}

/** Whether `role` includes `needed` (read < plan < apply < admin). */
export const roleAtLeast = roleAllows;

export const api = {
  whoami: () => getJson<Whoami>('/api/v1/whoami'),
  projects: () => getJson<ProjectList>('/api/v1/projects'),
  stack: (p: string, s: string) => getJson<StackSummary>(`/api/v1/projects/${enc(p)}/stacks/${enc(s)}`),
  runs: (query: RunListQuery) => getJson<RunList>(`/api/v1/runs?${qs(query)}`),
  run: (id: string) => getJson<Run>(`/api/v1/runs/${enc(id)}`),
  submit: (body: SubmitRun) => postJson<Run>('/api/v1/runs', body),
  cancel: (id: string) => postJson<Run>(`/api/v1/runs/${enc(id)}/cancel`),
  /** Approve or reject a run waiting for approval, with an optional comment kept with the decision. */
  decide: (id: string, decision: 'approve' | 'reject', comment: string) =>
    postJson<Run>(`/api/v1/runs/${enc(id)}/${decision}`, comment ? { comment } : {}),
  /** The preview document a run is bound to (a run waiting for approval); null when it has none (404). */
  boundPreview: async (id: string): Promise<string | null> => {
    try {
      return (await getText(`/api/v1/runs/${enc(id)}/preview`)).text;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) return null;
      throw e;
    }
  },
  result: (id: string) => getText(`/api/v1/runs/${enc(id)}/result`),
  notifications: (id: string) => getJson<NotificationList>(`/api/v1/runs/${enc(id)}/notifications`),
  logs: (id: string, offset: number) => getJson<LogChunk>(`/api/v1/runs/${enc(id)}/logs?offset=${offset}`),
  /** One page of a stack's releases: with `limit` or `cursor` the server pages; without, it answers them all. */
  releases: async (p: string, s: string, query: { limit?: number; cursor?: string } = {}): Promise<ReleasePage> => {
    const data = await getJson<ReleaseList>(`/api/v1/projects/${enc(p)}/stacks/${enc(s)}/releases?${qs(query)}`);
    return Array.isArray(data) ? { releases: data, nextCursor: null } : data;
  },
  release: (p: string, s: string, rev: number) =>
    getJson<Release>(`/api/v1/projects/${enc(p)}/stacks/${enc(s)}/releases/${rev}`),
  unlock: (p: string, s: string) => postJson<UnlockResult>(`/api/v1/projects/${enc(p)}/stacks/${enc(s)}/unlock`),
  /** Every stack the token may read: its last release, drift state and schedule. */
  fleet: () => getJson<Fleet>('/api/v1/fleet'),
  /** A stack's drift: schedule, latest check in full, open episode, history. */
  drift: (p: string, s: string) => getJson<StackDrift>(`/api/v1/projects/${enc(p)}/stacks/${enc(s)}/drift`),
};

function enc(s: string): string {
  return encodeURIComponent(s);
}

function qs(query: Record<string, string | number | boolean | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') params.set(k, String(v));
  return params.toString();
}

/** One message of a run's event stream. */
export interface StreamMessage {
  id: number | null;
  event: string;
  data: unknown;
}

/**
 * Follow `GET /runs/{id}/events` with fetch streaming, resuming after the last seen id when the connection drops,
 * until the stream ends with a final status or `signal` aborts. `onBatch` gets the messages that arrived together.
 */
export async function followEvents(
  runId: string,
  onBatch: (messages: StreamMessage[]) => void,
  signal: AbortSignal,
  onConnection: (connected: boolean) => void = () => {},
): Promise<void> {
  let lastId: number | null = null;
  let failures = 0;
  for (;;) {
    let ended = false;
    try {
      const res = await request(
        'GET',
        `/api/v1/runs/${enc(runId)}/events${lastId === null ? '' : `?after=${lastId}`}`,
        undefined,
        signal,
      );
      if (!res.body) return;
      onConnection(true);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const batch: StreamMessage[] = [];
        for (const received of parser.push(value)) {
          const message = streamMessage(received);
          if (!message) continue;
          if (message.id !== null) lastId = message.id;
          batch.push(message);
          if (message.event === 'status' && isFinal((message.data as Run).status)) ended = true;
        }
        if (batch.length) onBatch(batch);
        failures = 0;
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ApiError && error.status !== 0) throw error;
      failures++;
    }
    if (ended || signal.aborted) return;
    onConnection(false);
    await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** failures)));
  }
}

/** A message with its JSON data (one whose data is not JSON is skipped). */
function streamMessage(message: SseMessage): StreamMessage | null {
  const id = message.id !== undefined && /^[0-9]+$/.test(message.id) ? Number(message.id) : null;
  try {
    return { id, event: message.event, data: JSON.parse(message.data) as unknown };
  } catch {
    return null;
  }
}

export const isFinal = isFinalRunState;

export type { LogLine, Release, ReleasePage, Run, StackSummary, Whoami };
