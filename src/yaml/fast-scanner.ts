/**
 * Line-oriented scanning for the fast YAML front-end (`./yaml-fast-parse.ts`): position and line tracking, blank
 * and comment lines, quoted and plain scalar text. Anything unusual gives up (throws `GIVE_UP`), so that the
 * complete parser takes the document.
 */
import { TreeAssembler, YamlPositions } from './tree.js';

/** Thrown to give up on a document; `parseFast` catches it. */
export class GiveUp extends Error {}
/** The one instance thrown (no stack trace is built per document). */
export const GIVE_UP = new GiveUp('not handled by the fast YAML front-end');

export const SPACE = 0x20;
export const NL = 0x0a;
export const HASH = 0x23;
export const COLON = 0x3a;
export const DASH = 0x2d;

/** Characters that may not start a plain scalar (`-`, `?`, `:` only when followed by a space). */
export const RESERVED_START = new Set([...',[]{}#&*!|>\'"%@`'].map((c) => c.charCodeAt(0)));
/**
 * The longest run of plain-scalar characters on a line: anything but a line break, `:` followed by a space or the
 * line end, and `#` preceded by a space. Sticky; set `lastIndex` before use.
 */
export const PLAIN_BLOCK = /(?:[^\n:#]|:(?![ \n]|$)|(?<! )#)*/y;
/** The same in flow context, where `,[]{}` also end a plain scalar. */
const PLAIN_FLOW = /(?:[^\n:#,[\]{}]|:(?![ \n,[\]{}]|$)|(?<! )#)*/y;
/** Characters that end a plain scalar in flow context. */
export const FLOW_END = new Set([...',[]{}'].map((c) => c.charCodeAt(0)));

const SIMPLE_ESCAPES: Record<string, string> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  t: '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  e: '\x1b',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
  N: '\u0085',
  _: '\u00a0',
  L: '\u2028',
  P: '\u2029',
};

/** Scanning state and helpers over one text; the parser builds on it. */
export class LineScanner {
  pos = 0;
  line = 1;
  lineStart = 0;
  /** Set when a document marker (`---`, `...`) ends the first document. */
  docEnd = false;
  readonly asm: TreeAssembler;

  constructor(
    readonly src: string,
    readonly file: string,
  ) {
    this.asm = new TreeAssembler(new YamlPositions(file, src));
  }

  giveUp(): never {
    throw GIVE_UP;
  }

  code(i: number): number {
    return i < this.src.length ? this.src.charCodeAt(i) : NL;
  }

  /** Whether position i ends the line (newline or end of text). */
  isEol(i: number): boolean {
    return i >= this.src.length || this.src.charCodeAt(i) === NL;
  }

  /** Whether position i is blank (space or end of line). */
  isBlank(i: number): boolean {
    const c = this.code(i);
    return c === SPACE || c === NL;
  }

  skipSpaces(): void {
    while (this.pos < this.src.length && this.src.charCodeAt(this.pos) === SPACE) this.pos++;
  }

  /** Move to the start of the next line. */
  newLine(): void {
    const nl = this.src.indexOf('\n', this.pos);
    this.pos = nl < 0 ? this.src.length : nl + 1;
    if (nl >= 0) {
      this.line++;
      this.lineStart = this.pos;
    }
  }

  /** After a value: only spaces and a comment may follow on the line; moves to the next line. */
  endLine(): void {
    const before = this.pos;
    this.skipSpaces();
    if (!this.isEol(this.pos)) {
      if (this.code(this.pos) !== HASH || this.pos === before) this.giveUp();
    }
    this.newLine();
  }

  /**
   * From a line start, skip blank and comment lines; returns the indent of the next content line (the position
   * is left at its start), or -1 at the end of the text or of the document.
   */
  nextContentLine(): number {
    const src = this.src;
    for (;;) {
      if (this.pos >= src.length) return -1;
      let i = this.pos;
      while (i < src.length && src.charCodeAt(i) === SPACE) i++;
      if (i >= src.length) {
        this.pos = i;
        return -1;
      }
      const c = src.charCodeAt(i);
      if (c === NL || c === HASH) {
        this.newLine();
        continue;
      }
      const indent = i - this.pos;
      if (indent === 0 && (src.startsWith('---', i) || src.startsWith('...', i)) && this.isBlank(i + 3)) {
        this.docEnd = true;
        return -1;
      }
      return indent;
    }
  }

  /** Whether a block sequence entry (`-` followed by a space or line end) is at position i. */
  isSeqEntry(i: number): boolean {
    return this.code(i) === DASH && this.isBlank(i + 1);
  }

  /** The end (exclusive) of a single-line quoted scalar starting at i, or give up. */
  quotedEnd(i: number): number {
    const src = this.src;
    const q = src.charCodeAt(i);
    let j = i + 1;
    for (;;) {
      if (this.isEol(j)) this.giveUp();
      const c = src.charCodeAt(j);
      if (q === 0x22 && c === 0x5c) j += 2;
      else if (c === q) {
        if (q === 0x27 && src.charCodeAt(j + 1) === 0x27) j += 2;
        else return j + 1;
      } else j++;
    }
  }

  /** The value of the quoted scalar src[i..end). */
  unquote(i: number, end: number): string {
    const body = this.src.slice(i + 1, end - 1);
    if (this.src.charCodeAt(i) === 0x27) return body.replaceAll("''", "'");
    if (!body.includes('\\')) return body;
    let out = '';
    for (let k = 0; k < body.length; k++) {
      const c = body[k] ?? '';
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = body[++k] ?? '';
      const simple = SIMPLE_ESCAPES[e];
      if (simple !== undefined) {
        out += simple;
        continue;
      }
      const len = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
      const hex = body.slice(k + 1, k + 1 + len);
      if (len === 0 || !/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) this.giveUp();
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff) this.giveUp();
      out += String.fromCodePoint(cp);
      k += len;
    }
    return out;
  }

  /**
   * Scan one line of a plain scalar starting at pos; returns its end (trailing spaces excluded), pos set there.
   * A continuation line may start with any character but `#` (a comment) and `: `.
   */
  scanPlain(flow: boolean, continuation = false): number {
    const src = this.src;
    const start = this.pos;
    const c = this.code(start);
    if (!continuation && RESERVED_START.has(c)) this.giveUp();
    if ((c === COLON || (!continuation && (c === DASH || c === 0x3f))) && this.isBlank(start + 1)) this.giveUp();
    // Scan with a regular expression: native code, where a loop per character would be interpreted at first.
    const re = flow ? PLAIN_FLOW : PLAIN_BLOCK;
    re.lastIndex = start;
    re.test(src);
    const j = re.lastIndex;
    // Block text stops at `: `, ` #` or the line end; `: ` there would be a nested mapping.
    if (!flow && this.code(j) === COLON) this.giveUp();
    let end = j;
    while (end > start && src.charCodeAt(end - 1) === SPACE) end--;
    if (end === start) this.giveUp();
    this.pos = end;
    return end;
  }
}
