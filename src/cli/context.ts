/** The engine's context for the CLI: this process's directory, environment and command line; messages on stderr. */
import type { EngineContext } from '../engine/context.js';

export const cliContext: EngineContext = {
  get cwd() {
    return process.cwd();
  },
  env: process.env,
  argv: process.argv.slice(1),
  message: (text) => process.stderr.write(text),
  result: (text) => process.stdout.write(text),
};
