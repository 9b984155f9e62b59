/**
 * The release lifecycle the run commands use:
 *
 *   beginRelease ──► recordKapp (after each kapp) ──► finish('succeeded' | 'failed' | 'cancelled')
 *        │                 ▲ heartbeat every 10 s while open
 *        └─ refused with ReleaseLockedError while the latest release is applying/deleting
 *
 * The lock is the latest release's phase, made safe by the store's exclusive `create`: two runs that both see
 * revision N finished both try to create N+1 and exactly one succeeds; the other re-reads and reports the winner.
 * A lock whose owner died stays until `unlockRelease` (`kapps release unlock`) marks it failed.
 *
 * Not done here: running kapps, choosing statuses, redacting the spec; the caller does those.
 */
import { InternalError } from '../diagnostics/errors.js';
import type { StackSpec } from '../plan/spec.js';
import type { KappStatus } from '../vocabulary.js';
import { ReleaseConflictError, ReleaseLockedError, ReleaseStoreError, RevisionTakenError } from './errors.js';
import { currentOwner, formatOwner, ownerHealth } from './owner.js';
import { redactArgv } from '../diagnostics/redact.js';
import { specDigest } from './canonical-json.js';
import { isJsonSafe } from './record-schema.js';
import type { ReleaseStore, StateChange } from './store-types.js';
import {
  approvalsOf,
  isRunningPhase,
  type FinalPhase,
  type JsonValue,
  type KappState,
  type KappStateStatus,
  type Release,
  type ReleaseApproval,
  type ReleaseBreakGlass,
  type ReleaseOperation,
  type ReleaseOwner,
  type ReleaseSelectors,
  type ReleaseSource,
  type StepRecord,
} from './types.js';

/** Default interval between heartbeats, in milliseconds. */
export const HEARTBEAT_MS = 10_000;

/** Options of `beginRelease`. */
export interface BeginReleaseOptions {
  store: ReleaseStore;
  project: string;
  stack: string;
  operation: ReleaseOperation;
  /** The `kapps generate` document of the selected kapps, sensitive values already redacted. */
  spec: StackSpec;
  /** The command line (argv after `node`), redacted by the caller. */
  command: readonly string[];
  selectors: ReleaseSelectors;
  kappsVersion: string;
  /** The clock; defaults to the system clock. */
  now?: () => Date;
  /** Defaults to this process (`currentOwner()`). */
  owner?: ReleaseOwner;
  /** The stack file as the user named it, to print an exact `kapps release unlock` command when locked. */
  stackFile?: string;
  /** Milliseconds between heartbeats; default `HEARTBEAT_MS`. */
  heartbeatMs?: number;
  /** The repository and commit the spec was read at (a project from git, a stack file in a git checkout). */
  source?: ReleaseSource;
  /** A rollback: the revision whose desired state this release applies again. */
  rollbackOf?: number;
  /** A runs server's run of a stack requiring approvals: the approvals that let it apply. */
  approvals?: readonly ReleaseApproval[];
  /** Those approvals were skipped by a break-glass token. */
  breakGlass?: ReleaseBreakGlass;
}

/** What the caller records for one kapp; the recorder adds `revision` and `updatedAt`. */
export interface KappStateInput {
  status: KappStateStatus;
  /** JSON-safe, non-sensitive outputs (convert Go values with `toJS` first); default `{}`. */
  outputs?: JsonValue;
  /** Steps run for the kapp, in order; default none. */
  steps?: StepRecord[];
  /** Default: the digest of the kapp in the release's spec, else the previous entry's digest. */
  specDigest?: string;
  /** The format of the spec `specDigest` is the digest of (see `SpecKapp`); with `specDigest` only. */
  specFormat?: number;
  /** Why the kapp failed or was cancelled. */
  error?: string;
}

/** A copy of a release's source with its known fields only. */
function sourceOf(source: ReleaseSource): ReleaseSource {
  return {
    repo: source.repo,
    commit: source.commit,
    ...(source.dirty !== undefined ? { dirty: source.dirty } : {}),
    ...(source.path !== undefined ? { path: source.path } : {}),
  };
}

/**
 * Begin a release of (project, stack): refuse with `ReleaseLockedError` while the latest release is running,
 * otherwise create revision latest+1 (phase `applying` for install, `deleting` for delete) whose state is a copy
 * of the latest release's state, whatever its phase.
 */
