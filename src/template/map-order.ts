/**
 * Map iteration order as Go's fmt and text/template use it (internal/fmtsort): keys sorted, strings by bytes, numbers
 * numerically, false before true. Mixed key types (only in YAML maps) sort by type first — nil, bool, int, float,
 * string — where Go uses an unstable internal order.
 */
import type { GoKey, GoMap, GoValue } from '../go-value/value.js';
import { GoIfaceMap } from '../go-value/value.js';

/** Compare two strings by their UTF-8 bytes (equivalently, by code points). */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      // Surrogates (code points above U+FFFF) sort after U+E000..U+FFFF in UTF-8 order.
      const xs = x >= 0xd800 && x <= 0xdfff;
      const ys = y >= 0xd800 && y <= 0xdfff;
      if (xs !== ys) return xs ? 1 : -1;
      return x - y;
    }
  }
  return a.length - b.length;
}

function keyRank(k: GoKey): number {
  if (k === null) return 0;
  switch (typeof k) {
    case 'boolean':
      return 1;
    case 'bigint':
      return 2;
    case 'number':
      return 3;
    default:
      return 4;
  }
}

/** Go's fmtsort order of two map keys. */
export function compareKeys(a: GoKey, b: GoKey): number {
  const ra = keyRank(a);
  const rb = keyRank(b);
  if (ra !== rb) return ra - rb;
  switch (typeof a) {
    case 'boolean':
      return Number(a) - Number(b);
    case 'bigint':
      return a < (b as bigint) ? -1 : a > (b as bigint) ? 1 : 0;
    case 'number': {
      const y = b as number;
      // NaN sorts first.
      if (Number.isNaN(a)) return Number.isNaN(y) ? 0 : -1;
      if (Number.isNaN(y)) return 1;
      return a < y ? -1 : a > y ? 1 : 0;
    }
    case 'string':
      return compareStrings(a, b as string);
    default:
      return 0;
  }
}

/** The entries of a Go map in sorted key order. */
export function sortedEntries(m: GoMap | GoIfaceMap): [GoKey, GoValue][] {
  if (m instanceof GoIfaceMap) return [...m.entries()].sort((x, y) => compareKeys(x[0], y[0]));
  const keys = Object.keys(m);
  let ascii = true;
  for (const k of keys) {
    // eslint-disable-next-line no-control-regex
    if (!/^[\x00-\x7f]*$/.test(k)) {
      ascii = false;
      break;
    }
  }
  keys.sort(ascii ? undefined : compareStrings);
  return keys.map((k) => [k, m[k] ?? null]);
}
