/** Reading back the lines of a release's log, as stored (one JSON object per line). */
import { ReleaseRecordError } from './errors.js';
import type { ReleaseLogLine } from './store-types.js';

const STREAMS = new Set(['kapps', 'stdout', 'stderr']);

/** Parse one stored log line; a damaged one is reported with `where`, never skipped. */
export function parseLogLine(raw: string, where: string): ReleaseLogLine {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    throw new ReleaseRecordError(where, 'a log line that is not JSON');
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new ReleaseRecordError(where, 'a log line that is not a JSON object');
  }
  const line = data as Record<string, unknown>;
  if (typeof line.text !== 'string' || typeof line.time !== 'string' || !STREAMS.has(line.stream as string)) {
    throw new ReleaseRecordError(where, 'a log line without its time, stream and text');
  }
  for (const key of ['kapp', 'phase', 'step'] as const) {
    if (line[key] !== undefined && typeof line[key] !== 'string') {
      throw new ReleaseRecordError(where, `a log line whose ${key} is not a string`);
    }
  }
  return line as unknown as ReleaseLogLine;
}

/**
 * A log line as text: `[kapp phase/step] text` for a line a step printed, the text alone for kapps' own lines.
 * Control characters other than tab are shown escaped, so a stored line cannot move the cursor or recolour the
 * terminal of whoever reads the log.
 */
export function formatLogLine(line: ReleaseLogLine): string {
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
