/**
 * Canonical JSON: object keys sorted (by UTF-16 code units), no whitespace, `undefined` members left out, as
 * `JSON.stringify` would print the same data. Two values that are equal as data give the same text, whatever
 * order their keys were built in, so the text can be hashed and compared: `specDigest` is that hash of a kapp's spec.
 */
import type { SpecKapp } from '../plan/spec.js';

/** The canonical JSON text of `value` (plain data: objects, arrays, strings, finite numbers, booleans, null). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : sortKeys(item)));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== undefined) out[key] = sortKeys(member);
  }
  return out;
}

/**
 * sha256 (lowercase hex) of the kapp's canonical spec JSON (keys sorted), leaving out the `selected` flag, which
 * says how the kapp was chosen rather than what it is.
 */
export function specDigest(kapp: SpecKapp): string {
  const { selected: _selected, ...rest } = kapp;
  return process.getBuiltinModule('node:crypto').createHash('sha256').update(canonicalJson(rest)).digest('hex');
}
