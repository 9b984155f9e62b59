/**
 * The render context of a run, taken from its `EngineContext`: templates read the environment and the working
 * directory the driver gave this run (the CLI: its own; the runs server: what the project's configuration passes),
 * never `process.env` or `process.cwd()`, and look at files only where the driver lets them.
 */
import type { FuncContext } from '../template/types.js';
import type { EngineContext } from './context.js';

/** The environment a run's templates and steps see. */
export function runEnvOf(ctx: EngineContext): Readonly<Record<string, string | undefined>> {
  return ctx.runEnv ?? ctx.env;
}

/** Run `fn` with the render context of `ctx` (a sensitivity watch set by an enclosing run is kept). */
export async function inRunContext<T>(ctx: EngineContext, fn: () => Promise<T>): Promise<T> {
  // Loaded when a command runs (`--help` loads no template module).
  const { currentRenderContext, withRenderContext } = await import('../template/scope.js');
  const env = runEnvOf(ctx);
  const watch = currentRenderContext()?.watch;
  const render: FuncContext = {
    getEnv: (name) => (Object.prototype.hasOwnProperty.call(env, name) ? env[name] : undefined),
    cwd: ctx.cwd,
    ...(ctx.readRoots ? { readRoots: ctx.readRoots } : {}),
    ...(watch ? { watch } : {}),
  };
  return withRenderContext(render, fn);
}
