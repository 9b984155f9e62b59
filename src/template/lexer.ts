/**
 * The template lexer: Go text/template's state machine (delimiters `{{ }}`, trim markers, comments), producing the
 * whole item list up front. Lexing does not depend on parser state, so an eager item list gives the parser exactly
 * what Go's concurrent lexer would, including the error item where lexing stops.
 *
 * Positions are JS string indexes (UTF-16 units); error reporting converts them to Go's byte columns.
 */
import { quoteGo as goQuote } from './quote.js';

/** Kinds of lexical items (Go's itemType). */
export const enum Item {
  Error,
  Bool,
  Char,
  CharConstant,
  Complex,
  Assign,
  Declare,
  EOF,
  Field,
  Identifier,
  LeftDelim,
  LeftParen,
  Number,
  Pipe,
  RawString,
  RightDelim,
  RightParen,
  Space,
  String,
  Text,
  Variable,
  // Keywords (Go's itemKeyword and above).
  Keyword,
  Block,
  Break,
  Continue,
  Dot,
  Define,
  Else,
  End,
  If,
  Nil,
  Range,
  Template,
  With,
}

/** One lexical item: its kind, start index, text and the line it starts on (1-based). */
export interface LexItem {
  readonly typ: Item;
  readonly pos: number;
  readonly val: string;
  readonly line: number;
}

const keywords: ReadonlyMap<string, Item> = new Map([
  ['.', Item.Dot],
  ['block', Item.Block],
  ['break', Item.Break],
  ['continue', Item.Continue],
  ['define', Item.Define],
  ['else', Item.Else],
  ['end', Item.End],
  ['if', Item.If],
  ['range', Item.Range],
  ['nil', Item.Nil],
  ['template', Item.Template],
  ['with', Item.With],
]);

const LEFT = '{{';
const RIGHT = '}}';
const EOF_RUNE = -1;

function isSpace(r: number): boolean {
  return r === 0x20 || r === 0x09 || r === 0x0d || r === 0x0a;
}

const letterRe = /\p{L}/u;
const digitRe = /\p{Nd}/u;

/** Go's isAlphaNumeric: underscore, unicode letter or decimal digit. */
export function isAlphaNumeric(r: number): boolean {
  if (r < 0) return false;
  if (r < 0x80) {
    return r === 0x5f || (r >= 0x30 && r <= 0x39) || (r >= 0x41 && r <= 0x5a) || (r >= 0x61 && r <= 0x7a);
  }
  const s = String.fromCodePoint(r);
  return letterRe.test(s) || digitRe.test(s);
}

/** `%#U` of a rune, as Go's lexer errors print it: `U+0078 'x'`. */
export function formatRuneU(r: number): string {
  let s = 'U+' + r.toString(16).toUpperCase().padStart(4, '0');
  if (r >= 0 && r <= 0x10ffff && !(r >= 0xd800 && r <= 0xdfff)) {
    const ch = String.fromCodePoint(r);
    if (r < 0x80 ? r >= 0x20 && r < 0x7f : /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch)) s += ` '${ch}'`;
  }
  return s;
}

function hasLeftTrimMarker(s: string, at: number): boolean {
  return s.length - at >= 2 && s.charCodeAt(at) === 0x2d && isSpace(s.charCodeAt(at + 1));
}

function hasRightTrimMarker(s: string, at: number): boolean {
  return s.length - at >= 2 && isSpace(s.charCodeAt(at)) && s.charCodeAt(at + 1) === 0x2d;
}

function countNewlines(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (s.charCodeAt(i) === 0x0a) n++;
  return n;
}

type StateFn = ((l: Lexer) => StateFn) | null;

class Lexer {
  pos = 0;
  start = 0;
  atEOF = false;
  parenDepth = 0;
  line = 1;
  startLine = 1;
  readonly items: LexItem[] = [];
  /** Width (UTF-16 units) of the last rune read, for backup. */
  private lastWidth = 0;

  constructor(
    readonly input: string,
    readonly breakOK: boolean,
    readonly continueOK: boolean,
  ) {}

