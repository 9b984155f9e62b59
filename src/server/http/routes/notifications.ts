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

/**
 * Where an event stands in a run's life: queued, then started, then the rest (its end, a drift check's outcome). With
 * several instances the delivery of a run's start may be stored before that of its queueing (the instance that claims
 * it can be quicker than the one that took it): the list follows the run's life, then the order they were stored.
 */
function lifeRank(event: string): number {
  return event === 'run.queued' ? 0 : event === 'run.started' ? 1 : 2;
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
        // Array.prototype.sort is stable: within a rank, the order they were stored.
        const ordered = [...deliveries].sort((a, b) => lifeRank(a.event) - lifeRank(b.event));
        return { notifications: ordered.map(presentDelivery) };
      },
    );
    done();
  };
