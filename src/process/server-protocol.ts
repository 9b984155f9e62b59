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
  | { readonly type: 'watch' | 'unwatch'; readonly pgid: number };

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
  | { readonly type: 'error'; readonly id: number; readonly message: string };

/** kapps' side: send a request to a server; dropped when its channel has closed (the server's `exit` reports that). */
export function sendRequest(server: ChildProcess, request: ServerRequest): void {
  if (server.connected) server.send(request);
}

/** kapps' side: every message the server sends. */
export function onServerMessage(server: ChildProcess, listener: (message: ServerMessage) => void): void {
  server.on('message', (message: ServerMessage) => listener(message));
}

/** The server's side: send a message to kapps; dropped once kapps has gone (the server is then stopping). */
export function sendMessage(message: ServerMessage): void {
  if (process.connected) process.send?.(message);
}

/** The server's side: every request from kapps. */
export function onRequest(listener: (request: ServerRequest) => void): void {
  process.on('message', (request: ServerRequest) => listener(request));
}
