/**
 * Word-case conversions as sprig v3.2.3 does them: `snakecase`, `kebabcase` and `camelcase` follow
 * huandu/xstrings v1.3.3, `swapcase` and `untitle` follow Masterminds/goutils v1.1.1, `title` is Go's
 * strings.Title. Behaviour was read from those libraries' sources; the code is written for kapps.
 */
import {
  isLetterRune,
  isLowerRune,
  isNumberRune,
  isPunctRune,
  isSpaceRune,
  isTitleRune,
  isUpperRune,
  toLowerRune,
  toTitleRune,
  toUpperRune,
} from './go-unicode.js';

function runesOf(s: string): number[] {
  const out: number[] = [];
  for (const ch of s) out.push(ch.codePointAt(0) ?? 0);
  return out;
}

function fromRunes(rs: readonly number[]): string {
  let out = '';
  for (const r of rs) out += String.fromCodePoint(r);
  return out;
}

/** strings.Title: upper-case (title-case) the first letter of every word; words are split at non-letters. */
export function goTitle(s: string): string {
  let prev = 0x20;
  let out = '';
  for (const ch of s) {
    const r = ch.codePointAt(0) ?? 0;
    out += isTitleSeparator(prev) ? String.fromCodePoint(toTitleRune(r)) : ch;
    prev = r;
  }
  return out;
}

function isTitleSeparator(r: number): boolean {
  if (r <= 0x7f) {
    if ((r >= 0x30 && r <= 0x39) || (r >= 0x61 && r <= 0x7a) || (r >= 0x41 && r <= 0x5a) || r === 0x5f) return false;
    return true;
  }
  if (isLetterRune(r) || /^\p{Nd}$/u.test(String.fromCodePoint(r))) return false;
  return isSpaceRune(r);
}

/** goutils.Uncapitalize (sprig `untitle`): lower-case the first rune of every whitespace-separated word. */
export function uncapitalize(s: string): string {
  const rs = runesOf(s);
  let next = true;
  for (let i = 0; i < rs.length; i++) {
    const r = rs[i] ?? 0;
    if (isSpaceRune(r)) next = true;
    else if (next) {
      rs[i] = toLowerRune(r);
      next = false;
    }
  }
  return fromRunes(rs);
}

/** goutils.SwapCase: upper → lower, lower → upper, and a lower-case rune starting a word → title case. */
export function swapCase(s: string): string {
  const rs = runesOf(s);
  let whitespace = true;
  for (let i = 0; i < rs.length; i++) {
    const r = rs[i] ?? 0;
    if (isUpperRune(r) || isTitleRune(r)) {
      rs[i] = toLowerRune(r);
      whitespace = false;
    } else if (isLowerRune(r)) {
      if (whitespace) {
        rs[i] = toTitleRune(r);
        whitespace = false;
      } else rs[i] = toUpperRune(r);
    } else whitespace = isSpaceRune(r);
  }
  return fromRunes(rs);
}

function isConnector(r: number): boolean {
  return r === 0x2d || r === 0x5f || isSpaceRune(r);
}

/** xstrings' isAlphabet: a letter that is not a CJK ideograph. */
function isAlphabet(r: number): boolean {
  if (!isLetterRune(r)) return false;
  if (r < 0x3400) return true;
  if (r >= 0x4e00 && r <= 0x9fcc) return false;
  if (r >= 0x3400 && r <= 0x4d85) return false;
  if (r >= 0x20000 && r <= 0x2b81d) return false;
  return true;
}

/** xstrings.ToCamelCase: `some_words` → `SomeWords`; leading connectors are kept, doubled ones collapse. */
export function toCamelCase(s: string): string {
  const rs = runesOf(s);
  if (rs.length === 0) return '';
  let out = '';
  let i = 0;
  let r0 = 0;
  while (i < rs.length) {
    r0 = rs[i++] ?? 0;
    if (!isConnector(r0)) {
      r0 = toUpperRune(r0);
      break;
    }
    out += String.fromCodePoint(r0);
  }
  if (i >= rs.length) {
    // One rune after the leading connectors (or none: then the last connector is written twice, as in xstrings).
    return out + String.fromCodePoint(r0);
  }
  while (i < rs.length) {
    const r1 = r0;
    r0 = rs[i++] ?? 0;
    if (isConnector(r0) && isConnector(r1)) {
      out += String.fromCodePoint(r1);
      continue;
    }
    if (isConnector(r1)) r0 = toUpperRune(r0);
    else {
      r0 = toLowerRune(r0);
      out += String.fromCodePoint(r1);
    }
  }
  return out + String.fromCodePoint(r0);
}

const enum Word {
  Invalid,
  Number,
  UpperCase,
  Alphabet,
  Connector,
  Punct,
  Other,
}

interface WordSplit {
  wt: Word;
  word: number[];
  rest: number[];
}

