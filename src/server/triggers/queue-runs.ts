/**
 * What a push, a pull request or a poll queues for one project: a run of each of its stacks at the commit (a
 * preview, or an apply after a push when `on_push: apply`; a pull request always previews), pinned to that commit,
 * submitted within the queue's limits as a client's run is.
 */
import type { RunTrigger, RunType } from '../../api/index.js';
import type { ProjectEntry, ServerLimits } from '../config.js';
import type { ProjectRegistry } from '../projects.js';
import type { RunStore, StoredRun } from '../queue/run-store.js';
import { gatedRun } from '../runs/gate.js';
import { runCommit, type ResolvedCommit } from '../sources/repository.js';

export interface TriggerDeps {
  readonly projects: ProjectRegistry;
  readonly store: RunStore;
  readonly limits: ServerLimits;
}

/** A change to act on. */
export interface Change {
  readonly kind: 'push' | 'pull_request' | 'poll';
  /** The ref changed (`refs/heads/main`, `refs/pull/7/head`). */
  readonly ref: string;
  /** The commit to work at. */
  readonly sha: string;
  /** The ref the run's commit is shown with (the branch's name, or the pull request's ref). */
  readonly shownRef: string;
  readonly delivery: string | null;
  /** `webhook:github`, `webhook:gitlab`, `poll`. */
  readonly createdBy: string;
}

/** What was queued for a project: the runs, and the stacks that found the queue full. */
export interface Queued {
  readonly runs: StoredRun[];
  readonly refused: { readonly stack: string; readonly reason: string }[];
}

/**
 * The commit `change` names in the project's repository: a pull request's head is fetched by its ref first (hosts
 * serve `refs/pull/N/head`, `refs/merge-requests/N/head`), then by SHA. Throws what `ProjectRegistry.resolve` throws.
 */
async function commitOf(
  deps: TriggerDeps,
  name: string,
  change: Change,
  signal?: AbortSignal,
): Promise<ResolvedCommit> {
  if (change.kind === 'pull_request') {
    const byRef = await deps.projects.resolve(name, change.ref, signal).catch(() => undefined);
    if (byRef?.sha === change.sha) return byRef;
  }
  return deps.projects.resolve(name, change.sha, signal);
}

/** Queue the runs of `change` for `project` (a project from git). */
export async function queueRuns(
  deps: TriggerDeps,
  project: ProjectEntry,
  change: Change,
  signal?: AbortSignal,
): Promise<Queued> {
  if (!project.repo) return { runs: [], refused: [] };
  const resolved = await commitOf(deps, project.name, change, signal);
  const commit = runCommit(project.repo.url, { ...resolved, ref: change.shownRef });
  const type: RunType = change.kind === 'pull_request' ? 'preview' : project.onPush;
  const trigger: RunTrigger = { kind: change.kind, delivery: change.delivery, ref: change.ref };
  const queued: Queued = { runs: [], refused: [] };
  for (const stack of await deps.projects.stacks(project.name, resolved.sha)) {
    // The server starts this run itself: the stack's approvals hold (and no break glass).
    const outcome = await deps.store.submit(
      gatedRun(project, {
        type,
        project: project.name,
        stack,
        createdBy: change.createdBy,
        options: {},
        commit,
        trigger,
      }),
      { maxQueuedPerStack: deps.limits.maxQueuedPerStack, maxQueuedTotal: deps.limits.maxQueuedTotal },
    );
    if (outcome.kind === 'full')
      queued.refused.push({
        stack,
        reason:
          outcome.scope === 'stack'
            ? `${project.name}/${stack} has ${deps.limits.maxQueuedPerStack} queued runs already`
            : `the server has ${deps.limits.maxQueuedTotal} queued runs already`,
      });
    else queued.runs.push(outcome.run);
  }
  return queued;
}
