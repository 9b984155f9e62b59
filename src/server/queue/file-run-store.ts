/**
 * The file run store: the runs of one server instance kept under `<backend dir>/runs/`.
 *
 * - `runs/<id>/run.json`: the run, replaced atomically (temp file + rename) on every change;
 * - `runs/<id>/feed.ndjson`: the run's feed, append-only, one `{"seq":N,"kind":…,"data":…}` per line;
 * - `runs/<id>/log.ndjson`: the log lines alone, append-only, one `LogLine` per line (clients page it by byte offset);
 * - `runs/<id>/result.json`: the result, once there is one;
 * - `runs/instance.lock`: the instance holding the store (pid, host, start time). A second instance on the same
 *   directory refuses to start and names the holder while that process is alive; a dead holder's lock is taken over.
 *
 * One instance holds the store, so the runs are also kept in memory and every state change is made there first,
 * synchronously (a claim is atomic), then written. Notices go to this process' subscribers.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { appendFile, mkdir, open, readdir, readFile, rename, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { LogLine } from '../../api/index.js';
import {
  decodeRunCursor,
  encodeRunCursor,
  projectMatches,
  RunLeaseLostError,
  RunStoreBusyError,
  storableJson,
  type FeedEntry,
  type FeedItem,
  type NewRun,
  type QueueInfo,
  type ReapOptions,
  type RunEnding,
  type RunListFilter,
  type RetentionPolicy,
  type RunOwner,
  type RunResult,
  type RunStore,
  type StoredRun,
  type StoreNotice,
  type SubmitLimits,
  type SubmitOutcome,
} from './run-store.js';
import { processIsAlive } from '../../release/owner.js';
import { KappsError } from '../../diagnostics/errors.js';

/** Errors of a file system that is full or cannot be written: the store is unavailable until that changes. */
const STORAGE_ERRNOS: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'the disk quota is exceeded',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EIO: 'an input/output error',
};

/**
 * The run store's directory cannot be written (a full disk, a read-only file system): `unavailable` (503 with
 * `Retry-After`), and the message says what is wrong, never "a bug".
 */
export class RunStorageError extends KappsError {
  readonly unavailable = true;
}

/** `error` as a `RunStorageError` when it is a file system failure of `dir`, else itself. */
function storageError(error: unknown, what: string, dir: string): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === undefined || !(code in STORAGE_ERRNOS)) return error;
  return new RunStorageError(`${what} in ${dir}: ${STORAGE_ERRNOS[code]} (${code})`);
}

const RUN_ID = /^[A-Za-z0-9_-]+$/;

interface Holder {
  readonly pid: number;
  readonly host: string;
  readonly startedAt: string;
  readonly instance?: string;
}

/** A run as kept on disk: the stored run plus what only this store needs. */
interface RunFile {
  readonly run: StoredRun;
  readonly idempotencyKey?: string;
}

interface RunSlot {
  run: StoredRun;
  idempotencyKey?: string;
  /** Byte offset in feed.ndjson of each entry (index seq - 1), and the file's size. */
  feedOffsets: number[];
  feedSize: number;
  /** Writes to this run's files, one after the other. */
  chain: Promise<unknown>;
}

/** A new run id: sortable by creation time, unguessable. */
export function newRunId(): string {
  return `${Date.now().toString(36).padStart(9, '0')}-${randomBytes(6).toString('hex')}`;
}

function isActive(run: StoredRun): boolean {
  return run.status === 'queued' || run.status === 'running';
}

export class FileRunStore implements RunStore {
  readonly description: string;
  readonly #dir: string;
  readonly #runs = new Map<string, RunSlot>();
  readonly #events = new EventEmitter();
  #instance: string | undefined;
  #seq = 0;
  #lockFile: string;

  /** `root` is the backend directory (`$KAPPS_HOME` or `--backend DIR`): the runs go to `<root>/runs`. */
  constructor(root: string) {
    this.#dir = join(root, 'runs');
    this.description = this.#dir;
    this.#lockFile = join(this.#dir, 'instance.lock');
    this.#events.setMaxListeners(0);
  }

