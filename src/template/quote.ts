/** strconv.Quote / QuoteRune / QuoteToASCII / CanBackquote on JS strings (code points stand for UTF-8 runes). */

const printable = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

/** Go's unicode.IsPrint for one code point (letters, marks, numbers, punctuation, symbols and ASCII space). */
export function isPrintRune(cp: number): boolean {
  if (cp < 0x7f) return cp >= 0x20;
  if (cp >= 0xd800 && cp <= 0xdfff) return false;
  return printable.test(String.fromCodePoint(cp));
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

function escapeRune(cp: number, quote: number, asciiOnly: boolean): string {
  if (cp === quote || cp === 0x5c) return `\\${String.fromCharCode(cp)}`;
  if (asciiOnly ? cp < 0x80 && isPrintRune(cp) : isPrintRune(cp)) return String.fromCodePoint(cp);
  switch (cp) {
    case 0x07:
      return '\\a';
    case 0x08:
      return '\\b';
    case 0x0c:
      return '\\f';
    case 0x0a:
      return '\\n';
    case 0x0d:
      return '\\r';
    case 0x09:
      return '\\t';
    case 0x0b:
      return '\\v';
  }
  if (cp < 0x20 || cp === 0x7f) return `\\x${hex(cp, 2)}`;
  // A lone surrogate has no UTF-8 form; Go would see the replacement character.
  if (cp >= 0xd800 && cp <= 0xdfff) return '\\ufffd';
  if (cp < 0x10000) return `\\u${hex(cp, 4)}`;
  return `\\U${hex(cp, 8)}`;
}

/** strconv.Quote (or QuoteToASCII with `asciiOnly`): a double-quoted Go string literal. */
export function quoteGo(s: string, asciiOnly = false): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp >= 0x20 && cp < 0x7f && cp !== 0x22 && cp !== 0x5c) out += ch;
    else out += escapeRune(cp, 0x22, asciiOnly);
  }
  return out + '"';
}

/** strconv.QuoteRune (or QuoteRuneToASCII): a single-quoted Go character literal. Invalid runes print as U+FFFD. */
export function quoteRune(cp: number, asciiOnly = false): string {
  if (cp < 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) cp = 0xfffd;
  return `'${escapeRune(cp, 0x27, asciiOnly)}'`;
}

/** strconv.CanBackquote: whether `s` can be written as a raw string (no control characters but tab, no backquote). */
export function canBackquote(s: string): boolean {
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp === 0x60 || cp === 0xfeff) return false;
    if (cp < 0x20 && cp !== 0x09) return false;
    if (cp === 0x7f) return false;
    if (cp >= 0xd800 && cp <= 0xdfff) return false;
  }
  return true;
}
