/**
 * What every request goes through before its route: the browser guard (security headers, `Host`, `Origin`, body
 * type; src/server/http/http-guard.ts), JSON bodies only, well-formed text, and then — unless the server is
 * closing (503) — the bearer token, the role the route needs and the caller's requests per minute.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { allows } from './auth.js';
import type { RouteContext } from './context.js';
import { checkRequestText, guardRequest, loopbackHosts } from './http-guard.js';
import { HttpProblem, RETRY_AFTER_SECONDS } from './problems.js';

/**
 * Requests per caller and minute, as a token bucket per caller name (as many buckets as there are tokens): a
 * caller may send `perMinute` at once, then one every `60 / perMinute` s. `take` answers 0, or the seconds to wait.
 */
class RequestRate {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  constructor(private readonly perMinute: number) {}

  take(name: string): number {
    const now = Date.now();
    const perMs = this.perMinute / 60_000;
    const bucket = this.#buckets.get(name) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * perMs);
    bucket.at = now;
    this.#buckets.set(name, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000));
  }
}

/** The guard, before anything else; JSON bodies (an empty one is no body); every string well-formed. */
export function registerRequestChecks(app: FastifyInstance, ctx: RouteContext): void {
  let hosts: ReadonlySet<string> | undefined;
  const guard = {
    open: ctx.auth.open,
    hosts: (): ReadonlySet<string> => {
      if (hosts) return hosts;
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      return (hosts = loopbackHosts(ctx.listenHost, port));
    },
  };
  app.addHook('onRequest', (request, reply, done) => {
    try {
      guardRequest(guard, request, reply);
      done();
    } catch (error) {
      done(error as Error);
    }
  });
  // JSON bodies only; an empty one (what many clients send with a JSON type on an action) is no body.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    void parseJson(request, text, done);
  });
  app.addHook('preValidation', (request, _reply, done) => {
    try {
      checkRequestText(request);
      done();
    } catch (error) {
      done(error as Error);
    }
  });
}

/** Why a request may not go on (closing, no valid token, a role too small, too many requests), or undefined. */
function refusal(ctx: RouteContext, rate: RequestRate, request: FastifyRequest): HttpProblem | undefined {
  if (ctx.closing.aborted) {
    return new HttpProblem(503, 'unavailable', 'the server is stopping', {
      headers: { 'retry-after': String(RETRY_AFTER_SECONDS), connection: 'close' },
    });
  }
  const role = request.routeOptions.config.role;
  if (role === undefined) return undefined;
  const caller = ctx.auth.identify(request.headers.authorization);
  if (!caller) {
    return new HttpProblem(
      401,
      'unauthorized',
      request.headers.authorization ? 'the bearer token is not valid' : 'send `Authorization: Bearer <token>`',
      { headers: { 'www-authenticate': 'Bearer realm="kapps"' } },
    );
  }
  if (!allows(caller.role, role)) {
    return new HttpProblem(403, 'forbidden', `${caller.name} has role ${caller.role}; this needs ${role}`);
  }
  request.caller = caller;
  // Requests per token and minute (with tokens; a server without them has one caller, on loopback).
  const wait = ctx.auth.open ? 0 : rate.take(caller.name);
  if (wait > 0) {
    return new HttpProblem(
      429,
      'rate-limited',
      `${caller.name} sent more than ${ctx.limits.requestsPerMinute} requests in a minute (limits.requests_per_minute)`,
      { headers: { 'retry-after': String(wait) } },
    );
  }
  return undefined;
}

/** Authentication and roles: each API route names the least role it needs (`config.role`). */
export function registerAuthentication(app: FastifyInstance, ctx: RouteContext): void {
  const rate = new RequestRate(ctx.limits.requestsPerMinute);
  app.addHook('onRequest', (request, _reply, done) => {
    const problem = refusal(ctx, rate, request);
    if (problem) done(problem);
    else done();
  });
}
