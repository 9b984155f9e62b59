/**
 * The event stream of a run (`GET /api/v1/runs/{id}/events`): Server-Sent Events written on the raw response. Each
 * event's `id:` is its sequence number in the run's feed, so a client resumes with `Last-Event-ID` (or `?after=N`).
 * The stream follows the store's `feed` notices (any instance may be writing the run), sends `: keep-alive` when
 * nothing happened for a while, and ends after the `status` event with a final status.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FINAL_RUN_STATES, type Run, type SseEventName } from '../../api/index.js';
import type { FeedEntry, RunStore, StoredRun } from '../queue/run-store.js';

export interface StreamOptions {
  readonly store: RunStore;
  readonly runId: string;
  readonly after: number;
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly keepAliveMs: number;
  readonly toApi: (run: StoredRun) => Promise<Run>;
  /** Aborted when the server closes: the stream ends (the client resumes elsewhere or later). */
  readonly closing: AbortSignal;
}

const PAGE = 500;

function frame(id: number, event: SseEventName, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** One client's stream: what it has been sent (`last`), whether it closed, and the wake-up of a feed notice. */
class RunEventStream {
  closed = false;
  last: number;
  #wake: (() => void) | undefined;

  constructor(private readonly options: StreamOptions) {
    this.last = options.after;
  }

  poke = (): void => {
    const w = this.#wake;
    this.#wake = undefined;
    w?.();
  };

  onClose = (): void => {
    this.closed = true;
    this.poke();
  };

  write(text: string): Promise<void> {
    const { response } = this.options;
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      if (response.write(text)) resolve();
      else response.once('drain', resolve);
    });
  }

  /** Send what the feed holds after `last`; true when the status of a final state was sent (the stream ends). */
  async sendFeed(): Promise<boolean> {
    const { store, runId, toApi } = this.options;
    let entries: FeedEntry[] = await store.readFeed(runId, this.last, PAGE);
    while (entries.length > 0 && !this.closed) {
      let text = '';
      let ended = false;
      for (const entry of entries) {
        this.last = entry.seq;
        const { item } = entry;
        if (item.kind !== 'status') {
          text += frame(entry.seq, item.kind, item.data);
          continue;
        }
        text += frame(entry.seq, 'status', await toApi(item.data));
        if (FINAL_RUN_STATES.includes(item.data.status)) {
          ended = true;
          break;
        }
      }
      await this.write(text);
      if (ended) return true;
      entries = await store.readFeed(runId, this.last, PAGE);
    }
    return false;
  }

  /** Caught up: 'end' when the run is gone or final (its status said once more), 'more' when its feed grew. */
  async caughtUp(): Promise<'end' | 'more' | 'wait'> {
    const { store, runId, toApi } = this.options;
    const run = await store.get(runId);
    if (!run) return 'end';
    if (!FINAL_RUN_STATES.includes(run.status)) return 'wait';
    const more = await store.readFeed(runId, this.last, 1);
    if (more.length > 0) return 'more';
    await this.write(frame(this.last, 'status', await toApi(run)));
    return 'end';
  }

  /** Wait for a notice of the run's feed; `: keep-alive` when none came for a while. */
  async waitForFeed(): Promise<void> {
    const woke = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = undefined;
        resolve(false);
      }, this.options.keepAliveMs);
      this.#wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
    if (!woke) await this.write(': keep-alive\n\n');
  }
}

export async function streamRunEvents(options: StreamOptions): Promise<void> {
  const { store, runId, response, request, closing } = options;
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  response.flushHeaders();
  const stream = new RunEventStream(options);
  const unsubscribe = store.subscribe((notice) => {
    if (notice.runId === runId && (notice.type === 'feed' || notice.type === 'finished')) stream.poke();
  });
  request.on('close', stream.onClose);
  response.on('close', stream.onClose);
  closing.addEventListener('abort', stream.onClose);
  if (closing.aborted) stream.closed = true;
  try {
    while (!stream.closed) {
      if (await stream.sendFeed()) return;
      if (stream.closed) return;
      const next = await stream.caughtUp();
      if (next === 'end') return;
      if (next === 'wait') await stream.waitForFeed();
    }
  } finally {
    unsubscribe();
    request.off('close', stream.onClose);
    closing.removeEventListener('abort', stream.onClose);
    if (!response.writableEnded) response.end();
  }
}
