/** The releases of a stack: list (bare or by pages), show one, unlock the stack (admin). */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import * as z from 'zod';
import {
  DEFAULT_PAGE_LIMIT,
  CURSOR_PATTERN,
  releaseListQuerySchema,
  releaseListSchema,
  releaseSchema,
  unlockResultSchema,
} from '../../../api/index.js';
import { releaseListEntries } from '../../../release/history.js';
import { unlockRelease } from '../../../release/recorder.js';
import { callerOf, problemResponses, stackOr404, stackParams, type RouteContext } from '../context.js';
import { presentRelease, presentReleaseEntries, presentReleasePage, presentUnlock } from '../presenters.js';
import { HttpProblem, invalid, notFound } from '../problems.js';
import { ReleasePages } from '../release-pages.js';

const revisionParams = stackParams.extend({ rev: z.coerce.number().int().min(1) });

export const releaseRoutes =
  (ctx: RouteContext): FastifyPluginCallbackZod =>
  (app, _options, done) => {
    const releasePages = new ReleasePages(ctx.releases);
    app.get(
      '/api/v1/projects/:p/stacks/:s/releases',
      {
        config: { role: 'read' },
        schema: {
          params: stackParams,
          querystring: releaseListQuerySchema,
          response: { 200: releaseListSchema, ...problemResponses },
        },
      },
      async (request) => {
        const { p, s } = request.params;
        const { limit, cursor } = request.query;
        await stackOr404(ctx, request, p, s);
        const project = ctx.projects.releaseProject(p);
        if (limit === undefined && cursor === undefined)
          return presentReleaseEntries(releaseListEntries(await ctx.releases.list(project, s)));
        if (cursor !== undefined && !CURSOR_PATTERN.test(cursor))
          throw invalid('query.cursor', 'not a cursor this server gave');
        return presentReleasePage(
          await releasePages.page(
            project,
            s,
            limit ?? DEFAULT_PAGE_LIMIT,
            cursor === undefined ? null : Number(cursor),
          ),
        );
      },
    );

    app.get(
      '/api/v1/projects/:p/stacks/:s/releases/:rev',
      {
        config: { role: 'read' },
        schema: { params: revisionParams, response: { 200: releaseSchema, ...problemResponses } },
      },
      async (request, reply) => {
        const { p, s, rev } = request.params;
        await stackOr404(ctx, request, p, s);
        const release = await ctx.releases.get(ctx.projects.releaseProject(p), s, rev);
        if (!release) throw notFound(`${p}/${s} has no release ${rev}`);
        // The record is sent as stored (its fields in the order the CLI shows them); the schema documents it.
        return reply
          .type('application/json; charset=utf-8')
          .serializer((body: unknown) => JSON.stringify(body))
          .send(presentRelease(release));
      },
    );

    app.post(
      '/api/v1/projects/:p/stacks/:s/unlock',
      {
        config: { role: 'admin' },
        schema: { params: stackParams, response: { 200: unlockResultSchema, ...problemResponses } },
      },
      async (request) => {
        const caller = callerOf(request);
        const { p, s } = request.params;
        await stackOr404(ctx, request, p, s);
        const result = await unlockRelease({
          store: ctx.releases,
          project: ctx.projects.releaseProject(p),
          stack: s,
          by: `${caller.name} (kapps serve)`,
        });
        if (!result.unlocked) throw new HttpProblem(409, 'conflict', result.message);
        return presentUnlock(result, caller.name);
      },
    );
    done();
  };
