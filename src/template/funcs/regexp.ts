/**
 * Go regular expressions on top of JavaScript's engine. A Go pattern is parsed with Go's rules
 * (regexp-syntax.ts) and translated into an equivalent JavaScript pattern: `.` never matches `\n` unless `(?s)`,
 * `\s`/`\d`/`\w` are ASCII, `(?i)` uses Go's case folding, `(?m)` anchors only at `\n`, `$` without `(?m)`
 * matches only at the very end. Find-all, replace and split follow Go's loops (an empty match right after a
 * match is skipped; `$1x` in a replacement names group `1x`).
 */
import { isDigitRune, isLetterRune, simpleFold } from './go-unicode.js';
import type { CharClass, RegexpNode } from './regexp-syntax.js';
import { parseRegexp } from './regexp-syntax.js';

function esc(cp: number): string {
  if ((cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a)) {
    return String.fromCharCode(cp);
  }
  return `\\u{${cp.toString(16)}}`;
}

function classSource(cls: CharClass): string {
  let out = cls.negated ? '[^' : '[';
  for (let i = 0; i + 1 < cls.ranges.length; i += 2) {
    const lo = cls.ranges[i] ?? 0;
    const hi = cls.ranges[i + 1] ?? 0;
    out += lo === hi ? esc(lo) : `${esc(lo)}-${esc(hi)}`;
  }
  return out + cls.props.join('') + ']';
}

function literalSource(rune: number, fold: boolean): string {
  if (!fold) return esc(rune);
  const orbit = [rune];
  for (let f = simpleFold(rune); f !== rune; f = simpleFold(f)) orbit.push(f);
  if (orbit.length === 1) return esc(rune);
  return `[${orbit.map(esc).join('')}]`;
}

/** Whether a node's source can take a quantifier without a group. */
function isAtom(n: RegexpNode): boolean {
  return n.op === 'literal' || n.op === 'class' || n.op === 'anyChar' || n.op === 'capture';
}

/** Translates a Go syntax tree into JavaScript pattern source, recording which Go group each JavaScript group is. */
class Emitter {
  /** For JavaScript group i (1-based), the Go group it stands for (index i - 1 here). */
  readonly goGroupOf: number[] = [];

  emit(n: RegexpNode): string {
    switch (n.op) {
      case 'empty':
        return '';
      case 'literal':
        return literalSource(n.rune, n.fold);
      case 'class':
        return classSource(n.cls);
      case 'anyChar':
        return n.dotNL ? '[^]' : '[^\\n]';
      case 'beginLine':
        return '(?<![^\\n])';
      case 'endLine':
        return '(?![^\\n])';
      case 'beginText':
        return '^';
      case 'endText':
        return '$';
      case 'wordBoundary':
        return '\\b';
      case 'noWordBoundary':
        return '\\B';
      case 'capture':
        this.goGroupOf.push(n.index);
        return `(${this.emit(n.sub)})`;
      case 'repeat':
        return this.repeat(n);
      case 'concat':
        return n.subs.map((s) => (s.op === 'alternate' ? `(?:${this.emit(s)})` : this.emit(s))).join('');
      case 'alternate':
        return n.subs.map((s) => this.emit(s)).join('|');
    }
  }

  private atom(n: RegexpNode): string {
    return isAtom(n) ? this.emit(n) : `(?:${this.emit(n)})`;
  }

  private repeat(n: Extract<RegexpNode, { op: 'repeat' }>): string {
    const lazy = n.greedy ? '' : '?';
    if (nullable(n.sub) && n.max !== -1 && n.max > n.min) return this.optionalRepeat(n);
    const sub = this.atom(n.sub);
    if (n.min === 0 && n.max === -1) return `${sub}*${lazy}`;
    if (n.min === 1 && n.max === -1) return `${sub}+${lazy}`;
    if (n.min === 0 && n.max === 1) return `${sub}?${lazy}`;
    if (n.max === -1) return `${sub}{${n.min},}${lazy}`;
    if (n.max === n.min) return `${sub}{${n.min}}`;
    return `${sub}{${n.min},${n.max}}${lazy}`;
  }

