/**
 * The HTTP API of the runs server (fastify): every route of docs/server.md under `/api/v1`, the OpenAPI document
 * generated from the same zod schemas that validate the requests, `/healthz` and `/readyz`, and the web page's
 * files when they are built. Every error is a problem document (`application/problem+json`), never a stack trace.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import {
  hasZodFastifySchemaValidationErrors,
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  applyResultSchema,
  FINAL_RUN_STATES,
  logChunkSchema,
  nameSchema,
  previewSelection,
  runOptionsSchema,
  problemSchema,
  projectListSchema,
  releaseListEntrySchema,
  releaseListQuerySchema,
  releasePageSchema,
  runIdSchema,
  runListQuerySchema,
  runListSchema,
  runSchema,
  stackSummarySchema,
  submitRunSchema,
  whoamiSchema,
  type Role,
  type Run,
  type RunRequestOptions,
} from '../../api/schemas.js';
import { allows, reaches, type Authenticator, type Caller } from './auth.js';
import { checkRequestText, guardRequest, loopbackHosts } from './http-guard.js';
import type { ServerLimits } from '../config.js';
import {
  backendUnavailable,
  HttpProblem,
  invalid,
  notFound,
  OUTAGE_GAP_MS,
  PROBLEM_SLUGS,
  RETRY_AFTER_SECONDS,
} from './problems.js';
import { isUnavailable } from '../../pg/transient.js';
import type { ProjectRegistry } from '../projects.js';
import { encodeRunCursor } from '../queue/policy.js';
import type { RunStore, StoredRun } from '../queue/run-store.js';
import { streamRunEvents } from './sse.js';
import { ReleasePages } from './release-pages.js';
import { registerWebFiles } from './web.js';
import type { ReleaseStore } from '../../release/store-types.js';
import { canonicalJson } from '../../release/canonical-json.js';
import { releaseListEntries } from '../../release/history.js';
import { orderRelease } from '../../release/record-order.js';
import { redactArgv } from '../../release/redact.js';
import { redactStackSpec, showMasks } from '../../release/spec-diff.js';
import { describeHolder, unlockRelease } from '../../release/recorder.js';
import { isRunningPhase } from '../../release/types.js';

/** What the app needs from the rest of the server. */
export interface AppContext {
  readonly store: RunStore;
  readonly releases: ReleaseStore;
  readonly projects: ProjectRegistry;
  readonly auth: Authenticator;
  readonly limits: ServerLimits;
  /** The address it listens on (a server without tokens also answers `Host: <this>:<port>` when it is loopback). */
  readonly listenHost: string;
  /** Whether the backend answers (for /readyz). */
  readonly ready: () => Promise<boolean>;
  /** Whether the server is stopping (no new runs are accepted). */
  readonly stopping: () => boolean;
  /** The SSE keep-alive interval (ms). */
  readonly keepAliveMs?: number;
  /** Where the web page's files are (a directory with index.html), if built. */
  readonly webRoot?: URL;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
  }
  interface FastifyContextConfig {
    /** The least role a route needs; routes without it need no token. */
    role?: Role;
  }
}

const idParams = z.object({ id: runIdSchema });
const stackParams = z.object({ p: nameSchema, s: nameSchema });
const problemResponses = {
  400: problemSchema,
  401: problemSchema,
  403: problemSchema,
  404: problemSchema,
  409: problemSchema,
  415: problemSchema,
  421: problemSchema,
  429: problemSchema,
  503: problemSchema,
};

/**
 * A run as the API shows it. A run read as queued may have been claimed before its queue position was computed:
 * then it is read again, so a queued run always has a position (except in the feed's past status entries).
 */
export async function apiRun(store: RunStore, run: StoredRun, options: { snapshot?: boolean } = {}): Promise<Run> {
  let queue = await store.queueInfo(run);
  if (!options.snapshot && run.status === 'queued' && queue.queuePosition === null) {
    run = (await store.get(run.id)) ?? run;
    queue = await store.queueInfo(run);
  }
  return {
    id: run.id,
    type: run.type,
    project: run.project,
    stack: run.stack,
    status: run.status,
    createdBy: run.createdBy,
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    queuePosition: queue.queuePosition,
    blockedBy: queue.blockedBy,
    releaseRevision: run.releaseRevision,
    error: run.error,
    options: run.options,
    actions: { cancelable: run.status === 'queued' || (run.status === 'running' && !run.cancelRequested) },
  };
}

