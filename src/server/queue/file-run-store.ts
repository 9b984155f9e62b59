/**
 * The file run store: the runs of one server instance kept under `<backend dir>/runs/`.
 *
 * - `runs/index.ndjson`: the index, append-only, one `{"run":…,"idempotencyKey"?:…}` per line: a line when a run is
 *   submitted (before its directory is written) and one when it ends (after its `run.json`). The last line of a run
 *   is its summary. Start-up reads this one file (and the directories of the runs it says are queued or running),
 *   listing reads it from start to end keeping only a page; it is rewritten without the runs `prune` deletes, and
 *   rebuilt from the run directories when it is missing or damaged.
 * - `runs/<id>/run.json`: the run, replaced atomically and durably on every change (temp file fsynced, renamed,
 *   directory fsynced: the helper of the release records);
 * - `runs/<id>/feed.ndjson`: the run's feed, append-only, one `{"seq":N,"kind":…,"data":…}` per line: the one
 *   source of its events and its log;
 * - `runs/<id>/log.ndjson`: the log lines alone, one `LogLine` per line (clients page it by byte offset), appended
 *   after the feed in the same ordered write, and rebuilt from the feed at start-up when a kill came in between, so
 *   `GET /logs` never shows a line the event stream misses;
 * - `runs/<id>/result.json`: the result, once there is one;
 * - `runs/<id>/preview.json`: the preview a run's approvals bind to, written before it is `needs-approval`;
 * - `runs/instance.lock`: the instance holding the store (pid, host, start time). A second instance on the same
 *   directory refuses to start and names the holder while that process is alive; a dead holder's lock is taken over.
 *
 * One instance holds the store. The queued, running and waiting runs are kept in memory (bounded by the queue limits:
 * a waiting run counts as queued; its index line says queued until it ends), and
 * every state change is made there first, synchronously (a claim is atomic), then written; finished runs are read
 * from disk when asked for, a few of them kept (`RECENT_RUNS`). Memory does not grow with the history. Notices go to
 * this process' subscribers.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdir, open, readdir, readFile, rename, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { LogLine } from '../../log/line.js';
import type { ApprovalDecision, CheckResult } from '../../api/index.js';
import type { AwaitApproval, DecideOutcome } from './run-store.js';
import { storableJson } from '../../log/line.js';
import { appendNdjson, replaceDurably } from '../../log/durable.js';
import {
  damageReport,
  encodeText,
  fileLines,
  readLogFile,
  type LogChunk,
  type LogStoreOptions,
} from '../../log/ndjson.js';
import {
  approvalOutcome,
  feedWindow,
  heldBack,
  isRunId,
  queueInfoOf,
  RunStorePolicy,
  type InsertOutcome,
  type RunSelection,
} from './policy.js';
import {
  API_TRIGGER,
  projectMatches,
  RunLeaseLostError,
  RunStoreBusyError,
  type FeedEntry,
  type FeedItem,
  type NewRun,
  type QueueInfo,
  type ReapOptions,
  type RunEnding,
  type RetentionPolicy,
  type RunOwner,
  type RunResult,
  type RunStore,
  type StoredRun,
  type StoreNotice,
  type SubmitLimits,
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

/** Finished runs kept in memory (their feed's offsets), the most recently used. */
const RECENT_RUNS = 64;

interface Holder {
  readonly pid: number;
  readonly host: string;
  readonly startedAt: string;
  readonly instance?: string;
}

/** A run as kept on disk (`run.json`, a line of the index): the stored run plus what only this store needs. */
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
  /** Submitted but not yet written (its directory, run.json, its first feed line): not claimable yet. */
  submitting?: boolean;
}

/** Whether a run is in the queue (kept in memory): queued, running, or waiting for approvals. */
function isActive(run: StoredRun): boolean {
  return run.status === 'queued' || run.status === 'running' || run.status === 'needs-approval';
}

