/**
 * A parser for Go's regular expression syntax (RE2, as Go 1.19's regexp/syntax reads it with the Perl flags).
 * It produces a small syntax tree with character classes resolved to code-point ranges (case folding already
 * applied the way Go applies it), and reports errors with Go's exact texts:
 * `error parsing regexp: missing closing ]: `[a``. Lookarounds, backreferences and `(?<name>` are errors, as in
 * Go.
 */
import { GO_SCRIPTS } from './unicode-tables.js';
import { simpleFold } from './go-unicode.js';

/** A regexp syntax error with Go's code text and the offending part of the expression. */
export class RegexpSyntaxError extends Error {
  constructor(
    readonly code: string,
    readonly expr: string,
  ) {
    super(`error parsing regexp: ${code}: \`${expr}\``);
    this.name = 'RegexpSyntaxError';
  }
}

const E = {
  invalidCharClass: 'invalid character class',
  invalidCharRange: 'invalid character class range',
  invalidEscape: 'invalid escape sequence',
  invalidNamedCapture: 'invalid named capture',
  invalidPerlOp: 'invalid or unsupported Perl syntax',
  invalidRepeatOp: 'invalid nested repetition operator',
  invalidRepeatSize: 'invalid repeat count',
  missingBracket: 'missing closing ]',
  missingParen: 'missing closing )',
  missingRepeatArgument: 'missing argument to repetition operator',
  trailingBackslash: 'trailing backslash at end of expression',
  unexpectedParen: 'unexpected )',
  nestingDepth: 'expression nests too deeply',
} as const;

/** A character class: sorted, merged code-point ranges plus Unicode property escapes (for `\pL` etc.). */
export interface CharClass {
  /** Pairs lo, hi (inclusive). */
  ranges: number[];
  /** JavaScript property escapes (`\p{L}`, `\P{Script=Greek}`) that are part of the class. */
  props: string[];
  /** The class matches everything *not* in ranges ∪ props. */
  negated: boolean;
}

/** A node of the syntax tree. */
export type RegexpNode =
  | { op: 'empty' }
  | { op: 'literal'; rune: number; fold: boolean }
  | { op: 'class'; cls: CharClass }
  | { op: 'anyChar'; dotNL: boolean }
  | { op: 'beginLine' | 'endLine' | 'beginText' | 'endText' | 'wordBoundary' | 'noWordBoundary' }
  | { op: 'capture'; index: number; name: string; sub: RegexpNode }
  | { op: 'repeat'; min: number; max: number; greedy: boolean; sub: RegexpNode }
  | { op: 'concat'; subs: RegexpNode[] }
  | { op: 'alternate'; subs: RegexpNode[] };

/** A parsed expression with its capture-group names (index 0 is the whole match, named ""). */
export interface ParsedRegexp {
  root: RegexpNode;
  names: string[];
}

interface Flags {
  fold: boolean;
  dotNL: boolean;
  oneLine: boolean;
  nonGreedy: boolean;
}

const MIN_FOLD = 0x41;
const MAX_FOLD = 0x1e943;
const MAX_RUNE = 0x10ffff;
const MAX_HEIGHT = 1000;

const PERL_GROUPS: Record<string, { neg: boolean; ranges: number[] }> = {
  '\\d': { neg: false, ranges: [0x30, 0x39] },
  '\\D': { neg: true, ranges: [0x30, 0x39] },
  '\\s': { neg: false, ranges: [0x09, 0x0a, 0x0c, 0x0d, 0x20, 0x20] },
  '\\S': { neg: true, ranges: [0x09, 0x0a, 0x0c, 0x0d, 0x20, 0x20] },
  '\\w': { neg: false, ranges: [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a] },
  '\\W': { neg: true, ranges: [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a] },
};

