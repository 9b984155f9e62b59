/**
 * The cursor over a Go regular expression and the parts of Go's parser that read single characters, escapes and
 * character classes (`[...]`, `\\pL`, `\\d`, `[[:alpha:]]`), with Go's error texts.
 */
import type { CharClass, Flags } from './regexp-ast.js';
import { E, RegexpSyntaxError } from './regexp-ast.js';
import {
  appendFoldedRange,
  appendGroup,
  CATEGORIES,
  cleanRanges,
  isScript,
  PERL_GROUPS,
  POSIX_GROUPS,
} from './regexp-classes.js';

const MAX_RUNE = 0x10ffff;

function isAlnum(c: string): boolean {
  return /^[0-9A-Za-z]$/.test(c);
}

function unhex(c: string): number {
  if (/^[0-9]$/.test(c)) return c.charCodeAt(0) - 48;
  if (/^[a-f]$/.test(c)) return c.charCodeAt(0) - 97 + 10;
  if (/^[A-F]$/.test(c)) return c.charCodeAt(0) - 65 + 10;
  return -1;
}

/** Normalise a class: merge its ranges. */
export function finishClass(cls: CharClass): CharClass {
  return { ranges: cleanRanges(cls.ranges), negated: cls.negated };
}

/** A position in a pattern, the flags in force, and the character-level parsing. */
export class ClassScanner {
  protected pos = 0;
  protected flags: Flags = { fold: false, dotNL: false, oneLine: true, nonGreedy: false };

  constructor(protected readonly src: string) {}

  protected peek(offset = 0): string {
    const cp = this.src.codePointAt(this.pos + offset);
    return cp === undefined ? '' : String.fromCodePoint(cp);
  }

  protected next(): string {
    const c = this.peek();
    this.pos += c.length;
    return c;
  }

  protected fail(code: string, expr: string): never {
    throw new RegexpSyntaxError(code, expr);
  }

  /** A single-character escape at the cursor (Go's parseEscape). */
  protected parseEscape(): number {
    const start = this.pos;
    this.pos++;
    if (this.pos >= this.src.length) this.fail(E.trailingBackslash, '');
    const c = this.next();
    const bad = (): never => this.fail(E.invalidEscape, this.src.slice(start, this.pos));
    if (c >= '1' && c <= '7') {
      // A single non-zero digit would be a backreference, which Go does not support.
      const n = this.peek();
      if (!(n >= '0' && n <= '7')) bad();
    }
    if (c >= '0' && c <= '7') {
      let r = c.charCodeAt(0) - 48;
      for (let i = 1; i < 3; i++) {
        const n = this.peek();
        if (!(n >= '0' && n <= '7')) break;
        r = r * 8 + n.charCodeAt(0) - 48;
        this.pos++;
      }
      return r;
    }
    switch (c) {
      case 'x': {
        if (this.pos >= this.src.length) bad();
        const x1 = this.next();
        if (x1 === '{') {
          let nhex = 0;
          let r = 0;
          for (;;) {
            if (this.pos >= this.src.length) bad();
            const d = this.next();
            if (d === '}') break;
            const v = unhex(d);
            if (v < 0) bad();
            r = r * 16 + v;
            if (r > MAX_RUNE) bad();
            nhex++;
          }
          if (nhex === 0) bad();
          return r;
        }
        const x2 = this.pos < this.src.length ? this.next() : '';
        const hi = unhex(x1);
        const lo = unhex(x2);
        if (hi < 0 || lo < 0) bad();
        return hi * 16 + lo;
      }
      case 'a':
        return 0x07;
      case 'f':
        return 0x0c;
      case 'n':
        return 0x0a;
      case 'r':
        return 0x0d;
      case 't':
        return 0x09;
      case 'v':
        return 0x0b;
      default:
        // Escaped punctuation stands for itself; escaped letters and digits are errors.
        if ((c.codePointAt(0) ?? 0) < 0x80 && !isAlnum(c)) return c.charCodeAt(0);
        return bad();
    }
  }

  /** `\pL`, `\p{Greek}`, `\P{^Lu}` at the cursor, added to `cls`. */
  protected parseUnicodeClass(cls: CharClass): void {
    const start = this.pos;
    let sign = this.src[this.pos + 1] === 'P' ? -1 : 1;
    this.pos += 2;
    let name: string;
    let seqEnd: number;
    if (this.peek() !== '{') {
      const c = this.next();
      name = c;
      seqEnd = this.pos;
    } else {
      const end = this.src.indexOf('}', start);
      if (end < 0) this.fail(E.invalidCharRange, this.src.slice(start));
      name = this.src.slice(start + 3, end);
      seqEnd = end + 1;
      this.pos = seqEnd;
    }
    const seq = this.src.slice(start, seqEnd);
    if (name.startsWith('^')) {
      sign = -sign;
      name = name.slice(1);
    }
    if (name === 'Any') {
      if (sign > 0) cls.ranges.push(0, MAX_RUNE);
      return;
    }
    // Only the name is checked: matching is re2js's, which has the tables.
    if (!CATEGORIES.has(name) && !isScript(name)) this.fail(E.invalidCharRange, seq);
  }

  /** `[...]` at the cursor (Go's parseClass). */
  protected parseClass(): CharClass {
    const start = this.pos;
    const whole = this.src.slice(start);
    this.pos++;
    const cls: CharClass = { ranges: [], negated: false };
    if (this.peek() === '^') {
      cls.negated = true;
      this.pos++;
    }
    let first = true;
    while (this.pos >= this.src.length || this.peek() !== ']' || first) {
      first = false;
      if (this.pos >= this.src.length) this.fail(E.missingBracket, whole);
      const rest = this.src.slice(this.pos);
      if (rest.length > 2 && rest[0] === '[' && rest[1] === ':') {
        const i = rest.indexOf(':]', 2);
        if (i >= 0) {
          const name = rest.slice(0, i + 2);
          const neg = name[2] === '^';
          const group = POSIX_GROUPS[name.slice(neg ? 3 : 2, -2)];
          if (!group) this.fail(E.invalidCharRange, name);
          appendGroup(cls.ranges, group, neg, this.flags.fold);
          this.pos += name.length;
          continue;
        }
      }
      if (rest[0] === '\\' && (rest[1] === 'p' || rest[1] === 'P')) {
        this.parseUnicodeClass(cls);
        continue;
      }
      const perl = PERL_GROUPS[rest.slice(0, 2)];
      if (perl) {
        appendGroup(cls.ranges, perl.ranges, perl.neg, this.flags.fold);
        this.pos += 2;
        continue;
      }
      const rangeStart = this.pos;
      const lo = this.parseClassChar(whole);
      let hi = lo;
      if (this.src.length - this.pos >= 2 && this.src[this.pos] === '-' && this.src[this.pos + 1] !== ']') {
        this.pos++;
        hi = this.parseClassChar(whole);
        if (hi < lo) this.fail(E.invalidCharRange, this.src.slice(rangeStart, this.pos));
      }
      if (this.flags.fold) appendFoldedRange(cls.ranges, lo, hi);
      else cls.ranges.push(lo, hi);
    }
    this.pos++;
    return finishClass(cls);
  }

  private parseClassChar(whole: string): number {
    if (this.pos >= this.src.length) this.fail(E.missingBracket, whole);
    if (this.src[this.pos] === '\\') return this.parseEscape();
    return this.next().codePointAt(0) ?? 0;
  }
}
