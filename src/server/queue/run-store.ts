/**
 * The run store: the durable queue and history of the runs server. Two implementations share this interface and its
 * guarantees — files under the server's data directory (one instance, guarded by a lock file) and PostgreSQL (any
 * number of instances):
 *
 * - a run is claimed by exactly one instance, and at most one run per (project, stack) is `running`; runs of one
 *   stack start in submission order;
 * - nothing is ever re-run by itself: a `running` run whose owner stops renewing its lease becomes `errored`;
 * - a run's feed (its events, log lines and status changes) is appended as it happens and readable while it grows,
 *   by sequence number (SSE, `Last-Event-ID`) and, for log lines, by byte offset of the log's NDJSON form;
 * - `subscribe` tells this instance about changes made by any instance (wake-ups, cancels, new feed entries).
 */
import { KappsError } from '../../diagnostics/errors.js';
import type { RunEvent } from '../../report/events.js';
import type {
  ApprovalDecision,
  CheckResult,
  Run,
  RunApproval,
  RunCommit,
  RunListQuery,
  RunRequestOptions,
  RunState,
  RunTrigger,
  RunType,
} from '../../api/index.js';
import type { LogLine } from '../../log/line.js';
import type { LogChunk } from '../../log/ndjson.js';

/** A run as stored: the API's fields (without the derived queue position) and what only the servers use. */
export interface StoredRun extends Omit<
  Run,
  'queuePosition' | 'blockedBy' | 'actions' | 'commit' | 'trigger' | 'approval' | 'checks'
> {
  /** The approvals it needs and has; absent or null on a run no approval applies to (and in older records). */
  readonly approval?: RunApproval | null;
  /** The results of the run checks so far; absent in older records. */
  readonly checks?: readonly CheckResult[];
  /** The commit it works at (a project from a repository); absent or null otherwise (and in older records). */
  readonly commit?: RunCommit | null;
  /** What started it; absent in older records (a client's request). */
  readonly trigger?: RunTrigger;
  /** Submission order across the store (monotonic). */
  readonly seq: number;
  /** The instance that claimed it, while running. */
  readonly instance: string | null;
  /** Until when the owner's lease holds (ISO), while running. */
  readonly leaseUntil: string | null;
  /** A cancel was asked for while it runs (the owner stops it, then finishes it `cancelled`). */
  readonly cancelRequested: boolean;
  /** Counts the claims of the run: the generation of its owner's lease (0 before it is claimed). */
  readonly leaseGeneration?: number;
}

/**
 * The owner of a running run, as its writes carry it: the instance and the generation of the lease its claim got. A
 * write of a run's state by anyone else (an owner whose lease was reaped) is refused. A bare instance name checks the
 * instance only.
 */
export type RunOwner = string | { readonly instance: string; readonly generation: number };

/** The owner of a claimed run. */
export function ownerOf(run: StoredRun, instance: string): RunOwner {
  return { instance, generation: run.leaseGeneration ?? 0 };
}

/** What `reapExpired` is told. */
export interface ReapOptions {
  /** Reap only runs whose lease expired more than this long ago (the owner's margin to stop its steps). */
  readonly graceMs?: number;
  /**
   * Called for each run about to become `errored` (with its new status and error), before anyone is told: it
   * closes the run's release. When it throws, the run is left running and tried again at the next reap.
   */
  readonly beforeErrored?: (run: StoredRun) => Promise<void>;
}

/** A write of a run's state by an owner that no longer holds the run (its lease was reaped): refused. */
export class RunLeaseLostError extends KappsError {}

/** What `submit` stores. */
export interface NewRun {
  readonly type: RunType;
  readonly project: string;
  readonly stack: string;
  readonly createdBy: string;
  readonly options: RunRequestOptions;
  /** The commit it works at, resolved at submission (a project from a repository). */
  readonly commit?: RunCommit | null;
  /** What started it (a client's request when absent). */
  readonly trigger?: RunTrigger;
  /**
   * The approvals it needs (a run that changes a stack requiring them), as its project's policy said at submission:
   * no decisions yet, not waiting; `breakGlass` set when a break-glass token skipped them.
   */
  readonly approval?: RunApproval | null;
}

/** What started a run that says nothing of it: a client's request. */
export const API_TRIGGER: RunTrigger = { kind: 'api', delivery: null, ref: null };

export interface SubmitLimits {
  /** Queued runs allowed per (project, stack), and in total (a run waiting for approvals keeps its place: counted). */
  readonly maxQueuedPerStack: number;
  readonly maxQueuedTotal: number;
  /** A client's `Idempotency-Key`: the same key from the same `createdBy` returns the run it created before. */
  readonly idempotencyKey?: string;
}

