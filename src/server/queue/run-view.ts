/** A stored run as the API shows it (the run answers, a notification's payload), without its place in the queue. */
import type { Run } from '../../api/index.js';
import { API_TRIGGER, type StoredRun } from './run-store.js';

export function runView(run: StoredRun): Omit<Run, 'queuePosition' | 'blockedBy'> {
  return {
    id: run.id,
    type: run.type,
    project: run.project,
    stack: run.stack,
    status: run.status,
    createdBy: run.createdBy,
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    releaseRevision: run.releaseRevision,
    error: run.error,
    options: run.options,
    commit: run.commit ?? null,
    trigger: run.trigger ?? API_TRIGGER,
    approval: run.approval ?? null,
    checks: [...(run.checks ?? [])],
    actions: {
      cancelable:
        run.status === 'queued' ||
        run.status === 'needs-approval' ||
        (run.status === 'running' && !run.cancelRequested),
      // Who may decide depends on who asks: the routes fill these in for the caller.
      approvable: false,
      rejectable: false,
    },
  };
}
