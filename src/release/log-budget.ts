/**
 * A log within a byte budget: its head is written as it comes, until half the budget is used; from then on only the
 * last half of the budget is held (older lines are dropped and counted), and written when the log ends, after a line
 * saying what was dropped. Memory and disk stay within the budget whatever a step prints. Long lines are cut into
 * pieces first (`splitLongLine`), so no single line escapes the budget or makes one answer of a log reader huge.
 */

import type { LogLine as BudgetLine } from '../log/line.js';

/** The limits of one log. */
export interface LogLimits {
  /** Bytes kept per log (its lines as JSON, one per line): half for its head, half for its tail. */
  readonly maxBytes: number;
  /** Characters per line: a longer line is cut into pieces of this length. */
  readonly maxLineLength: number;
}

/**
 * Characters per line of a log when nothing else is configured (a server's `max_line_length`, a CLI run's release
 * log, the output a reporter shows): a longer line is cut into pieces of this length, so a step printing megabytes
 * without a newline (a binary, a minified file, a progress meter that only returns the carriage) is never held whole.
 */
export const DEFAULT_MAX_LINE_LENGTH = 16_384;

/**
 * Where a piece of `text` that starts at `at` and holds at most `max` characters ends: never inside a surrogate pair
 * (a piece holds at least one whole character, so `max` below 2 counts as 2).
 */
function pieceEnd(text: string, at: number, max: number): number {
  let end = Math.min(at + Math.max(2, max), text.length);
  const last = text.charCodeAt(end - 1);
  if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
  return end;
}

/**
 * The text of a line still being written, cut while it is longer than `max`: the whole pieces to pass on now and the
 * rest to keep (never a surrogate pair cut in two).
 */
export function cutUnfinished(text: string, max: number): { pieces: string[]; rest: string } {
  const pieces: string[] = [];
  let at = 0;
  while (text.length - at > max) {
    const end = pieceEnd(text, at, max);
    pieces.push(text.slice(at, end));
    at = end;
  }
  return { pieces, rest: at === 0 ? text : text.slice(at) };
}

/** `line` cut into pieces of at most `max` characters (one piece when it is short enough). */
export function splitLongLine<T extends BudgetLine>(line: T, max: number): T[] {
  if (line.text.length <= max) return [line];
  const pieces: T[] = [];
  for (let at = 0; at < line.text.length;) {
    const end = pieceEnd(line.text, at, max);
    pieces.push({ ...line, text: line.text.slice(at, end) });
    at = end;
  }
  return pieces;
}

const MIB = 1024 * 1024;

function size(bytes: number): string {
  return bytes >= MIB ? `${(bytes / MIB).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}

export class LogBudget<T extends BudgetLine> {
  readonly #headMax: number;
  readonly #tailMax: number;
  #headBytes = 0;
  #tailing = false;
  #tail: T[] = [];
  #tailSizes: number[] = [];
  #tailStart = 0;
  #tailBytes = 0;
  #droppedLines = 0;
  #droppedBytes = 0;

  constructor(readonly limits: LogLimits) {
    this.#headMax = Math.floor(limits.maxBytes / 2);
    this.#tailMax = limits.maxBytes - this.#headMax;
  }

  /** Whether the head is full (lines are held for the tail now). */
  get tailing(): boolean {
    return this.#tailing;
  }

  /**
   * Take a line (already cut to `maxLineLength`): true when it belongs to the head (write it now); false when it is
   * held for the tail (or dropped). The first false is when the head filled up.
   */
  admit(line: T): boolean {
    // Counted as stored: the line's JSON and its newline.
    const bytes = Buffer.byteLength(JSON.stringify(line)) + 1;
    if (!this.#tailing && this.#headBytes + bytes <= this.#headMax) {
      this.#headBytes += bytes;
      return true;
    }
    this.#tailing = true;
    this.#tail.push(line);
    this.#tailSizes.push(bytes);
    this.#tailBytes += bytes;
    while (this.#tailBytes > this.#tailMax && this.#tailStart < this.#tail.length) {
      const dropped = this.#tailSizes[this.#tailStart] ?? 0;
      this.#tailBytes -= dropped;
      this.#droppedBytes += dropped;
      this.#droppedLines++;
      this.#tailStart++;
    }
    if (this.#tailStart > 4096 && this.#tailStart * 2 > this.#tail.length) {
      this.#tail = this.#tail.slice(this.#tailStart);
      this.#tailSizes = this.#tailSizes.slice(this.#tailStart);
      this.#tailStart = 0;
    }
    return false;
  }

  /** The line a log gets when its head is full. */
  startNotice(template: Pick<T, 'time'>): BudgetLine {
    return {
      time: template.time,
      stream: 'kapps',
      text: `kapps: the log reached its limit (${size(this.limits.maxBytes)}): it keeps its first ${size(this.#headMax)} and its last ${size(this.#tailMax)}, written when the run ends`,
    };
  }

  /** What was held for the tail, after a line saying what was dropped (if anything was); the budget is emptied. */
  drain(time: string): (T | BudgetLine)[] {
    const out: (T | BudgetLine)[] = [];
    if (this.#droppedLines > 0) {
      out.push({
        time,
        stream: 'kapps',
        text: `kapps: ${this.#droppedLines} line(s) (${size(this.#droppedBytes)}) of this log were dropped here: it keeps its first ${size(this.#headMax)} and its last ${size(this.#tailMax)} (limits.max_log_bytes)`,
      });
    }
    out.push(...this.#tail.slice(this.#tailStart));
    this.#tail = [];
    this.#tailSizes = [];
    this.#tailStart = 0;
    this.#tailBytes = 0;
    return out;
  }
}
