/**
 * Writes a release's log as the run produces it, in batches: the lines gathered are appended every `intervalMs`
 * (200 ms), at once when `maxLines` (200) are waiting, and all of them at `close()`. Batches are written one after
 * the other, in order; `close()` returns once every line given before it is stored, so a run that ends (normally or
 * on Ctrl-C) closes its writer before it writes its release's final phase and loses nothing.
 *
 * One batch is written at a time (`AppendQueue`, src/log/append-queue.ts). While it is, the lines that come wait, and
 * the next batch takes all of them (in appends of at most `maxBatch` lines, 10,000, and about 1 MiB of text): a step
 * that prints fast makes a few large appends, not one small one for every 200 lines, whose writes then queue up
 * behind the run (2,000,000 lines were 10,000 appends, stored seconds after the run).
 */
import { LogBudget, type LogLimits } from './log-budget.js';
import { splitLongLine } from '../log/line-cut.js';
import { AppendQueue } from '../log/append-queue.js';
import type { LogLine } from '../log/line.js';
import type { ReleaseStore } from './store-types.js';

export interface LogWriterOptions {
  readonly intervalMs?: number;
  readonly maxLines?: number;
  /** The most lines one append takes (10,000). */
  readonly maxBatch?: number;
  /** A batch could not be stored (told once; the run goes on). */
  readonly onError?: (error: unknown) => void;
  /** Keep the log within these (its head and tail, long lines cut); unlimited when absent. */
  readonly limits?: LogLimits;
}

export class ReleaseLogWriter {
  readonly #intervalMs: number;
  readonly #maxLines: number;
  readonly #queue: AppendQueue<LogLine>;
  #timer: NodeJS.Timeout | undefined;
  #failed = false;
  #closed = false;
  readonly #budget: LogBudget<LogLine> | undefined;

  constructor(store: ReleaseStore, project: string, stack: string, revision: number, options: LogWriterOptions = {}) {
    this.#intervalMs = options.intervalMs ?? 200;
    this.#maxLines = options.maxLines ?? 200;
    const onError = options.onError ?? (() => undefined);
    this.#queue = new AppendQueue<LogLine>({
      append: (batch) =>
        store.appendLog(project, stack, revision, batch).catch((error: unknown) => {
          if (this.#failed) return;
          this.#failed = true;
          onError(error);
        }),
      maxItems: Math.max(1, options.maxBatch ?? 10_000),
      chars: (line) => line.text.length,
    });
    this.#budget = options.limits ? new LogBudget(options.limits) : undefined;
  }

  /** Add a line; it is stored within `intervalMs`. Lines given after `close()` are ignored. */
  write(line: LogLine): void {
    if (this.#closed) return;
    const budget = this.#budget;
    const queue = this.#queue;
    if (budget) {
      for (const piece of splitLongLine(line, budget.limits.maxLineLength)) {
        const tailing = budget.tailing;
        if (budget.admit(piece)) queue.push(piece);
        else if (!tailing) queue.push(budget.startNotice(piece));
      }
    } else queue.push(line);
    if (queue.queued) return;
    if (queue.waiting >= this.#maxLines) {
      void this.flush();
    } else if (!this.#timer) {
      this.#timer = setTimeout(() => void this.flush(), this.#intervalMs);
      this.#timer.unref();
    }
  }

  /** Store the lines waiting now; resolves once they (and every earlier batch) are stored or reported lost. */
  flush(): Promise<void> {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    return this.#queue.flush();
  }

  /** Store everything given so far; no more lines are taken. */
  async close(): Promise<void> {
    if (!this.#closed && this.#budget)
      for (const line of this.#budget.drain(new Date().toISOString())) this.#queue.push(line);
    this.#closed = true;
    await this.flush();
  }
}