export type SubmitOutcome =
  | { readonly kind: 'created'; readonly run: StoredRun }
  | { readonly kind: 'existing'; readonly run: StoredRun }
  | { readonly kind: 'full'; readonly scope: 'stack' | 'total'; readonly retryAfterSeconds: number };

/** How a run ended, as its owner records it (`stale`: the preview it was approved on no longer holds). */
export interface RunEnding {
  readonly status: Extract<RunState, 'succeeded' | 'failed' | 'cancelled' | 'stale'>;
  readonly error?: string | null;
  readonly releaseRevision?: number | null;
}

/** What `list` selects: the API's filters, a page size, and the project patterns a token is limited to. */
export type RunListFilter = RunListQuery & {
  readonly limit: number;
  /** Only runs of projects matching one of these (`shop`, `team-*`); every project when undefined. */
  readonly projects?: readonly string[];
};

export interface RetentionPolicy {
  readonly before?: string;
  readonly keepPerStack: number;
}

/** What the owner of a running run records when its preview is done and it starts waiting for approvals. */
export interface AwaitApproval {
  /** The preview document (JSON) the approvals bind to: `getPreview` answers it from now on. */
  readonly preview: RunResult;
  /** The release that preview compared with: while it is the stack's latest, the approvals hold. */
  readonly basedOnRevision: number | null;
  /** ISO times: since when it waits, and when it is discarded unless decided. */
  readonly waitingSince: string;
  readonly expiresAt: string;
}

/**
 * The outcome of a decision on a run: the approval was counted and it waits on (`recorded`), it has what it needs
 * and is queued again to apply (`approved`), it is `rejected` (final); or nothing was changed: it is not waiting
 * (`not-waiting`: 409), or this token approved it already (`duplicate`: 409).
 */
export type DecideOutcome =
  | { readonly kind: 'recorded' | 'approved' | 'rejected'; readonly run: StoredRun }
  | { readonly kind: 'not-waiting' | 'duplicate'; readonly run: StoredRun };

/** One entry of a run's feed. */
export type FeedItem =
  | { readonly kind: 'run-event'; readonly data: RunEvent }
  | { readonly kind: 'log'; readonly data: LogLine }
  | { readonly kind: 'status'; readonly data: StoredRun };
export interface FeedEntry {
  /** 1, 2, … per run. */
  readonly seq: number;
  readonly item: FeedItem;
}

/** A run's stored result: the spec (YAML), the preview document (JSON), an apply's outcome (JSON). */
export interface RunResult {
  readonly contentType: string;
  readonly body: string;
}

/** Changes any instance made, delivered to every instance's subscribers. */
export type StoreNotice =
  | { readonly type: 'queued'; readonly runId: string }
  | { readonly type: 'cancel'; readonly runId: string }
  | { readonly type: 'feed'; readonly runId: string; readonly seq: number }
  | { readonly type: 'finished'; readonly runId: string };

/** The position of a queued run: 1 is next on its stack; `blockedBy` the run it waits for. */
export interface QueueInfo {
  readonly queuePosition: number | null;
  readonly blockedBy: string | null;
}

export interface RunStore {
  /** For messages: a directory, or a URL with its password masked. */
  readonly description: string;
  /**
   * Open the store for this instance: create what is missing (tables, folders); the file store takes its lock and
   * throws `RunStoreBusyError` naming the holder when another live instance has it.
   */
  open(instance: string): Promise<void>;
  /** Release the lock, connections and listeners. */
  close(): Promise<void>;

  submit(run: NewRun, limits: SubmitLimits): Promise<SubmitOutcome>;
  get(id: string): Promise<StoredRun | undefined>;
  queueInfo(run: StoredRun): Promise<QueueInfo>;
  /** Newest first; `nextCursor` null on the last page. */
  list(query: RunListFilter): Promise<{ runs: StoredRun[]; nextCursor: string | null }>;
  /** The queued, running and waiting (`needs-approval`) runs of a stack, oldest first. */
  active(project: string, stack: string): Promise<StoredRun[]>;

