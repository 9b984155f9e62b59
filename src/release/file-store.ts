/**
 * The file backend: one readable YAML file per release, `<root>/releases/<project>/<stack>/<revision>.yaml`
 * (files mode 0600, directories 0700). There is no index file: the directory listing is the index, and each file
 * holds its own phase.
 *
 * Writes never leave a half-written release file:
 * - create writes the whole record to a temp file in the same directory, fsyncs it, then hard-links it to
 *   `<revision>.yaml`. `link` fails with EEXIST when the name is taken, atomically, so of two runs creating the
 *   same revision exactly one wins: that is the lock. The temp file is then removed and the directory fsynced.
 * - update writes a temp file, fsyncs it and renames it over the record (atomic replace), removes the release's
 *   journal, then fsyncs the directory.
 * - appendState (a running release's kapp states and heartbeats) appends one NDJSON line per batch to the journal
 *   `<revision>.journal.ndjson` beside the record and fsyncs it; the record is not rewritten. Each line names the
 *   `modifiedAt` of the record it follows (`base`); a reader applies, in order, the lines whose base is the record's
 *   `modifiedAt`, so lines left over from before a compaction (a crash between the rename and the removal) are
 *   ignored, and a last line without its newline (a write cut short) is too. The finish (an update) folds the
 *   journal into the record and removes it.
 * Readers ignore temp files (`.<revision>.yaml.<pid>.<random>.tmp`); one left by a killed writer is harmless.
 *
 * - the compare-and-set of update (the owner's saves, `kapps release unlock`) reads, compares and renames while
 *   holding the record's lock file `.<revision>.yaml.lock`, created with O_EXCL: of two writers, the second waits
 *   and then sees the first one's write, so an update is never lost (as inside the database backend's
 *   transaction). The lock is held for one read and one write; a lock file left by a writer that died (its process
 *   is gone, or the file is older than `STALE_LOCK_MS`) is removed by the next writer.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import {
  ReleaseConflictError,
  ReleaseNotFoundError,
  ReleaseRecordError,
  ReleaseStoreError,
  RevisionTakenError,
} from './errors.js';
import { parseRecordWithLazySpec, parseReleaseRecord } from './record-schema.js';
import { orderKappState, orderRelease } from './record-order.js';
import { readRecordYaml } from './record-read.js';
import { recordYaml, recordYamlEntry } from './record-yaml.js';
import { damageReport, encodeText, readLogFile, type LogChunk, type LogStoreOptions } from '../log/ndjson.js';
import type { LogLine } from '../log/line.js';
import { appendNdjson, appendSynced, syncDirectory, tempNameFor, writeSynced } from '../log/durable.js';
import type { ReleaseKey, ReleaseStore, StateChange, UpdateOptions } from './store-types.js';
import { summarise, type KappState, type Release, type ReleaseSummary } from './types.js';

const RELEASE_FILE = /^([1-9][0-9]*)\.yaml$/;

/**
 * What this store last wrote to a record: the release's `modifiedAt` with the journal applied, the record's own
 * (`base`, what its journal lines follow) and the record file's identity.
 */
interface OwnWrite {
  modifiedAt: string;
  base: string;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  /** Whether this store created the journal file (and made its name durable). */
  journal: boolean;
}

/** One line of a journal (see the top of this file). */
interface JournalLine {
  base: string;
  modifiedAt: string;
  heartbeatAt?: string;
  state: Record<string, unknown>;
}
const HEADER = '# A kapps release record. Written by kapps; see `kapps release show`.\n';

/** The release store kept in files under `<root>/releases`. */
export class FileReleaseStore implements ReleaseStore {
  readonly description: string;
  readonly #root: string;
  /** What this store last wrote to each file, to skip re-reading it on the next compare-and-set. */
  readonly #written = new Map<string, OwnWrite>();
  /** The YAML text of the last spec written, for that spec object (the recorder replaces the spec, never edits it). */
  #specText: { spec: object; text: string } | undefined;
  /** The YAML of each state entry written, indented under `state:`. */
  readonly #entryText = new WeakMap<object, { id: string; text: string }>();
  /**
   * The spec key's read, kept once it found the key (made once, it never changes): a run starts reading it when it
   * takes the lock, and finds it read when it records its spec.
   */
  #keyRead: Promise<Buffer | undefined> | undefined;

