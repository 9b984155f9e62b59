/**
 * Character classes for Go regular expressions, as code-point ranges: Go's Perl and POSIX classes, Unicode property
 * names, and case folding of ranges exactly as Go's regexp/syntax folds them (every rune's SimpleFold orbit).
 */
import { simpleFold } from './go-unicode.js';
import { GO_SCRIPTS } from './unicode-tables.js';

const MIN_FOLD = 0x41;
const MAX_FOLD = 0x1e943;
const MAX_RUNE = 0x10ffff;

/** Perl classes (`\d`, `\s`, `\w` and negations): ASCII only, as in Go. */
export const PERL_GROUPS: Record<string, { neg: boolean; ranges: number[] }> = {
  '\\d': { neg: false, ranges: [0x30, 0x39] },
  '\\D': { neg: true, ranges: [0x30, 0x39] },
  '\\s': { neg: false, ranges: [0x09, 0x0a, 0x0c, 0x0d, 0x20, 0x20] },
  '\\S': { neg: true, ranges: [0x09, 0x0a, 0x0c, 0x0d, 0x20, 0x20] },
  '\\w': { neg: false, ranges: [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a] },
  '\\W': { neg: true, ranges: [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a] },
};

/** POSIX classes for `[[:name:]]` (ASCII). */
export const POSIX_GROUPS: Record<string, number[]> = {
  alnum: [0x30, 0x39, 0x41, 0x5a, 0x61, 0x7a],
  alpha: [0x41, 0x5a, 0x61, 0x7a],
  ascii: [0x00, 0x7f],
  blank: [0x09, 0x09, 0x20, 0x20],
  cntrl: [0x00, 0x1f, 0x7f, 0x7f],
  digit: [0x30, 0x39],
  graph: [0x21, 0x7e],
  lower: [0x61, 0x7a],
  print: [0x20, 0x7e],
  punct: [0x21, 0x2f, 0x3a, 0x40, 0x5b, 0x60, 0x7b, 0x7e],
  space: [0x09, 0x0d, 0x20, 0x20],
  upper: [0x41, 0x5a],
  word: [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a],
  xdigit: [0x30, 0x39, 0x41, 0x46, 0x61, 0x66],
};

/** Unicode general categories Go's regexp accepts in `\p{..}`. */
export const CATEGORIES = new Set(
  'C Cc Cf Co Cs L Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc Sk Sm So Z Zl Zp Zs'.split(' '),
);
let scripts: Set<string> | undefined;

/** Whether `name` is a script Go's regexp accepts in `\p{..}`. */
export function isScript(name: string): boolean {
  scripts ??= new Set(GO_SCRIPTS.split(' '));
  return scripts.has(name);
}

/** Sort and merge range pairs (Go's cleanClass). */
export function cleanRanges(r: number[]): number[] {
  const pairs: [number, number][] = [];
  for (let i = 0; i + 1 < r.length; i += 2) pairs.push([r[i] ?? 0, r[i + 1] ?? 0]);
  pairs.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  const out: number[] = [];
  for (const [lo, hi] of pairs) {
    const n = out.length;
    if (n > 0 && lo <= (out[n - 1] ?? 0) + 1) {
      if (hi > (out[n - 1] ?? 0)) out[n - 1] = hi;
      continue;
    }
    out.push(lo, hi);
  }
  return out;
}

/** The complement of cleaned ranges within 0..U+10FFFF. */
export function negateRanges(r: number[]): number[] {
  const clean = cleanRanges(r);
  const out: number[] = [];
  let next = 0;
  for (let i = 0; i + 1 < clean.length; i += 2) {
    const lo = clean[i] ?? 0;
    const hi = clean[i + 1] ?? 0;
    if (lo > next) out.push(next, lo - 1);
    next = hi + 1;
  }
  if (next <= MAX_RUNE) out.push(next, MAX_RUNE);
  return out;
}

/** Add [lo, hi] and everything case-equivalent to it (Go's appendFoldedRange). */
export function appendFoldedRange(r: number[], lo: number, hi: number): void {
  if ((lo <= MIN_FOLD && hi >= MAX_FOLD) || hi < MIN_FOLD || lo > MAX_FOLD) {
    r.push(lo, hi);
    return;
  }
  if (lo < MIN_FOLD) {
    r.push(lo, MIN_FOLD - 1);
    lo = MIN_FOLD;
  }
  if (hi > MAX_FOLD) {
    r.push(MAX_FOLD + 1, hi);
    hi = MAX_FOLD;
  }
  r.push(lo, hi);
  for (let c = lo; c <= hi; c++) {
    for (let f = simpleFold(c); f !== c; f = simpleFold(f)) if (f < lo || f > hi) r.push(f, f);
  }
}

/** Add range pairs, case-folded when `fold`. */
export function appendRanges(r: number[], ranges: readonly number[], fold: boolean): void {
  for (let i = 0; i + 1 < ranges.length; i += 2) {
    if (fold) appendFoldedRange(r, ranges[i] ?? 0, ranges[i + 1] ?? 0);
    else r.push(ranges[i] ?? 0, ranges[i + 1] ?? 0);
  }
}

/** Add a group (Perl or POSIX class), folded first when case-insensitive, then negated if needed. */
export function appendGroup(r: number[], ranges: readonly number[], neg: boolean, fold: boolean): void {
  const tmp: number[] = [];
  appendRanges(tmp, ranges, fold);
  r.push(...(neg ? negateRanges(tmp) : tmp));
}
