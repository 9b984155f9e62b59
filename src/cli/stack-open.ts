/**
 * Opening the stack a command's arguments name, for the handlers of the stack commands. Apart from
 * ./stack-args.ts (the options), which every command module loads: the engine modules it brings are loaded only by
 * a command that opens a stack, not by `--help` or the commands that do not.
 */
import type { EngineContext } from '../engine/context.js';
import { flushWarnings as engineFlushWarnings, openStackFor, type OpenOptions } from '../engine/open.js';
import type { Stack } from '../stack/stack.js';
import { cliContext } from './context.js';
import type { StackArgs } from './stack-args.js';

export type { OpenOptions } from '../engine/open.js';

/** Open the stack the arguments name (fetching the sources a planning command needs) and print its warnings. */
export async function openStackFromArgs(args: StackArgs, options: OpenOptions = {}): Promise<Stack> {
  return openStackFor(args, options, cliContext);
}

/** Print the stack's warnings not printed yet (in `ctx`, the CLI's by default), on stderr. */
export function flushWarnings(stack: Stack, ctx: EngineContext = cliContext): void {
  engineFlushWarnings(stack, ctx);
}
