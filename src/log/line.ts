/**
 * One line of a log, as every log of kapps keeps it: a run's log on the runs server, a release's log in its store.
 * The plain reporter's lines (`stream: 'kapps'`) and every line a step printed (with its kapp, phase and step),
 * secrets already redacted. The public API describes the same shape (`logLineSchema` in src/api/schemas.ts).
 */

export interface LogLine {
  readonly time: string;
  readonly stream: 'kapps' | 'stdout' | 'stderr';
  readonly kapp?: string;
  readonly phase?: string;
  readonly step?: string;
  readonly text: string;
}

/** A stored line that is not a log line: why (`where` is given by the reader). */
export class DamagedLineError extends Error {}

const STREAMS = new Set(['kapps', 'stdout', 'stderr']);

/** `value` as a log line, or a `DamagedLineError` saying what is wrong with it. */
export function checkLogLine(value: unknown): LogLine {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new DamagedLineError('a log line that is not a JSON object');
  }
  const line = value as Record<string, unknown>;
  if (typeof line.text !== 'string' || typeof line.time !== 'string' || !STREAMS.has(line.stream as string)) {
    throw new DamagedLineError('a log line without its time, stream and text');
  }
  for (const key of ['kapp', 'phase', 'step'] as const) {
    if (line[key] !== undefined && typeof line[key] !== 'string') {
      throw new DamagedLineError(`a log line whose ${key} is not a string`);
    }
  }
  return line as unknown as LogLine;
}

/** One stored line (its JSON) as a log line, or a `DamagedLineError`. */
export function parseLogLine(raw: string): LogLine {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    throw new DamagedLineError('a log line that is not JSON');
  }
  return checkLogLine(data);
}

/**
 * Whether text is storable by every store as it is: no lone UTF-16 surrogate (a name or text that was never valid
 * Unicode) and no NUL (PostgreSQL's jsonb refuses both).
 */
function isStorableText(text: string): boolean {
  return text.isWellFormed() && !text.includes('\0');
}

/**
 * Text made storable by every store: a lone UTF-16 surrogate and NUL become U+FFFD, so no line is ever refused and
 * every backend keeps the same bytes.
 */
export function storableText(text: string): string {
  return isStorableText(text) ? text : text.toWellFormed().replaceAll('\0', '\uFFFD');
}

/**
 * Whether every string and key of plain data is storable as it is (see `storableText`). False also for what is not
 * plain data (an object with `toJSON`, or nested very deeply): such a value takes the slow path, which handles it.
 */
function isStorableData(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return isStorableText(value);
  if (typeof value !== 'object' || value === null) return true;
  if (depth > 64 || typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) if (!isStorableData(item, depth + 1)) return false;
    return true;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (!isStorableText(key) || !isStorableData((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

/**
 * `JSON.stringify` of `value` with every string and key made storable. Data that is storable already (nearly all:
 * every line of a step's output passes here) is written as it is, without a replacer, which costs several times more.
 */
export function storableJson(value: unknown): string {
  if (isStorableData(value, 0)) return JSON.stringify(value);
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (typeof inner === 'string') return storableText(inner);
    if (typeof inner === 'object' && inner !== null && !Array.isArray(inner)) {
      const entries = Object.entries(inner);
      if (entries.some(([k]) => storableText(k) !== k))
        return Object.fromEntries(entries.map(([k, v]) => [storableText(k), v]));
    }
    return inner;
  });
}

/** Text that JSON writes between its quotes as it is: no quote, backslash or control character. */
// eslint-disable-next-line no-control-regex
const JSON_PLAIN = /^[^"\\\u0000-\u001f]*$/;

function jsonString(text: string): string {
  return JSON_PLAIN.test(text) ? `"${text}"` : JSON.stringify(text);
}

/**
 * A log line's stored JSON: its fields in the schema's order, each text made storable (see `storableText`). The same
 * data as `storableJson(line)`, written field by field, at half its cost: a step's output passes here line by line.
 */
export function logLineJson(line: LogLine): string {
  let out = `{"time":${jsonString(storableText(line.time))},"stream":${jsonString(storableText(line.stream))}`;
  if (line.kapp !== undefined) out += `,"kapp":${jsonString(storableText(line.kapp))}`;
  if (line.phase !== undefined) out += `,"phase":${jsonString(storableText(line.phase))}`;
  if (line.step !== undefined) out += `,"step":${jsonString(storableText(line.step))}`;
  return `${out},"text":${jsonString(storableText(line.text))}}`;
}

/**
 * A log line as text: `[kapp phase/step] text` for a line a step printed, the text alone for kapps' own lines.
 * Control characters other than tab are shown escaped, so a stored line cannot move the cursor or recolour the
 * terminal of whoever reads the log.
 */
export function formatLogLine(line: LogLine): string {
  const text = safeText(line.text);
  if (line.stream === 'kapps') return `${text}\n`;
  const where = [line.phase, line.step].filter((part) => part !== undefined && part !== '').join('/');
  const tag = [line.kapp, where].filter((part) => part !== undefined && part !== '').join(' ');
  return tag === '' ? `${text}\n` : `[${tag}] ${text}\n`;
}

function safeText(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g, (c) =>
    c === '\n' ? '\\n' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}
