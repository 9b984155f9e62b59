/** A run's outbound notifications (`GET /runs/{id}/notifications`): its deliveries and their attempts. */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { notificationListSchema, type Notification } from '../../../api/index.js';
import { withoutCredentials } from '../../notify/deliverer.js';
import type { Delivery } from '../../notify/outbox.js';
import { idParams, problemResponses, runOr404, type RouteContext } from '../context.js';

/** A delivery as the API shows it: no body, no secret's name, the URL without credentials. */
function presentDelivery(d: Delivery): Notification {
  return {
    id: d.id,
    event: d.event,
    url: withoutCredentials(d.url),
    state: d.state,
    attempts: d.attempts.map((a) => ({
      at: a.at,
      status: a.status,
      error: a.error,
      durationMs: a.durationMs,
      body: a.body,
    })),
    nextAttemptAt: d.state === 'pending' ? d.nextAttemptAt : null,
  };
}

export const notificationRoutes =
  (ctx: RouteContext): FastifyPluginCallbackZod =>
  (app, _options, done) => {
    app.get(
      '/api/v1/runs/:id/notifications',
      {
        config: { role: 'read' },
        schema: { params: idParams, response: { 200: notificationListSchema, ...problemResponses } },
      },
      async (request) => {
        const run = await runOr404(ctx, request, request.params.id);
        const deliveries = ctx.outbox ? await ctx.outbox.listForRun(run.id) : [];
        return { notifications: deliveries.map(presentDelivery) };
      },
    );
    done();
  };