/** xstrings' nextWord on runes (JavaScript strings hold no invalid UTF-8, so no RuneError handling). */
function nextWord(str: number[]): WordSplit {
  if (str.length === 0) return { wt: Word.Invalid, word: [], rest: [] };
  const r = str[0] ?? 0;
  let n = 1;
  let wt: Word;
  if (isConnector(r)) {
    wt = Word.Connector;
    while (n < str.length && isConnector(str[n] ?? 0)) n++;
  } else if (isPunctRune(r)) {
    wt = Word.Punct;
    while (n < str.length && isPunctRune(str[n] ?? 0)) n++;
  } else if (isUpperRune(r)) {
    wt = Word.UpperCase;
    if (n < str.length) {
      const r1 = str[n] ?? 0;
      if (isUpperRune(r1)) {
        n++;
        while (n < str.length && isUpperRune(str[n] ?? 0)) n++;
        // "HTTPStatus" splits into "HTTP" and "Status": the last upper-case rune starts the next word.
        if (n < str.length && isAlphabet(str[n] ?? 0)) n--;
      } else if (isAlphabet(r1)) {
        n++;
        while (n < str.length && isAlphabet(str[n] ?? 0) && !isUpperRune(str[n] ?? 0)) n++;
      }
    }
  } else if (isAlphabet(r)) {
    wt = Word.Alphabet;
    while (n < str.length && isAlphabet(str[n] ?? 0) && !isUpperRune(str[n] ?? 0)) n++;
  } else if (isNumberRune(r)) {
    wt = Word.Number;
    while (n < str.length && isNumberRune(str[n] ?? 0)) n++;
  } else {
    wt = Word.Other;
    while (n < str.length) {
      const c = str[n] ?? 0;
      if (isConnector(c) || isAlphabet(c) || isNumberRune(c) || isPunctRune(c)) break;
      n++;
    }
  }
  return { wt, word: str.slice(0, n), rest: str.slice(n) };
}

function lowerWord(out: string[], wt: Word, word: readonly number[], connector: string): void {
  if (wt !== Word.UpperCase && wt !== Word.Connector) {
    out.push(fromRunes(word));
    return;
  }
  for (const r of word) {
    if (isConnector(r)) out.push(connector);
    else if (isUpperRune(r)) out.push(String.fromCodePoint(toLowerRune(r)));
    else out.push(String.fromCodePoint(r));
  }
}

/** xstrings' camelCaseToLowerCase: the shared core of ToSnakeCase and ToKebabCase. */
function camelToLower(s: string, connector: string): string {
  if (s.length === 0) return '';
  const out: string[] = [];
  let { wt, word, rest } = nextWord(runesOf(s));
  while (rest.length > 0) {
    if (wt !== Word.Connector) lowerWord(out, wt, word, connector);
    const prev = wt;
    const last = word;
    ({ wt, word, rest } = nextWord(rest));
    switch (prev) {
      case Word.Number:
        while (wt === Word.Alphabet || wt === Word.Number) {
          lowerWord(out, wt, word, connector);
          ({ wt, word, rest } = nextWord(rest));
        }
        if (wt !== Word.Invalid && wt !== Word.Punct && wt !== Word.Connector) out.push(connector);
        break;
      case Word.Connector:
        lowerWord(out, prev, last, connector);
        break;
      case Word.Punct:
        break;
      default: {
        if (wt !== Word.Number) {
          if (wt !== Word.Connector && wt !== Word.Punct) out.push(connector);
          break;
        }
        if (rest.length === 0) break;
        const num = word;
        ({ wt, word, rest } = nextWord(rest));
        // A number followed by a non-letter belongs to the previous word: "Bld4Floor" → "bld4_floor".
        if (wt !== Word.Alphabet) {
          lowerWord(out, Word.Number, num, connector);
          if (wt !== Word.Connector && wt !== Word.Punct) out.push(connector);
          break;
        }
        // Lower-case letters after a number start a new word with it: "HTTP2xx" → "http_2xx".
        out.push(connector);
        lowerWord(out, Word.Number, num, connector);
        while (wt === Word.Alphabet || wt === Word.Number) {
          lowerWord(out, wt, word, connector);
          ({ wt, word, rest } = nextWord(rest));
        }
        if (wt !== Word.Invalid && wt !== Word.Connector && wt !== Word.Punct) out.push(connector);
      }
    }
  }
  lowerWord(out, wt, word, connector);
  return out.join('');
}

/** xstrings.ToSnakeCase: `FirstName` → `first_name`, `HTTPServer` → `http_server`. */
export function toSnakeCase(s: string): string {
  return camelToLower(s, '_');
}

/** xstrings.ToKebabCase: `FirstName` → `first-name`. */
export function toKebabCase(s: string): string {
  return camelToLower(s, '-');
}
