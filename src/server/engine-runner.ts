/**
 * The engine of the server's runs: src/engine behind the executor's `RunEngine`.
 */
import type { RunEngine } from './executor.js';
import type { EngineContext } from './server.js';

export function createEngine(context: EngineContext): Promise<RunEngine> {
  void context;
  return Promise.resolve({
    execute: () => Promise.reject(new Error('the engine is not wired yet')),
  });
}
