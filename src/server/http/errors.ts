/**
 * The one error handler of the server: every error answer is a problem document (`application/problem+json`,
 * src/server/http/problems.ts) — what a handler throws, a request the schemas refuse, the backend unavailable, an
 * unknown route, and fastify's own answers (a body that is not JSON, too large, an unsupported media type, a
 * request node cannot parse, the server closing). Anything else is a 500 `internal` without its stack.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { isUnavailable } from '../../pg/transient.js';
import { SECURITY_HEADERS } from './http-guard.js';
import { backendUnavailable, HttpProblem, notFound, OUTAGE_GAP_MS, PROBLEM_SLUGS } from './problems.js';

export function sendProblem(reply: FastifyReply, problem: HttpProblem, instance: string): FastifyReply {
  for (const [k, v] of Object.entries(problem.headers)) void reply.header(k, v);
  return reply
    .code(problem.status)
    .type('application/problem+json')
    .serializer((p: unknown) => JSON.stringify(p))
    .send(problem.toProblem(instance));
}

/** The field a validation issue is about: `body.stack`, `query.limit`, `params.id`. */
function fieldOf(context: string | undefined, instancePath: string): string {
  const where = context === 'querystring' ? 'query' : (context ?? 'request');
  const path = instancePath.replace(/^\//, '').split('/').filter(Boolean).join('.');
  return path ? `${where}.${path}` : where;
}

const pathOf = (request: FastifyRequest): string => request.url.split('?')[0] ?? request.url;

/** An error fastify raised itself (4xx): the problem of its status. */
function fastifyProblem(error: FastifyError, status: number): HttpProblem {
  const slug = status in PROBLEM_SLUGS ? PROBLEM_SLUGS[status as keyof typeof PROBLEM_SLUGS] : 'invalid-request';
  return new HttpProblem(status, slug, error.message || 'invalid request');
}

/** The problem of any error a request met; `outage` says a backend outage once (not once per request). */
function problemOf(error: FastifyError, request: FastifyRequest, outage: () => void): HttpProblem {
  if (error instanceof HttpProblem) return error;
  if (hasZodFastifySchemaValidationErrors(error)) {
    const errors = error.validation.map((v) => ({
      field: fieldOf(error.validationContext, v.instancePath),
      message: v.message ?? 'invalid',
    }));
    const detail = errors.map((e) => `${e.field}: ${e.message}`).join('; ');
    return new HttpProblem(400, 'invalid-request', detail, { errors });
  }
  if (isUnavailable(error)) {
    outage();
    return backendUnavailable();
  }
  const status = error.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return fastifyProblem(error, status);
  process.stderr.write(
    `kapps serve: internal error on ${request.method} ${pathOf(request)}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return new HttpProblem(500, 'internal', 'the server failed to answer this request');
}

/**
 * A request node's parser refused before fastify saw it (a malformed request line or header, headers too large):
 * answered as a problem document too, then the connection is closed.
 */
function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) return;
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const problem = new HttpProblem(
    status,
    'invalid-request',
    status === 431 ? 'the request headers are too large' : 'the request is not valid HTTP',
  ).toProblem();
  const body = JSON.stringify(problem);
  const headers = {
    ...SECURITY_HEADERS,
    'content-type': 'application/problem+json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  };
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n${head}\r\n${body}`,
  );
}

/** The fastify options that route its own answers here. */
export const problemServerOptions = {
  // While closing, requests answer 503 problem+json (the authentication hook), not fastify's own format.
  return503OnClosing: false,
  clientErrorHandler,
} as const;

/** Every error answer of `app`, and the 404 of a route it does not have, as problem documents. */
export function registerProblemHandler(app: FastifyInstance): void {
  /** When a request last met the backend unavailable: an outage is said once, not once per request. */
  let unavailableAt = -Infinity;
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const problem = problemOf(error, request, () => {
      if (performance.now() - unavailableAt > OUTAGE_GAP_MS) {
        process.stderr.write(
          `kapps serve: the backend is unavailable (requests answer 503 until it is back): ${error.message}\n`,
        );
      }
      unavailableAt = performance.now();
    });
    return sendProblem(reply, problem, pathOf(request));
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, notFound(`no route ${request.method} ${pathOf(request)}`), pathOf(request)),
  );
}
