/**
 * The release store: where releases are kept. Two backends implement it, files under `$KAPPS_HOME/releases`
 * (default) and PostgreSQL (`postgres://…`). Both give the same guarantees:
 *
 * - `create` is exclusive: of two runs creating the same revision, exactly one succeeds and the other gets a
 *   `RevisionTakenError` — this is what makes the lock safe;
 * - `update` replaces the whole record atomically (a reader sees the old record or the new one, never a mix), and
 *   with `ifModifiedAt` only when nobody else wrote it since;
 * - a damaged record is reported (`ReleaseRecordError`), never skipped;
 * - while a run is in flight, its owner appends each batch of kapp states and heartbeats to the release's journal
 *   (`appendState`) instead of rewriting the record; every read (`get`, `latest`, `list`) returns the record with
 *   its journal applied, and `update` (the finish, an unlock) writes the whole record and drops the journal: the
 *   compaction. A backend without a journal leaves `appendState` out and the recorder updates the whole record.
 *
 * The store knows nothing of phases or locks; `recorder.ts` builds the lifecycle on top of it.
 */
import type { LogLine } from '../log/line.js';
import type { LogChunk } from '../log/ndjson.js';
import type { KappState, Release, ReleaseSummary } from './types.js';

/** Which release: (project, stack, revision). */
export type ReleaseKey = Pick<Release, 'project' | 'stack' | 'revision'>;

/** Options of `ReleaseStore.update`. */
export interface UpdateOptions {
  /**
   * Only replace the record if its stored `modifiedAt` is this value (compare-and-set); otherwise throw
   * `ReleaseConflictError`. Without it the update is unconditional.
   */
  ifModifiedAt?: string;
}

/** One batch of changes to a running release, appended to its journal by `ReleaseStore.appendState`. */
export interface StateChange {
  /** The release's new `modifiedAt`, strictly after the one it replaces. */
  modifiedAt: string;
  /** The new heartbeat, if it moved. */
  heartbeatAt?: string;
  /** Kapp id → its new state entry (replacing the one recorded before, if any). */
  state: Record<string, KappState>;
}

/** A place where releases are kept. */
export interface ReleaseStore {
  /** The backend, for messages: a directory, or a URL with its password masked. */
  readonly description: string;
  /** The release with the highest revision of (project, stack), or undefined when there is none. */
  latest(project: string, stack: string): Promise<Release | undefined>;
  /** One release, or undefined when that revision does not exist. */
  get(project: string, stack: string, revision: number): Promise<Release | undefined>;
  /** The metadata of every release of (project, stack), newest first. */
  list(project: string, stack: string): Promise<ReleaseSummary[]>;
  /** Store a new release; throws `RevisionTakenError` if its revision exists already. */
  create(release: Release): Promise<void>;
  /**
   * Replace an existing release as a whole, atomically, dropping its journal (the journal's changes are in the
   * release given: callers start from a read, which applies it). Throws `ReleaseNotFoundError` if it does not exist.
   */
  update(release: Release, options?: UpdateOptions): Promise<void>;
  /**
   * Append one batch of changes to the journal of a running release, durably, without rewriting its record; with
   * `ifModifiedAt` only when the release (journal applied) still has that `modifiedAt`, otherwise
   * `ReleaseConflictError`. Optional: a store without it gets whole-record updates.
   */
  appendState?(release: ReleaseKey, change: StateChange, options?: UpdateOptions): Promise<void>;
  /**
   * Append lines to the log of a release (its owner only, in order). The log is append-only: files
   * `<revision>.log.ndjson` beside the record, or rows in the database.
   */
  appendLog(project: string, stack: string, revision: number, lines: readonly LogLine[]): Promise<void>;
  /**
   * The log's lines from byte `offset` of its NDJSON form, by the one paging rule of src/log/ndjson.ts (whole lines
   * within `maxBytes`, at least one; damaged lines skipped and reported once). A release without a log has none.
   */
  readLog(project: string, stack: string, revision: number, offset: number, maxBytes: number): Promise<LogChunk>;
  /**
   * The key of the keyed digests in recorded specs (32 random bytes, made on first use and kept in the backend:
   * the file `spec-key` (mode 0600) in a file store, a row of `kapps_spec_key` in PostgreSQL). Never printed.
   * With `create: false` (a command that records nothing), a file store that has none yet makes none: undefined.
   */
  specKey(options?: { create?: boolean }): Promise<Buffer | undefined>;
  /** Release connections and handles. The store must not be used afterwards. */
  close(): Promise<void>;
}
