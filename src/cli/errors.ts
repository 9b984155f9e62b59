/** Maps errors to printed messages and exit codes. */
import { ConfigError, ExitCode, KappsError, SilentFailure, UsageError } from '../diagnostics/errors.js';
import { formatDiagnostics } from '../report/diagnostic-printer.js';
import { redactCredentials } from '../diagnostics/redact.js';

/** Print an error the way a user should see it; return the exit code. */
export function reportError(error: unknown): number {
  if (error instanceof SilentFailure) return error.exitCode;
  if (error instanceof ConfigError) {
    process.stderr.write(`${redactCredentials(formatDiagnostics(error.diagnostics))}\n`);
    const errors = error.diagnostics.filter((d) => d.severity === 'error').length;
    if (errors > 1) process.stderr.write(`\n${errors} errors\n`);
    return error.exitCode;
  }
  if (error instanceof UsageError) {
    process.stderr.write(`kapps: ${redactCredentials(error.message)}\nRun \`kapps --help\` for usage.\n`);
    return error.exitCode;
  }
  if (error instanceof KappsError) {
    process.stderr.write(`kapps: ${redactCredentials(error.message)}\n`);
    return error.exitCode;
  }
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.stderr.write(
    `kapps: internal error (this is a bug in kapps; please report it with the command line and this text)\n${detail}\n`,
  );
  return ExitCode.internal;
}
