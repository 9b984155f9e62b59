/** Runs: submit (`POST /runs`), list, show, result and cancel. */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import type { FastifyRequest } from 'fastify';
import * as z from 'zod';
import {
  applyResultSchema,
  DEFAULT_PAGE_LIMIT,
  FINAL_RUN_STATES,
  previewSelection,
  runListQuerySchema,
  runListSchema,
  runOptionsSchema,
  runSchema,
  submitRunSchema,
  type Role,
  type Run,
  type RunCommit,
  type RunRequestOptions,
  type RunTrigger,
  type SubmitRun,
} from '../../../api/index.js';
import { canonicalJson } from '../../../release/canonical-json.js';
import type { ServerLimits } from '../../config.js';
import { encodeRunCursor } from '../../queue/policy.js';
import type { StoredRun, SubmitOutcome } from '../../queue/run-store.js';
import { RUN_KINDS } from '../../runs/run-plan.js';
import { allows, type Caller } from '../auth.js';
import { callerOf, idParams, problemResponses, projectAllowed, runOr404, type RouteContext } from '../context.js';
import { apiRun } from '../presenters.js';
import { HttpProblem, invalid, notFound } from '../problems.js';
import { RepositoryError, runCommit, UnknownRefError } from '../../sources/repository.js';
import { gatedSubmission } from './approvals.js';
import { checkRollbackOptions, checkRollbackPreview, rollbackTarget, type RollbackTarget } from './rollback-submit.js';

/** How long a submit may wait for its project's repository to be fetched. */
const SUBMIT_FETCH_MS = 120_000;

/** A result: an apply's JSON, or the text a generate or preview wrote. */
const resultResponses = { 200: z.union([applyResultSchema, z.string(), z.unknown()]), ...problemResponses };
const submitHeaders = z.object({ 'idempotency-key': z.string().min(1).max(200).optional() }).passthrough();

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

/** What a submit asked for: its type, stack, options and the ref it named (null: the project's branch). */
type AskedRun = Pick<StoredRun, 'type' | 'project' | 'stack' | 'options'> & { readonly ref: string | null };

/**
 * What a submit asked for, to compare a repeated `Idempotency-Key` with the request that first used it: the ref as
 * asked (a retry after the branch moved is the same request, and answers the run made at the first commit).
 */
function requestOf(run: AskedRun): unknown {
  return { type: run.type, project: run.project, stack: run.stack, options: run.options, ref: run.ref };
}

/** A stored run as `requestOf` compares it (the ref a client asked for is kept in its trigger). */
function askedOf(run: StoredRun): AskedRun {
  return {
    type: run.type,
    project: run.project,
    stack: run.stack,
    options: run.options,
    ref: run.trigger?.ref ?? null,
  };
}

/** A submit the caller may make, of a registered project, within the limits, while the server takes runs. */
function checkSubmit(ctx: RouteContext, request: FastifyRequest, body: SubmitRun): void {
  const caller = callerOf(request);
  // The role its type's plan names (plan: generate, preview, drift; apply: apply, destroy, rollback).
  const needed: Role = RUN_KINDS[body.type].role;
  if (!allows(caller.role, needed))
    throw new HttpProblem(
      403,
      'forbidden',
      `${caller.name} has role ${caller.role}; a ${body.type} run needs ${needed}`,
    );
  projectAllowed(request, body.project);
  checkSelectors(body, ctx.limits);
  checkRollbackOptions(body);
  if (ctx.stopping()) throw new HttpProblem(503, 'unavailable', 'the server is stopping');
  const project = ctx.projects.get(body.project);
  if (!project) throw invalid('body.project', `no project \`${body.project}\` is registered`);
  if (body.ref !== undefined && !project.repo)
    throw invalid(
      'body.ref',
      `project \`${body.project}\` is a stack file on the server: it has no branches or commits`,
    );
  if (body.ref !== undefined && body.previewRunId !== undefined)
    throw invalid('body.ref', "an apply of a preview run works at the preview's commit");
}

/**
 * The commit a run works at, resolved now (a project from git): the preview's for an apply of a preview, else `ref`
 * or the project's branch. A ref git cannot find is a 400 naming `body.ref`; a repository that cannot be fetched a
 * 503. The stack must be in the stack file at that commit.
 */
