/**
 * The queue in front of a log's appends (a release's log, a server run's feed): one append at a time, in order; while
 * one is written, what comes waits, and the next append takes all of it (in batches of at most `maxItems` items and
 * about `MAX_APPEND_CHARS` characters). A step that prints fast makes a few large appends rather than a queue of small
 * ones that its run then waits for.
 */

/** About how much text one append takes (long lines make few items a lot of text). */
const MAX_APPEND_CHARS = 1 << 20;

export interface AppendQueueOptions<T> {
  /** Store one batch; it handles its own failure (an append that rejects stops none of the next ones). */
  readonly append: (batch: readonly T[]) => Promise<void>;
  /** The most items one append takes. */
  readonly maxItems: number;
  /** About how many characters of text an item holds. */
  readonly chars: (item: T) => number;
}

export class AppendQueue<T> {
  readonly #o: AppendQueueOptions<T>;
  #pending: T[] = [];
  #chain: Promise<void> = Promise.resolve();
  /** An append is queued on `#chain` that has not started: it will take the items waiting when it does. */
  #queued = false;

  constructor(options: AppendQueueOptions<T>) {
    this.#o = options;
  }

  /** Items waiting, not yet taken by an append. */
  get waiting(): number {
    return this.#pending.length;
  }

  /** Whether an append that has not started yet will take what is given now. */
  get queued(): boolean {
    return this.#queued;
  }

  push(item: T): void {
    this.#pending.push(item);
  }

  /** Store the items waiting now; resolves once they (and every earlier append) are stored or their failure handled. */
  flush(): Promise<void> {
    if (this.#queued || this.#pending.length === 0) return this.#chain;
    this.#queued = true;
    this.#chain = this.#chain.then(() => this.#appendWaiting());
    return this.#chain;
  }

  async #appendWaiting(): Promise<void> {
    this.#queued = false;
    const items = this.#pending;
    this.#pending = [];
    const { append, maxItems, chars } = this.#o;
    for (let at = 0; at < items.length;) {
      let end = at;
      let total = 0;
      while (end < items.length && end - at < maxItems && total < MAX_APPEND_CHARS) total += chars(items[end++] as T);
      await append(at === 0 && end === items.length ? items : items.slice(at, end)).catch(() => undefined);
      at = end;
    }
  }
}
