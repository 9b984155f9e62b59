/**
 * Go's strings package where it differs from JavaScript's string methods: whitespace is Go's (U+0085 yes, U+FEFF
 * no), empty separators split into runes (not UTF-16 units), cut sets are sets of runes.
 */
import { checkResultSize } from '../limits.js';
import { isSpaceRune } from './go-unicode.js';

/** strings.TrimSpace. */
export function trimSpace(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end) {
    const cp = s.codePointAt(start) ?? 0;
    if (!isSpaceRune(cp)) break;
    start += cp > 0xffff ? 2 : 1;
  }
  while (end > start) {
    let cp = s.charCodeAt(end - 1);
    let w = 1;
    if (cp >= 0xdc00 && cp <= 0xdfff && end - 2 >= start) {
      const hi = s.charCodeAt(end - 2);
      if (hi >= 0xd800 && hi <= 0xdbff) {
        cp = ((hi - 0xd800) << 10) + (cp - 0xdc00) + 0x10000;
        w = 2;
      }
    }
    if (!isSpaceRune(cp)) break;
    end -= w;
  }
  return s.slice(start, end);
}

/** strings.Trim(s, cutset): strip leading and trailing runes that are in `cutset`. */
export function trimCutset(s: string, cutset: string): string {
  if (s === '' || cutset === '') return s;
  const set = new Set(Array.from(cutset));
  const chars = Array.from(s);
  let a = 0;
  let b = chars.length;
  while (a < b && set.has(chars[a] ?? '')) a++;
  while (b > a && set.has(chars[b - 1] ?? '')) b--;
  return chars.slice(a, b).join('');
}

/** strings.Replace(s, old, new, -1): an empty `old` inserts `new` before every rune and at the end. */
export function replaceAll(s: string, old: string, repl: string): string {
  if (old === repl) return s;
  if (old !== '') {
    const parts = s.split(old);
    if (repl.length > old.length) checkResultSize(s.length + (parts.length - 1) * (repl.length - old.length));
    return parts.join(repl);
  }
  const chars = Array.from(s);
  checkResultSize(s.length + (chars.length + 1) * repl.length);
  return repl + chars.map((c) => c + repl).join('');
}

/**
 * strings.SplitN(s, sep, n): n < 0 all parts, n == 0 none, n > 0 at most n (the last holds the rest). An empty
 * separator splits into runes.
 */
export function splitN(s: string, sep: string, n: number): string[] {
  if (n === 0) return [];
  if (sep === '') {
    const chars = Array.from(s);
    if (n < 0 || n > chars.length) return chars;
    return [...chars.slice(0, n - 1), chars.slice(n - 1).join('')];
  }
  if (n < 0) return s.split(sep);
  const out: string[] = [];
  let rest = s;
  while (out.length < n - 1) {
    const i = rest.indexOf(sep);
    if (i < 0) break;
    out.push(rest.slice(0, i));
    rest = rest.slice(i + sep.length);
  }
  out.push(rest);
  return out;
}