  async open(instance: string): Promise<void> {
    try {
      await mkdir(this.#dir, { recursive: true, mode: 0o700 });
      await this.#takeLock(instance);
    } catch (error) {
      throw storageError(error, 'cannot open the run store', this.#dir);
    }
    this.#instance = instance;
    this.#runs.clear();
    this.#seq = 0;
    for (const name of await readdir(this.#dir)) {
      if (!RUN_ID.test(name)) continue;
      const slot = await this.#load(name);
      if (!slot) continue;
      this.#runs.set(name, slot);
      this.#seq = Math.max(this.#seq, slot.run.seq);
    }
  }

  /** Whether the store's directory can be written now (a full disk cannot): for `/readyz`. */
  async writable(): Promise<boolean> {
    const probe = join(this.#dir, `.ready.${randomBytes(4).toString('hex')}.tmp`);
    try {
      await writeFile(probe, 'ready\n', { mode: 0o600 });
      return true;
    } catch {
      return false;
    } finally {
      await rm(probe, { force: true }).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.#runs.values()].map((s) => s.chain.catch(() => undefined)));
    this.#events.removeAllListeners();
    if (this.#instance === undefined) return;
    this.#instance = undefined;
    try {
      const holder = JSON.parse(await readFile(this.#lockFile, 'utf8')) as Holder;
      if (holder.pid === process.pid && holder.host === hostname()) await rm(this.#lockFile, { force: true });
    } catch {
      // Gone already.
    }
  }

  async #takeLock(instance: string): Promise<void> {
    const mine: Holder = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), instance };
    const text = `${JSON.stringify(mine)}\n`;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const handle = await open(this.#lockFile, 'wx', 0o600);
        try {
          await handle.writeFile(text);
          await handle.sync();
        } finally {
          await handle.close();
        }
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      let holder: Holder | undefined;
      try {
        const parsed = JSON.parse(await readFile(this.#lockFile, 'utf8')) as Partial<Holder>;
        if (typeof parsed.pid === 'number' && typeof parsed.host === 'string')
          holder = { pid: parsed.pid, host: parsed.host, startedAt: String(parsed.startedAt ?? 'unknown') };
      } catch {
        // Empty or torn: left by a holder killed while writing it.
      }
      if (holder) {
        const sameHost = holder.host === hostname();
        if (!sameHost || (processIsAlive(holder.pid) && holder.pid !== process.pid)) {
          throw new RunStoreBusyError(
            `the run store ${this.#dir} is in use by another kapps serve (pid ${holder.pid} on ${holder.host}, started ${holder.startedAt}); ` +
              `stop it, or use another --backend (several instances need PostgreSQL)`,
          );
        }
      }
      // A dead holder: take its place (replace the file atomically), then check that the place is ours.
      const temp = `${this.#lockFile}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      await writeFile(temp, text, { mode: 0o600 });
      await rename(temp, this.#lockFile);
      const now = JSON.parse(await readFile(this.#lockFile, 'utf8')) as Holder;
      if (now.pid === process.pid && now.host === hostname()) return;
    }
    throw new RunStoreBusyError(`the run store ${this.#dir} is being taken by another kapps serve`);
  }

  async #load(id: string): Promise<RunSlot | undefined> {
    let file: RunFile;
    try {
      file = JSON.parse(await readFile(join(this.#dir, id, 'run.json'), 'utf8')) as RunFile;
    } catch {
      // A run directory whose run.json was never written (killed at submit): nothing was accepted.
      return undefined;
    }
    const feedOffsets: number[] = [];
    let feedSize = 0;
    try {
      const feed = await readFile(join(this.#dir, id, 'feed.ndjson'));
      let start = 0;
      for (let i = 0; i < feed.length; i++) {
        if (feed[i] !== 0x0a) continue;
        feedOffsets.push(start);
        start = i + 1;
      }
      feedSize = start;
      // A torn last line (killed while appending) is cut off.
      if (start < feed.length) await truncate(join(this.#dir, id, 'feed.ndjson'), start);
    } catch {
      // No feed yet.
    }
    return {
      run: file.run,
      ...(file.idempotencyKey ? { idempotencyKey: file.idempotencyKey } : {}),
      feedOffsets,
      feedSize,
      chain: Promise.resolve(),
    };
  }

  #slot(id: string): RunSlot | undefined {
    return RUN_ID.test(id) ? this.#runs.get(id) : undefined;
  }

  /** Queue a write of this run's files after the earlier ones. */
  #write<T>(slot: RunSlot, work: () => Promise<T>): Promise<T> {
    const next = slot.chain.then(work, work).catch((error: unknown) => {
      throw storageError(error, `cannot write run ${slot.run.id}`, this.#dir);
    });
    slot.chain = next.catch(() => undefined);
    return next;
  }

  /** Write run.json atomically (the latest state when the write's turn comes). */
  #persist(slot: RunSlot): Promise<void> {
    return this.#write(slot, async () => {
      const dir = join(this.#dir, slot.run.id);
      const body: RunFile = {
        run: slot.run,
        ...(slot.idempotencyKey ? { idempotencyKey: slot.idempotencyKey } : {}),
      };
      const temp = join(dir, `.run.json.${randomBytes(4).toString('hex')}.tmp`);
      await writeFile(temp, `${JSON.stringify(body)}\n`, { mode: 0o600 });
      await rename(temp, join(dir, 'run.json'));
    });
  }

  #notify(notice: StoreNotice): void {
    this.#events.emit('notice', notice);
  }

  /** Change a run, append its new status to its feed, write it. */
  async #change(slot: RunSlot, patch: Partial<StoredRun>): Promise<StoredRun> {
    slot.run = { ...slot.run, ...patch };
    const run = slot.run;
    const persisted = this.#persist(slot);
    const appended = this.appendFeed(run.id, [{ kind: 'status', data: run }]);
    await Promise.all([persisted, appended]);
    return run;
  }

  async submit(input: NewRun, limits: SubmitLimits): Promise<SubmitOutcome> {
    if (limits.idempotencyKey !== undefined) {
      for (const slot of this.#runs.values()) {
        if (slot.idempotencyKey === limits.idempotencyKey && slot.run.createdBy === input.createdBy)
          return { kind: 'existing', run: slot.run };
      }
    }
    let total = 0;
    let onStack = 0;
    for (const { run } of this.#runs.values()) {
      if (run.status !== 'queued') continue;
      total++;
      if (run.project === input.project && run.stack === input.stack) onStack++;
    }
    if (onStack >= limits.maxQueuedPerStack) return { kind: 'full', scope: 'stack', retryAfterSeconds: 10 };
    if (total >= limits.maxQueuedTotal) return { kind: 'full', scope: 'total', retryAfterSeconds: 10 };
    const id = newRunId();
    const run: StoredRun = {
      id,
      type: input.type,
      project: input.project,
      stack: input.stack,
      status: 'queued',
      createdBy: input.createdBy,
      createdAt: new Date().toISOString(),
      startedAt: null,
      finishedAt: null,
      releaseRevision: null,
      error: null,
      options: input.options,
      seq: ++this.#seq,
      instance: null,
      leaseUntil: null,
      cancelRequested: false,
    };
    const slot: RunSlot = {
      run,
      ...(limits.idempotencyKey !== undefined ? { idempotencyKey: limits.idempotencyKey } : {}),
      feedOffsets: [],
      feedSize: 0,
      chain: Promise.resolve(),
    };
    this.#runs.set(id, slot);
    try {
      await mkdir(join(this.#dir, id), { recursive: true, mode: 0o700 });
      await Promise.all([this.#persist(slot), this.appendFeed(id, [{ kind: 'status', data: run }])]);
    } catch (error) {
      // A submission that could not be written creates nothing.
      this.#runs.delete(id);
      await rm(join(this.#dir, id), { recursive: true, force: true }).catch(() => undefined);
      throw storageError(error, 'cannot submit a run', this.#dir);
    }
    this.#notify({ type: 'queued', runId: id });
    return { kind: 'created', run };
  }

  get(id: string): Promise<StoredRun | undefined> {
    return Promise.resolve(this.#slot(id)?.run);
  }

  async queueInfo(run: StoredRun): Promise<QueueInfo> {
    if (run.status !== 'queued') return { queuePosition: null, blockedBy: null };
    const active = await this.active(run.project, run.stack);
    const running = active.find((r) => r.status === 'running');
    const queued = active.filter((r) => r.status === 'queued');
    const index = queued.findIndex((r) => r.id === run.id);
    if (index < 0) return { queuePosition: null, blockedBy: null };
    const before = index > 0 ? queued[index - 1] : running;
    return { queuePosition: index + 1, blockedBy: before?.id ?? null };
  }

  list(query: RunListFilter): Promise<{ runs: StoredRun[]; nextCursor: string | null }> {
    const below = query.cursor !== undefined ? decodeRunCursor(query.cursor) : Infinity;
    const since = query.since ? Date.parse(query.since) : -Infinity;
    const until = query.until ? Date.parse(query.until) : Infinity;
    const matching = [...this.#runs.values()]
      .map((s) => s.run)
      .filter(
        (r) =>
          r.seq < below &&
          (query.project === undefined || r.project === query.project) &&
          (query.projects === undefined || projectMatches(query.projects, r.project)) &&
          (query.stack === undefined || r.stack === query.stack) &&
          (query.type === undefined || r.type === query.type) &&
          (query.status === undefined || r.status === query.status) &&
          (query.createdBy === undefined || r.createdBy === query.createdBy) &&
          Date.parse(r.createdAt) >= since &&
          Date.parse(r.createdAt) <= until,
      )
      .sort((a, b) => b.seq - a.seq);
    const runs = matching.slice(0, query.limit);
    const last = runs.at(-1);
    return Promise.resolve({
      runs,
      nextCursor: matching.length > runs.length && last ? encodeRunCursor(last.seq) : null,
    });
  }

  active(project: string, stack: string): Promise<StoredRun[]> {
    return Promise.resolve(
      [...this.#runs.values()]
        .map((s) => s.run)
        .filter((r) => r.project === project && r.stack === stack && isActive(r))
        .sort((a, b) => a.seq - b.seq),
    );
  }

  async claim(instance: string, leaseMs: number): Promise<StoredRun | undefined> {
    const busy = new Set<string>();
    const queued: RunSlot[] = [];
    for (const slot of this.#runs.values()) {
      const key = JSON.stringify([slot.run.project, slot.run.stack]);
      if (slot.run.status === 'running') busy.add(key);
      else if (slot.run.status === 'queued') queued.push(slot);
    }
    queued.sort((a, b) => a.run.seq - b.run.seq);
    const slot = queued.find((s) => !busy.has(JSON.stringify([s.run.project, s.run.stack])));
    if (!slot) return undefined;
    const now = Date.now();
    // Changed in memory before any await: no other claim can take it.
    return this.#change(slot, {
      status: 'running',
      startedAt: new Date(now).toISOString(),
      instance,
      leaseUntil: new Date(now + leaseMs).toISOString(),
      leaseGeneration: (slot.run.leaseGeneration ?? 0) + 1,
    });
  }

  /** Whether `owner` holds the running run of `slot`. */
  #owns(slot: RunSlot | undefined, owner: RunOwner): slot is RunSlot {
    if (!slot || slot.run.status !== 'running') return false;
    if (typeof owner === 'string') return slot.run.instance === owner;
    return slot.run.instance === owner.instance && (slot.run.leaseGeneration ?? 0) === owner.generation;
  }

  async renew(instance: string, runIds: readonly string[], leaseMs: number): Promise<string[]> {
    const lost: string[] = [];
    const until = new Date(Date.now() + leaseMs).toISOString();
    for (const id of runIds) {
      const slot = this.#slot(id);
      if (!slot || slot.run.status !== 'running' || slot.run.instance !== instance) {
        lost.push(id);
        continue;
      }
      slot.run = { ...slot.run, leaseUntil: until };
      await this.#persist(slot);
    }
    return lost;
  }

  async setRelease(id: string, owner: RunOwner, revision: number): Promise<void> {
    const slot = this.#slot(id);
    if (!this.#owns(slot, owner)) return;
    slot.run = { ...slot.run, releaseRevision: revision };
    await this.#persist(slot);
  }

  async finish(id: string, owner: RunOwner, ending: RunEnding): Promise<boolean> {
    const slot = this.#slot(id);
    if (!this.#owns(slot, owner)) return false;
    await this.#change(slot, {
      status: ending.status,
      error: ending.error ?? null,
      releaseRevision: ending.releaseRevision ?? slot.run.releaseRevision,
      finishedAt: new Date().toISOString(),
      instance: null,
      leaseUntil: null,
    });
    this.#notify({ type: 'finished', runId: id });
    return true;
  }

  async reapExpired(reason: string, options: ReapOptions = {}): Promise<StoredRun[]> {
    const now = Date.now() - Math.max(0, options.graceMs ?? 0);
    const reaped: StoredRun[] = [];
    for (const slot of this.#runs.values()) {
      const run = slot.run;
      if (run.status !== 'running') continue;
      // One instance holds this store: a run left running by another instance (a dead one) is reaped at once.
      const expired = run.instance !== this.#instance || run.leaseUntil === null || Date.parse(run.leaseUntil) < now;
      if (!expired) continue;
      if (options.beforeErrored) {
        try {
          await options.beforeErrored({ ...run, status: 'errored', error: reason });
        } catch {
          continue; // its release could not be closed: it stays running until the next reap
        }
        if (slot.run.status !== 'running') continue;
      }
      reaped.push(
        await this.#change(slot, {
          status: 'errored',
          error: reason,
          finishedAt: new Date().toISOString(),
          instance: null,
          leaseUntil: null,
        }),
      );
      this.#notify({ type: 'finished', runId: run.id });
    }
    return reaped;
  }

  async requestCancel(id: string, by: string): Promise<StoredRun | undefined> {
    const slot = this.#slot(id);
    if (!slot) return undefined;
    if (slot.run.status === 'queued') {
      const run = await this.#change(slot, {
        status: 'cancelled',
        error: `cancelled by ${by} before it started`,
        finishedAt: new Date().toISOString(),
      });
      this.#notify({ type: 'finished', runId: id });
      return run;
    }
    if (slot.run.status === 'running' && !slot.run.cancelRequested) {
      slot.run = { ...slot.run, cancelRequested: true };
      await this.#persist(slot);
      this.#notify({ type: 'cancel', runId: id });
    }
    return slot.run;
  }

  async prune(policy: RetentionPolicy): Promise<number> {
    const before = policy.before !== undefined ? Date.parse(policy.before) : -Infinity;
    const byStack = new Map<string, RunSlot[]>();
    for (const slot of this.#runs.values()) {
      if (isActive(slot.run)) continue;
      const key = JSON.stringify([slot.run.project, slot.run.stack]);
      byStack.set(key, [...(byStack.get(key) ?? []), slot]);
    }
    const doomed: RunSlot[] = [];
    for (const slots of byStack.values()) {
      slots.sort((a, b) => b.run.seq - a.run.seq);
      slots.forEach((slot, index) => {
        if (index >= policy.keepPerStack || Date.parse(slot.run.createdAt) < before) doomed.push(slot);
      });
    }
    for (const slot of doomed) {
      this.#runs.delete(slot.run.id);
      await slot.chain.catch(() => undefined);
      await rm(join(this.#dir, slot.run.id), { recursive: true, force: true });
    }
    return doomed.length;
  }

  async appendFeed(id: string, items: readonly FeedItem[], owner?: RunOwner): Promise<number> {
    const slot = this.#slot(id);
    if (!slot) throw new Error(`no run ${id}`);
    if (owner !== undefined && !this.#owns(slot, owner)) {
      throw new RunLeaseLostError(`run ${id} is no longer held by this server (its lease was reaped)`);
    }
    if (items.length === 0) return slot.feedOffsets.length;
    // Sequence numbers and offsets are taken now, in call order; the bytes follow in the same order.
    let feed = '';
    let log = '';
    let offset = slot.feedSize;
    for (const item of items) {
      // The same rule as PostgreSQL's: lone surrogates and NUL are kept as U+FFFD.
      const line = `${storableJson({ seq: slot.feedOffsets.length + 1, kind: item.kind, data: item.data })}\n`;
      slot.feedOffsets.push(offset);
      offset += Buffer.byteLength(line);
      feed += line;
      if (item.kind === 'log') log += `${storableJson(item.data)}\n`;
    }
    slot.feedSize = offset;
    const last = slot.feedOffsets.length;
    const dir = join(this.#dir, id);
    await this.#write(slot, async () => {
      if (log) await appendFile(join(dir, 'log.ndjson'), log, { mode: 0o600 });
      await appendFile(join(dir, 'feed.ndjson'), feed, { mode: 0o600 });
    });
    this.#notify({ type: 'feed', runId: id, seq: last });
    return last;
  }

  async readFeed(id: string, afterSeq: number, limit: number): Promise<FeedEntry[]> {
    const slot = this.#slot(id);
    if (!slot) return [];
    // Wait for the appends made so far to be on disk.
    await slot.chain;
    const from = Math.max(0, Math.floor(afterSeq));
    const to = Math.min(slot.feedOffsets.length, from + Math.max(0, limit));
    if (from >= to) return [];
    const start = slot.feedOffsets[from] ?? 0;
    const end = to < slot.feedOffsets.length ? (slot.feedOffsets[to] ?? slot.feedSize) : slot.feedSize;
    const bytes = await readRange(join(this.#dir, id, 'feed.ndjson'), start, end - start);
    const entries: FeedEntry[] = [];
    for (const line of bytes.toString('utf8').split('\n')) {
      if (!line) continue;
      const parsed = JSON.parse(line) as { seq: number; kind: FeedItem['kind']; data: never };
      entries.push({ seq: parsed.seq, item: { kind: parsed.kind, data: parsed.data } });
    }
    return entries;
  }

  async readLog(id: string, offset: number, maxBytes: number): Promise<{ lines: LogLine[]; nextOffset: number }> {
    const slot = this.#slot(id);
    if (!slot) return { lines: [], nextOffset: offset };
    await slot.chain;
    const file = join(this.#dir, id, 'log.ndjson');
    let size: number;
    try {
      size = (await stat(file)).size;
    } catch {
      return { lines: [], nextOffset: offset };
    }
    if (offset >= size) return { lines: [], nextOffset: offset };
    let bytes = await readRange(file, offset, Math.min(size - offset, Math.max(1, maxBytes)));
    let lastNewline = bytes.lastIndexOf(0x0a);
    if (lastNewline < 0) {
      // One line longer than maxBytes: it is returned whole.
      bytes = await readRange(file, offset, size - offset);
      lastNewline = bytes.indexOf(0x0a);
      if (lastNewline < 0) return { lines: [], nextOffset: offset };
    }
    const text = bytes.subarray(0, lastNewline + 1).toString('utf8');
    const lines: LogLine[] = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        lines.push(JSON.parse(line) as LogLine);
      } catch {
        // An offset inside a line: that piece is skipped.
      }
    }
    return { lines, nextOffset: offset + lastNewline + 1 };
  }

  async setResult(id: string, result: RunResult): Promise<void> {
    const slot = this.#slot(id);
    if (!slot) return;
    await this.#write(slot, async () => {
      const dir = join(this.#dir, id);
      const temp = join(dir, `.result.json.${randomBytes(4).toString('hex')}.tmp`);
      await writeFile(temp, JSON.stringify(result), { mode: 0o600 });
      await rename(temp, join(dir, 'result.json'));
    });
  }

  async getResult(id: string): Promise<RunResult | undefined> {
    const slot = this.#slot(id);
    if (!slot) return undefined;
    await slot.chain;
    try {
      return JSON.parse(await readFile(join(this.#dir, id, 'result.json'), 'utf8')) as RunResult;
    } catch {
      return undefined;
    }
  }

  subscribe(listener: (notice: StoreNotice) => void): () => void {
    const safe = (notice: StoreNotice): void => {
      try {
        listener(notice);
      } catch {
        // A subscriber's failure is its own.
      }
    };
    this.#events.on('notice', safe);
    return () => this.#events.off('notice', safe);
  }
}

async function readRange(file: string, start: number, length: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, start);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
