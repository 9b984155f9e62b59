/**
 * The HTTP side of the CLI as a client of a runs server (`kapps serve`): requests under `/api/v1` with the bearer
 * token of `KAPPS_TOKEN`, answers checked against the API's schemas, and every failure turned into one clear line
 * (`ServerError`, exit 1) — an unreachable server, a refused token, a missing run, a full queue — never a stack
 * trace. The token is never printed.
 */
import type { z } from 'zod';
import { KappsError, UsageError } from '../../diagnostics/errors.js';
import { problemSchema } from '../../api/index.js';

/** A request to the server failed: printed as one line, exit 1. */
export class ServerError extends KappsError {
  /** The HTTP status, or undefined when no answer came. */
  readonly status: number | undefined;
  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}

/** How long a request may take before the server counts as unreachable (the event stream has no such limit). */
const REQUEST_TIMEOUT_MS = 30_000;

/** The server's base URL from `--server` (or, for `kapps runs`, `KAPPS_SERVER`): http(s), nothing after the host but a path. */
export function serverUrl(value: string | undefined, from = '--server'): URL {
  if (value === undefined || value.trim() === '') {
    throw new UsageError('name the runs server with --server URL (or KAPPS_SERVER)');
  }
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new UsageError(`${from} must be a URL such as http://127.0.0.1:7070, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${from} must be an http:// or https:// URL, got ${url.protocol}//…`);
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new UsageError(
      `${from} must be a plain URL (no user, password, query or fragment); the token goes in KAPPS_TOKEN`,
    );
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

export interface RequestOptions {
  readonly body?: unknown;
  readonly query?: Record<string, string | number | boolean | undefined>;
  readonly headers?: Record<string, string>;
  /** Called for a refused request before the generic message, to say it better (e.g. which run was not found). */
  readonly what?: string;
}

/** A raw answer: status, headers and text. */
export interface RawAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** A client of one runs server. */
export class ServerClient {
  readonly base: URL;
  readonly #token: string | undefined;

  constructor(base: URL, token: string | undefined) {
    this.base = base;
    this.#token = token !== undefined && token !== '' ? token : undefined;
  }

  /** The server as messages name it. */
  get origin(): string {
    return this.base.href.replace(/\/$/, '');
  }

  /** The absolute URL of an API path (`runs/abc`), with a query. */
  url(path: string, query: RequestOptions['query'] = {}): URL {
    const url = new URL(`api/v1/${path}`, this.base);
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }

  /** The headers of every request: the token, and JSON. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      accept: 'application/json, application/problem+json, application/yaml;q=0.9, */*;q=0.1',
      ...(this.#token ? { authorization: `Bearer ${this.#token}` } : {}),
      ...extra,
    };
  }

  /** A request whose JSON answer must match `schema`; a refusal throws `ServerError`. */
  async json<T extends z.ZodType>(
    method: 'GET' | 'POST',
    path: string,
    schema: T,
    options: RequestOptions = {},
  ): Promise<z.infer<T>> {
    const answer = await this.raw(method, path, options);
    let data: unknown;
    try {
      data = JSON.parse(answer.text);
    } catch {
      throw new ServerError(
        `${this.origin} answered ${method} /api/v1/${path} with something that is not JSON`,
        answer.status,
      );
    }
    const parsed = schema.safeParse(data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ServerError(
        `${this.origin} answered ${method} /api/v1/${path} with an unexpected document` +
          (issue ? ` (${issue.path.join('.') || 'top level'}: ${issue.message})` : ''),
        answer.status,
      );
    }
    return parsed.data;
  }

  /** A request; a 2xx answer is returned, anything else throws `ServerError` with the problem's words. */
  async raw(method: 'GET' | 'POST', path: string, options: RequestOptions = {}): Promise<RawAnswer> {
    const url = this.url(path, options.query);
    const init: RequestInit = {
      method,
      headers: this.headers({
        ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      redirect: 'error',
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    };
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, init);
      text = await response.text();
    } catch (error) {
      throw unreachable(this.origin, error);
    }
    if (response.ok) return { status: response.status, headers: response.headers, text };
    throw refused(this.origin, method, path, response, text, options.what);
  }
}

/**
 * Open a streaming GET (the event stream): the response once its status is 2xx; a refusal throws `ServerError`. No
 * time limit on the stream itself; `signal` ends it.
 */
export async function openStream(
  client: ServerClient,
  path: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  what?: string,
): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(client.url(path), {
      method: 'GET',
      headers: client.headers({ accept: 'text/event-stream', ...headers }),
      redirect: 'error',
      signal,
    });
  } catch (error) {
    throw unreachable(client.origin, error);
  }
  if (response.ok && response.body) return response;
  const text = await response.text().catch(() => '');
  throw refused(client.origin, 'GET', path, response, text, what);
}

/** The error for a server that could not be reached (or stopped answering). */
export function unreachable(origin: string, error: unknown): ServerError {
  return new ServerError(`cannot reach the runs server ${origin}: ${networkReason(error)}`);
}

/** Why a connection failed, in a few words (`connection refused`, `timed out`, …). */
export function networkReason(error: unknown): string {
  const codes: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'the connection was reset',
    ENOTFOUND: 'unknown host',
    EAI_AGAIN: 'the host name cannot be resolved now',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    ETIMEDOUT: 'timed out',
    UND_ERR_CONNECT_TIMEOUT: 'timed out connecting',
    UND_ERR_SOCKET: 'the connection was closed',
    CERT_HAS_EXPIRED: 'its TLS certificate has expired',
    DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is self-signed',
  };
  let innermost = error instanceof Error ? error.message : String(error);
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) return 'no answer in time';
    const code = typeof e === 'object' && 'code' in e ? String(e.code) : undefined;
    if (code && codes[code]) return codes[code];
    if (code) return code;
    if (e instanceof AggregateError && e.errors.length > 0) return networkReason(e.errors[0]);
    if (e instanceof Error && e.message) innermost = e.message;
    e = e instanceof Error ? e.cause : undefined;
  }
  return innermost;
}

/** The error for a non-2xx answer: status, the problem's title and detail, and what to do. */
function refused(
  origin: string,
  method: string,
  path: string,
  response: Response,
  text: string,
  what: string | undefined,
): ServerError {
  const status = response.status;
  let title: string | undefined;
  let detail: string | undefined;
  let fields = '';
  try {
    const problem = problemSchema.safeParse(JSON.parse(text));
    if (problem.success) {
      title = problem.data.title;
      detail = problem.data.detail;
      const listed = (problem.data.errors ?? []).map((e) => `${e.field}: ${e.message}`);
      // The fields at fault, unless the detail says them already.
      if (listed.length > 0 && !listed.every((f) => problem.data.detail?.includes(f)))
        fields = ` (${listed.join('; ')})`;
    }
  } catch {
    // Not a problem document: the status says enough.
  }
  const said = [title, detail].filter((part) => part !== undefined && part !== '').join(': ') || response.statusText;
  const already = (words: string): string => (said.includes(words) ? '' : `; ${words}`);
  const hint = (() => {
    switch (status) {
      case 401:
        return already('set KAPPS_TOKEN to a token the server knows');
      case 403:
        return said.includes('role') ? '' : '; the token’s role does not allow this';
      case 429: {
        const retry = response.headers.get('retry-after');
        return retry ? `; retry after ${retry} s` : '';
      }
      default:
        return '';
    }
  })();
  const subject = what ?? `${method} /api/v1/${path}`;
  return new ServerError(`${origin} refused ${subject}: ${status} ${said}${fields}${hint}`, status);
}