/** The selectors of a run within the server's limits (a 400 naming the field otherwise). */
function checkSelectors(body: { include?: string[]; exclude?: string[] }, limits: ServerLimits): void {
  const count = (body.include?.length ?? 0) + (body.exclude?.length ?? 0);
  if (count > limits.maxSelectors) {
    throw invalid(
      body.include && body.include.length > 0 ? 'body.include' : 'body.exclude',
      `${count} selectors; a run takes at most ${limits.maxSelectors} (limits.max_selectors)`,
    );
  }
  for (const key of ['include', 'exclude'] as const) {
    (body[key] ?? []).forEach((selector, i) => {
      if (selector.length > limits.maxSelectorLength)
        throw invalid(
          `body.${key}.${i}`,
          `${selector.length} characters; a selector has at most ${limits.maxSelectorLength} (limits.max_selector_length)`,
        );
    });
  }
}

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

/** What a submit asked for, to compare a repeated `Idempotency-Key` with the request that first used it. */
function requestOf(run: Pick<StoredRun, 'type' | 'project' | 'stack' | 'options'>): unknown {
  return { type: run.type, project: run.project, stack: run.stack, options: run.options };
}

function sendProblem(reply: FastifyReply, problem: HttpProblem, instance: string): FastifyReply {
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

export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  // While closing, requests answer 503 problem+json (the onRequest hook below), not fastify's own format.
  const app = Fastify({ logger: false, bodyLimit: 1 << 20, return503OnClosing: false });
  // Event streams end when the server closes (else a client following a queued run would hold the stop up).
  const closing = new AbortController();
  /** When a request last met the backend unavailable: an outage is said once, not once per request. */
  let unavailableAt = -Infinity;
  app.addHook('preClose', (done) => {
    closing.abort();
    done();
  });
  // Before anything else: the security headers, the Host of a server without tokens, the Origin and body type of a
  // request that may change something (src/server/http/http-guard.ts).
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
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'kapps runs server', version: '1' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });

  app.setErrorHandler((error, request, reply) => {
    const instance = request.url.split('?')[0] ?? request.url;
    if (error instanceof HttpProblem) return sendProblem(reply, error, instance);
    if (hasZodFastifySchemaValidationErrors(error)) {
      const errors = error.validation.map((v) => ({
        field: fieldOf(error.validationContext, v.instancePath),
        message: v.message ?? 'invalid',
      }));
      const detail = errors.map((e) => `${e.field}: ${e.message}`).join('; ');
      return sendProblem(reply, new HttpProblem(400, 'invalid-request', detail, { errors }), instance);
    }
    if (isUnavailable(error)) {
      if (performance.now() - unavailableAt > OUTAGE_GAP_MS) {
        process.stderr.write(
          `kapps serve: the backend is unavailable (requests answer 503 until it is back): ${(error as Error).message}\n`,
        );
      }
      unavailableAt = performance.now();
      return sendProblem(reply, backendUnavailable(), instance);
    }
    const status = (error as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      // fastify's own: a body that is not JSON, too large, an unsupported media type.
      const slug = status in PROBLEM_SLUGS ? PROBLEM_SLUGS[status as keyof typeof PROBLEM_SLUGS] : 'invalid-request';
      const message = (error as Error).message || 'invalid request';
      return sendProblem(reply, new HttpProblem(status, slug, message), instance);
    }
    process.stderr.write(
      `kapps serve: internal error on ${request.method} ${instance}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return sendProblem(reply, new HttpProblem(500, 'internal', 'the server failed to answer this request'), instance);
  });

  app.setNotFoundHandler((request, reply) => {
    const instance = request.url.split('?')[0] ?? request.url;
    return sendProblem(reply, notFound(`no route ${request.method} ${instance}`), instance);
  });

  const rate = new RequestRate(ctx.limits.requestsPerMinute);
  // Authentication and roles: each API route names the least role it needs.
  app.addHook('onRequest', (request, _reply, done) => {
    if (closing.signal.aborted) {
      return done(
        new HttpProblem(503, 'unavailable', 'the server is stopping', {
          headers: { 'retry-after': String(RETRY_AFTER_SECONDS), connection: 'close' },
        }),
      );
    }
    const role = request.routeOptions.config.role;
    if (role === undefined) return done();
    const caller = ctx.auth.identify(request.headers.authorization);
    if (!caller) {
      return done(
        new HttpProblem(
          401,
          'unauthorized',
          request.headers.authorization ? 'the bearer token is not valid' : 'send `Authorization: Bearer <token>`',
          { headers: { 'www-authenticate': 'Bearer realm="kapps"' } },
        ),
      );
    }
    if (!allows(caller.role, role)) {
      return done(new HttpProblem(403, 'forbidden', `${caller.name} has role ${caller.role}; this needs ${role}`));
    }
    request.caller = caller;
    // Requests per token and minute (with tokens; a server without them has one caller, on loopback).
    if (!ctx.auth.open) {
      const wait = rate.take(caller.name);
      if (wait > 0) {
        return done(
          new HttpProblem(
            429,
            'rate-limited',
            `${caller.name} sent more than ${ctx.limits.requestsPerMinute} requests in a minute (limits.requests_per_minute)`,
            { headers: { 'retry-after': String(wait) } },
          ),
        );
      }
    }
    done();
  });

  const api = app.withTypeProvider<ZodTypeProvider>();
  const callerOf = (request: FastifyRequest): Caller => {
    if (!request.caller) throw new HttpProblem(401, 'unauthorized', 'no caller');
    return request.caller;
  };
  /** A run the caller may reach (a run of a project its token is not limited to is not found). */
  const runOr404 = async (request: FastifyRequest, id: string): Promise<StoredRun> => {
    const run = await ctx.store.get(id);
    if (!run || !reaches(callerOf(request), run.project)) throw notFound(`no run ${id}`);
    return run;
  };
  /** The caller's token must reach project `p` (403 before anything says whether it exists). */
  const projectAllowed = (request: FastifyRequest, p: string): void => {
    const caller = callerOf(request);
    if (!reaches(caller, p))
      throw new HttpProblem(
        403,
        'forbidden',
        `${caller.name} may not reach project ${p} (${(caller.projects ?? []).join(', ')})`,
      );
  };
  const stackOr404 = (request: FastifyRequest, p: string, s: string): void => {
    projectAllowed(request, p);
    if (!ctx.projects.get(p)) throw notFound(`no project ${p}`);
    if (!ctx.projects.stacks(p).includes(s)) throw notFound(`project ${p} has no stack ${s}`);
  };

  api.get('/healthz', { schema: { hide: true } }, () => ({ status: 'ok' }));
  api.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    if (ctx.stopping()) throw new HttpProblem(503, 'unavailable', 'the server is stopping');
    if (!(await ctx.ready())) throw new HttpProblem(503, 'unavailable', 'the backend does not answer');
    return reply.send({ status: 'ready' });
  });

  api.get(
    '/api/v1/whoami',
    { config: { role: 'read' }, schema: { response: { 200: whoamiSchema, ...problemResponses } } },
    (request) => {
      const caller = callerOf(request);
      return { name: caller.name, role: caller.role, ...(caller.projects ? { projects: [...caller.projects] } : {}) };
    },
  );

  api.post(
    '/api/v1/runs',
    {
      config: { role: 'read' },
      schema: {
        body: submitRunSchema,
        headers: z.object({ 'idempotency-key': z.string().min(1).max(200).optional() }).passthrough(),
        response: { 202: runSchema, 200: runSchema, ...problemResponses },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const body = request.body;
      const needed: Role = body.type === 'generate' || body.type === 'preview' ? 'plan' : 'apply';
      if (!allows(caller.role, needed))
        throw new HttpProblem(
          403,
          'forbidden',
          `${caller.name} has role ${caller.role}; a ${body.type} run needs ${needed}`,
        );
      projectAllowed(request, body.project);
      checkSelectors(body, ctx.limits);
      if (ctx.stopping()) throw new HttpProblem(503, 'unavailable', 'the server is stopping');
      if (!ctx.projects.get(body.project))
        throw invalid('body.project', `no project \`${body.project}\` is registered`);
      if (!ctx.projects.stacks(body.project).includes(body.stack))
        throw invalid('body.stack', `project \`${body.project}\` has no stack \`${body.stack}\``);
      // Only cheap facts here: whether the preview is still what it showed is checked by the run itself, in the
      // stack's turn (it then fails as a stale preview, nothing applied).
      let previewOptions: RunRequestOptions | undefined;
      if (body.previewRunId !== undefined) {
        if (body.type !== 'apply') throw invalid('body.previewRunId', 'only an apply run may name a preview run');
        for (const field of ['include', 'exclude', 'parents', 'overrides'] as const) {
          if (body[field] !== undefined)
            throw invalid(`body.${field}`, "an apply of a preview run takes the preview's selection and overrides");
        }
        const preview = await ctx.store.get(body.previewRunId);
        if (!preview || preview.type !== 'preview')
          throw invalid('body.previewRunId', `no preview run ${body.previewRunId}`);
        if (preview.project !== body.project || preview.stack !== body.stack)
          throw invalid('body.previewRunId', `preview run ${preview.id} is of ${preview.project}/${preview.stack}`);
        if (preview.status !== 'succeeded')
          throw new HttpProblem(409, 'conflict', `preview run ${preview.id} is ${preview.status}, not succeeded`);
        // A preview stored by an older server may hold what requests may no longer send: it is not applied.
        const checked = runOptionsSchema.safeParse(preview.options);
        if (!checked.success) {
          const issue = checked.error.issues[0];
          throw new HttpProblem(
            409,
            'conflict',
            `preview run ${preview.id} has options no request may send (${issue ? `${issue.path.join('.')}: ${issue.message}` : 'invalid'}); nothing was queued`,
          );
        }
        previewOptions = checked.data;
      }
      const { type, project, stack, ...given } = body;
      // An apply of a preview runs with the preview's selection and overrides, and records them as its own.
      const options = previewOptions ? { ...given, ...previewSelection(previewOptions) } : given;
      const key = request.headers['idempotency-key'];
      const outcome = await ctx.store.submit(
        { type, project, stack, createdBy: caller.name, options },
        {
          maxQueuedPerStack: ctx.limits.maxQueuedPerStack,
          maxQueuedTotal: ctx.limits.maxQueuedTotal,
          ...(typeof key === 'string' ? { idempotencyKey: key } : {}),
        },
      );
      if (outcome.kind === 'full') {
        throw new HttpProblem(
          429,
          'queue-full',
          outcome.scope === 'stack'
            ? `${project}/${stack} has ${ctx.limits.maxQueuedPerStack} queued runs already`
            : `the server has ${ctx.limits.maxQueuedTotal} queued runs already`,
          { headers: { 'retry-after': String(outcome.retryAfterSeconds) } },
        );
      }
      if (
        outcome.kind === 'existing' &&
        canonicalJson(requestOf(outcome.run)) !== canonicalJson(requestOf({ type, project, stack, options }))
      ) {
        throw new HttpProblem(
          409,
          'conflict',
          `Idempotency-Key ${JSON.stringify(key)} was used for another request (run ${outcome.run.id}); use a new key for a new run`,
        );
      }
      void reply.header('location', `/api/v1/runs/${outcome.run.id}`);
      return reply.code(outcome.kind === 'created' ? 202 : 200).send(await apiRun(ctx.store, outcome.run));
    },
  );

  api.get(
    '/api/v1/runs',
    {
      config: { role: 'read' },
      schema: { querystring: runListQuerySchema, response: { 200: runListSchema, ...problemResponses } },
    },
    async (request) => {
      const query = request.query;
      const caller = callerOf(request);
      if (query.project !== undefined) projectAllowed(request, query.project);
      const page = await ctx.store.list({
        ...query,
        limit: query.limit ?? 50,
        ...(caller.projects ? { projects: caller.projects } : {}),
      });
      // One answer stays within max_list_bytes: a page that would be larger is cut, its cursor after the last run
      // shown.
      const runs: Run[] = [];
      let bytes = 0;
      for (const stored of page.runs) {
        const shown = await apiRun(ctx.store, stored);
        bytes += Buffer.byteLength(JSON.stringify(shown)) + 1;
        if (runs.length > 0 && bytes > ctx.limits.maxListBytes) {
          return { runs, nextCursor: encodeRunCursor(page.runs[runs.length - 1]!.seq) };
        }
        runs.push(shown);
      }
      return { runs, nextCursor: page.nextCursor };
    },
  );

  api.get(
    '/api/v1/runs/:id',
    { config: { role: 'read' }, schema: { params: idParams, response: { 200: runSchema, ...problemResponses } } },
    async (request) => apiRun(ctx.store, await runOr404(request, request.params.id)),
  );

  api.get(
    '/api/v1/runs/:id/result',
    {
      config: { role: 'read' },
      schema: {
        params: idParams,
        response: { 200: z.union([applyResultSchema, z.string(), z.unknown()]), ...problemResponses },
      },
    },
    async (request, reply) => {
      const run = await runOr404(request, request.params.id);
      if (!FINAL_RUN_STATES.includes(run.status))
        throw new HttpProblem(409, 'not-finished', `run ${run.id} is ${run.status}`);
      const result = await ctx.store.getResult(run.id);
      if (!result) throw notFound(`run ${run.id} (${run.status}) has no result`);
      return reply
        .type(result.contentType)
        .serializer((b: unknown) => b as string)
        .send(result.body);
    },
  );

  api.get(
    '/api/v1/runs/:id/logs',
    {
      config: { role: 'read' },
      schema: {
        params: idParams,
        querystring: z.object({ offset: z.coerce.number().int().min(0).optional() }).strict(),
        response: { 200: logChunkSchema, ...problemResponses },
      },
    },
    async (request) => {
      const run = await runOr404(request, request.params.id);
      const offset = request.query.offset ?? 0;
      const finished = FINAL_RUN_STATES.includes(run.status);
      const { lines, nextOffset } = await ctx.store.readLog(run.id, offset, ctx.limits.maxLogAnswerBytes);
      let complete = false;
      if (finished) {
        // Complete when nothing follows: one more read past what was returned says so.
        const more = await ctx.store.readLog(run.id, nextOffset, 1);
        complete = more.lines.length === 0;
      }
      return { offset, nextOffset, lines, complete };
    },
  );

  api.get(
    '/api/v1/runs/:id/events',
    {
      config: { role: 'read' },
      schema: {
        params: idParams,
        querystring: z.object({ after: z.coerce.number().int().min(0).optional() }).strict(),
        headers: z
          .object({
            'last-event-id': z
              .string()
              .regex(/^[0-9]{1,15}$/)
              .optional(),
          })
          .passthrough(),
      },
    },
    async (request, reply) => {
      const run = await runOr404(request, request.params.id);
      const header = request.headers['last-event-id'];
      const after = typeof header === 'string' ? Number(header) : (request.query.after ?? 0);
      reply.hijack();
      await streamRunEvents({
        store: ctx.store,
        runId: run.id,
        after,
        request: request.raw,
        response: reply.raw,
        keepAliveMs: ctx.keepAliveMs ?? 15_000,
        toApi: (r) => apiRun(ctx.store, r, { snapshot: true }),
        closing: closing.signal,
      });
    },
  );

  api.post(
    '/api/v1/runs/:id/cancel',
    { config: { role: 'apply' }, schema: { params: idParams, response: { 200: runSchema, ...problemResponses } } },
    async (request) => {
      const caller = callerOf(request);
      const run = await runOr404(request, request.params.id);
      if (FINAL_RUN_STATES.includes(run.status))
        throw new HttpProblem(409, 'conflict', `run ${run.id} is ${run.status} already`);
      const changed = await ctx.store.requestCancel(run.id, caller.name);
      if (!changed) throw notFound(`no run ${run.id}`);
      return apiRun(ctx.store, changed);
    },
  );

  api.get(
    '/api/v1/projects',
    { config: { role: 'read' }, schema: { response: { 200: projectListSchema, ...problemResponses } } },
    (request) => ({
      projects: ctx.projects
        .list()
        .filter((p) => reaches(callerOf(request), p.name))
        .map((p) => ({ name: p.name, stacks: ctx.projects.stacks(p.name) })),
    }),
  );

  api.get(
    '/api/v1/projects/:p/stacks/:s',
    {
      config: { role: 'read' },
      schema: { params: stackParams, response: { 200: stackSummarySchema, ...problemResponses } },
    },
    async (request) => {
      const { p, s } = request.params;
      stackOr404(request, p, s);
      const latest = await ctx.releases.latest(ctx.projects.releaseProject(p), s);
      const active = await ctx.store.active(p, s);
      const running = await Promise.all(active.filter((r) => r.status === 'running').map((r) => apiRun(ctx.store, r)));
      const queued = await Promise.all(active.filter((r) => r.status === 'queued').map((r) => apiRun(ctx.store, r)));
      const lock =
        latest && isRunningPhase(latest.phase)
          ? (() => {
              const holder = describeHolder(latest, new Date());
              return {
                revision: latest.revision,
                operation: latest.operation,
                phase: latest.phase,
                owner: latest.owner,
                since: latest.createdAt,
                ownerLooksDead: holder.looksDead ? holder.text : null,
              };
            })()
          : null;
      return {
        project: p,
        stack: s,
        latestRelease: latest
          ? {
              revision: latest.revision,
              operation: latest.operation,
              phase: latest.phase,
              createdAt: latest.createdAt,
              modifiedAt: latest.modifiedAt,
              owner: latest.owner,
            }
          : null,
        lock,
        running,
        queued,
      };
    },
  );

  const releasePages = new ReleasePages(ctx.releases);
  api.get(
    '/api/v1/projects/:p/stacks/:s/releases',
    {
      config: { role: 'read' },
      schema: {
        params: stackParams,
        querystring: releaseListQuerySchema,
        response: { 200: z.union([releasePageSchema, z.array(releaseListEntrySchema)]), ...problemResponses },
      },
    },
    async (request) => {
      const { p, s } = request.params;
      const { limit, cursor } = request.query;
      stackOr404(request, p, s);
      const project = ctx.projects.releaseProject(p);
      if (limit === undefined && cursor === undefined) return releaseListEntries(await ctx.releases.list(project, s));
      return releasePages.page(project, s, limit ?? 50, cursor === undefined ? null : Number(cursor));
    },
  );

  api.get(
    '/api/v1/projects/:p/stacks/:s/releases/:rev',
    {
      config: { role: 'read' },
      schema: { params: stackParams.extend({ rev: z.coerce.number().int().min(1) }) },
    },
    async (request) => {
      const { p, s, rev } = request.params;
      stackOr404(request, p, s);
      const release = await ctx.releases.get(ctx.projects.releaseProject(p), s, rev);
      if (!release) throw notFound(`${p}/${s} has no release ${rev}`);
      // Secrets are recorded as keyed masks, answered as `(sensitive)`; values named as secrets in older records are
      // masked as in a preview.
      return orderRelease({
        ...release,
        command: redactArgv(release.command),
        spec: redactStackSpec(showMasks(release.spec, null)),
      });
    },
  );

  api.post(
    '/api/v1/projects/:p/stacks/:s/unlock',
    { config: { role: 'admin' }, schema: { params: stackParams } },
    async (request) => {
      const caller = callerOf(request);
      const { p, s } = request.params;
      stackOr404(request, p, s);
      const result = await unlockRelease({
        store: ctx.releases,
        project: ctx.projects.releaseProject(p),
        stack: s,
        by: `${caller.name} (kapps serve)`,
      });
      if (!result.unlocked) throw new HttpProblem(409, 'conflict', result.message);
      return {
        unlocked: true,
        revision: result.release.revision,
        previousPhase: result.previousPhase,
        holder: result.holder.text,
        by: caller.name,
      };
    },
  );

  app.get('/api/v1/openapi.json', { schema: { hide: true } }, () => app.swagger());

  if (ctx.webRoot) await registerWebFiles(app, ctx.webRoot);
  return app;
}
