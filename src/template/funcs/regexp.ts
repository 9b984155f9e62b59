/**
 * Go regular expressions, matched by re2js (a port of RE2: linear time in the input, Go's leftmost-first
 * semantics). A pattern is first checked with Go 1.19's rules (regexp-syntax.ts), which gives Go's exact error texts
 * and refuses what Go refuses (lookarounds, backreferences, `(?<name>`); re2js then compiles and runs it. Find-all,
 * replace and split follow Go's loops (an empty match right after a match is skipped; `$1x` in a replacement names
 * group `1x`).
 */
import { createRequire } from 'node:module';
import type * as Re2js from 're2js';
import type { Matcher, RE2JS } from 're2js';
import { checkListSize, checkResultSize, MAX_LIST_ITEMS, MAX_STRING_LENGTH } from '../limits.js';
import { isDigitRune, isLetterRune } from './go-unicode.js';
import { parseRegexp, RegexpSyntaxError } from './regexp-syntax.js';

/**
 * re2js, loaded the first time a template compiles a regular expression: it is a quarter of the template engine's
 * code, and most stacks use no regular expression, so no command pays for loading it until one does. Loaded with
 * `require` because template functions run synchronously; the package is the same for every caller (Node's module
 * cache keeps it), so nothing about one run is kept here.
 */
const re2js = (): typeof Re2js => createRequire(import.meta.url)('re2js') as typeof Re2js;

/** One match: its start and end (UTF-16 offsets) and the text of each group (undefined if it did not take part). */
interface Match {
  start: number;
  end: number;
  groups: (string | undefined)[];
}

/** A compiled Go regular expression. */
export class GoRegexp {
  private readonly re: RE2JS;
  /** Capture-group names; index 0 (the whole match) is "". */
  readonly subexpNames: readonly string[];

  constructor(readonly expr: string) {
    const parsed = parseRegexp(expr);
    try {
      this.re = re2js().RE2JS.compile(unnamed(expr, parsed.namedOpeners));
    } catch (e) {
      // Go accepted the pattern; should re2js refuse it, that is reported the way Go reports a bad pattern.
      const desc = e instanceof re2js().RE2JSSyntaxException ? e.getDescription() : String(e);
      throw new RegexpSyntaxError(desc, expr);
    }
    this.subexpNames = parsed.names;
  }

  /**
   * Leftmost match starting the search at `pos` (`^`, `\b` etc. see the text before `pos`, as in Go's loops).
   * Groups are read only when asked for.
   */
  private exec(m: Matcher, pos: number, withGroups = false): Match | null {
    if (!m.find(pos)) return null;
    const groups: (string | undefined)[] = [];
    if (withGroups) for (let i = 0; i < this.subexpNames.length; i++) groups.push(m.group(i) ?? undefined);
    return { start: m.start(), end: m.end(), groups };
  }

  /** Regexp.MatchString. */
  matchString(s: string): boolean {
    return this.re.test(s);
  }

  /** Regexp.FindString: the leftmost match ("" when there is none). */
  findString(s: string): string {
    const m = this.exec(this.re.matcher(s), 0);
    return m ? s.slice(m.start, m.end) : '';
  }

  /** Regexp.FindStringSubmatch: the leftmost match and its groups (undefined for a group that took no part). */
  findStringSubmatch(s: string): (string | undefined)[] | null {
    return this.exec(this.re.matcher(s), 0, true)?.groups ?? null;
  }

  /** Go's allMatches loop: at most n matches (all if n < 0), empty matches right after a match skipped. */
  private allMatches(s: string, n: number): Match[] {
    const out: Match[] = [];
    if (n < 0) n = s.length + 1;
    let pos = 0;
    let prevMatchEnd = -1;
    const matcher = this.re.matcher(s);
    while (out.length < n && pos <= s.length) {
      const m = this.exec(matcher, pos);
      if (!m) break;
      let accept = true;
      if (m.end === pos) {
        if (m.start === prevMatchEnd) accept = false;
        pos += pos < s.length ? runeWidth(s, pos) : 1;
      } else pos = m.end;
      prevMatchEnd = m.end;
      if (accept) out.push(m);
      if (out.length > MAX_LIST_ITEMS) checkListSize(out.length);
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
  private replaceLoop(src: string, repl: (m: Match) => string, withGroups: boolean): string {
    let out = '';
    const matcher = this.re.matcher(src);
    let lastMatchEnd = 0;
    let searchPos = 0;
    while (searchPos <= src.length) {
      const m = this.exec(matcher, searchPos, withGroups);
      if (!m) break;
      out += src.slice(lastMatchEnd, m.start);
      // No replacement for an empty match right after another match.
      if (m.end > lastMatchEnd || m.start === 0) out += repl(m);
      if (out.length > MAX_STRING_LENGTH) checkResultSize(out.length);
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
    if (!repl.includes('$')) return this.replaceLoop(src, () => repl, false);
    return this.replaceLoop(src, (m) => this.expand(repl, m), true);
  }

  /** Regexp.ReplaceAllLiteralString. */
  replaceAllLiteralString(src: string, repl: string): string {
    return this.replaceLoop(src, () => repl, false);
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

/**
 * The pattern with each `(?P<name>` turned into a plain `(`: groups are read by number (names are resolved from
 * Go's parse), and Go accepts a name used twice where re2js does not.
 */
function unnamed(expr: string, openers: readonly [number, number][]): string {
  if (openers.length === 0) return expr;
  let out = '';
  let last = 0;
  for (const [start, end] of openers) {
    out += expr.slice(last, start) + '(';
    last = end;
  }
  return out + expr.slice(last);
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