export async function beginRelease(options: BeginReleaseOptions): Promise<ReleaseRecorder> {
  const { store, project, stack } = options;
  const now = options.now ?? (() => new Date());
  const latest = await store.latest(project, stack);
  if (latest && isRunningPhase(latest.phase)) throw lockedError(latest, now(), options.stackFile, false);
  const time = now().toISOString();
  const release: Release = {
    project,
    stack,
    revision: (latest?.revision ?? 0) + 1,
    operation: options.operation,
    phase: options.operation === 'install' ? 'applying' : 'deleting',
    createdAt: time,
    modifiedAt: time,
    heartbeatAt: time,
    owner: { ...(options.owner ?? currentOwner()) },
    command: redactArgv(options.command),
    selectors: { include: [...options.selectors.include], exclude: [...options.selectors.exclude] },
    kappsVersion: options.kappsVersion,
    ...(options.source ? { source: sourceOf(options.source) } : {}),
    ...(options.rollbackOf !== undefined ? { rollbackOf: options.rollbackOf } : {}),
    ...approvalsOf(options),
    state: latest ? structuredClone(latest.state) : {},
    spec: structuredClone(options.spec),
  };
  try {
    await store.create(release);
  } catch (error) {
    if (!(error instanceof RevisionTakenError)) throw error;
    const winner = await store.get(project, stack, release.revision);
    if (!winner)
      throw new ReleaseStoreError(`release ${release.revision} of ${project}/${stack} vanished after creation`);
    throw lockedError(winner, now(), options.stackFile, true);
  }
  return new ReleaseRecorder(store, release, now, options.heartbeatMs ?? HEARTBEAT_MS);
}

/**
 * The shortest time between two writes of one release, in ms. A kapp's state is on disk at most this long after it
 * finishes (its `recordKapp` resolves then); kapps finishing within it share one write. It keeps a run of many
 * quick kapps from spending its time rewriting the release.
 */
export const WRITE_INTERVAL_MS = 100;

/**
 * What a change touches: one kapp's state entry, the heartbeat (both fit the journal), or anything else (the spec,
 * the finish), which needs the whole record written.
 */
type ChangeScope = { readonly kapp: string } | 'heartbeat' | 'record';

/** Changes waiting for the next write, and the callers waiting for them to be saved. */
interface PendingBatch {
  readonly changes: ((release: Release) => void)[];
  readonly waiters: { resolve: () => void; reject: (error: unknown) => void }[];
  /** The kapps whose state entries the changes replace. */
  readonly kapps: Set<string>;
  /** A change needs the whole record written (not only journal entries). */
  whole: boolean;
}

/**
 * An open release. Writes are serialised (one at a time, in call order), each only if nobody else changed the
 * release since this recorder's last write; if someone did (the release was unlocked by hand), the recorder stops
 * writing and its calls reject with `ReleaseConflictError`. A write that only records kapps and heartbeats is
 * appended to the release's journal (`ReleaseStore.appendState`, when the store has one): its bytes are the
 * batch's, not the whole record's. The spec and the finish replace the whole record, which folds the journal in.
 */
export class ReleaseRecorder {
  readonly #store: ReleaseStore;
  readonly #now: () => Date;
  readonly #desired: Release;
  #persisted: string;
  #queue: Promise<unknown> = Promise.resolve();
  #pending: PendingBatch | undefined;
  #lastWrite = 0;
  /** Writes no longer wait for the interval (the run has no more kapps to record, or is finishing). */
  #hurry = false;
  /** Ends the interval wait of the batch in flight, if any. */
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #finishing: Promise<Release> | undefined;
  #lost: ReleaseConflictError | undefined;

