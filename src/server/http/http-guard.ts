/**
 * What keeps a browser from being turned against the server, checked on every request before anything else:
 *
 * - every answer (the page, the API, problems, event streams) carries a strict `Content-Security-Policy`,
 *   `X-Frame-Options: DENY`, `Referrer-Policy: no-referrer` and `X-Content-Type-Options: nosniff`;
 * - a server without tokens answers only requests whose `Host` is a loopback name with its port (`127.0.0.1`,
 *   `localhost`, `[::1]`, or the loopback address it listens on): a page reached through DNS rebinding gets 421;
 * - a request that may change something (any method but GET, HEAD and OPTIONS) needs no body or a JSON one, and an
 *   `Origin`, when it sends one, that is the server's own: a cross-origin form or `no-cors` fetch gets 403 or 415
 *   before its body is read;
 * - every string of a request (body, query, path) is well-formed Unicode without NUL: anything else is a 400 naming
 *   the field, so the stores never see text they cannot keep.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpProblem, invalid } from './problems.js';

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The `Host` values a server without tokens answers: the loopback names with its port. */
export function loopbackHosts(listenHost: string, port: number): Set<string> {
  const names = new Set(['127.0.0.1', 'localhost', '[::1]']);
  if (/^127\.[0-9]+\.[0-9]+\.[0-9]+$/.test(listenHost)) names.add(listenHost);
  const hosts = new Set<string>();
  for (const name of names) {
    hosts.add(`${name}:${port}`);
    if (port === 80) hosts.add(name);
  }
  return hosts;
}

export interface GuardOptions {
  /** Whether the server has no tokens (then only loopback `Host` names are answered). */
  readonly open: boolean;
  /** The `Host` values answered when `open` (computed once the server listens). */
  readonly hosts: () => ReadonlySet<string>;
}

/** The `onRequest` check: headers first, then the `Host`, the `Origin` and the body's type. */
export function guardRequest(options: GuardOptions, request: FastifyRequest, reply: FastifyReply): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.raw.setHeader(name, value);
  const host = (request.headers.host ?? '').toLowerCase();
  if (options.open && !options.hosts().has(host)) {
    throw new HttpProblem(
      421,
      'misdirected',
      `this server has no tokens and answers only loopback host names (${[...options.hosts()].join(', ')}), not \`${host || '(none)'}\``,
    );
  }
  if (SAFE_METHODS.has(request.method)) return;
  const origin = request.headers.origin;
  if (origin !== undefined) {
    const own = origin.toLowerCase() === `http://${host}` || origin.toLowerCase() === `https://${host}`;
    if (!own || host === '') {
      throw new HttpProblem(
        403,
        'cross-origin',
        `a request from another origin (${origin}) may not change anything here; send it without an Origin or from the server's own page`,
      );
    }
  }
  const type = request.headers['content-type'];
  if (type !== undefined) {
    const media = (type.split(';')[0] ?? '').trim().toLowerCase();
    if (media !== 'application/json') {
      throw new HttpProblem(415, 'unsupported-media-type', `a body of type \`${media}\`: send JSON or no body`);
    }
  } else if (Number(request.headers['content-length'] ?? '0') > 0 || request.headers['transfer-encoding']) {
    throw new HttpProblem(415, 'unsupported-media-type', 'a body without a type: send JSON or no body');
  }
}

const ILL_FORMED = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\0/;

/** The first field of `value` (under `where`) holding ill-formed Unicode or NUL, in a key or a string. */
function badText(value: unknown, where: string, depth = 0): string | undefined {
  if (typeof value === 'string') return ILL_FORMED.test(value) ? where : undefined;
  if (typeof value !== 'object' || value === null || depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = badText(value[i], `${where}.${i}`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, inner] of Object.entries(value)) {
    if (ILL_FORMED.test(key)) return where;
    const found = badText(inner, `${where}.${key}`, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** The `preValidation` check: every string of the request is well-formed Unicode without NUL. */
export function checkRequestText(request: FastifyRequest): void {
  const field = badText(request.params, 'params') ?? badText(request.query, 'query') ?? badText(request.body, 'body');
  if (field) throw invalid(field, 'holds ill-formed Unicode (a lone surrogate) or NUL');
}
