/**
 * The only place that turns diagnostics into text: `file:line:col: error: message`, then the source line with an
 * underline, then hints and related locations.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Diagnostic, SourceLocation } from '../diagnostics/diagnostic.js';

export interface PrintOptions {
  /** Paths are printed relative to this directory when inside it. */
  readonly cwd?: string;
  /** Reads a file's text for the excerpt; defaults to the file system. Return undefined to skip the excerpt. */
  readonly readSource?: (file: string) => string | undefined;
}

function displayPath(file: string, cwd: string): string {
  if (!path.isAbsolute(file)) return file;
  const rel = path.relative(cwd, file);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
}

/** A reader of source files that reads each file once: one per printing (files change between runs). */
function cachedReader(): (file: string) => string | undefined {
  const sources = new Map<string, string | undefined>();
  return (file) => {
    if (!sources.has(file)) {
      try {
        sources.set(file, readFileSync(file, 'utf8'));
      } catch {
        sources.set(file, undefined);
      }
    }
    return sources.get(file);
  };
}

export function formatLocationFor(loc: SourceLocation, cwd = process.cwd()): string {
  return `${displayPath(loc.file, cwd)}:${loc.line}:${loc.column}`;
}

function excerpt(loc: SourceLocation, readSource: (file: string) => string | undefined): string[] {
  const text = readSource(loc.file);
  if (text === undefined) return [];
  const line = text.split(/\r?\n/)[loc.line - 1];
  if (line === undefined) return [];
  const gutter = String(loc.line);
  const pad = ' '.repeat(gutter.length);
  let width = 1;
  if (loc.endLine === loc.line && loc.endColumn !== undefined && loc.endColumn > loc.column) {
    width = loc.endColumn - loc.column;
  } else if (loc.endLine === undefined || loc.endLine > loc.line) {
    width = Math.max(1, line.length - (loc.column - 1));
  }
  width = Math.min(width, Math.max(1, line.length - (loc.column - 1)));
  return [`${pad} |`, `${gutter} | ${line}`, `${pad} | ${' '.repeat(Math.max(0, loc.column - 1))}${'^'.repeat(width)}`];
}

/** Render one diagnostic as lines of plain text (no colour). */
export function formatDiagnostic(d: Diagnostic, options: PrintOptions = {}): string {
  const cwd = options.cwd ?? process.cwd();
  const readSource = options.readSource ?? cachedReader();
  const where = d.location ? `${formatLocationFor(d.location, cwd)}: ` : '';
  const field = d.path ? ` (at ${d.path})` : '';
  const lines = [`${where}${d.severity}: ${d.message}${field}`];
  if (d.location) lines.push(...excerpt(d.location, readSource));
  if (d.hint) lines.push(`  hint: ${d.hint}`);
  for (const r of d.related ?? []) {
    lines.push(`  ${r.location ? `${formatLocationFor(r.location, cwd)}: ` : ''}${r.message}`);
  }
  return lines.join('\n');
}

/** Render several diagnostics, errors first in the order given, separated by blank lines. */
export function formatDiagnostics(diagnostics: readonly Diagnostic[], options: PrintOptions = {}): string {
  const shared = { ...options, readSource: options.readSource ?? cachedReader() };
  return diagnostics.map((d) => formatDiagnostic(d, shared)).join('\n\n');
}