  next(): number {
    if (this.pos >= this.input.length) {
      this.atEOF = true;
      this.lastWidth = 0;
      return EOF_RUNE;
    }
    const r = this.input.codePointAt(this.pos) ?? 0;
    const w = r > 0xffff ? 2 : 1;
    this.pos += w;
    this.lastWidth = w;
    if (r === 0x0a) this.line++;
    return r;
  }

  peek(): number {
    if (this.pos >= this.input.length) return EOF_RUNE;
    return this.input.codePointAt(this.pos) ?? 0;
  }

  backup(): void {
    if (!this.atEOF && this.pos > 0) {
      // Go backs up one rune; the previous rune is the one just read.
      let w = this.lastWidth;
      if (w === 0) {
        const c = this.input.charCodeAt(this.pos - 1);
        w = c >= 0xdc00 && c <= 0xdfff && this.pos >= 2 ? 2 : 1;
      }
      this.pos -= w;
      this.lastWidth = 0;
      if (this.input.charCodeAt(this.pos) === 0x0a) this.line--;
    }
  }

  emit(typ: Item): void {
    this.items.push({ typ, pos: this.start, val: this.input.slice(this.start, this.pos), line: this.startLine });
    this.start = this.pos;
    this.startLine = this.line;
  }

  ignore(): void {
    this.line += countNewlines(this.input, this.start, this.pos);
    this.start = this.pos;
    this.startLine = this.line;
  }

  accept(valid: string): boolean {
    const r = this.next();
    if (r >= 0 && valid.includes(String.fromCodePoint(r))) return true;
    this.backup();
    return false;
  }

  acceptRun(valid: string): void {
    for (;;) {
      const r = this.next();
      if (r < 0 || !valid.includes(String.fromCodePoint(r))) break;
    }
    this.backup();
  }

  errorf(message: string): StateFn {
    this.items.push({ typ: Item.Error, pos: this.start, val: message, line: this.startLine });
    return null;
  }

  atRightDelim(): { delim: boolean; trimSpaces: boolean } {
    if (hasRightTrimMarker(this.input, this.pos) && this.input.startsWith(RIGHT, this.pos + 2)) {
      return { delim: true, trimSpaces: true };
    }
    if (this.input.startsWith(RIGHT, this.pos)) return { delim: true, trimSpaces: false };
    return { delim: false, trimSpaces: false };
  }

  atTerminator(): boolean {
    const r = this.peek();
    if (isSpace(r)) return true;
    switch (r) {
      case EOF_RUNE:
      case 0x2e: // .
      case 0x2c: // ,
      case 0x7c: // |
      case 0x3a: // :
      case 0x29: // )
      case 0x28: // (
        return true;
    }
    return this.input.startsWith(RIGHT, this.pos);
  }

  scanNumber(): boolean {
    this.accept('+-');
    let digits = '0123456789_';
    if (this.accept('0')) {
      if (this.accept('xX')) digits = '0123456789abcdefABCDEF_';
      else if (this.accept('oO')) digits = '01234567_';
      else if (this.accept('bB')) digits = '01_';
    }
    this.acceptRun(digits);
    if (this.accept('.')) this.acceptRun(digits);
    if (digits.length === 11 && this.accept('eE')) {
      this.accept('+-');
      this.acceptRun('0123456789_');
    }
    if (digits.length === 23 && this.accept('pP')) {
      this.accept('+-');
      this.acceptRun('0123456789_');
    }
    this.accept('i');
    if (isAlphaNumeric(this.peek())) {
      this.next();
      return false;
    }
    return true;
  }
}

function rightTrimLength(s: string, from: number, to: number): number {
  let i = to;
  while (i > from && isSpace(s.charCodeAt(i - 1))) i--;
  return to - i;
}

function leftTrimLength(s: string, from: number): number {
  let i = from;
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  return i - from;
}

const lexText = (l: Lexer): StateFn => {
  const x = l.input.indexOf(LEFT, l.pos);
  if (x >= 0) {
    l.pos = x;
    let trimLength = 0;
    if (hasLeftTrimMarker(l.input, l.pos + LEFT.length)) trimLength = rightTrimLength(l.input, l.start, l.pos);
    l.pos -= trimLength;
    if (l.pos > l.start) {
      l.line += countNewlines(l.input, l.start, l.pos);
      l.emit(Item.Text);
    }
    l.pos += trimLength;
    l.ignore();
    return lexLeftDelim;
  }
  l.pos = l.input.length;
  if (l.pos > l.start) {
    l.line += countNewlines(l.input, l.start, l.pos);
    l.emit(Item.Text);
  }
  l.emit(Item.EOF);
  return null;
};

