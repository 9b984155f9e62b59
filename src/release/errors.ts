/**
 * Typed errors of the release store and lifecycle. All are `KappsError`s (printed without a stack, exit 1), so a
 * command that lets them through gives the user the message and nothing else.
 */
import { KappsError } from '../diagnostics/errors.js';
import type { Release } from './types.js';

/** `create` found the revision already taken: another run created it first. */
export class RevisionTakenError extends KappsError {
  readonly project: string;
  /** The stack name (not `stack`, which every Error has for its trace). */
  readonly stackName: string;
  readonly revision: number;
  constructor(project: string, stack: string, revision: number) {
    super(`release ${revision} of ${project}/${stack} already exists`);
    this.project = project;
    this.stackName = stack;
    this.revision = revision;
  }
}

/** A running release (phase `applying`/`deleting`) holds the lock of the stack. */
export class ReleaseLockedError extends KappsError {
  /** The release holding the lock. */
  readonly holder: Release;
  /** Whether the holder looks dead (its process is gone, or its heartbeat is stale). */
  readonly looksDead: boolean;
  constructor(message: string, holder: Release, looksDead: boolean) {
    super(message);
    this.holder = holder;
    this.looksDead = looksDead;
  }
}

/** `update` found the stored record changed by another writer since this one last wrote it. */
export class ReleaseConflictError extends KappsError {
  /** The record as stored now, when it could be read. */
  readonly current: Release | undefined;
  constructor(message: string, current?: Release) {
    super(message);
    this.current = current;
  }
}

/** A stored release could not be read: unparsable, or not a valid release record. */
export class ReleaseRecordError extends KappsError {
  /** Where the record is: a file path, or a database row (`table (project, stack, revision)`). */
  readonly where: string;
  constructor(where: string, detail: string, options?: { cause?: unknown }) {
    super(`${where} is not a valid release record: ${detail}`, options);
    this.where = where;
  }
}

/**
 * The store cannot be opened or reached (bad backend, unreachable database, file system error). `unavailable`: the
 * failure is transient (the database restarts, a connection was refused): the same call may succeed shortly.
 */
export class ReleaseStoreError extends KappsError {
  readonly unavailable: boolean;
  constructor(message: string, options?: { cause?: unknown; unavailable?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.unavailable = options?.unavailable ?? false;
  }
}

/** A release that does not exist was asked for. */
export class ReleaseNotFoundError extends KappsError {}
