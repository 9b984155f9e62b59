/**
 * What the run stores do not decide: the rules above them, one for both backends. A store keeps runs; this module
 * names them (run ids), pages their history (cursors, page sizes), bounds what one read returns, and says how long
 * a client waits when a queue is full (`Retry-After`). `RunStorePolicy` is the part of `RunStore` built from these
 * rules on top of two storage methods each store implements (`insertRun`, `selectRuns`).
 */
import { randomBytes } from 'node:crypto';
import { CURSOR_PATTERN } from '../../api/index.js';
import type { ApprovalDecision, RunApproval, RunType } from '../../api/index.js';
import { KappsError } from '../../diagnostics/errors.js';
import type { NewRun, QueueInfo, RunListFilter, StoredRun, SubmitLimits, SubmitOutcome } from './run-store.js';

/** The `Retry-After` (seconds) of a `429` when a queue is full. */
export const QUEUE_FULL_RETRY_AFTER_SECONDS = 5;

/** The most runs one page of the history holds, whatever a caller asks. */
export const MAX_PAGE_RUNS = 1000;

/** The most feed entries one read returns. */
export const MAX_FEED_ENTRIES = 10_000;

/**
 * A new run id: its creation time in base 36 milliseconds (9 digits, so ids sort by time as text) and 48 random
 * bits, e.g. `0mhx3k2a1-4f9c0a1b2c3d`. Safe as a file name and in a URL.
 */
export function newRunId(now = Date.now()): string {
  return `${now.toString(36).padStart(9, '0')}-${randomBytes(6).toString('hex')}`;
}

/** The ids a store may hold: `newRunId`'s, and those of earlier versions (their time part not padded). */
const RUN_ID_PATTERN = /^[0-9a-z]{1,13}-[0-9a-f]{12}$/;

/** Whether `id` has the shape of a run id (anything else names no run, and never a path). */
export function isRunId(id: string): boolean {
  return RUN_ID_PATTERN.test(id);
}

/** A `cursor` that no store gave: the API answers it 400 (`invalid-request`) before any store sees it. */
export class RunCursorError extends KappsError {}

/**
 * The one cursor rule of the API (runs and releases) and both stores: a cursor is the submission number (`seq`) of
 * the last run of a page (or the revision of the last release), in decimal, 1 to 15 digits (always a safe integer).
 */
export function encodeRunCursor(seq: number): string {
  return String(seq);
}

export function decodeRunCursor(cursor: string): number {
  if (!CURSOR_PATTERN.test(cursor))
    throw new RunCursorError(`invalid cursor ${JSON.stringify(cursor.slice(0, 40))}: use the nextCursor of a page`);
  return Number(cursor);
}

/** A page size within 1 … `MAX_PAGE_RUNS`. */
export function pageSize(limit: number): number {
  return Math.max(1, Math.min(Math.floor(limit) || 1, MAX_PAGE_RUNS));
}

/** A feed read's entry count within 0 … `MAX_FEED_ENTRIES`, and its start (a whole, non-negative number). */
export function feedWindow(afterSeq: number, limit: number): { afterSeq: number; limit: number } {
  return {
    afterSeq: Math.max(0, Math.floor(afterSeq) || 0),
    limit: Math.max(0, Math.min(Math.floor(limit) || 0, MAX_FEED_ENTRIES)),
  };
}

/** What a store selects for a page: the filters, runs below `beforeSeq`, newest first, at most `limit`. */
export type RunSelection = Omit<RunListFilter, 'cursor'> & { readonly beforeSeq?: number };

/** What a store's `insertRun` answers: the queue limits are counted by the store, the wait is the policy's. */
export type InsertOutcome =
  Exclude<SubmitOutcome, { kind: 'full' }> | { readonly kind: 'full'; readonly scope: 'stack' | 'total' };

/** `submit` and `list` of every run store: ids, cursors, page sizes and `Retry-After` decided here. */
export abstract class RunStorePolicy {
  async submit(run: NewRun, limits: SubmitLimits): Promise<SubmitOutcome> {
    const outcome = await this.insertRun({ ...run, id: newRunId() }, limits);
    return outcome.kind === 'full' ? { ...outcome, retryAfterSeconds: QUEUE_FULL_RETRY_AFTER_SECONDS } : outcome;
  }