const lexLeftDelim = (l: Lexer): StateFn => {
  l.pos += LEFT.length;
  const trimSpace = hasLeftTrimMarker(l.input, l.pos);
  const afterMarker = trimSpace ? 2 : 0;
  if (l.input.startsWith('/*', l.pos + afterMarker)) {
    l.pos += afterMarker;
    l.ignore();
    return lexComment;
  }
  l.emit(Item.LeftDelim);
  l.pos += afterMarker;
  l.ignore();
  l.parenDepth = 0;
  return lexInsideAction;
};

const lexComment = (l: Lexer): StateFn => {
  l.pos += 2;
  const i = l.input.indexOf('*/', l.pos);
  if (i < 0) return l.errorf('unclosed comment');
  l.pos = i + 2;
  const { delim, trimSpaces } = l.atRightDelim();
  if (!delim) return l.errorf('comment ends before closing delimiter');
  if (trimSpaces) l.pos += 2;
  l.pos += RIGHT.length;
  if (trimSpaces) l.pos += leftTrimLength(l.input, l.pos);
  l.ignore();
  return lexText;
};

const lexRightDelim = (l: Lexer): StateFn => {
  const trimSpace = hasRightTrimMarker(l.input, l.pos);
  if (trimSpace) {
    l.pos += 2;
    l.ignore();
  }
  l.pos += RIGHT.length;
  l.emit(Item.RightDelim);
  if (trimSpace) {
    l.pos += leftTrimLength(l.input, l.pos);
    l.ignore();
  }
  return lexText;
};

const lexInsideAction = (l: Lexer): StateFn => {
  const { delim } = l.atRightDelim();
  if (delim) {
    if (l.parenDepth === 0) return lexRightDelim;
    return l.errorf('unclosed left paren');
  }
  const r = l.next();
  if (r === EOF_RUNE) return l.errorf('unclosed action');
  if (isSpace(r)) {
    l.backup();
    return lexSpace;
  }
  switch (r) {
    case 0x3d: // =
      l.emit(Item.Assign);
      return lexInsideAction;
    case 0x3a: // :
      if (l.next() !== 0x3d) return l.errorf('expected :=');
      l.emit(Item.Declare);
      return lexInsideAction;
    case 0x7c: // |
      l.emit(Item.Pipe);
      return lexInsideAction;
    case 0x22: // "
      return lexQuote;
    case 0x60: // `
      return lexRawQuote;
    case 0x24: // $
      return lexVariable;
    case 0x27: // '
      return lexChar;
    case 0x28: // (
      l.emit(Item.LeftParen);
      l.parenDepth++;
      return lexInsideAction;
    case 0x29: // )
      l.emit(Item.RightParen);
      l.parenDepth--;
      if (l.parenDepth < 0) return l.errorf(`unexpected right paren ${formatRuneU(r)}`);
      return lexInsideAction;
  }
  if (r === 0x2e) {
    // '.' starts a field unless a digit follows (then it starts a number).
    if (l.pos < l.input.length) {
      const c = l.input.charCodeAt(l.pos);
      if (c < 0x30 || c > 0x39) return lexField;
    }
    l.backup();
    return lexNumber;
  }
  if (r === 0x2b || r === 0x2d || (r >= 0x30 && r <= 0x39)) {
    l.backup();
    return lexNumber;
  }
  if (isAlphaNumeric(r)) {
    l.backup();
    return lexIdentifier;
  }
  if (r < 0x7f && r >= 0x20) {
    l.emit(Item.Char);
    return lexInsideAction;
  }
  return l.errorf(`unrecognized character in action: ${formatRuneU(r)}`);
};

