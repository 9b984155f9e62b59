/**
 * A parser for Go's regular expression syntax (RE2, as Go 1.19's regexp/syntax reads it with the Perl flags).
 * It produces a small syntax tree with character classes resolved to code-point ranges (case folding already
 * applied the way Go applies it), and reports errors with Go's exact texts:
 * `error parsing regexp: missing closing ]: `[a``. Lookarounds, backreferences and `(?<name>` are errors, as in
 * Go.
 */
import type { CharClass, ParsedRegexp, RegexpNode } from './regexp-ast.js';
import { E } from './regexp-ast.js';
import { appendGroup, PERL_GROUPS } from './regexp-classes.js';
import { ClassScanner, finishClass } from './regexp-scanner.js';

export { RegexpSyntaxError } from './regexp-ast.js';
export type { ParsedRegexp } from './regexp-ast.js';

const MAX_HEIGHT = 1000;

class Parser extends ClassScanner {
  private numCap = 0;
  private readonly names: string[] = [''];
  private readonly namedOpeners: [number, number][] = [];

  parse(): ParsedRegexp {
    const root = this.parseAlternation(0);
    if (this.pos < this.src.length) this.fail(E.unexpectedParen, this.src);
    if (height(root) > MAX_HEIGHT) this.fail(E.nestingDepth, this.src);
    return { root, names: this.names, namedOpeners: this.namedOpeners };
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
      this.namedOpeners.push([this.pos, this.pos + end + 1]);
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
      const cls: CharClass = { ranges: [], negated: false };
      this.parseUnicodeClass(cls);
      items.push({ op: 'class', cls: finishClass(cls) });
      return;
    }
    const perl = PERL_GROUPS[this.src.slice(this.pos, this.pos + 2)];
    if (perl) {
      this.pos += 2;
      const ranges: number[] = [];
      appendGroup(ranges, perl.ranges, perl.neg, this.flags.fold);
      items.push({ op: 'class', cls: finishClass({ ranges, negated: false }) });
      return;
    }
    this.pushLiteral(items, this.parseEscape());
  }
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
