/**
 * The feed of one running run as its owner writes it: events and log lines batched (every `flushMs` or
 * `flushItems`), written in order one batch after the other, the log bounded by its budget (its head as it comes;
 * past the budget only its tail, written when the run ends, and a step's output events stop with the head).
 *
 * The first write that fails stops the writing: nothing the run prints may be dropped while it goes on, so the
 * feed says so (`onWriteError`) and the run is stopped.
 *
 * One batch is written at a time (`AppendQueue`, src/log/append-queue.ts); the items that come meanwhile wait, and the
 * next batch takes all of them (in appends of at most 10,000 items and about 1 MiB of text): a step that prints fast
 * makes a few large appends rather than a queue of small ones behind the run.
 */
import type { LogLine } from '../../api/index.js';
import { AppendQueue } from '../../log/append-queue.js';
import { splitLongLine } from '../../log/line-cut.js';
import { LogBudget, type LogLimits } from '../../release/log-budget.js';
import type { RunEvent } from '../../report/events.js';
import type { FeedItem, RunOwner, RunStore } from '../queue/run-store.js';
import { oneLine } from './errors.js';

export interface RunFeedOptions {
  readonly store: RunStore;
  readonly runId: string;
  readonly owner: RunOwner;
  readonly flushMs: number;
  readonly flushItems: number;
  /** Bounds of the run's log; unlimited when absent. */
  readonly logLimits: LogLimits | undefined;
  /** The first write failed (the writing stops): `error` as thrown, `text` its one line. */
  readonly onWriteError: (error: unknown, text: string) => void;
}

const time = (): string => new Date().toISOString();

/** About how much text an item holds: a log line's, a step's output; other items are small. */
function textLength(item: FeedItem): number {
  if (item.kind === 'log') return item.data.text.length;
  if (item.kind === 'run-event' && item.data.type === 'step-output') return item.data.text.length;
  return 0;
}

export class RunFeed {
  readonly #o: RunFeedOptions;
  readonly #budget: LogBudget<LogLine> | undefined;
  readonly #queue: AppendQueue<FeedItem>;
  #timer: NodeJS.Timeout | undefined;
  #writeError: string | undefined;

  constructor(options: RunFeedOptions) {
    this.#o = options;
    this.#budget = options.logLimits ? new LogBudget<LogLine>(options.logLimits) : undefined;
    this.#queue = new AppendQueue<FeedItem>({
      append: async (batch) => {
        // The first failure stops the writing: nothing after it is stored.
        if (this.#writeError !== undefined) return;
        try {
          await options.store.appendFeed(options.runId, batch, options.owner);
        } catch (error) {
          this.#writeError = oneLine(error);
          options.onWriteError(error, this.#writeError);
        }
      },
      maxItems: 10_000,
      chars: textLength,
    });
  }

  /** Why the feed could not be written, once a write failed. */
  get writeError(): string | undefined {
    return this.#writeError;
  }

  /** An event of the run; a step's output stops once the log keeps only its tail (its lines are in the log). */
  emit(event: RunEvent): void {
    if (event.type === 'step-output' && this.#budget?.tailing) return;
    this.#push({ kind: 'run-event', data: event });
  }

  /** A line of the run's log, cut to the line length and kept within the budget. */
  log(line: LogLine): void {
    const budget = this.#budget;
    const limits = this.#o.logLimits;
    if (!budget || !limits) return this.#push({ kind: 'log', data: line });
    for (const piece of splitLongLine(line, limits.maxLineLength)) {
      const tailing = budget.tailing;
      if (budget.admit(piece)) this.#push({ kind: 'log', data: piece });
      else if (!tailing) this.#push({ kind: 'log', data: budget.startNotice(piece) });
    }
  }

  /** Lines of the run's own log (`stream: 'kapps'`). */
  message(text: string): void {
    for (const line of text.replace(/\n$/, '').split('\n')) this.log({ time: time(), stream: 'kapps', text: line });
  }

  /** The run ended: write the log's tail and everything pending; resolves once all is written (or failed). */
  close(): Promise<unknown> {
    if (this.#budget) for (const line of this.#budget.drain(time())) this.#push({ kind: 'log', data: line });
    return this.#flush();
  }

  #push(item: FeedItem): void {
    const queue = this.#queue;
    queue.push(item);
    if (queue.queued) return;
    if (queue.waiting >= this.#o.flushItems) void this.#flush();
    else this.#timer ??= setTimeout(() => void this.#flush(), this.#o.flushMs);
  }

  #flush(): Promise<unknown> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    return this.#queue.flush();
  }
}
