/**
 * The release of a run whose server died under it: still `applying`/`deleting`, holding the stack's lock. It is
 * closed as failed, recorded as unlocked by the server with the reason, so the next run of the stack can begin.
 */
import { describeHolder, unlockRelease } from '../../release/recorder.js';
import type { ReleaseStore } from '../../release/store-types.js';
import { isRunningPhase } from '../../release/types.js';

export async function closeOrphanedRelease(
  releases: ReleaseStore,
  project: string,
  stack: string,
  run: { readonly id: string; readonly releaseRevision: number | null; readonly startedAt: string | null },
  reason: string,
): Promise<number | undefined> {
  const latest = await releases.latest(project, stack);
  if (!latest || !isRunningPhase(latest.phase)) return undefined;
  if (run.releaseRevision !== null) {
    if (latest.revision !== run.releaseRevision) return undefined;
  } else {
    // The run died before it said which release it took: the running one, begun after the run started, whose
    // owner is gone.
    const began = run.startedAt === null ? NaN : Date.parse(run.startedAt);
    if (!(Date.parse(latest.createdAt) >= began) || !describeHolder(latest, new Date()).looksDead) return undefined;
  }
  const result = await unlockRelease({
    store: releases,
    project,
    stack,
    by: `kapps serve, run ${run.id}: ${reason}`,
  });
  return result.unlocked ? result.release.revision : undefined;
}
