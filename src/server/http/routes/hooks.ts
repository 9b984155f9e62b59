/**
 * Webhooks: `POST /hooks/github` and `POST /hooks/gitlab`. No bearer token: a delivery is authenticated by the
 * secret of the projects it is for (GitHub's signature of the raw body, GitLab's token), and acts only on those
 * projects whose repository is the payload's. A delivery already acted on (its id) queues nothing again.
 */
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import * as z from 'zod';
import { problemSchema, runSchema } from '../../../api/index.js';
import { apiRun } from '../presenters.js';
import { problemResponses, type RouteContext } from '../context.js';
import { HttpProblem, invalid } from '../problems.js';
import type { ProjectEntry } from '../../config.js';
import { RepositoryError, UnknownRefError } from '../../sources/repository.js';
import {
  MalformedPayload,
  normaliseRepoUrl,
  parseGithub,
  parseGitlab,
  type ParsedDelivery,
  type TriggerEvent,
} from '../../triggers/payload.js';
import { queueRuns, type Queued } from '../../triggers/queue-runs.js';
import { githubSignatureValid, gitlabTokenValid } from '../../triggers/signature.js';

/** A delivery's body at the most (GitHub caps its payloads at 25 MB; pushes kapps acts on are far smaller). */
export const MAX_HOOK_BYTES = 5 * 1024 * 1024;
/** How long a delivery may wait for the repository to be fetched (hosts give up after ~10 s and redeliver). */
const HOOK_FETCH_MS = 60_000;
const MAX_ID_LENGTH = 200;

type Host = 'github' | 'gitlab';

/** What a delivery queued (`queued`), or why it queued nothing (`ignored`, `duplicate`). */
const hookAnswerSchema = z.object({
  status: z.enum(['queued', 'ignored', 'duplicate']),
  delivery: z.string(),
  reason: z.string().optional(),
  runs: z.array(runSchema),
  /** Stacks whose run the queue's limits refused. */
  refused: z.array(z.object({ stack: z.string(), reason: z.string() })).optional(),
});
type HookAnswer = z.infer<typeof hookAnswerSchema>;

