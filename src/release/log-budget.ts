/**
 * A log within a byte budget: its head is written as it comes, until half the budget is used; from then on only the
 * last half of the budget is held (older lines are dropped and counted), and written when the log ends, after a line
 * saying what was dropped. Memory and disk stay within the budget whatever a step prints. Long lines are cut into
 * pieces first (`splitLongLine`, src/log/line-cut.ts), so no single line escapes the budget or makes one answer of a
 * log reader huge.
 */

import type { LogLine as BudgetLine } from '../log/line.js';

/** The limits of one log. */
export interface LogLimits {
  /** Bytes kept per log (its lines as JSON, one per line): half for its head, half for its tail. */
  readonly maxBytes: number;
  /** Characters per line: a longer line is cut into pieces of this length. */
  readonly maxLineLength: number;
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