  /**
   * Claim the oldest queued run whose stack has no running run (and that no waiting run of its stack holds back, see
   * the approvals below): it becomes `running`, owned by `instance` with a lease of `leaseMs`. Undefined when there is
   * none. Safe with any number of instances claiming at once.
   */
  claim(instance: string, leaseMs: number): Promise<StoredRun | undefined>;
  /** Renew the leases of the runs `instance` runs; returns the ids it no longer owns (errored by another instance). */
  renew(instance: string, runIds: readonly string[], leaseMs: number): Promise<string[]>;
  /** Record the release a running run took (its revision), as soon as it is known; ignored when not the owner. */
  setRelease(id: string, owner: RunOwner, revision: number): Promise<void>;
  /** End a running run owned by `owner`; false when it is not (any more) owned by it. */
  finish(id: string, owner: RunOwner, ending: RunEnding): Promise<boolean>;
  /**
   * Running runs whose lease expired `graceMs` ago (or, at `open` of the file store, every run left running) become
   * `errored` with `reason`, each after `beforeErrored` closed its release; returns them. Never re-queues anything.
   */
  reapExpired(reason: string, options?: ReapOptions): Promise<StoredRun[]>;
  /**
   * Cancel: a queued or waiting run is `cancelled` at once; a running one is marked `cancelRequested` and its owner told (a
   * `cancel` notice). Returns the run after the change; undefined when it does not exist.
   */
  requestCancel(id: string, by: string): Promise<StoredRun | undefined>;

  /**
   * Append to a run's feed (batches welcome); returns the last sequence number. With `owner`, only while the run is
   * running and held by it (`RunLeaseLostError` otherwise).
   */
  appendFeed(id: string, items: readonly FeedItem[], owner?: RunOwner): Promise<number>;
  /** The feed entries after `afterSeq`, at most `limit`. */
  readFeed(id: string, afterSeq: number, limit: number): Promise<FeedEntry[]>;
  /**
   * Log lines from byte `offset` of the log's NDJSON form (one `LogLine` JSON per line), by the one paging rule of
   * src/log/ndjson.ts (whole lines within `maxBytes`, at least one; damaged lines skipped and reported once).
   */
  readLog(id: string, offset: number, maxBytes: number): Promise<LogChunk>;
  setResult(id: string, result: RunResult): Promise<void>;
  getResult(id: string): Promise<RunResult | undefined>;

  /**
   * History retention: delete finished runs (with their feed, log and result) created before `before` (ISO; none
   * when undefined), and those beyond the newest `keepPerStack` finished runs of their stack. Queued, running and
   * waiting runs are never deleted, nor are releases (they are the release store's). Returns how many were deleted.
   */
  prune(policy: RetentionPolicy): Promise<number>;

  /**
   * Approvals. `addChecks`: append run check results to a running run held by `owner`. `awaitApproval`: a running
   * run held by `owner` becomes `needs-approval` (no owner, no lease; its approval's `waitingSince`, `expiresAt`,
   * `basedOnRevision` set, its preview stored); false when not the owner. While a run of a stack waits, the stack's
   * later apply, destroy and rollback runs are not claimed (its generate, preview and drift runs are); a waiting run
   * is never reaped nor pruned, and a cancel ends it at once. `decide`: a decision on a waiting run, appended
   * atomically (two instances deciding at once count both); the approvals of distinct token names reaching
   * `required` queue it again, in its old place (first of its stack), its approval kept; a rejection ends it
   * `rejected`. `endWaiting`: a waiting run becomes `stale` or `cancelled` (discarded) with `error`; undefined when it
   * was not waiting (any more). `waiting`: every waiting run, oldest first. `getPreview`: the preview a run is bound
   * to. Every change is appended to the run's feed as a status entry and told to subscribers, as other changes are.
   * A waiting run's `queueInfo` is null; a run it holds back is `blockedBy` it. The notices: `finished` when a run
   * starts waiting (its stack is free again) or ends waiting (rejected, stale, discarded, cancelled), `queued` when it
   * is approved. A rejection's `error` is `rejected by NAME` (`: comment` when there is one).
   */
  addChecks(id: string, owner: RunOwner, results: readonly CheckResult[]): Promise<void>;
  awaitApproval(id: string, owner: RunOwner, waiting: AwaitApproval): Promise<boolean>;
  decide(id: string, decision: ApprovalDecision): Promise<DecideOutcome | undefined>;
  endWaiting(id: string, status: 'stale' | 'cancelled', error: string): Promise<StoredRun | undefined>;
  waiting(): Promise<StoredRun[]>;
  getPreview(id: string): Promise<RunResult | undefined>;

  /** Be told of changes by any instance; returns the unsubscribe function. */
  subscribe(listener: (notice: StoreNotice) => void): () => void;
}

/** Another live instance holds the (file) run store: the message names it. */
export class RunStoreBusyError extends KappsError {}

/** Whether a project name matches one of a token's project patterns (`shop`, `team-*`: `*` is any text). */
export function projectMatches(patterns: readonly string[], project: string): boolean {
  return patterns.some((pattern) => {
    const parts = pattern.split('*').map((part) => part.replace(/[^A-Za-z0-9_-]/g, (c) => `\\${c}`));
    return new RegExp(`^${parts.join('.*')}$`).test(project);
  });
}