  /**
   * `X?` and `X{n,m}` where X can match the empty string. JavaScript refuses an optional iteration that matches
   * empty and backtracks into X for a longer match; Go takes X's preferred match even when it is empty. An
   * alternation behaves as Go does, so `X?` becomes `(?:X|)` (lazy: `(?:|X)`) and `X{n,m}` becomes n copies of X
   * followed by nested optional copies, the way Go expands it. Copies of a capture group are separate
   * JavaScript groups that stand for the same Go group (the last one that took part wins, as Go's last iteration).
   */
  private optionalRepeat(n: Extract<RegexpNode, { op: 'repeat' }>): string {
    let out = '';
    for (let i = 0; i < n.min; i++) out += this.atom(n.sub);
    // Emit the optional copies outermost first, so JavaScript group numbers follow Go's iteration order.
    let open = '';
    let close = '';
    for (let i = n.min; i < n.max; i++) {
      open += n.greedy ? '(?:' : '(?:|';
      open += this.atom(n.sub);
      close = (n.greedy ? '|)' : ')') + close;
    }
    return out + open + close;
  }
}

/** Whether a node can match the empty string. */
function nullable(n: RegexpNode): boolean {
  switch (n.op) {
    case 'literal':
    case 'class':
    case 'anyChar':
      return false;
    case 'capture':
      return nullable(n.sub);
    case 'repeat':
      return n.min === 0 || nullable(n.sub);
    case 'concat':
      return n.subs.every(nullable);
    case 'alternate':
      return n.subs.some(nullable);
    default:
      return true;
  }
}

/** One match: its start and end (UTF-16 offsets) and the text of each group (undefined if it did not take part). */
interface Match {
  start: number;
  end: number;
  groups: (string | undefined)[];
}

/** A compiled Go regular expression. */
export class GoRegexp {
  private readonly re: RegExp;
  /** For each JavaScript group (1-based), the Go group it stands for; null when they coincide. */
  private readonly goGroupOf: number[] | null;
  /** Capture-group names; index 0 (the whole match) is "". */
  readonly subexpNames: readonly string[];

  constructor(readonly expr: string) {
    const parsed = parseRegexp(expr);
    const emitter = new Emitter();
    this.re = new RegExp(emitter.emit(parsed.root), 'gu');
    this.subexpNames = parsed.names;
    const map = emitter.goGroupOf;
    this.goGroupOf = map.every((g, i) => g === i + 1) ? null : map;
  }

  /** Leftmost match starting the search at `pos`. */
  private exec(s: string, pos: number): Match | null {
    this.re.lastIndex = pos;
    const m = this.re.exec(s);
    if (!m) return null;
    let groups: (string | undefined)[] = Array.from(m);
    const map = this.goGroupOf;
    if (map) {
      groups = new Array<string | undefined>(this.subexpNames.length).fill(undefined);
      groups[0] = m[0];
      map.forEach((g, i) => {
        const v = m[i + 1];
        if (v !== undefined) groups[g] = v;
      });
    }
    return { start: m.index, end: m.index + m[0].length, groups };
  }

  /** Regexp.MatchString. */
  matchString(s: string): boolean {
    return this.exec(s, 0) !== null;
  }

  /** Regexp.FindString: the leftmost match ("" when there is none). */
  findString(s: string): string {
    const m = this.exec(s, 0);
    return m ? s.slice(m.start, m.end) : '';
  }

  /** Go's allMatches loop: at most n matches (all if n < 0), empty matches right after a match skipped. */
  private allMatches(s: string, n: number): Match[] {
    const out: Match[] = [];
    if (n < 0) n = s.length + 1;
    let pos = 0;
    let prevMatchEnd = -1;
    while (out.length < n && pos <= s.length) {
      const m = this.exec(s, pos);
      if (!m) break;
      let accept = true;
      if (m.end === pos) {
        if (m.start === prevMatchEnd) accept = false;
        pos += pos < s.length ? runeWidth(s, pos) : 1;
      } else pos = m.end;
      prevMatchEnd = m.end;
      if (accept) out.push(m);
    }
    return out;
  }

  /** Regexp.FindAllString; null stands for Go's nil result (no match, or n == 0). */
  findAllString(s: string, n: number): string[] | null {
    if (n === 0) return null;
    const ms = this.allMatches(s, n);
    return ms.length === 0 ? null : ms.map((m) => s.slice(m.start, m.end));
  }

