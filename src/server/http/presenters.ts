/**
 * Presenters: stored records (runs, releases, the result of an unlock) as the API answers them. Only what the API
 * promises (src/api/) is shown; secrets in release records are shown as `(sensitive)`.
 */
import type { Release as ApiRelease, ReleasePage, Run } from '../../api/index.js';
import type { ReleaseListEntry } from '../../release/history.js';
import type { RunStore, StoredRun } from '../queue/run-store.js';
import { runView } from '../queue/run-view.js';
import { decisionActions } from '../runs/gate.js';
import type { Caller } from './auth.js';
import { orderRelease } from '../../release/record-order.js';
import { redactArgv, redactCredentials } from '../../diagnostics/redact.js';
import type { RepoSource } from '../config.js';
import type { ResolvedCommit } from '../sources/repository.js';
import { redactStackSpec, showMasks } from '../../release/spec-diff.js';
import { describeHolder, type UnlockResult } from '../../release/recorder.js';
import { isRunningPhase, type Release } from '../../release/types.js';

/**
 * A run as the API shows it. A run read as queued may have been claimed before its queue position was computed:
 * then it is read again, so a queued run always has a position (except in the feed's past status entries).
 */
export async function apiRun(
  store: RunStore,
  run: StoredRun,
  options: { snapshot?: boolean; caller?: Caller } = {},
): Promise<Run> {
  let queue = await store.queueInfo(run);
  if (!options.snapshot && run.status === 'queued' && queue.queuePosition === null) {
    run = (await store.get(run.id)) ?? run;
    queue = await store.queueInfo(run);
  }
  const view = runView(run);
  // Whether the caller may approve or reject a waiting run depends on who asks.
  const actions = options.caller ? { ...view.actions, ...decisionActions(run, options.caller) } : view.actions;
  return { ...view, actions, queuePosition: queue.queuePosition, blockedBy: queue.blockedBy };
}

/** The lock of a stack: its latest release while that one is applying or deleting, else null. */
function stackLock(latest: Release | undefined) {
  if (!latest || !isRunningPhase(latest.phase)) return null;
  const holder = describeHolder(latest, new Date());
  return {
    revision: latest.revision,
    operation: latest.operation,
    phase: latest.phase,
    owner: latest.owner,
    since: latest.createdAt,
    ownerLooksDead: holder.looksDead ? holder.text : null,
  };
}

/** `GET /projects/{p}/stacks/{s}`: the latest release, the lock, the active runs. */
export async function presentStack(
  store: RunStore,
  stack: { project: string; stack: string; latest: Release | undefined; active: readonly StoredRun[] },
) {
  const { latest, active } = stack;
  const running = await Promise.all(active.filter((r) => r.status === 'running').map((r) => apiRun(store, r)));
  const queued = await Promise.all(active.filter((r) => r.status === 'queued').map((r) => apiRun(store, r)));
  return {
    project: stack.project,
    stack: stack.stack,
    latestRelease: latest
      ? {
          revision: latest.revision,
          operation: latest.operation,
          phase: latest.phase,
          createdAt: latest.createdAt,
          modifiedAt: latest.modifiedAt,
          owner: latest.owner,
        }
      : null,
    lock: stackLock(latest),
    running,
    queued,
  };
}

/**
 * A release record as `kapps release show -o json` shows it. Secrets are recorded as keyed masks, answered as
 * `(sensitive)`; values named as secrets in older records are masked as in a preview.
 */
export function presentRelease(release: Release): ApiRelease {
  // The stored record's types have no index signatures; the API's say records may hold more fields.
  return orderRelease({
    ...release,
    command: redactArgv(release.command),
    spec: redactStackSpec(showMasks(release.spec, null)),
  }) as unknown as ApiRelease;
}

/**
 * Release list entries as `kapps release list -o json` shows them, with their approvals and break glass. A record's
 * role is the text it recorded (a server writes only the API's roles).
 */
export function presentReleaseEntries(entries: readonly ReleaseListEntry[]): ReleasePage['releases'] {
  return entries as unknown as ReleasePage['releases'];
}

/** A page of release list entries. */
export function presentReleasePage(page: {
  releases: readonly ReleaseListEntry[];
  nextCursor: string | null;
}): ReleasePage {
  return { releases: presentReleaseEntries(page.releases), nextCursor: page.nextCursor };
}

type Unlocked = Extract<UnlockResult, { unlocked: true }>;

/** What `POST …/unlock` answers. */
export function presentUnlock(result: Unlocked, by: string) {
  return {
    unlocked: true as const,
    revision: result.release.revision,
    previousPhase: result.previousPhase,
    holder: result.holder.text,
    by,
  };
}

/** A project's repository as `GET /projects` shows it: no credentials, the newest commit of its branch known. */
export function presentRepo(repo: RepoSource, head: ResolvedCommit | undefined) {
  return {
    url: redactCredentials(repo.url),
    branch: repo.branch ?? null,
    path: repo.path,
    head: head ? { sha: head.sha, subject: head.subject, author: head.author } : null,
  };
}
