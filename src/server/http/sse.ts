/**
 * The event stream of a run (`GET /api/v1/runs/{id}/events`): Server-Sent Events written on the raw response. Each
 * event's `id:` is its sequence number in the run's feed, so a client resumes with `Last-Event-ID` (or `?after=N`).
 * The stream follows the store's `feed` notices (any instance may be writing the run), sends `: keep-alive` when
 * nothing happened for a while, and ends after the `status` event with a final status.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FINAL_RUN_STATES, type Run, type SSE_EVENT_NAMES } from '../../api/schemas.js';
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

function frame(id: number, event: (typeof SSE_EVENT_NAMES)[number], data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export async function streamRunEvents(options: StreamOptions): Promise<void> {
  const { store, runId, response } = options;
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  response.flushHeaders();
  let closed = false;
  let wake: (() => void) | undefined;
  const poke = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const unsubscribe = store.subscribe((notice) => {
    if (notice.runId === runId && (notice.type === 'feed' || notice.type === 'finished')) poke();
  });
  const onClose = (): void => {
    closed = true;
    poke();
  };
  options.request.on('close', onClose);
  response.on('close', onClose);
  options.closing.addEventListener('abort', onClose);
  if (options.closing.aborted) closed = true;
  const write = (text: string): Promise<void> =>
    new Promise((resolve) => {
      if (closed) return resolve();
      if (response.write(text)) resolve();
      else response.once('drain', resolve);
    });
  let last = options.after;
  try {
    for (;;) {
      if (closed) return;
      let entries: FeedEntry[] = await store.readFeed(runId, last, PAGE);
      let ended = false;
      while (entries.length > 0 && !closed) {
        let text = '';
        for (const entry of entries) {
          last = entry.seq;
          const { item } = entry;
          if (item.kind === 'status') {
            text += frame(entry.seq, 'status', await options.toApi(item.data));
            if (FINAL_RUN_STATES.includes(item.data.status)) {
              ended = true;
              break;
            }
          } else {
            text += frame(entry.seq, item.kind, item.data);
          }
        }
        await write(text);
        if (ended) return;
        entries = await store.readFeed(runId, last, PAGE);
      }
      // Caught up. A run that is final already (resumed after its last event): say its status once more, end.
      const run = await store.get(runId);
      if (!run) return;
      if (FINAL_RUN_STATES.includes(run.status)) {
        const more = await store.readFeed(runId, last, 1);
        if (more.length > 0) continue;
        await write(frame(last, 'status', await options.toApi(run)));
        return;
      }
      const woke = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          wake = undefined;
          resolve(false);
        }, options.keepAliveMs);
        wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      if (!woke) await write(': keep-alive\n\n');
    }
  } finally {
    unsubscribe();
    options.request.off('close', onClose);
    options.closing.removeEventListener('abort', onClose);
    if (!response.writableEnded) response.end();
  }
}
