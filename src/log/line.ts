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

const UNSTORABLE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|\0/g;

/**
 * Text made storable by every store: a lone UTF-16 surrogate (a name or text that was never valid Unicode) and NUL
 * become U+FFFD, so no line is ever refused (PostgreSQL's jsonb refuses both) and every backend keeps the same bytes.
 */
export function storableText(text: string): string {
  UNSTORABLE.lastIndex = 0;
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE, '\uFFFD') : text;
}

/** `JSON.stringify` of `value` with every string and key made storable. */
export function storableJson(value: unknown): string {
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
