/**
 * Diagnostics are data: a message plus where in which file it applies. Only the printer in
 * `src/report/diagnostic-printer.ts` turns them into text.
 */

/** A position in a source file; line and column are 1-based. */
export interface SourceLocation {
  /** Path of the file, as the user gave it or absolute. */
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** End of the range (exclusive column), when known, for the underline. */
  readonly endLine?: number;
  readonly endColumn?: number;
}

export type Severity = 'error' | 'warning';

/** A related location that helps explain a diagnostic (e.g. each edge of a cycle). */
export interface RelatedInformation {
  readonly message: string;
  readonly location?: SourceLocation;
}

export interface Diagnostic {
  readonly severity: Severity;
  /** One sentence; no trailing period needed; no colour codes. */
  readonly message: string;
  readonly location?: SourceLocation;
  /** Dotted field path inside the file, e.g. `kapps[2].run_units.helm.apply_install[0].args`. */
  readonly path?: string;
  /** "did you mean" and similar hints, printed after the message. */
  readonly hint?: string;
  readonly related?: readonly RelatedInformation[];
}

export function error(message: string, location?: SourceLocation, extra: Partial<Diagnostic> = {}): Diagnostic {
  return { severity: 'error', message, ...(location ? { location } : {}), ...extra };
}

export function warning(message: string, location?: SourceLocation, extra: Partial<Diagnostic> = {}): Diagnostic {
  return { severity: 'warning', message, ...(location ? { location } : {}), ...extra };
}
