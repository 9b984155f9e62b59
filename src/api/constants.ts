/**
 * The public contract's constants, without zod (the web page imports these without pulling zod in): run types and
 * states, roles, the event names of a run's stream, the problem type URLs and the page and cursor rules.
 */

/**
 * `rollback`: an install of the desired state a recorded revision applied (`toRevision`), recorded as a new revision
 * with `rollbackOf`; `drift`: a preview with the live outputs read (`preview --refresh`) that writes no release,
 * its result a drift report (src/api/drift.ts).
 */
export const RUN_TYPES = ['generate', 'preview', 'apply', 'destroy', 'rollback', 'drift'] as const;
export type RunType = (typeof RUN_TYPES)[number];

/**
 * `queued → running → succeeded | failed | cancelled`; `errored`: the server running it died under it.
 * A run that changes a stack whose project requires approvals goes `queued → running` (its preview and the checks
 * after it) `→ needs-approval`, holding that preview; then `rejected`, `stale` (the stack's release, commit or spec
 * changed under the preview: it needs a new preview and new approvals), `cancelled` (cancelled, or discarded after
 * waiting longer than `approvals.expire_after`), or, once approved, `queued → running` again to apply exactly it.
 */
export const RUN_STATES = [
  'queued',
  'running',
  'needs-approval',
  'succeeded',
  'failed',
  'cancelled',
  'errored',
  'rejected',
  'stale',
] as const;
export type RunState = (typeof RUN_STATES)[number];
export const FINAL_RUN_STATES: readonly RunState[] = [
  'succeeded',
  'failed',
  'cancelled',
  'errored',
  'rejected',
  'stale',
];

/** Whether a run in `status` is finished (it never changes again). */
export function isFinalRunState(status: string): boolean {
  return (FINAL_RUN_STATES as readonly string[]).includes(status);
}

/**
 * Roles, each including the ones before it: read < plan (generate, preview, drift) < apply (apply, destroy, rollback,
 * cancel; approve and reject where a project's `approvals.from_roles` names it) < admin (unlock).
 */
export const ROLES = ['read', 'plan', 'apply', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** Whether `role` includes `needed`. */
export function roleAllows(role: Role | undefined, needed: Role): boolean {
  return role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/**
 * The `event:` names of `GET /api/v1/runs/{id}/events` (Server-Sent Events, each with an `id:`, a sequence number
 * per run, for `Last-Event-ID`, and JSON `data:`):
 * - `run-event`: a run event as `--reporter json` prints it (src/report/events.ts);
 * - `log`: a `LogLine`;
 * - `status`: the run as `GET /runs/{id}` answers, whenever its status changes; the stream ends after the one with
 *   a final status.
 */
export const SSE_EVENT_NAMES = ['run-event', 'log', 'status'] as const;
export type SseEventName = (typeof SSE_EVENT_NAMES)[number];

/** Every error answer is `application/problem+json` with a `type` of this prefix and a slug (`…/not-found`). */
export const PROBLEM_TYPE_PREFIX = 'https://kapps.dev/problems/';

/** Lists by pages: `limit` defaults to this, at most `MAX_PAGE_LIMIT`. */
export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 500;

/**
 * A cursor is opaque: a client sends back the `nextCursor` of a page, never builds one. One rule for runs and
 * releases alike: 1 to 15 decimal digits (a safe integer); src/server/queue/policy.ts gives and reads them.
 */
export const CURSOR_PATTERN = /^[0-9]{1,15}$/;
