/**
 * Writes a release's log as the run produces it, in batches: the lines gathered are appended every `intervalMs`
 * (200 ms), at once when `maxLines` (200) are waiting, and all of them at `close()`. Batches are written one after
 * the other, in order; `close()` returns once every line given before it is stored, so a run that ends (normally or
 * on Ctrl-C) closes its writer before it writes its release's final phase and loses nothing.
 *
 * One batch is written at a time. While it is, the lines that come wait, and the next batch takes all of them (in
 * appends of at most `maxBatch` lines, 10,000, and about 1 MiB of text): a step that prints fast makes a few large
 * appends, not one small one for every 200 lines, whose writes then queue up behind the run (2,000,000 lines were
 * 10,000 appends, stored seconds after the run).
 */
import { LogBudget, splitLongLine, type LogLimits } from './log-budget.js';
import type { LogLine } from '../log/line.js';
import type { ReleaseStore } from './store-types.js';

/** About how much text one append takes (long lines make few lines a lot of text). */
const BATCH_CHARS = 1 << 20;

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
  readonly #store: ReleaseStore;
  readonly #key: readonly [string, string, number];
  readonly #intervalMs: number;
  readonly #maxLines: number;
  readonly #maxBatch: number;
  readonly #onError: (error: unknown) => void;
  #pending: LogLine[] = [];
  #timer: NodeJS.Timeout | undefined;
  #chain: Promise<void> = Promise.resolve();
  /** A batch is queued on `#chain` that has not started: it will take the lines waiting when it does. */
  #queued = false;
  #failed = false;
  #closed = false;
  readonly #budget: LogBudget<LogLine> | undefined;

  constructor(store: ReleaseStore, project: string, stack: string, revision: number, options: LogWriterOptions = {}) {
    this.#store = store;
    this.#key = [project, stack, revision];
    this.#intervalMs = options.intervalMs ?? 200;
    this.#maxLines = options.maxLines ?? 200;
    this.#maxBatch = Math.max(1, options.maxBatch ?? 10_000);
    this.#onError = options.onError ?? (() => undefined);
    this.#budget = options.limits ? new LogBudget(options.limits) : undefined;
  }

  /** Add a line; it is stored within `intervalMs`. Lines given after `close()` are ignored. */
  write(line: LogLine): void {
    if (this.#closed) return;
    const budget = this.#budget;
    if (budget) {
      for (const piece of splitLongLine(line, budget.limits.maxLineLength)) {
        const tailing = budget.tailing;
        if (budget.admit(piece)) this.#pending.push(piece);
        else if (!tailing) this.#pending.push(budget.startNotice(piece));
      }
    } else this.#pending.push(line);
    if (this.#queued) return;
    if (this.#pending.length >= this.#maxLines) {
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
    if (this.#queued || this.#pending.length === 0) return this.#chain;
    this.#queued = true;
    this.#chain = this.#chain.then(() => this.#writeWaiting());
    return this.#chain;
  }

  /** Append the lines waiting now, in batches of at most `maxBatch` lines and about 1 MiB of text, one after another. */
  async #writeWaiting(): Promise<void> {
    this.#queued = false;
    const waiting = this.#pending;
    this.#pending = [];
    const [project, stack, revision] = this.#key;
    for (let at = 0; at < waiting.length;) {
      let end = at;
      let chars = 0;
      while (end < waiting.length && end - at < this.#maxBatch && chars < BATCH_CHARS) {
        chars += (waiting[end] as LogLine).text.length;
        end++;
      }
      const batch = at === 0 && end === waiting.length ? waiting : waiting.slice(at, end);
      at = end;
      await this.#store.appendLog(project, stack, revision, batch).catch((error: unknown) => {
        if (this.#failed) return;
        this.#failed = true;
        this.#onError(error);
      });
    }
  }

  /** Store everything given so far; no more lines are taken. */
  async close(): Promise<void> {
    if (!this.#closed && this.#budget) this.#pending.push(...this.#budget.drain(new Date().toISOString()));
    this.#closed = true;
    await this.flush();
  }
}
