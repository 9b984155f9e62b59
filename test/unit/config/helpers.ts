/** Helpers for configuration tests: fixture paths and the printed form of diagnostics. */
import path from 'node:path';
import { ConfigError } from '../../../src/diagnostics/errors.js';
import type { Diagnostic } from '../../../src/diagnostics/diagnostic.js';
import { formatDiagnostics } from '../../../src/report/diagnostic-printer.js';

/** The configuration fixtures directory. */
export const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/config');

/** A path inside the fixtures directory. */
export function fixture(...parts: string[]): string {
  return path.join(FIXTURES, ...parts);
}

/** Diagnostics as the CLI prints them, with paths relative to the fixtures directory. */
export function print(diagnostics: readonly Diagnostic[], readSource?: (file: string) => string | undefined): string {
  return formatDiagnostics(diagnostics, { cwd: FIXTURES, ...(readSource ? { readSource } : {}) });
}

/** The printed diagnostics of the ConfigError that `fn` throws (fails if it throws nothing or something else). */
export function printedError(fn: () => unknown, readSource?: (file: string) => string | undefined): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return print(e.diagnostics, readSource);
    throw e;
  }
  throw new Error('expected a ConfigError');
}

/** Lines joined with newlines (expected printer output). */
export function lines(...text: string[]): string {
  return text.join('\n');
}