/** Whether `run` is one `selection` asks for (its filters and `beforeSeq`; not its limit). */
function selects(selection: RunSelection, run: StoredRun): boolean {
  const created = Date.parse(run.createdAt);
  return (
    (selection.beforeSeq === undefined || run.seq < selection.beforeSeq) &&
    (selection.project === undefined || run.project === selection.project) &&
    (selection.projects === undefined || projectMatches(selection.projects, run.project)) &&
    (selection.stack === undefined || run.stack === selection.stack) &&
    (selection.type === undefined || run.type === selection.type) &&
    (selection.status === undefined || run.status === selection.status) &&
    (selection.createdBy === undefined || run.createdBy === selection.createdBy) &&
    (selection.since === undefined || created >= Date.parse(selection.since)) &&
    (selection.until === undefined || created <= Date.parse(selection.until))
  );
}

/** The newest `limit` runs given, by `seq` (each id once), without holding more than `limit` of them. */
class NewestRuns {
  readonly #runs: StoredRun[] = [];
  constructor(private readonly limit: number) {}
  add(run: StoredRun): void {
    const runs = this.#runs;
    const same = runs.findIndex((r) => r.id === run.id);
    if (same >= 0) runs.splice(same, 1);
    if (runs.length >= this.limit && (runs.at(-1)?.seq ?? Infinity) >= run.seq) return;
    const at = runs.findIndex((r) => r.seq < run.seq);
    runs.splice(at < 0 ? runs.length : at, 0, run);
    if (runs.length > this.limit) runs.pop();
  }
  get runs(): StoredRun[] {
    return this.#runs;
  }
}

export class FileRunStore extends RunStorePolicy implements RunStore {
  readonly description: string;
  readonly #dir: string;
  readonly #index: string;
  /** The queued and running runs. */
  readonly #active = new Map<string, RunSlot>();
  /** Finished runs read lately (at most `RECENT_RUNS`, least recently used first). */
  readonly #recent = new Map<string, RunSlot>();
  /** Runs that ended whose final state is not written yet (a full disk): written at the next write that works. */
  readonly #unindexed = new Map<string, RunSlot>();
  /** The runs the retention is deleting now: not found, and not read back into the cache, while it does. */
  readonly #doomed = new Set<string>();
  /** Retention passes done: a run read from disk while one ran is returned, not cached (it may be gone). */
  #prunes = 0;
  /** Writes to the index, one after the other. */
  #indexChain: Promise<unknown> = Promise.resolve();
  readonly #events = new EventEmitter();
  readonly #report: ReturnType<typeof damageReport>;
  #instance: string | undefined;
  #seq = 0;
  #lockFile: string;

  /** `root` is the backend directory (`$KAPPS_HOME` or `--backend DIR`): the runs go to `<root>/runs`. */
  constructor(root: string, options: LogStoreOptions = {}) {
    super();
    this.#dir = join(root, 'runs');
    this.#index = join(this.#dir, 'index.ndjson');
    this.description = this.#dir;
    this.#lockFile = join(this.#dir, 'instance.lock');
    this.#report = damageReport(options);
    this.#events.setMaxListeners(0);
  }