  /** Regexp.Split; null stands for Go's nil result (n == 0). */
  split(s: string, n: number): string[] | null {
    if (n === 0) return null;
    if (this.expr.length > 0 && s.length === 0) return [''];
    const matches = this.allMatches(s, n);
    const out: string[] = [];
    let beg = 0;
    let end = 0;
    for (const m of matches) {
      if (n > 0 && out.length >= n - 1) break;
      end = m.start;
      if (m.end !== 0) out.push(s.slice(beg, end));
      beg = m.end;
    }
    if (end !== s.length) out.push(s.slice(beg));
    return out;
  }

  /** Go's replaceAll loop with a replacement builder. */
  private replaceLoop(src: string, repl: (m: Match) => string): string {
    let out = '';
    let lastMatchEnd = 0;
    let searchPos = 0;
    while (searchPos <= src.length) {
      const m = this.exec(src, searchPos);
      if (!m) break;
      out += src.slice(lastMatchEnd, m.start);
      // No replacement for an empty match right after another match.
      if (m.end > lastMatchEnd || m.start === 0) out += repl(m);
      lastMatchEnd = m.end;
      const width = searchPos < src.length ? runeWidth(src, searchPos) : 0;
      if (searchPos + width > m.end) searchPos += width;
      else if (searchPos + 1 > m.end) searchPos++;
      else searchPos = m.end;
    }
    return out + src.slice(lastMatchEnd);
  }

  /** Regexp.ReplaceAllString: `$1`, `${name}`, `$$` in `repl` are expanded as Go's Expand does. */
  replaceAllString(src: string, repl: string): string {
    if (!repl.includes('$')) return this.replaceLoop(src, () => repl);
    return this.replaceLoop(src, (m) => this.expand(repl, m));
  }

  /** Regexp.ReplaceAllLiteralString. */
  replaceAllLiteralString(src: string, repl: string): string {
    return this.replaceLoop(src, () => repl);
  }

  private expand(template: string, m: Match): string {
    let out = '';
    let t = template;
    for (;;) {
      const i = t.indexOf('$');
      if (i < 0) break;
      out += t.slice(0, i);
      t = t.slice(i + 1);
      if (t.startsWith('$')) {
        out += '$';
        t = t.slice(1);
        continue;
      }
      const ref = extractRef(t);
      if (!ref) {
        out += '$';
        continue;
      }
      t = ref.rest;
      if (ref.num >= 0) out += m.groups[ref.num] ?? '';
      else {
        // Names may repeat: the first group of that name that took part in the match counts.
        const idx = this.subexpNames.findIndex((n, i) => n === ref.name && m.groups[i] !== undefined);
        if (idx >= 0) out += m.groups[idx] ?? '';
      }
    }
    return out + t;
  }
}

function runeWidth(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
    const d = s.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 2;
  }
  return 1;
}

/** Go's extract: a `name`, `{name}` or number after `$`; names are letters, digits and `_` (so `$1x` is "1x"). */
function extractRef(str: string): { name: string; num: number; rest: string } | null {
  if (str === '') return null;
  let brace = false;
  if (str[0] === '{') {
    brace = true;
    str = str.slice(1);
  }
  let i = 0;
  while (i < str.length) {
    const cp = str.codePointAt(i) ?? 0;
    if (!isLetterRune(cp) && !isDigitRune(cp) && cp !== 0x5f) break;
    i += cp > 0xffff ? 2 : 1;
  }
  if (i === 0) return null;
  const name = str.slice(0, i);
  if (brace) {
    if (i >= str.length || str[i] !== '}') return null;
    i++;
  }
  let num = 0;
  for (let k = 0; k < name.length; k++) {
    const c = name.charCodeAt(k);
    if (c < 48 || c > 57 || num >= 1e8) {
      num = -1;
      break;
    }
    num = num * 10 + c - 48;
  }
  if (name[0] === '0' && name.length > 1) num = -1;
  return { name, num, rest: str.slice(i) };
}

const cache = new Map<string, GoRegexp>();
const CACHE_LIMIT = 500;

/** regexp.Compile with a process-wide cache; throws RegexpSyntaxError with Go's message. */
export function compileRegexp(expr: string): GoRegexp {
  let re = cache.get(expr);
  if (!re) {
    re = new GoRegexp(expr);
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(expr, re);
  }
  return re;
}

/** regexp.QuoteMeta: backslash-escape `\.+*?()|[]{}^$`. */
export function quoteMeta(s: string): string {
  return s.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');
}
