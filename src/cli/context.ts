/**
 * The engine's context for the CLI: this process's directory, environment and command line; the text view, its
 * messages on stderr and the release line on stdout.
 */
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

/** The context of a run whose events are shown as JSON: stdout holds only the events (no release line). */
export const cliJsonContext: EngineContext = {
  get cwd() {
    return process.cwd();
  },
  env: process.env,
  argv: process.argv.slice(1),
  message: (text) => process.stderr.write(text),
  result: () => undefined,
};
