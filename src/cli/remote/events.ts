/**
 * Following a run on a runs server: its Server-Sent Events (`GET /api/v1/runs/{id}/events`) parsed as they come,
 * handed out in order and once each (by their `id:`), reconnecting with `Last-Event-ID` when the stream drops, until
 * the `status` event of a final state.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunEvent } from '../../report/events.js';
import { FINAL_RUN_STATES, logLineSchema, runSchema, type LogLine, type Run } from '../../api/index.js';
import { SseParser, type SseMessage } from '../../api/sse-parse.js';
import { ServerError, openStream, unreachable, type ServerClient } from './http.js';

export type { SseMessage };

/** Parse an event stream (text/event-stream) into its messages (src/api/sse-parse.ts); comments are skipped. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}

/** What to do with each thing a run's stream tells. */
export interface RunFollower {
  onRunEvent?(event: RunEvent): void;
  onLog?(line: LogLine): void;
  onStatus?(run: Run): void;
  /** The stream dropped and is being reopened (after `attempt` failures). */
  onReconnect?(attempt: number, reason: string): void;
}

export interface FollowOptions {
  /** Resume after this event id (`Last-Event-ID`); 0 or undefined: from the start. */
  readonly after?: number;
  /** Ends the following (Ctrl-C twice): `followRun` then rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** How long to keep trying to reconnect before giving up. */
  readonly reconnectForMs?: number;
}

/** Follow a run until its final status; returns that run. */
export async function followRun(
  client: ServerClient,
  runId: string,
  follower: RunFollower,
  options: FollowOptions = {},
): Promise<Run> {
  let last = options.after ?? 0;
  let failingSince: number | undefined;
  let attempt = 0;
  const giveUpMs = options.reconnectForMs ?? 60_000;
  const path = `runs/${encodeURIComponent(runId)}/events`;
  for (;;) {
    const controller = new AbortController();
    const stop = (): void => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', stop, { once: true });
    let reason: string;
    try {
      const response = await openStream(
        client,
        path,
        last > 0 ? { 'last-event-id': String(last) } : {},
        controller.signal,
        `the events of run ${runId}`,
      );
      for await (const message of readSse(response.body as ReadableStream<Uint8Array>)) {
        const seq = message.id !== undefined && /^\d+$/.test(message.id) ? Number(message.id) : undefined;
        if (seq !== undefined && seq <= last) continue; // seen before the stream was reopened
        if (seq !== undefined) last = seq;
        failingSince = undefined;
        attempt = 0;
        const final = deliver(message, follower, client.origin);
        if (final) return final;
      }
      reason = 'the stream ended before the run did';
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason ?? error;
      // A refusal (404, 401, …) will not change by retrying.
      if (error instanceof ServerError && error.status !== undefined && error.status !== 503) throw error;
      reason = error instanceof ServerError ? error.message : unreachable(client.origin, error).message;
    } finally {
      options.signal?.removeEventListener('abort', stop);
      controller.abort();
    }
    failingSince ??= Date.now();
    if (Date.now() - failingSince > giveUpMs) {
      throw new ServerError(`lost the runs server ${client.origin} while following run ${runId}: ${reason}`);
    }
    attempt++;
    follower.onReconnect?.(attempt, reason);
    await sleep(
      Math.min(2000, 100 * 2 ** Math.min(attempt, 5)),
      undefined,
      options.signal ? { signal: options.signal } : {},
    ).catch(() => undefined);
    if (options.signal?.aborted) throw options.signal.reason;
  }
}

/** Hand one message to the follower; the run when it is the status of a final state. */
function deliver(message: SseMessage, follower: RunFollower, origin: string): Run | undefined {
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch {
    throw new ServerError(`${origin} sent an event that is not JSON (${message.event})`);
  }
  switch (message.event) {
    case 'run-event':
      follower.onRunEvent?.(data as RunEvent);
      return undefined;
    case 'log': {
      const line = logLineSchema.safeParse(data);
      if (line.success) follower.onLog?.(line.data);
      return undefined;
    }
    case 'status': {
      const run = runSchema.safeParse(data);
      if (!run.success) throw new ServerError(`${origin} sent a run status that does not match the API`);
      follower.onStatus?.(run.data);
      return FINAL_RUN_STATES.includes(run.data.status) ? run.data : undefined;
    }
    default:
      return undefined;
  }
}
