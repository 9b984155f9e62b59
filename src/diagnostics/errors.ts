/**
 * The few error classes that steer top-level control flow. `src/cli/main.ts` maps each class to an exit code;
 * nothing else sets exit codes. Expected per-kapp failures are values (see `src/execute`), not exceptions.
 */
import type { Diagnostic } from './diagnostic.js';

/** Exit codes used by the CLI. */
export const ExitCode = {
  ok: 0,
  /** A run failed, or the configuration is invalid. */
  failure: 1,
  /** The command line itself was wrong (unknown flag, missing argument). */
  usage: 2,
  /** A bug in kapps. */
  internal: 70,
  /** Interrupted by SIGINT/SIGTERM. */
  cancelled: 130,
} as const;

/** Base class: an error the user can act on; printed without a stack trace. */
export class KappsError extends Error {
  readonly exitCode: number = ExitCode.failure;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A wrong command line: unknown option, missing argument, contradictory flags. Exit 2. */
export class UsageError extends KappsError {
  override readonly exitCode: number = ExitCode.usage;
}

/** Invalid configuration: one or more diagnostics, all printed. Exit 1. */
export class ConfigError extends KappsError {
  readonly diagnostics: readonly Diagnostic[];
  constructor(diagnostics: readonly Diagnostic[], message?: string) {
    super(message ?? diagnostics.map((d) => d.message).join('\n'));
    this.diagnostics = diagnostics;
  }
}

/** The run was interrupted. Exit 130. */
export class CancelledError extends KappsError {
  override readonly exitCode: number = ExitCode.cancelled;
}

/** A run finished with failures that have already been reported (summary printed). Exit 1, print nothing more. */
export class SilentFailure extends KappsError {}

/** A broken invariant inside kapps. Exit 70, printed with a stack and a request to report it. */
export class InternalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(`Internal error: ${message}`, options);
    this.name = 'InternalError';
  }
}
