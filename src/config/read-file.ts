/**
 * Reading configuration files, with the errors a user sees when one is missing or unreadable.
 */
import { readFileSync, statSync } from 'node:fs';
import { error as errorDiag, type Diagnostic, type SourceLocation } from '../diagnostics/diagnostic.js';
import { ConfigError } from '../diagnostics/errors.js';

/**
 * The text of `file`. Throws `ConfigError` naming the file (and `referencedAt`, the place that names it, when
 * known) if it does not exist, is a directory or cannot be read.
 * @param what how the user knows the file, e.g. "stack file", "manifest"
 */
export function readConfigText(file: string, what: string, referencedAt?: SourceLocation): string {
  const fail = (message: string): never => {
    const d: Diagnostic = errorDiag(message, referencedAt);
    throw new ConfigError([d]);
  };
  let isDir = false;
  try {
    isDir = statSync(file).isDirectory();
  } catch {
    fail(`${what} \`${file}\` does not exist`);
  }
  if (isDir) fail(`${what} \`${file}\` is a directory, not a file`);
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    return fail(`can't read ${what} \`${file}\`: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Throw the diagnostics as a `ConfigError` if any of them is an error. */
export function throwIfErrors(diagnostics: readonly Diagnostic[]): void {
  if (diagnostics.some((d) => d.severity === 'error')) throw new ConfigError(diagnostics);
}