async function commitOf(
  ctx: RouteContext,
  body: SubmitRun,
  preview: StoredRun | undefined,
  signal: AbortSignal,
  target?: RollbackTarget,
): Promise<RunCommit | null> {
  const project = ctx.projects.get(body.project);
  let commit: RunCommit | null = null;
  if (preview) commit = preview.commit ?? null;
  else if (project?.repo) {
    try {
      const resolved = await ctx.projects.resolve(body.project, target?.commit ?? body.ref, signal);
      commit = runCommit(project.repo.url, resolved);
      // A rollback runs at the commit its target recorded (else, to be refused or forced, at the branch).
      if (target?.commit !== undefined) commit = { ...commit, ref: `revision ${target.revision}` };
    } catch (error) {
      if (error instanceof UnknownRefError) throw invalid('body.ref', error.message);
      if (error instanceof RepositoryError) throw new HttpProblem(503, 'unavailable', error.message);
      throw error;
    }
  }
  const stacks = await ctx.projects.stacks(body.project, commit?.sha);
  if (!stacks.includes(body.stack))
    throw invalid(
      'body.stack',
      `project \`${body.project}\` has no stack \`${body.stack}\`${commit ? ` at ${commit.sha.slice(0, 12)} (${commit.ref})` : ''}`,
    );
  return commit;
}

/**
 * The options of the preview an apply names (`previewRunId`), checked for cheap facts only: whether the preview is
 * still what it showed is checked by the run itself, in the stack's turn (it then fails as a stale preview).
 */
async function previewOf(
  ctx: RouteContext,
  body: SubmitRun,
): Promise<{ preview: StoredRun; options: RunRequestOptions } | undefined> {
  if (body.previewRunId === undefined) return undefined;
  if (body.type !== 'apply' && body.type !== 'rollback')
    throw invalid('body.previewRunId', 'only an apply or a rollback run may name a preview run');
  for (const field of ['include', 'exclude', 'parents', 'overrides'] as const) {
    if (body[field] !== undefined)
      throw invalid(`body.${field}`, "an apply of a preview run takes the preview's selection and overrides");
  }
  const preview = await ctx.store.get(body.previewRunId);
  if (!preview || preview.type !== 'preview') throw invalid('body.previewRunId', `no preview run ${body.previewRunId}`);
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
  checkRollbackPreview(body, preview.id, checked.data);
  return { preview, options: checked.data };
}

/** A full queue (429) or a reused `Idempotency-Key` of another request (409); else the run submitted. */
function submitted(
  ctx: RouteContext,
  outcome: SubmitOutcome,
  asked: AskedRun,
  key: string | undefined,
): Exclude<SubmitOutcome, { kind: 'full' }> {
  if (outcome.kind === 'full') {
    throw new HttpProblem(
      429,
      'queue-full',
      outcome.scope === 'stack'
        ? `${asked.project}/${asked.stack} has ${ctx.limits.maxQueuedPerStack} queued runs already`
        : `the server has ${ctx.limits.maxQueuedTotal} queued runs already`,
      { headers: { 'retry-after': String(outcome.retryAfterSeconds) } },
    );
  }
  if (
    outcome.kind === 'existing' &&
    canonicalJson(requestOf(askedOf(outcome.run))) !== canonicalJson(requestOf(asked))
  ) {
    throw new HttpProblem(
      409,
      'conflict',
      `Idempotency-Key ${JSON.stringify(key)} was used for another request (run ${outcome.run.id}); use a new key for a new run`,
    );
  }
  return outcome;
}

