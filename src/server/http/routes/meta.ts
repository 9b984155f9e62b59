/** The server itself: `/healthz`, `/readyz`, who the caller is, and the OpenAPI document of the API. */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { whoamiSchema } from '../../../api/index.js';
import { callerOf, problemResponses, type RouteContext } from '../context.js';
import { HttpProblem } from '../problems.js';

export const metaRoutes =
  (ctx: RouteContext): FastifyPluginCallbackZod =>
  (app, _options, done) => {
    app.get('/healthz', { schema: { hide: true } }, () => ({ status: 'ok' }));

    app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
      if (ctx.stopping()) throw new HttpProblem(503, 'unavailable', 'the server is stopping');
      if (!(await ctx.ready())) throw new HttpProblem(503, 'unavailable', 'the backend does not answer');
      return reply.send({ status: 'ready' });
    });

    app.get(
      '/api/v1/whoami',
      { config: { role: 'read' }, schema: { response: { 200: whoamiSchema, ...problemResponses } } },
      (request) => {
        const caller = callerOf(request);
        return { name: caller.name, role: caller.role, ...(caller.projects ? { projects: [...caller.projects] } : {}) };
      },
    );

    app.get('/api/v1/openapi.json', { schema: { hide: true } }, () => app.swagger());
    done();
  };