  /** Newest first; `nextCursor` null on the last page. A cursor no store gave throws `RunCursorError`. */
  async list(query: RunListFilter): Promise<{ runs: StoredRun[]; nextCursor: string | null }> {
    const { cursor, ...filter } = query;
    const limit = pageSize(query.limit);
    const runs = await this.selectRuns({
      ...filter,
      limit: limit + 1,
      ...(cursor !== undefined ? { beforeSeq: decodeRunCursor(cursor) } : {}),
    });
    const page = runs.slice(0, limit);
    const last = page.at(-1);
    return { runs: page, nextCursor: runs.length > limit && last ? encodeRunCursor(last.seq) : null };
  }

  /**
   * Store a new queued run with this id, unless the queue of its stack or the store's has reached `limits` (or the
   * idempotency key was used by the same submitter: that run).
   */
  protected abstract insertRun(run: NewRun & { readonly id: string }, limits: SubmitLimits): Promise<InsertOutcome>;

  /** The runs matching `selection`, newest first (by `seq`), at most `selection.limit`. */
  protected abstract selectRuns(selection: RunSelection): Promise<StoredRun[]>;
}

/** The run types that change a stack: those approvals gate, and those a waiting run of their stack holds back. */
export const CHANGE_RUN_TYPES: readonly RunType[] = ['apply', 'destroy', 'rollback'];

/**
 * Whether a queued run waits behind a run of its stack that waits for approvals (`waiting`: such runs, of any
 * stack): an apply, destroy or rollback submitted after it.
 */
export function heldBack(run: StoredRun, waiting: readonly StoredRun[]): boolean {
  return (
    CHANGE_RUN_TYPES.includes(run.type) &&
    waiting.some((w) => w.project === run.project && w.stack === run.stack && w.seq < run.seq)
  );
}

/**
 * The place of a queued run among `stackRuns` (the queued, running and waiting runs of its stack). A run held back
 * by a waiting run is blocked by it, after every queued run before it; any other run is blocked by the last queued
 * run before it that is not held back (or the running one), and counts only those.
 */
export function queueInfoOf(run: StoredRun, stackRuns: readonly StoredRun[]): QueueInfo {
  const waiting = stackRuns.filter((r) => r.status === 'needs-approval');
  const earlier = stackRuns.filter((r) => r.status === 'queued' && r.seq < run.seq).sort((a, b) => a.seq - b.seq);
  const holder = waiting.filter((w) => w.seq < run.seq).sort((a, b) => a.seq - b.seq)[0];
  if (holder && heldBack(run, waiting)) return { queuePosition: earlier.length + 1, blockedBy: holder.id };
  const before = earlier.filter((r) => !heldBack(r, waiting));
  const running = stackRuns.find((r) => r.status === 'running');
  return { queuePosition: before.length + 1, blockedBy: before.at(-1)?.id ?? running?.id ?? null };
}

/** What a decision does to a run (see `RunStore.decide`): the store applies it atomically. */
export type ApprovalChange =
  | { readonly kind: 'not-waiting' }
  | { readonly kind: 'duplicate' }
  | { readonly kind: 'recorded'; readonly approval: RunApproval }
  | { readonly kind: 'approved'; readonly approval: RunApproval }
  | { readonly kind: 'rejected'; readonly approval: RunApproval; readonly error: string };

/**
 * A decision on `run`: appended to its approval's decisions; the approvals of distinct token names reaching
 * `required` approve it; a rejection rejects it; a second approval by the same token name changes nothing.
 */
export function approvalOutcome(run: StoredRun, decision: ApprovalDecision): ApprovalChange {
  const approval = run.approval;
  if (run.status !== 'needs-approval' || !approval) return { kind: 'not-waiting' };
  const approvedBy = (decisions: readonly ApprovalDecision[]): Set<string> =>
    new Set(decisions.filter((d) => d.decision === 'approved').map((d) => d.by));
  if (decision.decision === 'approved' && approvedBy(approval.decisions).has(decision.by)) return { kind: 'duplicate' };
  const decisions = [...approval.decisions, decision];
  const next: RunApproval = { ...approval, decisions };
  if (decision.decision === 'rejected') {
    const why = decision.comment ? `: ${decision.comment}` : '';
    return { kind: 'rejected', approval: next, error: `rejected by ${decision.by}${why}` };
  }
  if (approvedBy(decisions).size >= approval.required) return { kind: 'approved', approval: next };
  return { kind: 'recorded', approval: next };
}
