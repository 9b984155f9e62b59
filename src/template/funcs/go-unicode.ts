/**
 * Go's `unicode` package for one rune (a code point): case mapping from Go's own tables (see unicode-tables.ts),
 * character classes from the runtime's Unicode property escapes.
 */
import { CASE_ORBIT, CASE_RANGES } from './unicode-tables.js';

const UPPER_LOWER = 0x110000;
const CASE_UPPER = 0;
const CASE_LOWER = 1;
const CASE_TITLE = 2;
const RANGE_COUNT = CASE_RANGES.length / 5;

function mapCase(which: number, r: number): number {
  let lo = 0;
  let hi = RANGE_COUNT;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    const base = m * 5;
    const rlo = CASE_RANGES[base] ?? 0;
    const rhi = CASE_RANGES[base + 1] ?? 0;
    if (r >= rlo && r <= rhi) {
      const delta = CASE_RANGES[base + 2 + which] ?? 0;
      // Alternating sequences: even offsets are upper case, odd ones lower case.
      if (delta === UPPER_LOWER) return rlo + (((r - rlo) & ~1) | (which & 1));
      return r + delta;
    }
    if (r < rlo) hi = m;
    else lo = m + 1;
  }
  return r;
}

/** unicode.ToUpper: the simple upper-case mapping of a rune (ß stays ß). */
export function toUpperRune(r: number): number {
  if (r < 0x80) return r >= 0x61 && r <= 0x7a ? r - 32 : r;
  return mapCase(CASE_UPPER, r);
}

/** unicode.ToLower: the simple lower-case mapping of a rune. */
export function toLowerRune(r: number): number {
  if (r < 0x80) return r >= 0x41 && r <= 0x5a ? r + 32 : r;
  return mapCase(CASE_LOWER, r);
}

/** unicode.ToTitle: the simple title-case mapping of a rune (ǆ → ǅ). */
export function toTitleRune(r: number): number {
  if (r < 0x80) return r >= 0x61 && r <= 0x7a ? r - 32 : r;
  return mapCase(CASE_TITLE, r);
}

let orbitMap: Map<number, number> | undefined;

/** unicode.SimpleFold: the next rune of `r`'s case-folding orbit (k → K → k → k). */
export function simpleFold(r: number): number {
  if (r < 0 || r > 0x10ffff) return r;
  if (!orbitMap) {
    orbitMap = new Map();
    for (let i = 0; i + 1 < CASE_ORBIT.length; i += 2) orbitMap.set(CASE_ORBIT[i] ?? 0, CASE_ORBIT[i + 1] ?? 0);
  }
  const special = orbitMap.get(r);
  if (special !== undefined) return special;
  const l = toLowerRune(r);
  if (l !== r) return l;
  return toUpperRune(r);
}

/** Map every rune of a string (Go's strings.Map with a total mapping). */
export function mapRunes(s: string, f: (r: number) => number): string {
  let out = '';
  for (const ch of s) {
    const r = ch.codePointAt(0) ?? 0;
    const m = f(r);
    out += m === r ? ch : String.fromCodePoint(m);
  }
  return out;
}

/** strings.ToUpper: simple per-rune mapping (unlike String.prototype.toUpperCase, ß stays ß). */
export function goToUpper(s: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(s)) return s.toUpperCase();
  return mapRunes(s, toUpperRune);
}

/** strings.ToLower: simple per-rune mapping (İ becomes i, not i + combining dot). */
export function goToLower(s: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(s)) return s.toLowerCase();
  return mapRunes(s, toLowerRune);
}

const reUpper = /^\p{Lu}$/u;
const reLower = /^\p{Ll}$/u;
const reTitle = /^\p{Lt}$/u;
const reLetter = /^\p{L}$/u;
const reDigit = /^\p{Nd}$/u;
const reNumber = /^\p{N}$/u;
const rePunct = /^\p{P}$/u;
const reSpace = /^\p{White_Space}$/u;

function test(re: RegExp, r: number): boolean {
  if (r >= 0xd800 && r <= 0xdfff) return false;
  return re.test(String.fromCodePoint(r));
}

/** unicode.IsUpper (category Lu). */
export function isUpperRune(r: number): boolean {
  if (r < 0x80) return r >= 0x41 && r <= 0x5a;
  return test(reUpper, r);
}

/** unicode.IsLower (category Ll). */
export function isLowerRune(r: number): boolean {
  if (r < 0x80) return r >= 0x61 && r <= 0x7a;
  return test(reLower, r);
}

/** unicode.IsTitle (category Lt). */
export function isTitleRune(r: number): boolean {
  return r >= 0x80 && test(reTitle, r);
}

/** unicode.IsLetter (category L). */
export function isLetterRune(r: number): boolean {
  if (r < 0x80) return (r >= 0x41 && r <= 0x5a) || (r >= 0x61 && r <= 0x7a);
  return test(reLetter, r);
}

/** unicode.IsDigit (category Nd). */
export function isDigitRune(r: number): boolean {
  if (r < 0x80) return r >= 0x30 && r <= 0x39;
  return test(reDigit, r);
}

/** unicode.IsNumber (category N). */
export function isNumberRune(r: number): boolean {
  if (r < 0x80) return r >= 0x30 && r <= 0x39;
  return test(reNumber, r);
}

/** unicode.IsPunct (category P). */
export function isPunctRune(r: number): boolean {
  return test(rePunct, r);
}

/** unicode.IsSpace: '\t', '\n', '\v', '\f', '\r', ' ', U+0085, U+00A0 and the White_Space property above Latin-1. */
export function isSpaceRune(r: number): boolean {
  if (r <= 0xff) return r === 0x20 || (r >= 0x09 && r <= 0x0d) || r === 0x85 || r === 0xa0;
  return test(reSpace, r);
}
