/**
 * What the routes share: the server's parts (`AppContext`), what the app adds to them (`RouteContext`), the access
 * checks every resource makes (the caller, a run or stack it may reach) and the schemas of the parameters and error
 * answers the routes have in common.
 */
import type { FastifyRequest } from 'fastify';
import * as z from 'zod';
import { nameSchema, problemSchema, runIdSchema, type Role } from '../../api/index.js';
import type { ServerLimits } from '../config.js';
import type { ProjectRegistry } from '../projects.js';
import type { RunStore, StoredRun } from '../queue/run-store.js';
import type { ReleaseStore } from '../../release/store-types.js';
import type { TriggerStore } from '../triggers/trigger-store.js';
import type { Outbox } from '../notify/outbox.js';
import type { DriftStore } from '../drift/drift-store.js';
import { reaches, type Authenticator, type Caller } from './auth.js';
import { HttpProblem, notFound } from './problems.js';

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
  /** Webhooks: the delivery ids seen, and each project's webhook secret (by project name). */
  readonly triggers?: { readonly store: TriggerStore; readonly secrets: ReadonlyMap<string, string> };
  /** The outbox of outbound notifications (a run's deliveries). */
  readonly outbox?: Outbox;
  /** What the server keeps of each stack's drift checks. */
  readonly drift?: DriftStore;
}

/** The server's parts, and what the app adds for its routes. */
export interface RouteContext extends AppContext {
  /** Aborted when the server closes (event streams end then). */
  readonly closing: AbortSignal;
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

export const idParams = z.object({ id: runIdSchema });
export const stackParams = z.object({ p: nameSchema, s: nameSchema });

/** The error answers every API route may give (problem documents). */
export const problemResponses = {
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

/** The caller the authentication hook found (every route with a role has one). */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new HttpProblem(401, 'unauthorized', 'no caller');
  return request.caller;
}

/** A run the caller may reach (a run of a project its token is not limited to is not found). */
export async function runOr404(ctx: AppContext, request: FastifyRequest, id: string): Promise<StoredRun> {
  const run = await ctx.store.get(id);
  if (!run || !reaches(callerOf(request), run.project)) throw notFound(`no run ${id}`);
  return run;
}

/** The caller's token must reach project `p` (403 before anything says whether it exists). */
export function projectAllowed(request: FastifyRequest, p: string): void {
  const caller = callerOf(request);
  if (!reaches(caller, p))
    throw new HttpProblem(
      403,
      'forbidden',
      `${caller.name} may not reach project ${p} (${(caller.projects ?? []).join(', ')})`,
    );
}

/**
 * Stack `s` of project `p`, which the caller may reach (403), must exist (404): in its stack file, or for a project
 * from git in the stack file of its branch or in its releases (a stack removed since keeps its history).
 */
export async function stackOr404(ctx: AppContext, request: FastifyRequest, p: string, s: string): Promise<void> {
  projectAllowed(request, p);
  const project = ctx.projects.get(p);
  if (!project) throw notFound(`no project ${p}`);
  if ((await ctx.projects.stacks(p)).includes(s)) return;
  if (project.repo && (await ctx.releases.latest(ctx.projects.releaseProject(p), s))) return;
  throw notFound(`project ${p} has no stack ${s}`);
}