declare module 'fastify' {
  interface FastifyRequest {
    /** A webhook's body as received (its signature is of these bytes). */
    hookBody?: Buffer;
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** The projects whose webhook secret verifies this delivery. */
function verified(ctx: RouteContext, host: Host, request: FastifyRequest, body: Buffer): ProjectEntry[] {
  const secrets = ctx.triggers?.secrets;
  if (!secrets) return [];
  return ctx.projects.list().filter((project) => {
    const secret = secrets.get(project.name);
    if (secret === undefined) return false;
    return host === 'github'
      ? githubSignatureValid(secret, body, header(request, 'x-hub-signature-256'))
      : gitlabTokenValid(secret, header(request, 'x-gitlab-token'));
  });
}

/** The delivery's id (`X-GitHub-Delivery`, `X-Gitlab-Event-UUID`), required. */
function deliveryId(host: Host, request: FastifyRequest): string {
  const name = host === 'github' ? 'x-github-delivery' : 'x-gitlab-event-uuid';
  const id = header(request, name);
  if (id === undefined || id === '' || id.length > MAX_ID_LENGTH || !/^[\x21-\x7e]+$/.test(id))
    throw invalid(
      `headers.${name}`,
      `a delivery needs \`${name}\`: its id (printable, at most ${MAX_ID_LENGTH} characters)`,
    );
  return id;
}

function parse(host: Host, request: FastifyRequest, body: Buffer): ParsedDelivery {
  const name = host === 'github' ? 'x-github-event' : 'x-gitlab-event';
  const event = header(request, name);
  if (event === undefined || event === '') throw invalid(`headers.${name}`, `a delivery needs \`${name}\``);
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    throw invalid('body', 'is not JSON');
  }
  try {
    return host === 'github' ? parseGithub(event.slice(0, 100), payload) : parseGitlab(event.slice(0, 100), payload);
  } catch (error) {
    if (error instanceof MalformedPayload) throw invalid(`body.${error.field}`, error.message);
    throw error;
  }
}

/** The branch a project's pushes count on: its `repo.branch`, else the repository's default branch. */
function trackedBranch(project: ProjectEntry, event: TriggerEvent): string | undefined {
  return project.repo?.branch ?? event.defaultBranch;
}

/** Of the verified projects, those the event is for: the same repository, and for a push their branch. */
function concerned(projects: readonly ProjectEntry[], event: TriggerEvent): { projects: ProjectEntry[]; why?: string } {
  const urls = new Set(event.urls.map(normaliseRepoUrl));
  const same = projects.filter((p) => p.repo && urls.has(normaliseRepoUrl(p.repo.url)));
  if (same.length === 0)
    return { projects: [], why: 'no project with this secret is of the repository the delivery is about' };
  if (event.kind !== 'push') return { projects: same };
  const tracking = same.filter((p) => trackedBranch(p, event) === event.branch);
  if (tracking.length === 0)
    return { projects: [], why: `a push to ${event.ref}: no project of this repository tracks branch ${event.branch}` };
  return { projects: tracking };
}

/**
 * Queue the runs of `event` for each project not yet acted on for this delivery (its id is recorded per project, so
 * a redelivery after a failure acts only on the projects that failed). A project whose repository cannot be fetched
 * is forgotten again and makes the answer a 503 (after the others are queued): the host delivers again.
 */
async function queueAll(
  ctx: RouteContext,
  host: Host,
  projects: readonly ProjectEntry[],
  event: TriggerEvent,
  id: string,
): Promise<Queued | undefined> {
  const store = ctx.triggers!.store;
  const all: Queued = { runs: [], refused: [] };
  const signal = AbortSignal.timeout(HOOK_FETCH_MS);
  let acted = false;
  let failure: Error | undefined;
  for (const project of projects) {
    const key = `${host}:${id}:${project.name}`;
    if (!(await store.claimDelivery(key))) continue;
    acted = true;
    try {
      const queued = await queueRuns(
        ctx,
        project,
        {
          kind: event.kind,
          ref: event.ref,
          sha: event.sha,
          shownRef: event.branch ?? event.ref,
          delivery: id,
          createdBy: `webhook:${host}`,
        },
        signal,
      );
      all.runs.push(...queued.runs);
      all.refused.push(...queued.refused.map((r) => ({ ...r, stack: `${project.name}/${r.stack}` })));
    } catch (error) {
      await store.forgetDelivery(key).catch(() => undefined);
      failure ??= error instanceof Error ? error : new Error(String(error));
    }
  }
  if (failure !== undefined) {
    if (failure instanceof UnknownRefError)
      throw invalid(event.kind === 'push' ? 'body.after' : 'body.pull_request.head.sha', failure.message);
    if (failure instanceof RepositoryError) throw new HttpProblem(503, 'unavailable', failure.message);
    throw failure;
  }
  return acted ? all : undefined;
}

async function handle(
  ctx: RouteContext,
  host: Host,
  request: FastifyRequest,
): Promise<{ status: 200 | 202; body: HookAnswer }> {
  const body = request.hookBody ?? Buffer.alloc(0);
  const projects = verified(ctx, host, request, body);
  if (projects.length === 0)
    throw new HttpProblem(
      401,
      'unauthorized',
      host === 'github'
        ? '`X-Hub-Signature-256` is not the signature of this body by the webhook secret of any project'
        : '`X-Gitlab-Token` is not the webhook secret of any project',
    );
  const id = deliveryId(host, request);
  const parsed = parse(host, request, body);
  if (parsed.kind === 'ignored')
    return { status: 202, body: { status: 'ignored', delivery: id, reason: parsed.reason, runs: [] } };
  const { projects: acting, why } = concerned(projects, parsed.event);
  if (acting.length === 0) return { status: 202, body: { status: 'ignored', delivery: id, reason: why, runs: [] } };
  if (ctx.stopping()) throw new HttpProblem(503, 'unavailable', 'the server is stopping');
  const queued = await queueAll(ctx, host, acting, parsed.event, id);
  if (!queued)
    return {
      status: 200,
      body: { status: 'duplicate', delivery: id, reason: `delivery ${id} was acted on before`, runs: [] },
    };
  const runs = await Promise.all(queued.runs.map((run) => apiRun(ctx.store, run)));
  return { status: 202, body: { status: 'queued', delivery: id, runs, refused: queued.refused } };
}

export const hookRoutes =
  (ctx: RouteContext): FastifyPluginCallbackZod =>
  (app, _options, done) => {
    // The raw bytes, as signed: GitHub's signature is of the body exactly as sent.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: MAX_HOOK_BYTES },
      (request, body, next) => {
        request.hookBody = typeof body === 'string' ? Buffer.from(body) : body;
        next(null, undefined);
      },
    );
    for (const host of ['github', 'gitlab'] as const) {
      app.post(
        `/api/v1/hooks/${host}`,
        {
          bodyLimit: MAX_HOOK_BYTES,
          schema: {
            summary:
              host === 'github'
                ? "A GitHub webhook delivery (push, pull_request), signed with a project's webhook secret (X-Hub-Signature-256)"
                : "A GitLab webhook delivery (Push Hook, Merge Request Hook) with a project's webhook secret (X-Gitlab-Token)",
            security: [],
            response: { 200: hookAnswerSchema, 202: hookAnswerSchema, 413: problemSchema, ...problemResponses },
          },
        },
        async (request, reply) => {
          const { status, body } = await handle(ctx, host, request);
          return reply.code(status).type('application/json').send(body);
        },
      );
    }
    done();
  };