const POSIX_GROUPS: Record<string, number[]> = {
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

const CATEGORIES = new Set(
  'C Cc Cf Co Cs L Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc Sk Sm So Z Zl Zp Zs'.split(' '),
);
const FOLD_TABLES = new Set(['L', 'Ll', 'Lt', 'Lu', 'M', 'Mn', 'Common', 'Greek', 'Inherited']);
let scripts: Set<string> | undefined;

function isScript(name: string): boolean {
  scripts ??= new Set(GO_SCRIPTS.split(' '));
  return scripts.has(name);
}

/** Sort and merge range pairs (Go's cleanClass). */
function cleanRanges(r: number[]): number[] {
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
function negateRanges(r: number[]): number[] {
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
function appendFoldedRange(r: number[], lo: number, hi: number): void {
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

function appendRanges(r: number[], ranges: readonly number[], fold: boolean): void {
  for (let i = 0; i + 1 < ranges.length; i += 2) {
    if (fold) appendFoldedRange(r, ranges[i] ?? 0, ranges[i + 1] ?? 0);
    else r.push(ranges[i] ?? 0, ranges[i + 1] ?? 0);
  }
}

/** Add a group (Perl or POSIX class), folded first when case-insensitive, then negated if needed. */
function appendGroup(r: number[], ranges: readonly number[], neg: boolean, fold: boolean): void {
  const tmp: number[] = [];
  appendRanges(tmp, ranges, fold);
  r.push(...(neg ? negateRanges(tmp) : tmp));
}

const propMembers = new Map<string, number[]>();

/** The code points of a property escape, as ranges (only needed for case-insensitive matching). */
function propertyRanges(jsProp: string): number[] {
  let r = propMembers.get(jsProp);
  if (r) return r;
  r = [];
  const re = new RegExp(`^${jsProp}$`, 'u');
  let start = -1;
  for (let c = 0; c <= MAX_RUNE + 1; c++) {
    const inside = c <= MAX_RUNE && !(c >= 0xd800 && c <= 0xdfff) && re.test(String.fromCodePoint(c));
    if (inside && start < 0) start = c;
    else if (!inside && start >= 0) {
      r.push(start, c - 1);
      start = -1;
    }
  }
  propMembers.set(jsProp, r);
  return r;
}

function isAlnum(c: string): boolean {
  return /^[0-9A-Za-z]$/.test(c);
}

function unhex(c: string): number {
  if (/^[0-9]$/.test(c)) return c.charCodeAt(0) - 48;
  if (/^[a-f]$/.test(c)) return c.charCodeAt(0) - 97 + 10;
  if (/^[A-F]$/.test(c)) return c.charCodeAt(0) - 65 + 10;
  return -1;
}

class Parser {
  private pos = 0;
  private numCap = 0;
  private readonly names: string[] = [''];
  private flags: Flags = { fold: false, dotNL: false, oneLine: true, nonGreedy: false };

  constructor(private readonly src: string) {}

  private peek(offset = 0): string {
    const cp = this.src.codePointAt(this.pos + offset);
    return cp === undefined ? '' : String.fromCodePoint(cp);
  }

  private next(): string {
    const c = this.peek();
    this.pos += c.length;
    return c;
  }

  private fail(code: string, expr: string): never {
    throw new RegexpSyntaxError(code, expr);
  }

  parse(): ParsedRegexp {
    const root = this.parseAlternation(0);
    if (this.pos < this.src.length) this.fail(E.unexpectedParen, this.src);
    if (height(root) > MAX_HEIGHT) this.fail(E.nestingDepth, this.src);
    return { root, names: this.names };
  }

  /** alternatives until ')' or the end; `depth` is the number of open groups. */
  private parseAlternation(depth: number): RegexpNode {
    const alts: RegexpNode[] = [this.parseConcat(depth)];
    while (this.peek() === '|') {
      this.pos++;
      alts.push(this.parseConcat(depth));
    }
    return alts.length === 1 ? (alts[0] ?? { op: 'empty' }) : { op: 'alternate', subs: alts };
  }

  private parseConcat(depth: number): RegexpNode {
    const items: RegexpNode[] = [];
    let lastRepeat = -1;
    while (this.pos < this.src.length) {
      const c = this.peek();
      if (c === '|') break;
      if (c === ')') {
        if (depth === 0) this.fail(E.unexpectedParen, this.src);
        break;
      }
      let repeatStart = -1;
      switch (c) {
        case '(':
          this.parseGroup(items, depth);
          break;
        case '^':
          this.pos++;
          items.push({ op: this.flags.oneLine ? 'beginText' : 'beginLine' });
          break;
        case '$':
          this.pos++;
          items.push({ op: this.flags.oneLine ? 'endText' : 'endLine' });
          break;
        case '.':
          this.pos++;
          items.push({ op: 'anyChar', dotNL: this.flags.dotNL });
          break;
        case '[':
          items.push({ op: 'class', cls: this.parseClass() });
          break;
        case '*':
        case '+':
        case '?': {
          repeatStart = this.pos;
          this.pos++;
          const [min, max] = c === '*' ? [0, -1] : c === '+' ? [1, -1] : [0, 1];
          this.repeat(items, min, max, repeatStart, lastRepeat);
          break;
        }
        case '{': {
          const r = this.parseRepeatBraces();
          if (!r) {
            this.pos++;
            this.pushLiteral(items, 0x7b);
            break;
          }
          repeatStart = this.pos;
          this.pos = r.end;
          if (r.min < 0 || r.min > 1000 || r.max > 1000 || (r.max >= 0 && r.min > r.max)) {
            this.fail(E.invalidRepeatSize, this.src.slice(repeatStart, r.end));
          }
          this.repeat(items, r.min, r.max, repeatStart, lastRepeat);
          break;
        }
        case '\\':
          this.parseBackslash(items);
          break;
        default:
          this.pos += c.length;
          this.pushLiteral(items, c.codePointAt(0) ?? 0);
      }
      lastRepeat = repeatStart;
    }
    if (items.length === 0) return { op: 'empty' };
    return items.length === 1 ? (items[0] ?? { op: 'empty' }) : { op: 'concat', subs: items };
  }

  private pushLiteral(items: RegexpNode[], rune: number): void {
    items.push({ op: 'literal', rune, fold: this.flags.fold });
  }

  /** Apply a repetition to the last item; the operator's text starts at `start`, the cursor is after it. */
  private repeat(items: RegexpNode[], min: number, max: number, start: number, lastRepeat: number): void {
    let greedy = !this.flags.nonGreedy;
    if (this.peek() === '?') {
      this.pos++;
      greedy = !greedy;
    }
    if (lastRepeat >= 0) this.fail(E.invalidRepeatOp, this.src.slice(lastRepeat, this.pos));
    const sub = items.pop();
    if (!sub) this.fail(E.missingRepeatArgument, this.src.slice(start, this.pos));
    const node: RegexpNode = { op: 'repeat', min, max, greedy, sub };
    if ((min >= 2 || max >= 2) && !repeatIsValid(node, 1000)) {
      this.fail(E.invalidRepeatSize, this.src.slice(start, this.pos));
    }
    items.push(node);
  }

  /** `{n}`, `{n,}` or `{n,m}` at the cursor; null when it is not one (then `{` is a literal). */
  private parseRepeatBraces(): { min: number; max: number; end: number } | null {
    const m = /^\{(0|[1-9][0-9]*)(?:(,)(0|[1-9][0-9]*)?)?\}/.exec(this.src.slice(this.pos));
    if (!m) return null;
    // Go gives up (-1) once the value has reached 1e8 and more digits follow: ten digits or more.
    const num = (s: string): number => (s.length >= 10 ? -1 : Number(s));
    const min = num(m[1] ?? '0');
    let max = min;
    if (m[2]) max = m[3] === undefined ? -1 : num(m[3]);
    return { min: m[3] !== undefined && max < 0 ? -1 : min, max, end: this.pos + m[0].length };
  }

  private parseGroup(items: RegexpNode[], depth: number): void {
    const start = this.pos;
    if (this.src[this.pos + 1] !== '?') {
      this.pos++;
      const index = ++this.numCap;
      this.names.push('');
      items.push(this.finishGroup(depth, index, ''));
      return;
    }
    const rest = this.src.slice(this.pos);
    if (rest.length > 4 && rest[2] === 'P' && rest[3] === '<') {
      const end = rest.indexOf('>');
      if (end < 0) this.fail(E.invalidNamedCapture, rest);
      const name = rest.slice(4, end);
      if (!/^[A-Za-z0-9_]+$/.test(name)) this.fail(E.invalidNamedCapture, rest.slice(0, end + 1));
      this.pos += end + 1;
      const index = ++this.numCap;
      this.names.push(name);
      items.push(this.finishGroup(depth, index, name));
      return;
    }
    // Flags and non-capturing groups: (?i) (?-s) (?i:re).
    this.pos += 2;
    const saved = { ...this.flags };
    const flags = { ...this.flags };
    let sign = 1;
    let sawFlag = false;
    for (;;) {
      if (this.pos >= this.src.length) this.fail(E.invalidPerlOp, this.src.slice(start, this.pos));
      const c = this.next();
      const on = sign > 0;
      if (c === 'i') {
        flags.fold = on;
        sawFlag = true;
      } else if (c === 'm') {
        flags.oneLine = !on;
        sawFlag = true;
      } else if (c === 's') {
        flags.dotNL = on;
        sawFlag = true;
      } else if (c === 'U') {
        flags.nonGreedy = on;
        sawFlag = true;
      } else if (c === '-') {
        if (sign < 0) this.fail(E.invalidPerlOp, this.src.slice(start, this.pos));
        sign = -1;
        sawFlag = false;
      } else if (c === ':' || c === ')') {
        if (sign < 0 && !sawFlag) this.fail(E.invalidPerlOp, this.src.slice(start, this.pos));
        if (c === ')') {
          this.flags = flags;
          return;
        }
        this.flags = flags;
        const sub = this.parseAlternation(depth + 1);
        this.closeGroup();
        this.flags = saved;
        items.push(sub);
        return;
      } else this.fail(E.invalidPerlOp, this.src.slice(start, this.pos));
    }
  }

  private finishGroup(depth: number, index: number, name: string): RegexpNode {
    const saved = { ...this.flags };
    const sub = this.parseAlternation(depth + 1);
    this.closeGroup();
    this.flags = saved;
    return { op: 'capture', index, name, sub };
  }

  private closeGroup(): void {
    if (this.peek() !== ')') this.fail(E.missingParen, this.src);
    this.pos++;
  }

  private parseBackslash(items: RegexpNode[]): void {
    const c1 = this.src[this.pos + 1];
    switch (c1) {
      case 'A':
        this.pos += 2;
        items.push({ op: 'beginText' });
        return;
      case 'b':
        this.pos += 2;
        items.push({ op: 'wordBoundary' });
        return;
      case 'B':
        this.pos += 2;
        items.push({ op: 'noWordBoundary' });
        return;
      case 'C':
        this.fail(E.invalidEscape, '\\C');
        break;
      case 'Q': {
        const rest = this.src.slice(this.pos + 2);
        const end = rest.indexOf('\\E');
        const lit = end < 0 ? rest : rest.slice(0, end);
        this.pos += 2 + lit.length + (end < 0 ? 0 : 2);
        for (const ch of lit) this.pushLiteral(items, ch.codePointAt(0) ?? 0);
        return;
      }
      case 'z':
        this.pos += 2;
        items.push({ op: 'endText' });
        return;
      default:
        break;
    }
    if (c1 === 'p' || c1 === 'P') {
      const cls: CharClass = { ranges: [], props: [], negated: false };
      this.parseUnicodeClass(cls);
      items.push({ op: 'class', cls: finishClass(cls, false) });
      return;
    }
    const perl = PERL_GROUPS[this.src.slice(this.pos, this.pos + 2)];
    if (perl) {
      this.pos += 2;
      const ranges: number[] = [];
      appendGroup(ranges, perl.ranges, perl.neg, this.flags.fold);
      items.push({ op: 'class', cls: finishClass({ ranges, props: [], negated: false }, false) });
      return;
    }
    this.pushLiteral(items, this.parseEscape());
  }

  /** A single-character escape at the cursor (Go's parseEscape). */
  private parseEscape(): number {
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
  private parseUnicodeClass(cls: CharClass): void {
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
    let prop: string;
    if (name === 'Any') {
      if (sign > 0) cls.ranges.push(0, MAX_RUNE);
      return;
    } else if (CATEGORIES.has(name)) prop = `{${name}}`;
    else if (isScript(name)) prop = `{Script=${name}}`;
    else return this.fail(E.invalidCharRange, seq);
    // Only these tables have case variants outside themselves in Go (unicode.FoldCategory, unicode.FoldScript).
    if (this.flags.fold && FOLD_TABLES.has(name)) {
      const tmp: number[] = [];
      appendRanges(tmp, propertyRanges(`\\p${prop}`), true);
      cls.ranges.push(...(sign > 0 ? tmp : negateRanges(tmp)));
      return;
    }
    cls.props.push(`\\${sign > 0 ? 'p' : 'P'}${prop}`);
  }

  /** `[...]` at the cursor (Go's parseClass). */
  private parseClass(): CharClass {
    const start = this.pos;
    const whole = this.src.slice(start);
    this.pos++;
    const cls: CharClass = { ranges: [], props: [], negated: false };
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
    return finishClass(cls, false);
  }

  private parseClassChar(whole: string): number {
    if (this.pos >= this.src.length) this.fail(E.missingBracket, whole);
    if (this.src[this.pos] === '\\') return this.parseEscape();
    return this.next().codePointAt(0) ?? 0;
  }
}

/** Normalise a class: merge its ranges. */
function finishClass(cls: CharClass, negate: boolean): CharClass {
  return { ranges: cleanRanges(cls.ranges), props: cls.props, negated: cls.negated !== negate };
}

/** Go's repeatIsValid: nested counted repetitions may not multiply past 1000. */
function repeatIsValid(re: RegexpNode, n: number): boolean {
  if (re.op === 'repeat') {
    let m = re.max;
    if (m === 0) return true;
    if (m < 0) m = re.min;
    if (m > n) return false;
    if (m > 0) n = Math.trunc(n / m);
  }
  for (const sub of children(re)) if (!repeatIsValid(sub, n)) return false;
  return true;
}

function children(re: RegexpNode): RegexpNode[] {
  switch (re.op) {
    case 'capture':
    case 'repeat':
      return [re.sub];
    case 'concat':
    case 'alternate':
      return re.subs;
    default:
      return [];
  }
}

function height(re: RegexpNode): number {
  let h = 1;
  for (const sub of children(re)) h = Math.max(h, 1 + height(sub));
  return h;
}

/** Parse a Go regular expression; throws RegexpSyntaxError with Go's message. */
export function parseRegexp(src: string): ParsedRegexp {
  return new Parser(src).parse();
}