  readonly #report: ReturnType<typeof damageReport>;

  /** `root` is `$KAPPS_HOME` or the configured backend directory. */
  constructor(root: string, options: LogStoreOptions = {}) {
    this.#root = root;
    this.description = root;
    this.#report = damageReport(options);
  }

  async specKey(options: { create?: boolean } = {}): Promise<Buffer | undefined> {
    const create = options.create !== false;
    const kept = this.#keyRead;
    if (kept) {
      const found = await kept;
      // A copy: the caller may not change the key kept.
      if (found) return Buffer.from(found);
      if (!create) return undefined;
    }
    // One read (or creation) at a time: a second caller waits for the first rather than making a key of its own.
    const pending = this.#loadKey(create);
    this.#keyRead = pending;
    let found: Buffer | undefined;
    try {
      found = await pending;
    } finally {
      // Not there (a read that may not create), or a failure: read again next time.
      if (!found && this.#keyRead === pending) this.#keyRead = undefined;
    }
    return found ? Buffer.from(found) : undefined;
  }

  async #loadKey(create: boolean): Promise<Buffer | undefined> {
    const file = join(this.#root, 'spec-key');
    const read = async (): Promise<Buffer | undefined> => {
      try {
        const text = (await readFile(file, 'utf8')).trim();
        return /^[0-9a-f]{64}$/.test(text) ? Buffer.from(text, 'hex') : undefined;
      } catch (error) {
        if (errorCode(error) === 'ENOENT') return undefined;
        throw new ReleaseStoreError(`cannot read ${file}: ${errorMessage(error)}`, { cause: error });
      }
    };
    const found = await read();
    if (found || !create) return found;
    await this.#io(`cannot create ${this.#root}`, () => mkdir(this.#root, { recursive: true, mode: 0o700 }));
    // Written whole under a temporary name, then linked: two first runs agree on the one key that got there first.
    const temp = join(this.#root, `.spec-key.${process.pid}.${randomBytes(4).toString('hex')}`);
    try {
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(`${randomBytes(32).toString('hex')}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await link(temp, file).catch((error: unknown) => {
        if (errorCode(error) !== 'EEXIST') throw error;
      });
    } catch (error) {
      throw new ReleaseStoreError(`cannot create ${file}: ${errorMessage(error)}`, { cause: error });
    } finally {
      await unlink(temp).catch(() => undefined);
    }
    const made = await read();
    if (!made) throw new ReleaseStoreError(`${file} does not hold a key (64 hexadecimal digits)`);
    return made;
  }

  /** The directory holding the releases of (project, stack). */
  directoryOf(project: string, stack: string): string {
    return join(this.#root, 'releases', encodeSegment(project, 'project'), encodeSegment(stack, 'stack'));
  }

  /** The file of one release. */
  fileOf(project: string, stack: string, revision: number): string {
    return join(this.directoryOf(project, stack), `${revision}.yaml`);
  }

  async latest(project: string, stack: string): Promise<Release | undefined> {
    const [newest] = await this.#revisions(project, stack);
    if (newest === undefined) return undefined;
    return this.#readExisting(project, stack, newest);
  }

  async get(project: string, stack: string, revision: number): Promise<Release | undefined> {
    if (!Number.isSafeInteger(revision) || revision < 1) return undefined;
    return this.#read(project, stack, revision);
  }

  async list(project: string, stack: string): Promise<ReleaseSummary[]> {
    const out: ReleaseSummary[] = [];
    // Each file holds its own phase and there is no index, so listing reads every record.
    for (const revision of await this.#revisions(project, stack)) {
      out.push(summarise(await this.#readExisting(project, stack, revision)));
    }
    return out;
  }

  async create(release: Release): Promise<void> {
    const dir = this.directoryOf(release.project, release.stack);
    const target = this.fileOf(release.project, release.stack, release.revision);
    await this.#io(`cannot create ${dir}`, () => mkdir(dir, { recursive: true, mode: 0o700 }));
    const temp = await this.#writeTemp(dir, release);
    try {
      await link(temp, target);
    } catch (error) {
      if (errorCode(error) === 'EEXIST') throw new RevisionTakenError(release.project, release.stack, release.revision);
      throw new ReleaseStoreError(`cannot create ${target}: ${errorMessage(error)}`, { cause: error });
    } finally {
      await unlink(temp).catch(() => undefined);
    }
    await syncDirectory(dir);
    await this.#remember(target, release.modifiedAt);
  }

  async update(release: Release, options: UpdateOptions = {}): Promise<void> {
    const dir = this.directoryOf(release.project, release.stack);
    const target = this.fileOf(release.project, release.stack, release.revision);
    // The compare and the write happen under the record's lock file, so no other writer can come in between.
    await withRecordLock(
      join(dir, `.${release.revision}.yaml.lock`),
      () => notFound(release),
      () => this.#update(release, options, dir, target),
    );
  }

  async #update(release: Release, options: UpdateOptions, dir: string, target: string): Promise<void> {
    if (options.ifModifiedAt !== undefined && !(await this.#unchangedSinceOwnWrite(target, options.ifModifiedAt))) {
      const current = await this.#read(release.project, release.stack, release.revision);
      if (!current) throw notFound(release);
      if (current.modifiedAt !== options.ifModifiedAt) {
        throw new ReleaseConflictError(
          `release ${release.revision} of ${release.project}/${release.stack} was changed by another process ` +
            `(modified ${current.modifiedAt}, expected ${options.ifModifiedAt})`,
          current,
        );
      }
    } else {
      const exists = await stat(target).then(
        () => true,
        (error: unknown) => {
          if (errorCode(error) === 'ENOENT') return false;
          throw new ReleaseStoreError(`cannot read ${target}: ${errorMessage(error)}`, { cause: error });
        },
      );
      if (!exists) throw notFound(release);
    }
    const temp = await this.#writeTemp(dir, release);
    try {
      await rename(temp, target);
    } catch (error) {
      await unlink(temp).catch(() => undefined);
      throw new ReleaseStoreError(`cannot write ${target}: ${errorMessage(error)}`, { cause: error });
    }
    // The record now holds what the journal said (the caller's release was read with it applied): drop it. Left
    // behind by a crash here, its lines follow the old record's modifiedAt and are ignored.
    const journal = this.journalFileOf(release.project, release.stack, release.revision);
    await unlink(journal).catch((error: unknown) => {
      if (errorCode(error) !== 'ENOENT') {
        throw new ReleaseStoreError(`cannot remove ${journal}: ${errorMessage(error)}`, { cause: error });
      }
    });
    await syncDirectory(dir);
    await this.#remember(target, release.modifiedAt);
  }

  /** The journal of one release: `<revision>.journal.ndjson` beside its record. */
  journalFileOf(project: string, stack: string, revision: number): string {
    return join(this.directoryOf(project, stack), `${checkRevision(revision)}.journal.ndjson`);
  }

  async appendState(release: ReleaseKey, change: StateChange, options: UpdateOptions = {}): Promise<void> {
    const dir = this.directoryOf(release.project, release.stack);
    const target = this.fileOf(release.project, release.stack, release.revision);
    await withRecordLock(
      join(dir, `.${release.revision}.yaml.lock`),
      () => notFound(release),
      () => this.#appendState(release, change, options, target),
    );
  }

  async #appendState(release: ReleaseKey, change: StateChange, options: UpdateOptions, target: string): Promise<void> {
    let own = this.#written.get(target);
    if (!own || !(await this.#unchangedSinceOwnWrite(target, own.modifiedAt))) {
      // Not (or no longer) what this store wrote: read the record and its journal to compare and to learn the base.
      const found = await this.#readWithJournal(release.project, release.stack, release.revision);
      if (!found) throw notFound(release);
      const st = await stat(target, { bigint: true }).catch(() => undefined);
      if (!st) throw notFound(release);
      own = {
        modifiedAt: found.release.modifiedAt,
        base: found.base,
        ino: st.ino,
        size: st.size,
        mtimeNs: st.mtimeNs,
        journal: false,
      };
    }
    if (options.ifModifiedAt !== undefined && own.modifiedAt !== options.ifModifiedAt) {
      const current = await this.#read(release.project, release.stack, release.revision);
      if (!current) throw notFound(release);
      throw new ReleaseConflictError(
        `release ${release.revision} of ${release.project}/${release.stack} was changed by another process ` +
          `(modified ${current.modifiedAt}, expected ${options.ifModifiedAt})`,
        current,
      );
    }
    const line: JournalLine = {
      base: own.base,
      modifiedAt: change.modifiedAt,
      ...(change.heartbeatAt !== undefined ? { heartbeatAt: change.heartbeatAt } : {}),
      state: Object.fromEntries(Object.entries(change.state).map(([id, entry]) => [id, orderKappState(entry)])),
    };
    const file = this.journalFileOf(release.project, release.stack, release.revision);
    await this.#io(`cannot write ${file}`, () => appendSynced(file, `${JSON.stringify(line)}\n`));
    // The first line created the file: make its name durable too.
    if (!own.journal) await syncDirectory(dirname(file));
    this.#written.set(target, { ...own, modifiedAt: change.modifiedAt, journal: true });
  }

  /**
   * Whether `file` is exactly what this store last wrote with `modifiedAt` (same inode, size and mtime), so the
   * compare-and-set needs no re-read. Anything else (another writer, an unlock) falls back to reading the record.
   */
  async #unchangedSinceOwnWrite(file: string, modifiedAt: string): Promise<boolean> {
    const own = this.#written.get(file);
    if (!own || own.modifiedAt !== modifiedAt) return false;
    try {
      const st = await stat(file, { bigint: true });
      return st.ino === own.ino && st.size === own.size && st.mtimeNs === own.mtimeNs;
    } catch {
      return false;
    }
  }

  async #remember(file: string, modifiedAt: string): Promise<void> {
    try {
      const st = await stat(file, { bigint: true });
      this.#written.set(file, {
        modifiedAt,
        base: modifiedAt,
        ino: st.ino,
        size: st.size,
        mtimeNs: st.mtimeNs,
        journal: false,
      });
    } catch {
      this.#written.delete(file);
    }
  }

  /** The log of one release: `<revision>.log.ndjson` beside its record. */
  logFileOf(project: string, stack: string, revision: number): string {
    return join(this.directoryOf(project, stack), `${checkRevision(revision)}.log.ndjson`);
  }

  async appendLog(project: string, stack: string, revision: number, lines: readonly LogLine[]): Promise<void> {
    if (lines.length === 0) return;
    const file = this.logFileOf(project, stack, revision);
    const text = encodeText(lines);
    await this.#io(`cannot write ${file}`, async () => {
      try {
        await appendNdjson(file, text);
      } catch (error) {
        // The stack's directory is there once its release is: made here only when it is not (one call less a batch).
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        await mkdir(this.directoryOf(project, stack), { recursive: true, mode: 0o700 });
        await appendNdjson(file, text);
      }
    });
  }

  async readLog(project: string, stack: string, revision: number, offset: number, maxBytes: number): Promise<LogChunk> {
    const file = this.logFileOf(project, stack, revision);
    const start = Math.max(0, Math.floor(offset));
    return this.#io(`cannot read ${file}`, () =>
      readLogFile(file, start, Math.max(1, maxBytes), { report: this.#report }),
    );
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Revisions present on disk, highest first. */
  async #revisions(project: string, stack: string): Promise<number[]> {
    const dir = this.directoryOf(project, stack);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return [];
      throw new ReleaseStoreError(`cannot list ${dir}: ${errorMessage(error)}`, { cause: error });
    }
    const revisions: number[] = [];
    for (const name of names) {
      const match = RELEASE_FILE.exec(name);
      if (match?.[1]) revisions.push(Number(match[1]));
    }
    return revisions.sort((a, b) => b - a);
  }

  async #readExisting(project: string, stack: string, revision: number): Promise<Release> {
    const release = await this.#read(project, stack, revision);
    if (!release) throw new ReleaseStoreError(`${this.fileOf(project, stack, revision)} disappeared while reading`);
    return release;
  }

  async #read(project: string, stack: string, revision: number): Promise<Release | undefined> {
    return (await this.#readWithJournal(project, stack, revision))?.release;
  }

  /** The release with its journal applied, and the record's own `modifiedAt` (what journal lines follow). */
  async #readWithJournal(
    project: string,
    stack: string,
    revision: number,
  ): Promise<{ release: Release; base: string } | undefined> {
    // A compaction between reading the record and reading its journal would pair the old record with no journal:
    // read again when the record was replaced meanwhile.
    for (let attempt = 0; ; attempt++) {
      const found = await this.#readOnce(project, stack, revision);
      if (!found || attempt >= 20) return found?.read;
      const now = await stat(this.fileOf(project, stack, revision), { bigint: true }).catch(() => undefined);
      if (now?.ino === found.ino) return found.read;
    }
  }

  async #readOnce(
    project: string,
    stack: string,
    revision: number,
  ): Promise<{ read: { release: Release; base: string }; ino: bigint } | undefined> {
    const file = this.fileOf(project, stack, revision);
    let text: string;
    let ino: bigint;
    try {
      const handle = await open(file, 'r');
      try {
        ino = (await handle.stat({ bigint: true })).ino;
        text = await handle.readFile('utf8');
      } finally {
        await handle.close();
      }
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw new ReleaseStoreError(`cannot read ${file}: ${errorMessage(error)}`, { cause: error });
    }
    let data: unknown;
    // The spec, most of a record, is read when it is first asked for (see `splitSpec`).
    const split = splitSpec(text);
    try {
      // A record in the form kapps writes is read without the `yaml` package (the same data, several times faster).
      data = (split && readRecordYaml(split.head)) ?? readRecordYaml(text) ?? parse(text, { uniqueKeys: true });
    } catch (error) {
      throw new ReleaseRecordError(file, `unparsable YAML: ${errorMessage(error)}`, { cause: error });
    }
    const lazy = split !== undefined && isPlainMap(data) && !Object.hasOwn(data, 'spec');
    const readSpec = (): unknown => {
      try {
        const spec: unknown = (split && readRecordYaml(split.spec)) ?? parse(split?.spec ?? '', { uniqueKeys: true });
        return isPlainMap(spec) ? spec.spec : undefined;
      } catch (error) {
        throw new ReleaseRecordError(file, `unparsable YAML: ${errorMessage(error)}`, { cause: error });
      }
    };
    const record = lazy
      ? parseRecordWithLazySpec(data as Record<string, unknown>, file, readSpec)
      : parseReleaseRecord(data, file);
    if (record.project !== project || record.stack !== stack || record.revision !== revision) {
      throw new ReleaseRecordError(
        file,
        `it records release ${record.revision} of ${record.project}/${record.stack}, ` +
          `not release ${revision} of ${project}/${stack}`,
      );
    }
    const base = record.modifiedAt;
    const journal = this.journalFileOf(project, stack, revision);
    const lines = await this.#journalLines(journal, base);
    if (lines.length === 0) return { read: { release: record, base }, ino };
    // The journal's entries are checked as part of the record they make.
    const merged = { ...(data as Record<string, unknown>) };
    const state = { ...(merged.state as Record<string, unknown>) };
    for (const line of lines) {
      merged.modifiedAt = line.modifiedAt;
      if (line.heartbeatAt !== undefined) merged.heartbeatAt = line.heartbeatAt;
      for (const [id, entry] of Object.entries(line.state)) state[id] = entry;
    }
    merged.state = state;
    const where = `${file} with its journal ${journal}`;
    if (!lazy) return { read: { release: parseReleaseRecord(merged, where), base }, ino };
    // The spec stays unread: the journal never changes it.
    return { read: { release: parseRecordWithLazySpec(merged, where, readSpec), base }, ino };
  }

  /**
   * The complete lines of a journal that follow the record whose `modifiedAt` is `base`, in order; none when there
   * is no journal. A last line without its newline was cut short by a crash and is ignored; any other line that is
   * not a journal entry is damage, reported with its line number.
   */
  async #journalLines(file: string, base: string): Promise<JournalLine[]> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return [];
      throw new ReleaseStoreError(`cannot read ${file}: ${errorMessage(error)}`, { cause: error });
    }
    const out: JournalLine[] = [];
    const lines = text.split('\n');
    // The piece after the last newline is empty, or a line cut short.
    lines.pop();
    for (const [index, raw] of lines.entries()) {
      let line: unknown;
      try {
        line = JSON.parse(raw);
      } catch (error) {
        throw new ReleaseRecordError(file, `line ${index + 1}: unparsable JSON: ${errorMessage(error)}`, {
          cause: error,
        });
      }
      if (!isJournalLine(line)) {
        throw new ReleaseRecordError(
          file,
          `line ${index + 1}: not a journal entry (an object with base, modifiedAt and state)`,
        );
      }
      if (line.base === base) out.push(line);
    }
    return out;
  }

  /** Write the record to a new temp file beside its record (mode 0600), fsynced; return its path. */
  async #writeTemp(dir: string, release: Release): Promise<string> {
    const temp = tempNameFor(join(dir, `${release.revision}.yaml`));
    const text = HEADER + this.#yaml(release);
    await this.#io(`cannot write ${temp}`, () => writeSynced(temp, text));
    return temp;
  }

  /**
   * The record as YAML, one top-level key at a time (a concatenation of single-key maps is the same document);
   * the spec, the large part that does not change during a run, is rendered once and reused (callers replace a
   * release's spec and state entries rather than change them in place, as the recorder does).
   */
  #yaml(release: Release): string {
    const ordered = orderRelease(release) as unknown as Record<string, unknown>;
    let out = '';
    for (const [key, value] of Object.entries(ordered)) {
      if (key === 'spec') {
        const spec = release.spec;
        if (this.#specText?.spec !== spec) this.#specText = { spec, text: recordYaml({ spec: value }) };
        out += this.#specText.text;
      } else if (key === 'state') {
        out += this.#stateYaml(release.state);
      } else {
        out += recordYaml({ [key]: value });
      }
    }
    return out;
  }

  /** `state:` with each entry rendered once per entry object (entries are replaced, never changed, by the recorder). */
  #stateYaml(state: Release['state']): string {
    const ids = Object.keys(state);
    if (ids.length === 0) return 'state: {}\n';
    let out = 'state:\n';
    for (const id of ids) {
      const entry = state[id] as KappState;
      let cached = this.#entryText.get(entry);
      if (cached?.id !== id) {
        cached = { id, text: recordYamlEntry(id, orderKappState(entry), '  ') };
        this.#entryText.set(entry, cached);
      }
      out += cached.text;
    }
    return out;
  }

  async #io<T>(what: string, action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (error) {
      throw new ReleaseStoreError(`${what}: ${errorMessage(error)}`, { cause: error });
    }
  }
}

/**
 * A project or stack name as one path segment: letters, digits, `.`, `_` and `-` stay as they are, every other
 * byte of its UTF-8 form becomes `%XX`, and the names `.` and `..` are escaped too, so a name can never leave its
 * directory.
 */
export function encodeSegment(name: string, what: string): string {
  if (name === '') throw new ReleaseStoreError(`the ${what} name is empty`);
  let out = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9._-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (out === '.' || out === '..') out = out.replace(/\./g, '%2E');
  return out;
}

/** A revision as a file name: a positive integer, nothing else. */
function checkRevision(revision: number): number {
  if (!Number.isSafeInteger(revision) || revision < 1) {
    throw new ReleaseStoreError(`${String(revision)} is not a release revision`);
  }
  return revision;
}

/** A record's lock file older than this is taken to be left by a dead writer (it is held for milliseconds). */
const STALE_LOCK_MS = 30_000;
/** A record's lock file still empty after this was left by a writer killed between creating and filling it. */
const EMPTY_LOCK_MS = 3_000;
/** How long a writer waits for a record's lock before giving up. */
const LOCK_WAIT_MS = 20_000;

/**
 * Run `action` holding the lock file `lockFile` (created with O_EXCL, holding `<pid> <host>`; `missing()` is thrown
 * when its directory does not exist), waiting while another writer holds it; a lock whose owner is gone is removed
 * first.
 */
async function withRecordLock<T>(lockFile: string, missing: () => Error, action: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  const me = `${process.pid} ${hostname()}\n`;
  for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
    try {
      const handle = await open(lockFile, 'wx', 0o600);
      try {
        await handle.writeFile(me, 'utf8');
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      // No directory: there is no such release.
      if (errorCode(error) === 'ENOENT') throw missing();
      if (errorCode(error) !== 'EEXIST') {
        throw new ReleaseStoreError(`cannot create ${lockFile}: ${errorMessage(error)}`, { cause: error });
      }
    }
    if (await isStaleLock(lockFile)) {
      await unlink(lockFile).catch(() => undefined);
      continue;
    }
    if (Date.now() > deadline) {
      const holder = await readFile(lockFile, 'utf8').catch(() => '');
      throw new ReleaseStoreError(
        `${lockFile} has been held for more than ${LOCK_WAIT_MS / 1000} s by ${holder.trim() || 'another process'}; ` +
          'remove it if no kapps process is running',
      );
    }
    await sleep(wait);
  }
  try {
    return await action();
  } finally {
    await unlink(lockFile).catch(() => undefined);
  }
}

/** Whether a record's lock file was left by a writer that is gone (not running on this host, or long ago). */
async function isStaleLock(lockFile: string): Promise<boolean> {
  let text: string;
  let mtimeMs: number;
  try {
    [text, mtimeMs] = await Promise.all([readFile(lockFile, 'utf8'), stat(lockFile).then((st) => st.mtimeMs)]);
  } catch {
    return false; // gone already (or unreadable): try again
  }
  const age = Date.now() - mtimeMs;
  if (age > STALE_LOCK_MS) return true;
  // A writer writes its pid right after creating the file: one still empty after a while died in between.
  if (text.trim() === '') return age > EMPTY_LOCK_MS;
  const [pid, host] = text.trim().split(' ');
  if (!pid || host !== hostname() || !/^[1-9][0-9]*$/.test(pid)) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (error) {
    return errorCode(error) === 'ESRCH';
  }
}

function isJournalLine(value: unknown): value is JournalLine {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const line = value as Record<string, unknown>;
  return (
    typeof line.base === 'string' &&
    typeof line.modifiedAt === 'string' &&
    (line.heartbeatAt === undefined || typeof line.heartbeatAt === 'string') &&
    typeof line.state === 'object' &&
    line.state !== null &&
    !Array.isArray(line.state)
  );
}

function notFound(release: ReleaseKey): ReleaseNotFoundError {
  return new ReleaseNotFoundError(
    `release ${release.revision} of ${release.project}/${release.stack} does not exist, so it cannot be updated`,
  );
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A record as kapps writes it, cut into the text before its spec and the spec's block (`spec:` and its indented
 * lines), when the spec is its last top-level key (as kapps writes it); undefined otherwise. The lines of a block
 * never start at the margin (an empty line of a literal block is empty), so the next line that does starts the next
 * key.
 */
function splitSpec(text: string): { head: string; spec: string } | undefined {
  const start = text.indexOf('\nspec:\n') + 1;
  if (start === 0) return undefined;
  const after = /\n(?=[^ \n])/g;
  after.lastIndex = start + 'spec:\n'.length - 1;
  if (after.exec(text) !== null) return undefined;
  return { head: text.slice(0, start), spec: text.slice(start) };
}

function isPlainMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
