/**
 * A log as NDJSON (one line's JSON per line), paged by byte offset of that form: the one reader and writer of every
 * log of kapps — a release's log and a run's log, in files and in PostgreSQL (where rows carry their offsets).
 *
 * The paging rule, the same whatever holds the lines:
 * - a read from `start` begins at the first line that starts at or after `start` (an offset inside a line moves to
 *   the next line);
 * - it returns the lines that end within `maxBytes` of where it began, and always at least one line when there is
 *   one (a line longer than `maxBytes` is returned whole); `nextOffset` is the end of the last line read, or `start`
 *   when there was none;
 * - a damaged line (not JSON, not a log line) is skipped, reported once (with where it is), and counts as read;
 * - a last line without its newline (still being written, or torn by a kill) is left for a later read.
 */
import { constants as fsConstants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { checkLogLine, DamagedLineError, logLineJson, parseLogLine, type LogLine } from './line.js';

/** One stored line: where it starts and ends (after its newline) in the NDJSON form, and its JSON or parsed value. */
export interface StoredLine {
  readonly offset: number;
  readonly end: number;
  readonly data: string | object;
}

/** A piece of a log: its lines from an offset, and where the next read starts. */
export interface LogChunk {
  readonly lines: LogLine[];
  /** The byte offset (in the log's NDJSON form) after the last line read. */
  readonly nextOffset: number;
}

/** A line skipped because it is damaged: where it is (file and byte, or row) and what is wrong. */
export interface DamagedLine {
  readonly where: string;
  readonly reason: string;
}

export type DamageReport = (damage: DamagedLine) => void;

/** How a store reads a log: where it is told of damaged lines, and how it names a line at an offset. */
export interface LogReadOptions {
  readonly report: DamageReport;
  readonly where: (offset: number) => string;
}

/** The paging rule over lines that start at or after `start`, in order (see the top of this file). */
export async function pageLog(
  stored: AsyncIterable<StoredLine>,
  start: number,
  maxBytes: number,
  options: LogReadOptions,
): Promise<LogChunk> {
  const lines: LogLine[] = [];
  let from: number | undefined;
  let nextOffset = start;
  for await (const line of stored) {
    from ??= line.offset;
    if (lines.length > 0 && line.end - from > maxBytes) break;
    nextOffset = line.end;
    try {
      lines.push(typeof line.data === 'string' ? parseLogLine(line.data) : checkLogLine(line.data));
    } catch (error) {
      if (!(error instanceof DamagedLineError)) throw error;
      options.report({ where: options.where(line.offset), reason: error.message });
    }
  }
  return { lines, nextOffset };
}

const BLOCK = 64 * 1024;

/** The complete lines of an NDJSON file from the first line starting at or after `start`. */
export async function* fileLines(handle: FileHandle, start: number): AsyncGenerator<StoredLine> {
  // Inside a line when the byte before `start` is not a newline: its rest is skipped.
  let skipping = false;
  if (start > 0) {
    const before = Buffer.alloc(1);
    const { bytesRead } = await handle.read(before, 0, 1, start - 1);
    if (bytesRead === 0) return;
    skipping = before[0] !== 0x0a;
  }
  const block = Buffer.alloc(BLOCK);
  let carry = Buffer.alloc(0);
  let carryAt = start;
  for (let position = start; ;) {
    const { bytesRead } = await handle.read(block, 0, BLOCK, position);
    if (bytesRead === 0) return; // what is left in `carry` is a line still being written
    position += bytesRead;
    const data = carry.length > 0 ? Buffer.concat([carry, block.subarray(0, bytesRead)]) : block.subarray(0, bytesRead);
    let lineAt = 0;
    for (let nl = data.indexOf(0x0a); nl >= 0; nl = data.indexOf(0x0a, lineAt)) {
      if (skipping) skipping = false;
      else yield { offset: carryAt + lineAt, end: carryAt + nl + 1, data: data.toString('utf8', lineAt, nl) };
      lineAt = nl + 1;
    }
    carry = Buffer.from(data.subarray(lineAt));
    carryAt += lineAt;
  }
}

/**
 * Stored lines read `batch` rows at a time by `fetch(from, limit)`: the rows whose offset is at or after `from`, in
 * order of offset (a database's rows of one log).
 */
export async function* rowLines(
  fetch: (from: number, limit: number) => Promise<readonly StoredLine[]>,
  start: number,
  batch = 500,
): AsyncGenerator<StoredLine> {
  for (let from = start; ;) {
    const rows = await fetch(from, batch);
    yield* rows;
    const last = rows.at(-1);
    if (!last || rows.length < batch) return;
    from = last.end;
  }
}

/** A page of a log kept as rows of a database, read `fetch(from, limit)` at a time (see `rowLines`). */
export function readLogRows(
  fetch: (from: number, limit: number) => Promise<readonly StoredLine[]>,
  start: number,
  maxBytes: number,
  options: LogReadOptions,
): Promise<LogChunk> {
  return pageLog(rowLines(fetch, start), start, Math.max(1, maxBytes), options);
}

/** A page of the NDJSON log file `file` (none when it does not exist), never through a symbolic link. */
export async function readLogFile(
  file: string,
  start: number,
  maxBytes: number,
  options: Omit<LogReadOptions, 'where'>,
): Promise<LogChunk> {
  let handle: FileHandle;
  try {
    handle = await open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { lines: [], nextOffset: start };
    throw error;
  }
  try {
    return await pageLog(fileLines(handle, start), start, maxBytes, {
      ...options,
      where: (offset) => `${file} at byte ${offset}`,
    });
  } finally {
    await handle.close();
  }
}

/** Lines as a log file stores them: each one's JSON (made storable: see `logLineJson`) on a line of its own. */
export function encodeText(lines: readonly LogLine[]): string {
  let text = '';
  for (const line of lines) text += `${logLineJson(line)}\n`;
  return text;
}

/** Lines as stored in rows: each one's JSON (made storable: see `logLineJson`) and its place from byte `start` on. */
export function encodeLines(lines: readonly LogLine[], start = 0): StoredLine[] {
  let at = start;
  const stored: StoredLine[] = [];
  for (const line of lines) {
    const json = logLineJson(line);
    const end = at + Buffer.byteLength(json) + 1;
    stored.push({ offset: at, end, data: json });
    at = end;
  }
  return stored;
}

/**
 * A report that says each damaged line once: the first time it is read, through `say` (later reads of the same line
 * say nothing). Remembers at most `max` lines.
 */
export function reportOnce(say: (message: string) => void, max = 1024): DamageReport {
  const told = new Set<string>();
  return ({ where, reason }) => {
    if (told.has(where)) return;
    if (told.size >= max) told.clear();
    told.add(where);
    say(`kapps: skipped a damaged line of a log (${where}): ${reason}`);
  };
}

/** What a store that reads logs is told at its construction. */
export interface LogStoreOptions {
  /** Told of each damaged log line skipped (once; standard error by default). */
  readonly onDamagedLine?: DamageReport;
}

/** The report a store uses: the one it was given, or each damaged line once on standard error. */
export function damageReport(options: LogStoreOptions): DamageReport {
  return options.onDamagedLine ?? reportOnce((message) => process.stderr.write(`${message}\n`));
}
