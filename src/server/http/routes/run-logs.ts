/** A run's log by byte offset (`GET /runs/{id}/logs`) and its event stream (`GET /runs/{id}/events`, SSE). */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import * as z from 'zod';
import { FINAL_RUN_STATES, logChunkSchema } from '../../../api/index.js';
import { idParams, problemResponses, runOr404, type RouteContext } from '../context.js';
import { apiRun } from '../presenters.js';
import { streamRunEvents } from '../sse.js';

const logQuery = z.object({ offset: z.coerce.number().int().min(0).optional() }).strict();
const eventsQuery = z.object({ after: z.coerce.number().int().min(0).optional() }).strict();
const eventsHeaders = z
  .object({
    'last-event-id': z
      .string()
      .regex(/^[0-9]{1,15}$/)
      .optional(),
  })
  .passthrough();

export const runLogRoutes =
  (ctx: RouteContext): FastifyPluginCallbackZod =>
  (app, _options, done) => {
    app.get(
      '/api/v1/runs/:id/logs',
      {
        config: { role: 'read' },
        schema: { params: idParams, querystring: logQuery, response: { 200: logChunkSchema, ...problemResponses } },
      },
      async (request) => {
        const run = await runOr404(ctx, request, request.params.id);
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

    app.get(
      '/api/v1/runs/:id/events',
      { config: { role: 'read' }, schema: { params: idParams, querystring: eventsQuery, headers: eventsHeaders } },
      async (request, reply) => {
        const run = await runOr404(ctx, request, request.params.id);
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
          closing: ctx.closing,
        });
      },
    );
    done();
  };
