/** Removing repeated diagnostics. */
import type { Diagnostic } from '../diagnostics/diagnostic.js';

/**
 * Diagnostics without repeats (same severity, place and message), in their first order: planning the six phases
 * of a kapp meets the same broken step up to six times, and it must be reported once.
 */
export function uniqueDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return diagnostics.filter((d) => {
    const at = d.location ? `${d.location.file}:${d.location.line}:${d.location.column}` : '';
    const key = `${d.severity}\u0000${at}\u0000${d.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
