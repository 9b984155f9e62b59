/**
 * The release store: where releases are kept. Two backends implement it, files under `$KAPPS_HOME/releases`
 * (default) and PostgreSQL (`postgres://…`). Both give the same guarantees:
 *
 * - `create` is exclusive: of two runs creating the same revision, exactly one succeeds and the other gets a
 *   `RevisionTakenError` — this is what makes the lock safe;
 * - `update` replaces the whole record atomically (a reader sees the old record or the new one, never a mix), and
 *   with `ifModifiedAt` only when nobody else wrote it since;
 * - a damaged record is reported (`ReleaseRecordError`), never skipped.
 *
 * The store knows nothing of phases or locks; `recorder.ts` builds the lifecycle on top of it.
 */
import type { LogLine } from '../log/line.js';
import type { LogChunk } from '../log/ndjson.js';
import type { Release, ReleaseSummary } from './types.js';

/** Options of `ReleaseStore.update`. */
export interface UpdateOptions {
  /**
   * Only replace the record if its stored `modifiedAt` is this value (compare-and-set); otherwise throw
   * `ReleaseConflictError`. Without it the update is unconditional.
   */
  ifModifiedAt?: string;
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
  /** Replace an existing release as a whole, atomically. Throws `ReleaseNotFoundError` if it does not exist. */
  update(release: Release, options?: UpdateOptions): Promise<void>;
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