const lexSpace = (l: Lexer): StateFn => {
  let numSpaces = 0;
  for (;;) {
    const r = l.peek();
    if (!isSpace(r)) break;
    l.next();
    numSpaces++;
  }
  if (hasRightTrimMarker(l.input, l.pos - 1) && l.input.startsWith(RIGHT, l.pos - 1 + 2)) {
    l.backup();
    if (numSpaces === 1) return lexRightDelim;
  }
  l.emit(Item.Space);
  return lexInsideAction;
};

const lexIdentifier = (l: Lexer): StateFn => {
  for (;;) {
    const r = l.next();
    if (isAlphaNumeric(r)) continue;
    l.backup();
    const word = l.input.slice(l.start, l.pos);
    if (!l.atTerminator()) return l.errorf(`bad character ${formatRuneU(r)}`);
    const kw = keywords.get(word);
    if (kw !== undefined && kw > Item.Keyword) {
      if ((kw === Item.Break && !l.breakOK) || (kw === Item.Continue && !l.continueOK)) l.emit(Item.Identifier);
      else l.emit(kw);
    } else if (word[0] === '.') l.emit(Item.Field);
    else if (word === 'true' || word === 'false') l.emit(Item.Bool);
    else l.emit(Item.Identifier);
    return lexInsideAction;
  }
};

const lexFieldOrVariable = (l: Lexer, typ: Item.Field | Item.Variable): StateFn => {
  if (l.atTerminator()) {
    l.emit(typ === Item.Variable ? Item.Variable : Item.Dot);
    return lexInsideAction;
  }
  let r: number;
  for (;;) {
    r = l.next();
    if (!isAlphaNumeric(r)) {
      l.backup();
      break;
    }
  }
  if (!l.atTerminator()) return l.errorf(`bad character ${formatRuneU(r)}`);
  l.emit(typ);
  return lexInsideAction;
};

const lexField = (l: Lexer): StateFn => lexFieldOrVariable(l, Item.Field);

const lexVariable = (l: Lexer): StateFn => {
  if (l.atTerminator()) {
    l.emit(Item.Variable);
    return lexInsideAction;
  }
  return lexFieldOrVariable(l, Item.Variable);
};

const lexChar = (l: Lexer): StateFn => {
  for (;;) {
    const r = l.next();
    if (r === 0x5c) {
      const e = l.next();
      if (e !== EOF_RUNE && e !== 0x0a) continue;
      return l.errorf('unterminated character constant');
    }
    if (r === EOF_RUNE || r === 0x0a) return l.errorf('unterminated character constant');
    if (r === 0x27) break;
  }
  l.emit(Item.CharConstant);
  return lexInsideAction;
};

const lexNumber = (l: Lexer): StateFn => {
  if (!l.scanNumber()) return l.errorf(`bad number syntax: ${goQuote(l.input.slice(l.start, l.pos))}`);
  const sign = l.peek();
  if (sign === 0x2b || sign === 0x2d) {
    if (!l.scanNumber() || l.input[l.pos - 1] !== 'i') {
      return l.errorf(`bad number syntax: ${goQuote(l.input.slice(l.start, l.pos))}`);
    }
    l.emit(Item.Complex);
  } else l.emit(Item.Number);
  return lexInsideAction;
};

const lexQuote = (l: Lexer): StateFn => {
  for (;;) {
    const r = l.next();
    if (r === 0x5c) {
      const e = l.next();
      if (e !== EOF_RUNE && e !== 0x0a) continue;
      return l.errorf('unterminated quoted string');
    }
    if (r === EOF_RUNE || r === 0x0a) return l.errorf('unterminated quoted string');
    if (r === 0x22) break;
  }
  l.emit(Item.String);
  return lexInsideAction;
};

const lexRawQuote = (l: Lexer): StateFn => {
  for (;;) {
    const r = l.next();
    if (r === EOF_RUNE) return l.errorf('unterminated raw quoted string');
    if (r === 0x60) break;
  }
  l.emit(Item.RawString);
  return lexInsideAction;
};

/**
 * Lex a whole template. `breakOK` / `continueOK` are false when a function of that name exists (then the word is an
 * identifier, as in Go). The list ends with an EOF or an Error item.
 */
export function lex(input: string, breakOK = true, continueOK = true): LexItem[] {
  const l = new Lexer(input, breakOK, continueOK);
  let state: StateFn = lexText;
  while (state) state = state(l);
  return l.items;
}
