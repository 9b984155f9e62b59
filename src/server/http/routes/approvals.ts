/**
 * Approvals: approve or reject a run waiting in `needs-approval` (`POST /runs/{id}/approve`, `/reject`), and the
 * preview document a run is bound to (`GET /runs/{id}/preview`). Also the one place a submission's gate refusal
 * (a break glass the token may not use) becomes an answer.
 */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import * as z from 'zod';
import { decideRunSchema, runSchema, type ApprovalDecision, type DecideRun } from '../../../api/index.js';
import type { ProjectEntry } from '../../config.js';
import type { NewRun, StoredRun } from '../../queue/run-store.js';
import { GateRefused, gatedRun, latestRevision, mayNotDecide, releaseMoved, type Actor } from '../../runs/gate.js';
import { callerOf, idParams, problemResponses, runOr404, type RouteContext } from '../context.js';
import { apiRun } from '../presenters.js';
import { HttpProblem, invalid, notFound } from '../problems.js';

/**
 * `run` with the approval its stack requires attached (`gatedRun`): a break glass the caller may not use is a 403
 * naming the rule, one with nothing to skip a 400 naming `body.breakGlass`.
 */
export function gatedSubmission(ctx: RouteContext, run: NewRun, caller: Actor): NewRun {
  const project: ProjectEntry | undefined = ctx.projects.get(run.project);
  try {
    return gatedRun(project, run, caller);
  } catch (error) {
    if (!(error instanceof GateRefused)) throw error;
    if (error.kind === 'invalid') throw invalid(error.field, error.message);
    throw new HttpProblem(403, 'forbidden', error.message);
  }
}

/** Why a run cannot be decided on now (409): it is not waiting. */
function notWaiting(run: StoredRun): HttpProblem {
  return new HttpProblem(
    409,
    'conflict',
    run.status === 'needs-approval' || run.approval
      ? `run ${run.id} is ${run.status}: it is not waiting for approval`
      : `run ${run.id} needs no approval`,
  );
}

export const approvalRoutes =
  (ctx: RouteContext): FastifyPluginCallbackZod =>
  (app, _options, done) => {
    const decide = async (
      id: string,
      request: Parameters<typeof callerOf>[0] & { body: DecideRun | null | undefined },
      decision: ApprovalDecision['decision'],
    ) => {
      const caller = callerOf(request);
      const run = await runOr404(ctx, request, id);
      if (run.status !== 'needs-approval' || !run.approval) throw notWaiting(run);
      const refused = mayNotDecide(run, caller, decision === 'approved' ? 'approve' : 'reject');
      if (refused !== undefined) throw new HttpProblem(403, 'forbidden', refused);
      if (decision === 'approved') {
        // An approval binds to the preview: a release since then makes the run stale instead.
        const now = await latestRevision(ctx.store, ctx.releases, ctx.projects, run);
        if (now !== run.approval.basedOnRevision) {
          const reason = releaseMoved(run.approval.basedOnRevision, now);
          const ended = await ctx.store.endWaiting(run.id, 'stale', reason);
          throw new HttpProblem(409, 'conflict', `run ${run.id} is stale: ${ended ? reason : 'it is not waiting'}`);
        }
      }
      const comment = request.body?.comment;
      const outcome = await ctx.store.decide(run.id, {
        by: caller.name,
        role: caller.role,
        at: new Date().toISOString(),
        decision,
        comment: comment === undefined || comment.trim() === '' ? null : comment,
      });
      if (!outcome) throw notFound(`no run ${id}`);
      if (outcome.kind === 'not-waiting') throw notWaiting(outcome.run);
      if (outcome.kind === 'duplicate')
        throw new HttpProblem(409, 'conflict', `${caller.name} approved run ${run.id} already`);
      return apiRun(ctx.store, outcome.run, { caller });
    };

    const decideSchema = {
      params: idParams,
      // No body at all is a decision without a comment.
      body: decideRunSchema.nullish(),
      response: { 200: runSchema, ...problemResponses },
    };
    app.post(
      '/api/v1/runs/:id/approve',
      { config: { role: 'plan' }, schema: { ...decideSchema, description: 'Approve a run waiting for approval.' } },
      async (request) => decide(request.params.id, request, 'approved'),
    );
    app.post(
      '/api/v1/runs/:id/reject',
      { config: { role: 'plan' }, schema: { ...decideSchema, description: 'Reject a run waiting for approval.' } },
      async (request) => decide(request.params.id, request, 'rejected'),
    );

    app.get(
      '/api/v1/runs/:id/preview',
      {
        config: { role: 'read' },
        schema: {
          params: idParams,
          description: 'The preview document a run is bound to (the one its approvals approve).',
          response: { 200: z.unknown(), ...problemResponses },
        },
      },
      async (request, reply) => {
        const run = await runOr404(ctx, request, request.params.id);
        const preview = await ctx.store.getPreview(run.id);
        if (!preview) throw notFound(`run ${run.id} is bound to no preview`);
        return reply
          .type(preview.contentType)
          .serializer((b: unknown) => b as string)
          .send(preview.body);
      },
    );
    done();
  };
