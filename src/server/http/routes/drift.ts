/**
 * Drift: `GET /projects/{p}/stacks/{s}/drift` (a stack's schedule, latest check in full, open episode, history,
 * episodes and noisy outputs) and `GET /fleet` (every stack of every project the caller may read: its last release,
 * its drift state and since when, its schedule).
 */
import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { fleetSchema, stackDriftSchema, type DriftSchedule, type FleetStack } from '../../../api/index.js';
import type { Release } from '../../../release/types.js';
import type { ProjectEntry } from '../../config.js';
import { EMPTY_RECORD, stackKey } from '../../drift/drift-store.js';
import { reaches } from '../auth.js';
import { callerOf, problemResponses, stackOr404, stackParams, type RouteContext } from '../context.js';

/** Stacks the fleet lists at the most. */
export const MAX_FLEET_STACKS = 5000;

/** A stack's schedule: when its project has a drift policy that checks it; null otherwise. */
function scheduleOf(project: ProjectEntry, stack: string, nextChecks: Map<string, string>): DriftSchedule | null {
  const policy = project.drift;
  if (!policy || (policy.stacks && !policy.stacks.includes(stack))) return null;
  return {
    everySeconds: policy.everySeconds,
    nextAt: nextChecks.get(stackKey(project.name, stack)) ?? null,
    remediate: policy.remediate,
  };
}

function lastReleaseOf(release: Release | undefined): FleetStack['lastRelease'] {
  if (!release) return null;
  return {
    revision: release.revision,
    operation: release.operation,
    phase: release.phase,
    createdAt: release.createdAt,
    finishedAt: release.finishedAt ?? null,
    rollbackOf: release.rollbackOf ?? null,
    commit: release.source?.commit ?? null,
  };
}

export const driftRoutes =
  (ctx: RouteContext): FastifyPluginCallbackZod =>
  (app, _options, done) => {
    app.get(
      '/api/v1/projects/:p/stacks/:s/drift',
      {
        config: { role: 'read' },
        schema: { params: stackParams, response: { 200: stackDriftSchema, ...problemResponses } },
      },
      async (request) => {
        const { p, s } = request.params;
        await stackOr404(ctx, request, p, s);
        const record = ctx.drift ? await ctx.drift.get(p, s) : EMPTY_RECORD;
        const nextChecks = ctx.drift ? await ctx.drift.nextChecks() : new Map<string, string>();
        const open = record.episodes[0]?.closedAt === null ? record.episodes[0] : null;
        return {
          project: p,
          stack: s,
          schedule: scheduleOf(ctx.projects.get(p)!, s, nextChecks),
          latest: record.latest,
          episode: open,
          history: [...record.history],
          episodes: [...record.episodes],
          noisy: record.noisy.map((m) => ({ kapp: m.kapp, path: [...m.path], since: m.since })),
        };
      },
    );

    app.get(
      '/api/v1/fleet',
      { config: { role: 'read' }, schema: { response: { 200: fleetSchema, ...problemResponses } } },
      async (request) => {
        const caller = callerOf(request);
        const summaries = ctx.drift ? await ctx.drift.summaries() : new Map<string, never>();
        const nextChecks = ctx.drift ? await ctx.drift.nextChecks() : new Map<string, string>();
        const stacks: FleetStack[] = [];
        const projects = ctx.projects
          .list()
          .filter((p) => reaches(caller, p.name))
          .sort((a, b) => a.name.localeCompare(b.name));
        for (const project of projects) {
          const names = [...(await ctx.projects.stacks(project.name))].sort();
          const releaseProject = ctx.projects.releaseProject(project.name);
          const room = MAX_FLEET_STACKS - stacks.length;
          const rows = await Promise.all(
            names.slice(0, Math.max(0, room)).map(async (stack) => ({
              project: project.name,
              stack,
              lastRelease: lastReleaseOf(await ctx.releases.latest(releaseProject, stack)),
              drift: summaries.get(stackKey(project.name, stack)) ?? null,
              schedule: scheduleOf(project, stack, nextChecks),
            })),
          );
          stacks.push(...rows);
        }
        return { stacks };
      },
    );
    done();
  };
