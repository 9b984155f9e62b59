/**
 * A run store that passes every call on to another: the base of the wrappers that act when a run's status changes
 * (notifications, drift checks), each overriding only the calls it watches.
 */
import type { ApprovalDecision, CheckResult } from '../../api/index.js';
import type {
  AwaitApproval,
  FeedItem,
  NewRun,
  ReapOptions,
  RetentionPolicy,
  RunEnding,
  RunListFilter,
  RunOwner,
  RunResult,
  RunStore,
  StoreNotice,
  StoredRun,
  SubmitLimits,
} from './run-store.js';

export class ForwardingRunStore implements RunStore {
  /** The store the calls go to. */
  protected readonly inner: RunStore;

  constructor(inner: RunStore) {
    this.inner = inner;
  }

  get description(): string {
    return this.inner.description;
  }

  open(instance: string) {
    return this.inner.open(instance);
  }

  close() {
    return this.inner.close();
  }

  submit(run: NewRun, limits: SubmitLimits) {
    return this.inner.submit(run, limits);
  }

  get(id: string) {
    return this.inner.get(id);
  }

  queueInfo(run: StoredRun) {
    return this.inner.queueInfo(run);
  }

  list(query: RunListFilter) {
    return this.inner.list(query);
  }

  active(project: string, stack: string) {
    return this.inner.active(project, stack);
  }

  claim(instance: string, leaseMs: number) {
    return this.inner.claim(instance, leaseMs);
  }

  renew(instance: string, runIds: readonly string[], leaseMs: number) {
    return this.inner.renew(instance, runIds, leaseMs);
  }

  setRelease(id: string, owner: RunOwner, revision: number) {
    return this.inner.setRelease(id, owner, revision);
  }

  finish(id: string, owner: RunOwner, ending: RunEnding) {
    return this.inner.finish(id, owner, ending);
  }

  reapExpired(reason: string, options?: ReapOptions) {
    return this.inner.reapExpired(reason, options);
  }

  requestCancel(id: string, by: string) {
    return this.inner.requestCancel(id, by);
  }

  appendFeed(id: string, items: readonly FeedItem[], owner?: RunOwner) {
    return this.inner.appendFeed(id, items, owner);
  }

  readFeed(id: string, afterSeq: number, limit: number) {
    return this.inner.readFeed(id, afterSeq, limit);
  }

  readLog(id: string, offset: number, maxBytes: number) {
    return this.inner.readLog(id, offset, maxBytes);
  }

  setResult(id: string, result: RunResult) {
    return this.inner.setResult(id, result);
  }

  getResult(id: string) {
    return this.inner.getResult(id);
  }

  prune(policy: RetentionPolicy) {
    return this.inner.prune(policy);
  }

  addChecks(id: string, owner: RunOwner, results: readonly CheckResult[]) {
    return this.inner.addChecks(id, owner, results);
  }

  awaitApproval(id: string, owner: RunOwner, waiting: AwaitApproval) {
    return this.inner.awaitApproval(id, owner, waiting);
  }

  decide(id: string, decision: ApprovalDecision) {
    return this.inner.decide(id, decision);
  }

  endWaiting(id: string, status: 'stale' | 'cancelled', error: string) {
    return this.inner.endWaiting(id, status, error);
  }

  waiting() {
    return this.inner.waiting();
  }

  getPreview(id: string) {
    return this.inner.getPreview(id);
  }

  subscribe(listener: (notice: StoreNotice) => void) {
    return this.inner.subscribe(listener);
  }
}
