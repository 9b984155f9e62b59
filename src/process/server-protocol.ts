/**
 * What kapps and its process server (`process-server.ts`) say to each other over the server's IPC channel: every
 * request and every message, and the only functions that send or receive them, so that each side is type-checked
 * against the other. The channel uses Node's 'advanced' serialization (structured clone): a Buffer arrives as a
 * plain Uint8Array.
 */
import type { ChildProcess } from 'node:child_process';
import type { SpawnRequest, SpawnResult } from './spawn.js';

/** The part of a `SpawnRequest` that crosses the channel: no signal, no callbacks. */
export type ServerSpawnRequest = Omit<SpawnRequest, 'signal' | 'onOutput' | 'onStart'>;

/** A request from kapps to the server. */
export type ServerRequest =
  /** Run a step; `stream` asks for its output as it arrives (`output` messages). */
  | { readonly type: 'run'; readonly id: number; readonly req: ServerSpawnRequest; readonly stream: boolean }
  /** Stop the step of request `id`, as a cancelled step is stopped. */
  | { readonly type: 'cancel'; readonly id: number }
  /** Send `signal` to every process group the server knows of. */
  | { readonly type: 'kill-all'; readonly signal: NodeJS.Signals }
  /** A process group started by kapps itself (KAPPS_INPROCESS_SPAWN=1): stop it should kapps go away, or forget it. */
  | { readonly type: 'watch' | 'unwatch'; readonly pgid: number }
  /** Several requests at once, in order (see `sendRequests`). */
  | { readonly type: 'batch'; readonly requests: readonly ServerRequest[] };

/** A `SpawnResult` as it crosses the channel: its output as Uint8Array (the receiver makes Buffers again). */
export type WireSpawnResult = Omit<SpawnResult, 'stdout' | 'stderr'> & {
  readonly stdout: Uint8Array;
  readonly stderr: Uint8Array;
};

/** A message from the server to kapps. */
export type ServerMessage =
  /** The server listens: steps started from now on are stopped should kapps go away. */
  | { readonly type: 'ready' }
  /** The step of request `id` started, with this pid (also its process group id). */
  | { readonly type: 'started'; readonly id: number; readonly pid: number }
  /** A chunk of the step's output (only when the request asked for `stream`). */
  | { readonly type: 'output'; readonly id: number; readonly stream: 'stdout' | 'stderr'; readonly text: string }
  /** The step of request `id` ended. */
  | { readonly type: 'result'; readonly id: number; readonly result: WireSpawnResult }
  /** Running request `id` threw (a bug): the error's message. */
  | { readonly type: 'error'; readonly id: number; readonly message: string }
  /** Several messages at once, in order (see `sendMessages`). */
  | { readonly type: 'batch'; readonly messages: readonly ServerMessage[] };

/** A request or message other than a batch: what the listeners are given. */
export type OneMessage<T extends { type: string }> = Exclude<T, { type: 'batch' }>;

/** kapps' side: send a request to a server; dropped when its channel has closed (the server's `exit` reports that). */
export function sendRequest(server: ChildProcess, request: ServerRequest): void {
  if (server.connected) server.send(request);
}

/**
 * kapps' side: send requests queued together, in order, as one message. Each message over the channel is a write
 * that wakes the other process: with many steps starting at once (64 workers), one write per step cost kapps' main
 * thread a third of a millisecond each on a busy machine.
 */
export function sendRequests(server: ChildProcess, requests: readonly ServerRequest[]): void {
  if (requests.length === 0) return;
  sendRequest(server, requests.length === 1 ? (requests[0] as ServerRequest) : { type: 'batch', requests });
}

/** kapps' side: every message the server sends (a batch's messages one by one, in order). */
export function onServerMessage(server: ChildProcess, listener: (message: OneMessage<ServerMessage>) => void): void {
  const each = (message: ServerMessage): void => {
    if (message.type === 'batch') for (const m of message.messages) each(m);
    else listener(message);
  };
  server.on('message', each);
}

/**
 * The server's side: send a message to kapps; dropped once kapps has gone (the server is then stopping). kapps may
 * have gone before the server noticed (its end of the channel closed while the server was busy): the write then
 * fails (EPIPE), and the failure is dropped with the message instead of ending the server with a stack trace on the
 * output it shares with kapps. The channel's `disconnect` follows, and stops the server.
 */
export function sendMessage(message: ServerMessage): void {
  if (process.connected) process.send?.(message, undefined, {}, dropSendError);
}

function dropSendError(): void {
  // Nothing to do: see `sendMessage`.
}

/** The server's side: send messages queued together, in order, as one message (see `sendRequests`). */
export function sendMessages(messages: readonly ServerMessage[]): void {
  if (messages.length === 0) return;
  sendMessage(messages.length === 1 ? (messages[0] as ServerMessage) : { type: 'batch', messages });
}

/** The server's side: every request from kapps (a batch's requests one by one, in order). */
export function onRequest(listener: (request: OneMessage<ServerRequest>) => void): void {
  const each = (request: ServerRequest): void => {
    if (request.type === 'batch') for (const r of request.requests) each(r);
    else listener(request);
  };
  process.on('message', each);
}
