/**
 * Source substitutions: run a project from local copies or a mirror without editing its manifests. A substitution
 * replaces a prefix of a git source's repository (the part of its URI before `//`) with a local path or another
 * URL, before the source is fetched. They come from `source_substitutions:` in sugarkube-conf.yaml (relative paths
 * relative to that file) and from `--source-sub PREFIX=REPLACEMENT` (relative to the working directory); flags are
 * tried first, then the file's entries in order; the first matching prefix wins.
 */
import path from 'node:path';
import type { SourceLocation } from '../diagnostics/diagnostic.js';

/** One substitution, its replacement already made absolute when it is a local path. */
export interface SourceSubstitution {
  readonly prefix: string;
  /** A URL (`https://…`, `ssh://…`, `git@host:…`), an absolute local path, or `file://<absolute path>`. */
  readonly replace: string;
  /** Where it was declared, for messages: `--source-sub` or `file:line`. */
  readonly origin: string;
  readonly at?: SourceLocation;
}

/** Whether a replacement is a URL (kept as written) rather than a local path. */
export function isUrl(replacement: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(replacement) || /^[^/]*@[^/]*:/.test(replacement);
}

/**
 * Check a substitution and make its replacement absolute (relative to `baseDir`). Returns an error message when
 * it is unusable: an empty prefix or replacement, or a value starting with `-` (it could be read as an option).
 */
export function normaliseSubstitution(
  prefix: string,
  replace: string,
  baseDir: string,
): { prefix: string; replace: string } | string {
  if (prefix === '') return 'the prefix is empty';
  if (replace === '') return 'the replacement is empty';
  if (prefix.startsWith('-') || replace.startsWith('-')) return 'a prefix or replacement cannot start with `-`';
  if (replace.startsWith('file://')) {
    return { prefix, replace: `file://${path.resolve(baseDir, replace.slice('file://'.length))}` };
  }
  if (isUrl(replace)) return { prefix, replace };
  return { prefix, replace: path.resolve(baseDir, replace) };
}

/** Parse `--source-sub PREFIX=REPLACEMENT` values (split at the first `=`); relative paths are relative to `cwd`. */
export function parseSubstitutionFlags(values: readonly string[], cwd: string): SourceSubstitution[] | string {
  const out: SourceSubstitution[] = [];
  for (const value of values) {
    const eq = value.indexOf('=');
    if (eq <= 0) return `--source-sub ${value}: write PREFIX=REPLACEMENT`;
    const n = normaliseSubstitution(value.slice(0, eq), value.slice(eq + 1), cwd);
    if (typeof n === 'string') return `--source-sub ${value}: ${n}`;
    out.push({ ...n, origin: '--source-sub' });
  }
  return out;
}

/** The substitution whose prefix starts `repo`, if any (the first in order). */
export function findSubstitution(
  repo: string,
  substitutions: readonly SourceSubstitution[],
): SourceSubstitution | undefined {
  return substitutions.find((s) => repo.startsWith(s.prefix));
}