  /** Use `beginRelease`; `release` must be stored already. */
  constructor(store: ReleaseStore, release: Release, now: () => Date, heartbeatMs: number) {
    this.#store = store;
    this.#now = now;
    this.#desired = structuredClone(release);
    this.#persisted = release.modifiedAt;
    this.#timer = setInterval(() => {
      this.#write('heartbeat', (r) => {
        r.heartbeatAt = this.#now().toISOString();
      }).catch(() => {
        // A missed heartbeat only makes the owner look older; a conflict is kept in #lost by #write.
      });
    }, heartbeatMs);
    this.#timer.unref();
  }

  /** A copy of the release as this recorder last wrote or will write it. */
  get release(): Release {
    return structuredClone(this.#desired);
  }

  /** The revision of this release. */
  get revision(): number {
    return this.#desired.revision;
  }

  /** Record one kapp's result (call after the kapp finishes); saved before the promise resolves. */
  recordKapp(id: string, entry: KappStateInput): Promise<void> {
    if (this.#finishing) {
      return Promise.reject(new InternalError(`release ${this.revision} is finished; cannot record kapp ${id}`));
    }
    const outputs = entry.outputs ?? {};
    if (!isJsonSafe(outputs)) {
      return Promise.reject(new InternalError(`outputs of kapp ${id} are not JSON-safe data (convert with toJS)`));
    }
    // A JSON round trip turns null-prototype maps into plain objects and detaches the caller's data.
    const copy = JSON.parse(JSON.stringify(outputs)) as JsonValue;
    const steps = structuredClone(entry.steps ?? []);
    return this.#write({ kapp: id }, (r) => {
      // Looked up only when the caller gives no digest (a search of the whole spec for each kapp otherwise).
      const inSpec = entry.specDigest === undefined ? r.spec.kapps.find((k) => k.id === id) : undefined;
      const previous = Object.hasOwn(r.state, id) ? r.state[id] : undefined;
      const format = entry.specDigest !== undefined ? entry.specFormat : inSpec ? r.spec.format : previous?.specFormat;
      const state: KappState = {
        status: entry.status,
        ...(entry.error !== undefined ? { error: entry.error } : {}),
        specDigest: entry.specDigest ?? (inSpec ? specDigest(inSpec) : (previous?.specDigest ?? '')),
        ...(format !== undefined ? { specFormat: format } : {}),
        revision: r.revision,
        updatedAt: this.#now().toISOString(),
        outputs: copy,
        steps,
      };
      r.state[id] = state;
    });
  }

  /**
   * Replace the release's spec, saved before the promise resolves. For a run that takes the lock before its stack
   * is complete (sources still to be fetched): it begins with an empty spec and records the real one here, before
   * any kapp runs. The recorder keeps `spec` itself (no copy: a big stack's spec is large): the caller must not
   * change it afterwards.
   */
  setSpec(spec: StackSpec): Promise<void> {
    if (this.#finishing) {
      return Promise.reject(new InternalError(`release ${this.revision} is finished; cannot change its spec`));
    }
    return this.#write('record', (r) => {
      r.spec = spec;
    });
  }

  /**
   * Write what is queued now instead of at the end of the write interval, and stop waiting from here on: for the
   * end of a run, when no more kapps will finish and the last saves are all that is left to wait for.
   */
  flush(): void {
    this.#hurry = true;
    this.#wake?.();
  }

  /**
   * Finish the release. The phase stored is the worse of `phase` and what the kapps recorded by this release
   * say (`phaseFor`): a release is never `succeeded` while one of its kapps failed or was cancelled. Idempotent:
   * later calls return the first call's result. The release it resolves with shares the recorder's spec: do not
   * change it.
   */
  finish(phase: FinalPhase, error?: string): Promise<Release> {
    if (this.#finishing) return this.#finishing;
    this.flush();
    clearInterval(this.#timer);
    this.#timer = undefined;
    const finishing = (async () => {
      await this.#write('record', (r) => {
        const own = Object.values(r.state).filter((entry) => entry.revision === r.revision);
        const time = this.#now().toISOString();
        r.phase = worsePhase(phase, phaseFor(own.map((entry) => entry.status)));
        if (error !== undefined) r.error = error;
        r.finishedAt = time;
        r.heartbeatAt = time;
      });
      // The spec is the one `setSpec` was given, which nobody changes: copying it (most of a big release) would
      // only delay the end of the run.
      const { spec, ...rest } = this.#desired;
      return { ...structuredClone(rest), spec };
    })();
    this.#finishing = finishing;
    finishing.catch((error: unknown) => {
      // A failed write may be retried by calling finish again, unless the release was taken away.
      if (!(error instanceof ReleaseConflictError) && this.#finishing === finishing) this.#finishing = undefined;
    });
    return finishing;
  }

  /**
   * Queue one change; it is applied to the wanted record and saved (journal or whole record). Changes queued while a
   * write is in flight are written together by the next write (each caller's promise still resolves only once its
   * change is on disk), so a burst of kapps finishing at once costs one write, not one each.
   */
  #write(scope: ChangeScope, change: (release: Release) => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let batch = this.#pending;
      if (!batch) {
        const created: PendingBatch = { changes: [], waiters: [], kapps: new Set(), whole: false };
        batch = created;
        this.#pending = created;
        this.#queue = this.#queue.then(() => this.#flush(created));
      }
      batch.changes.push(change);
      batch.waiters.push({ resolve, reject });
      if (scope === 'record') batch.whole = true;
      else if (scope !== 'heartbeat') batch.kapps.add(scope.kapp);
    });
  }

  async #flush(batch: PendingBatch): Promise<void> {
    // Writes are at least WRITE_INTERVAL_MS apart; changes arriving meanwhile join this batch.
    const wait = this.#lastWrite + WRITE_INTERVAL_MS - Date.now();
    if (wait > 0 && !this.#hurry) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
    this.#lastWrite = Date.now();
    // From here on, new changes start the next batch.
    if (this.#pending === batch) this.#pending = undefined;
    try {
      await this.#writeNow(batch);
      for (const w of batch.waiters) w.resolve();
    } catch (error) {
      for (const w of batch.waiters) w.reject(error);
    }
  }

  async #writeNow(batch: PendingBatch): Promise<void> {
    if (this.#lost) throw this.#lost;
    const heartbeatBefore = this.#desired.heartbeatAt;
    for (const change of batch.changes) change(this.#desired);
    const modifiedAt = this.#stamp();
    try {
      if (!batch.whole && this.#store.appendState) {
        // Only what the batch touched: its cost follows the batch, not the kapps recorded so far.
        await this.#store.appendState(
          { project: this.#desired.project, stack: this.#desired.stack, revision: this.#desired.revision },
          journalChange(this.#desired, batch.kapps, modifiedAt, heartbeatBefore),
          { ifModifiedAt: this.#persisted },
        );
      } else {
        // A snapshot for the store: changes replace the state's entries and the spec rather than mutating them, so
        // a copy of the top level and of the state map is enough (and keeps entries shared, which the store caches on).
        const next: Release = { ...this.#desired, state: { ...this.#desired.state }, modifiedAt };
        await this.#store.update(next, { ifModifiedAt: this.#persisted });
      }
    } catch (error) {
      if (error instanceof ReleaseConflictError) {
        this.#lost = lostError(this.#desired, error);
        clearInterval(this.#timer);
        throw this.#lost;
      }
      throw error;
    }
    this.#persisted = modifiedAt;
    this.#desired.modifiedAt = modifiedAt;
  }

  /** A modification time strictly after the last one written, so each write is told apart from the others. */
  #stamp(): string {
    const last = Date.parse(this.#persisted);
    const now = this.#now().getTime();
    return new Date(Number.isFinite(last) && now <= last ? last + 1 : now).toISOString();
  }
}

/** The journal entry of a batch of kapp states and heartbeats: the entries of `kapps` as they are now. */
function journalChange(
  release: Release,
  kapps: ReadonlySet<string>,
  modifiedAt: string,
  heartbeatBefore: string,
): StateChange {
  const state: Record<string, KappState> = {};
  for (const id of kapps) state[id] = release.state[id] as KappState;
  return {
    modifiedAt,
    ...(release.heartbeatAt !== heartbeatBefore ? { heartbeatAt: release.heartbeatAt } : {}),
    state,
  };
}

/**
 * The phase a release's kapp statuses call for: `failed` if any failed, else `cancelled` if any was cancelled,
 * else `succeeded` (also when there are none).
 */
export function phaseFor(statuses: Iterable<KappStateStatus | KappStatus>): FinalPhase {
  let cancelled = false;
  for (const status of statuses) {
    if (status === 'failed') return 'failed';
    if (status === 'cancelled') cancelled = true;
  }
  return cancelled ? 'cancelled' : 'succeeded';
}

const PHASE_RANK: Record<FinalPhase, number> = { succeeded: 0, cancelled: 1, failed: 2 };

function worsePhase(a: FinalPhase, b: FinalPhase): FinalPhase {
  return PHASE_RANK[a] >= PHASE_RANK[b] ? a : b;
}

/** The command that unlocks a stack, for messages. */
export function unlockCommand(stack: string, stackFile?: string): string {
  return `kapps release unlock ${stackFile ? quoteArg(stackFile) : '<stack-file>'} ${quoteArg(stack)}`;
}

/** One paragraph describing the running release `holder`: which, since when, whose, and whether it looks dead. */
export function describeHolder(holder: Release, now: Date): { text: string; looksDead: boolean } {
  const health = ownerHealth(holder, now);
  const text =
    `release ${holder.revision} (${holder.operation}, ${holder.phase}) started ${holder.createdAt} ` +
    `by ${formatOwner(holder.owner)}; ` +
    (health.looksDead ? `the owner looks dead: ${health.reason}` : `the owner looks alive: ${health.reason}`);
  return { text, looksDead: health.looksDead };
}

function lockedError(holder: Release, now: Date, stackFile: string | undefined, raced: boolean): ReleaseLockedError {
  const { text, looksDead } = describeHolder(holder, now);
  const advice = looksDead
    ? `If no kapps run is working on this stack any more, unlock it with: ${unlockCommand(holder.stack, stackFile)}`
    : `Wait for it to finish; if you are sure it is gone, unlock it with: ${unlockCommand(holder.stack, stackFile)}`;
  const message =
    `${holder.project}/${holder.stack} is locked by ${text}` +
    (raced ? ' (it began at the same moment as this run).\n' : '.\n') +
    advice;
  return new ReleaseLockedError(message, holder, looksDead);
}

function lostError(release: Release, conflict: ReleaseConflictError): ReleaseConflictError {
  const current = conflict.current;
  const who = current?.unlocked ? ` (unlocked by ${current.unlocked.by} at ${current.unlocked.at})` : '';
  return new ReleaseConflictError(
    `release ${release.revision} of ${release.project}/${release.stack} was changed by another process${who} ` +
      'while this run was recording it; this run no longer writes it',
    current,
  );
}

function quoteArg(text: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Options of `unlockRelease`. */
export interface UnlockReleaseOptions {
  store: ReleaseStore;
  project: string;
  stack: string;
  /** Who unlocks: `user@host`. */
  by: string;
  /** The clock; defaults to the system clock. */
  now?: () => Date;
}

/** What `unlockRelease` did. */
export type UnlockResult =
  | {
      unlocked: true;
      /** The release as stored now: phase `failed`, with `unlocked` set. */
      release: Release;
      /** The phase it had (`applying` or `deleting`). */
      previousPhase: Release['phase'];
      /** The holder as it looked when unlocked. */
      holder: { text: string; looksDead: boolean };
    }
  | {
      unlocked: false;
      /** Why there was nothing to do, as a sentence. */
      message: string;
      /** The latest release, if any. */
      latest?: Release;
    };

/**
 * Unlock (project, stack) by hand: the latest release, if it is still running, becomes `failed`, with who
 * unlocked it and when; `modifiedAt` moves on, so its owner, if alive after all, stops writing it. A finished
 * latest release (or none) leaves nothing to unlock.
 */
export async function unlockRelease(options: UnlockReleaseOptions): Promise<UnlockResult> {
  const { store, project, stack } = options;
  const now = options.now ?? (() => new Date());
  for (let attempt = 0; ; attempt++) {
    const latest = await store.latest(project, stack);
    if (!latest) return { unlocked: false, message: `${project}/${stack} has no releases: nothing to unlock` };
    if (!isRunningPhase(latest.phase)) {
      return {
        unlocked: false,
        message: `nothing to unlock: the latest release of ${project}/${stack}, revision ${latest.revision}, is ${latest.phase}`,
        latest,
      };
    }
    const holder = describeHolder(latest, now());
    const time = now();
    const previous = Date.parse(latest.modifiedAt);
    const at = new Date(Number.isFinite(previous) && time.getTime() <= previous ? previous + 1 : time.getTime());
    const release: Release = {
      ...structuredClone(latest),
      phase: 'failed',
      modifiedAt: at.toISOString(),
      finishedAt: latest.finishedAt ?? at.toISOString(),
      unlocked: { by: options.by, at: at.toISOString() },
    };
    try {
      await store.update(release, { ifModifiedAt: latest.modifiedAt });
      return { unlocked: true, release, previousPhase: latest.phase, holder };
    } catch (error) {
      // The owner wrote in between (a heartbeat): read again and retry a few times.
      if (!(error instanceof ReleaseConflictError) || attempt >= 4) throw error;
    }
  }
}