/** `POST /runs`: the run created, or the one an earlier request with the same `Idempotency-Key` created. */
async function submit(
  ctx: RouteContext,
  request: FastifyRequest<{ Body: SubmitRun }>,
): Promise<Exclude<SubmitOutcome, { kind: 'full' }>> {
  const body = request.body;
  checkSubmit(ctx, request, body);
  const approved = await previewOf(ctx, body);
  const signal = AbortSignal.timeout(SUBMIT_FETCH_MS);
  const { type, project, stack, ref, ...given } = body;
  // An apply of a preview runs with the preview's selection and overrides (and commit), and records them as its own.
  let options = approved ? { ...given, ...previewSelection(approved.options) } : given;
  // A rollback (or its preview) names its target now: -1 becomes the revision it means, at that revision's commit.
  const target = approved ? undefined : await rollbackTarget(ctx, body);
  if (target) options = { ...options, toRevision: target.revision };
  const commit = await commitOf(ctx, body, approved?.preview, signal, target);
  const trigger: RunTrigger = { kind: 'api', delivery: null, ref: ref ?? null };
  const header = request.headers['idempotency-key'];
  const key = typeof header === 'string' ? header : undefined;
  const caller = callerOf(request);
  const outcome = await ctx.store.submit(
    gatedSubmission(ctx, { type, project, stack, createdBy: caller.name, options, commit, trigger }, caller),
    {
      maxQueuedPerStack: ctx.limits.maxQueuedPerStack,
      maxQueuedTotal: ctx.limits.maxQueuedTotal,
      ...(key !== undefined ? { idempotencyKey: key } : {}),
    },
  );
  return submitted(ctx, outcome, { type, project, stack, options, ref: ref ?? null }, key);
}

/** One page of runs within max_list_bytes: a page that would be larger is cut, its cursor after the last run shown. */
async function boundedPage(ctx: RouteContext, page: { runs: StoredRun[]; nextCursor: string | null }, caller: Caller) {
  const runs: Run[] = [];
  let bytes = 0;
  for (const stored of page.runs) {
    const shown = await apiRun(ctx.store, stored, { caller });
    bytes += Buffer.byteLength(JSON.stringify(shown)) + 1;
    if (runs.length > 0 && bytes > ctx.limits.maxListBytes) {
      return { runs, nextCursor: encodeRunCursor(page.runs[runs.length - 1]!.seq) };
    }
    runs.push(shown);
  }
  return { runs, nextCursor: page.nextCursor };
}

export const runRoutes =
  (ctx: RouteContext): FastifyPluginCallbackZod =>
  (app, _options, done) => {
    app.post(
      '/api/v1/runs',
      {
        config: { role: 'read' },
        schema: {
          body: submitRunSchema,
          headers: submitHeaders,
          response: { 202: runSchema, 200: runSchema, ...problemResponses },
        },
      },
      async (request, reply) => {
        const { kind, run } = await submit(ctx, request);
        void reply.header('location', `/api/v1/runs/${run.id}`);
        return reply
          .code(kind === 'created' ? 202 : 200)
          .send(await apiRun(ctx.store, run, { caller: callerOf(request) }));
      },
    );

    app.get(
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
          limit: query.limit ?? DEFAULT_PAGE_LIMIT,
          ...(caller.projects ? { projects: caller.projects } : {}),
        });
        return boundedPage(ctx, page, caller);
      },
    );

    app.get(
      '/api/v1/runs/:id',
      { config: { role: 'read' }, schema: { params: idParams, response: { 200: runSchema, ...problemResponses } } },
      async (request) =>
        apiRun(ctx.store, await runOr404(ctx, request, request.params.id), { caller: callerOf(request) }),
    );

    app.get(
      '/api/v1/runs/:id/result',
      {
        config: { role: 'read' },
        schema: { params: idParams, response: resultResponses },
      },
      async (request, reply) => {
        const run = await runOr404(ctx, request, request.params.id);
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

    app.post(
      '/api/v1/runs/:id/cancel',
      { config: { role: 'apply' }, schema: { params: idParams, response: { 200: runSchema, ...problemResponses } } },
      async (request) => {
        const caller = callerOf(request);
        const run = await runOr404(ctx, request, request.params.id);
        if (FINAL_RUN_STATES.includes(run.status))
          throw new HttpProblem(409, 'conflict', `run ${run.id} is ${run.status} already`);
        const changed = await ctx.store.requestCancel(run.id, caller.name);
        if (!changed) throw notFound(`no run ${run.id}`);
        return apiRun(ctx.store, changed, { caller });
      },
    );
    done();
  };
