/**
 * The context a render runs in, carried by the asynchronous flow of the run that renders, never by a module-level
 * variable: one process runs many runs at once (the runs server), each with its own environment, working directory,
 * readable directories and sensitivity watch. A run sets it once (`withRenderContext`) and every render inside
 * that run, however deep in its promises and callbacks, reads that run's context and no other.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FuncContext } from './types.js';

const contexts = new AsyncLocalStorage<FuncContext>();

/** Run `fn` (and everything it starts) with `ctx` as the context of the renders it does. */
export function withRenderContext<T>(ctx: FuncContext, fn: () => T): T {
  return contexts.run(ctx, fn);
}

/** The context of the renders of the current run, if one was set. */
export function currentRenderContext(): FuncContext | undefined {
  return contexts.getStore();
}