  async open(instance: string): Promise<void> {
    try {
      await mkdir(this.#dir, { recursive: true, mode: 0o700 });
      await this.#takeLock(instance);
      this.#instance = instance;
      this.#active.clear();
      this.#recent.clear();
      this.#seq = 0;
      const active = (await this.#readIndex()) ?? (await this.#rebuildIndex());
      for (const id of active) await this.#loadActive(id);
    } catch (error) {
      throw storageError(error, 'cannot open the run store', this.#dir);
    }
  }

  /**
   * Read the index: the highest `seq`, and the runs whose last line says queued or running; undefined when it is
   * missing or damaged (a line other than a torn last one that is not a run). A torn last line is cut off.
   */
  async #readIndex(): Promise<Set<string> | undefined> {
    let text: Buffer;
    try {
      text = await readFile(this.#index);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const complete = text.lastIndexOf(0x0a) + 1;
    if (complete < text.length) await truncate(this.#index, complete);
    const active = new Set<string>();
    for (const line of text.toString('utf8', 0, complete).split('\n')) {
      if (line === '') continue;
      const entry = parseRunFile(line);
      if (!entry) return undefined;
      this.#seq = Math.max(this.#seq, entry.run.seq);
      if (isActive(entry.run)) active.add(entry.run.id);
      else active.delete(entry.run.id);
    }
    return active;
  }

  /** Write the index anew from every run's directory (the layout before the index, or a damaged index). */
  async #rebuildIndex(): Promise<Set<string>> {
    const active = new Set<string>();
    let text = '';
    for (const name of await readdir(this.#dir)) {
      if (!isRunId(name)) continue;
      const file = await this.#readRunFile(name);
      if (!file) continue;
      this.#seq = Math.max(this.#seq, file.run.seq);
      if (isActive(file.run)) active.add(name);
      text += `${storableJson(file)}\n`;
    }
    await replaceDurably(this.#index, text);
    return active;
  }

  /**
   * Take up a run the index says is queued or running: its `run.json` (none: a submission killed before it was
   * written, which was never accepted), its feed with a torn last line cut off, and its log rebuilt from the feed
   * when a kill came between the two appends. A run that ended after its last index line gets its line now.
   */
  async #loadActive(id: string): Promise<void> {
    const slot = await this.#load(id);
    if (!slot) return;
    if (!isActive(slot.run)) {
      await this.#appendIndex(slot);
      return;
    }
    await this.#repairLog(slot);
    this.#active.set(id, slot);
  }

  /** Make `log.ndjson` hold exactly the log lines of the feed (the feed is written first). */
  async #repairLog(slot: RunSlot): Promise<void> {
    const dir = join(this.#dir, slot.run.id);
    const lines: LogLine[] = [];
    for (const entry of await this.#entries(slot, 0, slot.feedOffsets.length)) {
      if (entry.item.kind === 'log') lines.push(entry.item.data);
    }
    const expected = encodeText(lines);
    const file = join(dir, 'log.ndjson');
    const actual = await readFile(file, 'utf8').catch(() => '');
    if (actual !== expected) await replaceDurably(file, expected);
  }

  /** Whether the store's directory can be written now (a full disk cannot): for `/readyz`. */
  async writable(): Promise<boolean> {
    const probe = join(this.#dir, `.ready.${randomBytes(4).toString('hex')}.tmp`);
    try {
      await writeFile(probe, 'ready\n', { mode: 0o600 });
      await this.#indexEnded();
      return true;
    } catch {
      return false;
    } finally {
      await rm(probe, { force: true }).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    const slots = [...this.#active.values(), ...this.#recent.values(), ...this.#unindexed.values()];
    await Promise.all([...slots.map((s) => s.chain), this.#indexChain].map((p) => p.catch(() => undefined)));
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

  async #readRunFile(id: string): Promise<RunFile | undefined> {
    try {
      return parseRunFile(await readFile(join(this.#dir, id, 'run.json'), 'utf8'));
    } catch {
      // A run directory whose run.json was never written (killed at submit): nothing was accepted.
      return undefined;
    }
  }

  /**
   * A run from its directory: run.json (or `file`, its summary in the index) and the offsets of its feed (a torn
   * last line is cut off).
   */
  async #load(id: string, given?: RunFile): Promise<RunSlot | undefined> {
    const file = given ?? (await this.#readRunFile(id));
    if (!file) return undefined;
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

  /** A run in memory, or read from its directory (and kept among the recent ones). */
  async #find(id: string): Promise<RunSlot | undefined> {
    if (!isRunId(id) || this.#doomed.has(id)) return undefined;
    const active = this.#active.get(id) ?? this.#unindexed.get(id);
    if (active) return active;
    const recent = this.#recent.get(id);
    if (recent) {
      this.#recent.delete(id);
      this.#recent.set(id, recent);
      return recent;
    }
    const prunes = this.#prunes;
    // A finished run whose run.json is lost is still known by its summary in the index.
    const loaded = (await this.#load(id)) ?? (await this.#load(id, await this.#summaryOf(id)));
    if (!loaded || isActive(loaded.run) || this.#active.has(id)) return this.#active.get(id);
    if (this.#doomed.has(id)) return undefined;
    // Read while the retention deleted runs: it may be one of them (read before its files went).
    if (prunes !== this.#prunes) return loaded;
    this.#remember(loaded);
    return this.#recent.get(id) ?? loaded;
  }

  #remember(slot: RunSlot): void {
    this.#recent.delete(slot.run.id);
    this.#recent.set(slot.run.id, slot);
    while (this.#recent.size > RECENT_RUNS) this.#recent.delete(this.#recent.keys().next().value!);
  }

  /** The index's runs (their last line each, finished ones only: the active ones are in memory), in file order. */
  async *#indexed(): AsyncGenerator<RunFile> {
    let handle;
    try {
      handle = await open(this.#index, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    try {
      for await (const line of fileLines(handle, 0)) {
        const entry = parseRunFile(line.data as string);
        const id = entry?.run.id ?? '';
        if (!entry || isActive(entry.run) || this.#active.has(id) || this.#unindexed.has(id)) continue;
        // A run the retention is deleting is gone already for every reader.
        if (!this.#doomed.has(id)) yield entry;
      }
    } finally {
      await handle.close();
    }
  }

  /** The last summary of a finished run in the index. */
  async #summaryOf(id: string): Promise<RunFile | undefined> {
    let found: RunFile | undefined;
    for await (const entry of this.#indexed()) if (entry.run.id === id) found = entry;
    return found;
  }

  /** Append a run's summary to the index (after the writes of its files queued so far). */
  #appendIndex(slot: RunSlot): Promise<void> {
    const line = `${storableJson(runFileOf(slot))}\n`;
    return this.#indexWrite(async () => {
      const size = await stat(this.#index).then(
        (st) => st.size,
        () => 0,
      );
      try {
        await appendNdjson(this.#index, line);
      } catch (error) {
        // A part of the line written (a full disk) would join the next line: it is cut off.
        await truncate(this.#index, size).catch(() => undefined);
        throw error;
      }
    });
  }

  #indexWrite<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#indexChain.then(work, work).catch((error: unknown) => {
      throw storageError(error, 'cannot write the index of runs', this.#dir);
    });
    this.#indexChain = next.catch(() => undefined);
    return next;
  }

  /** Queue a write of this run's files after the earlier ones. */
  #write<T>(slot: RunSlot, work: () => Promise<T>): Promise<T> {
    const next = slot.chain.then(work, work).catch((error: unknown) => {
      throw storageError(error, `cannot write run ${slot.run.id}`, this.#dir);
    });
    slot.chain = next.catch(() => undefined);
    return next;
  }

  /** Write run.json atomically and durably (the latest state when the write's turn comes). */
  #persist(slot: RunSlot): Promise<void> {
    return this.#write(slot, () =>
      replaceDurably(join(this.#dir, slot.run.id, 'run.json'), `${JSON.stringify(runFileOf(slot))}\n`),
    );
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

  /**
   * End a run: its final state written, it leaves the queue for the history (the index). When that cannot be
   * written (a full disk), it is kept in memory and written by the next write that works.
   */
  async #end(slot: RunSlot, patch: Partial<StoredRun>): Promise<StoredRun> {
    const changed = this.#change(slot, patch);
    this.#active.delete(slot.run.id);
    this.#unindexed.set(slot.run.id, slot);
    this.#remember(slot);
    const run = await changed;
    await this.#indexEnded();
    this.#notify({ type: 'finished', runId: run.id });
    return run;
  }

  /** Write the final state of the runs that ended without it (run.json, then their index line). */
  async #indexEnded(): Promise<void> {
    for (const slot of [...this.#unindexed.values()]) {
      await this.#persist(slot);
      await this.#appendIndex(slot);
      this.#unindexed.delete(slot.run.id);
    }
  }

  protected async insertRun(input: NewRun & { readonly id: string }, limits: SubmitLimits): Promise<InsertOutcome> {
    const key = limits.idempotencyKey;
    if (key !== undefined) {
      for (const slot of this.#active.values()) {
        if (slot.idempotencyKey === key && slot.run.createdBy === input.createdBy)
          return { kind: 'existing', run: slot.run };
      }
    }
    let total = 0;
    let onStack = 0;
    for (const { run } of this.#active.values()) {
      // A run waiting for approvals keeps its place in the queue.
      if (run.status !== 'queued' && run.status !== 'needs-approval') continue;
      total++;
      if (run.project === input.project && run.stack === input.stack) onStack++;
    }
    if (onStack >= limits.maxQueuedPerStack) return { kind: 'full', scope: 'stack' };
    if (total >= limits.maxQueuedTotal) return { kind: 'full', scope: 'total' };
    if (key !== undefined) {
      for await (const entry of this.#indexed()) {
        if (entry.idempotencyKey === key && entry.run.createdBy === input.createdBy)
          return { kind: 'existing', run: entry.run };
      }
    }
    const { id } = input;
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
      commit: input.commit ?? null,
      trigger: input.trigger ?? API_TRIGGER,
      approval: input.approval ?? null,
      checks: [],
      seq: ++this.#seq,
      instance: null,
      leaseUntil: null,
      cancelRequested: false,
    };
    const slot: RunSlot = {
      run,
      ...(key !== undefined ? { idempotencyKey: key } : {}),
      feedOffsets: [],
      feedSize: 0,
      chain: Promise.resolve(),
      submitting: true,
    };
    this.#active.set(id, slot);
    try {
      await this.#indexEnded();
      // The index first: a run it does not list was never accepted; one it lists without a run.json neither.
      await this.#appendIndex(slot);
      await mkdir(join(this.#dir, id), { recursive: true, mode: 0o700 });
      await Promise.all([this.#persist(slot), this.appendFeed(id, [{ kind: 'status', data: run }])]);
    } catch (error) {
      // A submission that could not be written creates nothing.
      this.#active.delete(id);
      await rm(join(this.#dir, id), { recursive: true, force: true }).catch(() => undefined);
      throw storageError(error, 'cannot submit a run', this.#dir);
    }
    slot.submitting = false;
    this.#notify({ type: 'queued', runId: id });
    return { kind: 'created', run };
  }

  async get(id: string): Promise<StoredRun | undefined> {
    return (await this.#find(id))?.run;
  }

  async queueInfo(run: StoredRun): Promise<QueueInfo> {
    if (run.status !== 'queued') return { queuePosition: null, blockedBy: null };
    return queueInfoOf(run, await this.active(run.project, run.stack));
  }

  protected async selectRuns(selection: RunSelection): Promise<StoredRun[]> {
    const newest = new NewestRuns(selection.limit);
    for (const { run } of [...this.#active.values(), ...this.#unindexed.values()])
      if (selects(selection, run)) newest.add(run);
    for await (const { run } of this.#indexed()) if (selects(selection, run)) newest.add(run);
    return newest.runs;
  }

  active(project: string, stack: string): Promise<StoredRun[]> {
    return Promise.resolve(
      [...this.#active.values()]
        .map((s) => s.run)
        .filter((r) => r.project === project && r.stack === stack)
        .sort((a, b) => a.seq - b.seq),
    );
  }

  async claim(instance: string, leaseMs: number): Promise<StoredRun | undefined> {
    const busy = new Set<string>();
    const waiting: StoredRun[] = [];
    const queued: RunSlot[] = [];
    for (const slot of this.#active.values()) {
      const key = JSON.stringify([slot.run.project, slot.run.stack]);
      if (slot.run.status === 'running') busy.add(key);
      else if (slot.run.status === 'needs-approval') waiting.push(slot.run);
      // A run whose submission is still being written is claimed after it (its `queued` notice).
      else if (slot.run.status === 'queued' && slot.submitting !== true) queued.push(slot);
    }
    queued.sort((a, b) => a.run.seq - b.run.seq);
    // The oldest run of a free stack that no waiting run holds back (a stack's held runs let its others pass).
    const slot = queued
      .filter((s) => !heldBack(s.run, waiting))
      .find((s) => !busy.has(JSON.stringify([s.run.project, s.run.stack])));
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

  /** The running run `owner` holds, if it holds `id`. */
  #owned(id: string, owner: RunOwner): RunSlot | undefined {
    const slot = isRunId(id) ? this.#active.get(id) : undefined;
    if (!slot || slot.run.status !== 'running') return undefined;
    if (typeof owner === 'string') return slot.run.instance === owner ? slot : undefined;
    const held = slot.run.instance === owner.instance && (slot.run.leaseGeneration ?? 0) === owner.generation;
    return held ? slot : undefined;
  }

  async renew(instance: string, runIds: readonly string[], leaseMs: number): Promise<string[]> {
    const lost: string[] = [];
    const until = new Date(Date.now() + leaseMs).toISOString();
    for (const id of runIds) {
      const slot = this.#owned(id, instance);
      if (!slot) {
        lost.push(id);
        continue;
      }
      slot.run = { ...slot.run, leaseUntil: until };
      await this.#persist(slot);
    }
    return lost;
  }

  async setRelease(id: string, owner: RunOwner, revision: number): Promise<void> {
    const slot = this.#owned(id, owner);
    if (!slot) return;
    slot.run = { ...slot.run, releaseRevision: revision };
    await this.#persist(slot);
  }

  async finish(id: string, owner: RunOwner, ending: RunEnding): Promise<boolean> {
    const slot = this.#owned(id, owner);
    if (!slot) return false;
    await this.#end(slot, {
      status: ending.status,
      error: ending.error ?? null,
      releaseRevision: ending.releaseRevision ?? slot.run.releaseRevision,
      finishedAt: new Date().toISOString(),
      instance: null,
      leaseUntil: null,
    });
    return true;
  }

  async reapExpired(reason: string, options: ReapOptions = {}): Promise<StoredRun[]> {
    const now = Date.now() - Math.max(0, options.graceMs ?? 0);
    const reaped: StoredRun[] = [];
    for (const slot of [...this.#active.values()]) {
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
        await this.#end(slot, {
          status: 'errored',
          error: reason,
          finishedAt: new Date().toISOString(),
          instance: null,
          leaseUntil: null,
        }),
      );
    }
    return reaped;
  }

  async requestCancel(id: string, by: string): Promise<StoredRun | undefined> {
    const slot = await this.#find(id);
    if (!slot) return undefined;
    if (slot.run.status === 'queued' || slot.run.status === 'needs-approval') {
      return this.#end(slot, {
        status: 'cancelled',
        error:
          slot.run.status === 'queued'
            ? `cancelled by ${by} before it started`
            : `cancelled by ${by} while it waited for approval`,
        finishedAt: new Date().toISOString(),
      });
    }
    if (slot.run.status === 'running' && !slot.run.cancelRequested) {
      slot.run = { ...slot.run, cancelRequested: true };
      await this.#persist(slot);
      this.#notify({ type: 'cancel', runId: id });
    }
    return slot.run;
  }

  /** Delete finished runs (see `RunStore.prune`); the index is rewritten without them. */
  async prune(policy: RetentionPolicy): Promise<number> {
    const before = policy.before !== undefined ? Date.parse(policy.before) : -Infinity;
    const byStack = new Map<string, { id: string; seq: number; createdAt: number }[]>();
    for await (const { run } of this.#indexed()) {
      const key = JSON.stringify([run.project, run.stack]);
      const runs = byStack.get(key) ?? [];
      if (!runs.some((r) => r.id === run.id))
        runs.push({ id: run.id, seq: run.seq, createdAt: Date.parse(run.createdAt) });
      byStack.set(key, runs);
    }
    const doomed = new Set<string>();
    for (const runs of byStack.values()) {
      runs.sort((a, b) => b.seq - a.seq);
      runs.forEach((run, index) => {
        if (index >= policy.keepPerStack || run.createdAt < before) doomed.add(run.id);
      });
    }
    if (doomed.size === 0) return 0;
    for (const id of doomed) this.#doomed.add(id);
    try {
      await this.#deleteRuns(doomed);
    } finally {
      for (const id of doomed) {
        this.#doomed.delete(id);
        this.#recent.delete(id);
      }
      this.#prunes++;
    }
    return doomed.size;
  }

  /** Delete the files and index lines of `doomed` (finished runs). */
  async #deleteRuns(doomed: ReadonlySet<string>): Promise<void> {
    for (const id of doomed) {
      const slot = this.#recent.get(id);
      this.#recent.delete(id);
      await slot?.chain.catch(() => undefined);
      await rm(join(this.#dir, id), { recursive: true, force: true });
    }
    await this.#indexWrite(async () => {
      const kept = new Map<string, string>();
      const text = await readFile(this.#index, 'utf8').catch(() => '');
      for (const line of text.split('\n')) {
        const entry = line === '' ? undefined : parseRunFile(line);
        if (!entry || doomed.has(entry.run.id)) continue;
        // Its last line only; a run's place is that of its first line.
        kept.set(entry.run.id, line);
      }
      await replaceDurably(this.#index, [...kept.values()].map((line) => `${line}\n`).join(''));
    });
  }

  async appendFeed(id: string, items: readonly FeedItem[], owner?: RunOwner): Promise<number> {
    // Found at once while it is in memory (so appends keep their call order), else read.
    const slot = (isRunId(id) ? (this.#active.get(id) ?? this.#recent.get(id)) : undefined) ?? (await this.#find(id));
    if (!slot) throw new Error(`no run ${id}`);
    if (owner !== undefined && !this.#owned(id, owner)) {
      throw new RunLeaseLostError(`run ${id} is no longer held by this server (its lease was reaped)`);
    }
    if (items.length === 0) return slot.feedOffsets.length;
    // Sequence numbers and offsets are taken now, in call order; the bytes follow in the same order.
    let feed = '';
    const logLines: LogLine[] = [];
    let offset = slot.feedSize;
    for (const item of items) {
      // The same rule as PostgreSQL's: lone surrogates and NUL are kept as U+FFFD.
      const line = `${storableJson({ seq: slot.feedOffsets.length + 1, kind: item.kind, data: item.data })}\n`;
      slot.feedOffsets.push(offset);
      offset += Buffer.byteLength(line);
      feed += line;
      if (item.kind === 'log') logLines.push(item.data);
    }
    slot.feedSize = offset;
    const last = slot.feedOffsets.length;
    const dir = join(this.#dir, id);
    // One ordered write: the feed (the events), then the same lines in the log; a kill in between is repaired from
    // the feed at start-up.
    await this.#write(slot, async () => {
      await appendNdjson(join(dir, 'feed.ndjson'), feed);
      if (logLines.length > 0) await appendNdjson(join(dir, 'log.ndjson'), encodeText(logLines));
    });
    this.#notify({ type: 'feed', runId: id, seq: last });
    return last;
  }

  /** The feed entries `from` … `to` - 1 (by index) of a run. */
  async #entries(slot: RunSlot, from: number, to: number): Promise<FeedEntry[]> {
    if (from >= to) return [];
    const start = slot.feedOffsets[from] ?? 0;
    const end = to < slot.feedOffsets.length ? (slot.feedOffsets[to] ?? slot.feedSize) : slot.feedSize;
    const bytes = await readRange(join(this.#dir, slot.run.id, 'feed.ndjson'), start, end - start);
    const entries: FeedEntry[] = [];
    for (const line of bytes.toString('utf8').split('\n')) {
      if (!line) continue;
      const parsed = JSON.parse(line) as { seq: number; kind: FeedItem['kind']; data: never };
      entries.push({ seq: parsed.seq, item: { kind: parsed.kind, data: parsed.data } });
    }
    return entries;
  }

  async readFeed(id: string, afterSeq: number, limit: number): Promise<FeedEntry[]> {
    const slot = await this.#find(id);
    if (!slot) return [];
    // Wait for the appends made so far to be on disk.
    await slot.chain;
    const window = feedWindow(afterSeq, limit);
    return this.#entries(slot, window.afterSeq, Math.min(slot.feedOffsets.length, window.afterSeq + window.limit));
  }

  async readLog(id: string, offset: number, maxBytes: number): Promise<LogChunk> {
    const start = Math.max(0, Math.floor(offset));
    const slot = await this.#find(id);
    if (!slot) return { lines: [], nextOffset: start };
    await slot.chain;
    return readLogFile(join(this.#dir, id, 'log.ndjson'), start, Math.max(1, maxBytes), { report: this.#report });
  }

  async setResult(id: string, result: RunResult): Promise<void> {
    const slot = await this.#find(id);
    if (!slot) return;
    await this.#write(slot, () => replaceDurably(join(this.#dir, id, 'result.json'), JSON.stringify(result)));
  }

  // Approvals: see RunStore.
  async addChecks(id: string, owner: RunOwner, results: readonly CheckResult[]): Promise<void> {
    const slot = this.#owned(id, owner);
    if (!slot) throw new RunLeaseLostError(`run ${id} is no longer held by this server (its lease was reaped)`);
    if (results.length === 0) return;
    await this.#change(slot, { checks: [...(slot.run.checks ?? []), ...results] });
  }

  async awaitApproval(id: string, owner: RunOwner, waiting: AwaitApproval): Promise<boolean> {
    if (!this.#owned(id, owner)?.run.approval) return false;
    await this.#write(this.#owned(id, owner)!, () =>
      replaceDurably(join(this.#dir, id, 'preview.json'), JSON.stringify(waiting.preview)),
    );
    // Looked at again after the write: reaped, or cancelled while its preview ran.
    const slot = this.#owned(id, owner);
    const approval = slot?.run.approval;
    if (!slot || !approval) return false;
    if (slot.run.cancelRequested) {
      await this.#end(slot, {
        status: 'cancelled',
        error: 'cancelled before it waited for approval',
        finishedAt: new Date().toISOString(),
        instance: null,
        leaseUntil: null,
      });
      return true;
    }
    await this.#change(slot, {
      status: 'needs-approval',
      instance: null,
      leaseUntil: null,
      approval: {
        ...approval,
        waitingSince: waiting.waitingSince,
        expiresAt: waiting.expiresAt,
        basedOnRevision: waiting.basedOnRevision,
      },
    });
    // Its stack is free again for the runs it does not hold back.
    this.#notify({ type: 'finished', runId: id });
    return true;
  }

  async decide(id: string, decision: ApprovalDecision): Promise<DecideOutcome | undefined> {
    const slot = await this.#find(id);
    if (!slot) return undefined;
    // Decided in memory before any await: two decisions at once both count.
    const outcome = approvalOutcome(slot.run, decision);
    if (outcome.kind === 'not-waiting' || outcome.kind === 'duplicate') return { kind: outcome.kind, run: slot.run };
    if (outcome.kind === 'rejected') {
      const run = await this.#end(slot, {
        status: 'rejected',
        approval: outcome.approval,
        error: outcome.error,
        finishedAt: new Date().toISOString(),
      });
      return { kind: 'rejected', run };
    }
    if (outcome.kind === 'recorded')
      return { kind: 'recorded', run: await this.#change(slot, { approval: outcome.approval }) };
    const run = await this.#change(slot, { status: 'queued', approval: outcome.approval });
    this.#notify({ type: 'queued', runId: id });
    return { kind: 'approved', run };
  }

  async endWaiting(id: string, status: 'stale' | 'cancelled', error: string): Promise<StoredRun | undefined> {
    const slot = isRunId(id) ? this.#active.get(id) : undefined;
    if (slot?.run.status !== 'needs-approval') return undefined;
    return this.#end(slot, { status, error, finishedAt: new Date().toISOString() });
  }

  waiting(): Promise<StoredRun[]> {
    return Promise.resolve(
      [...this.#active.values()]
        .map((s) => s.run)
        .filter((r) => r.status === 'needs-approval')
        .sort((a, b) => a.seq - b.seq),
    );
  }

  async getPreview(id: string): Promise<RunResult | undefined> {
    const slot = await this.#find(id);
    if (!slot) return undefined;
    await slot.chain;
    try {
      return JSON.parse(await readFile(join(this.#dir, id, 'preview.json'), 'utf8')) as RunResult;
    } catch {
      return undefined;
    }
  }

  async getResult(id: string): Promise<RunResult | undefined> {
    const slot = await this.#find(id);
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

function runFileOf(slot: RunSlot): RunFile {
  return { run: slot.run, ...(slot.idempotencyKey ? { idempotencyKey: slot.idempotencyKey } : {}) };
}

/** A line of the index or a run.json as a run; undefined when it is not one. */
function parseRunFile(text: string): RunFile | undefined {
  try {
    const file = JSON.parse(text) as Partial<RunFile> | null;
    const run = file?.run;
    if (typeof run !== 'object' || run === null || typeof run.id !== 'string' || typeof run.seq !== 'number')
      return undefined;
    return file as RunFile;
  } catch {
    return undefined;
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
