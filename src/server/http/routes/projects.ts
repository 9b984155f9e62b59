/** Projects and their stacks: `GET /projects`, `GET /projects/{p}/stacks/{s}` (latest release, lock, active runs). */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { projectListSchema, stackSummarySchema } from '../../../api/index.js';
import { reaches } from '../auth.js';
import { callerOf, problemResponses, stackOr404, stackParams, type RouteContext } from '../context.js';
import { presentRepo, presentStack } from '../presenters.js';

export const projectRoutes =
  (ctx: RouteContext): FastifyPluginCallbackZod =>
  (app, _options, done) => {
    app.get(
      '/api/v1/projects',
      { config: { role: 'read' }, schema: { response: { 200: projectListSchema, ...problemResponses } } },
      async (request) => ({
        projects: await Promise.all(
          ctx.projects
            .list()
            .filter((p) => reaches(callerOf(request), p.name))
            .map(async (p) => ({
              name: p.name,
              stacks: await ctx.projects.stacks(p.name),
              repo: p.repo ? presentRepo(p.repo, ctx.projects.head(p.name)) : null,
            })),
        ),
      }),
    );

    app.get(
      '/api/v1/projects/:p/stacks/:s',
      {
        config: { role: 'read' },
        schema: { params: stackParams, response: { 200: stackSummarySchema, ...problemResponses } },
      },
      async (request) => {
        const { p, s } = request.params;
        await stackOr404(ctx, request, p, s);
        const latest = await ctx.releases.latest(ctx.projects.releaseProject(p), s);
        const active = await ctx.store.active(p, s);
        return presentStack(ctx.store, { project: p, stack: s, latest, active });
      },
    );
    done();
  };
