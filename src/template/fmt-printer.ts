/**
 * The state machine behind Go's fmt verbs (pp + fmt in Go's fmt package): flags, width, precision, padding and the
 * printing of each Go value kind under a verb, including Go's `%!verb(type=value)` mistakes.
 */
import { checkResultSize } from './limits.js';
import { formatFloat as strconvFormatFloat } from '../go-value/float-format.js';
import { sortedEntries } from './map-order.js';
import { canBackquote, quoteGo as quoteString, quoteRune } from './quote.js';
import type { GoValue } from '../go-value/value.js';
import { GoIfaceMap, GoOpaque, goTypeName } from '../go-value/value.js';

/** The largest int64. */
export const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MASK = (1n << 64n) - 1n;
const encoder = new TextEncoder();

/** Formatting flags of one verb. */
export interface Flags {
  plus: boolean;
  minus: boolean;
  sharp: boolean;
  space: boolean;
  zero: boolean;
  plusV: boolean;
  sharpV: boolean;
  widPresent: boolean;
  wid: number;
  precPresent: boolean;
  prec: number;
}

/** Cleared flags. */
export function newFlags(): Flags {
  return {
    plus: false,
    minus: false,
    sharp: false,
    space: false,
    zero: false,
    plusV: false,
    sharpV: false,
    widPresent: false,
    wid: 0,
    precPresent: false,
    prec: 0,
  };
}

function runeCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** One Printf run: Go's pp + fmt state. */
/** One Printf run: Go's pp + fmt state; `out` collects the text. */
export class Printer {
  out = '';
  f: Flags = newFlags();
  private erroring = false;

  private padding(n: number): string {
    if (n <= 0) return '';
    checkResultSize(this.out.length + n);
    return (this.f.zero ? '0' : ' ').repeat(n);
  }

  pad(s: string): void {
    const f = this.f;
    if (!f.widPresent || f.wid === 0) {
      this.out += s;
      return;
    }
    const width = f.wid - runeCount(s);
    if (!f.minus) this.out += this.padding(width) + s;
    else this.out += s + this.padding(width);
  }

  private writePadding(n: number): void {
    this.out += this.padding(n);
  }

  private truncate(s: string): string {
    if (this.f.precPresent) {
      let n = this.f.prec;
      let i = 0;
      for (const ch of s) {
        n--;
        if (n < 0) return s.slice(0, i);
        i += ch.length;
      }
    }
    return s;
  }

  fmtBoolean(v: boolean): void {
    this.pad(v ? 'true' : 'false');
  }

  fmtS(s: string): void {
    this.pad(this.truncate(s));
  }

  fmtQ(s: string): void {
    s = this.truncate(s);
    if (this.f.sharp && canBackquote(s)) {
      this.pad('`' + s + '`');
      return;
    }
    this.pad(quoteString(s, this.f.plus));
  }

  fmtSx(s: string, upper: boolean): void {
    const digits = upper ? '0123456789ABCDEF' : '0123456789abcdef';
    const bytes = encoder.encode(s);
    const f = this.f;
    let length = bytes.length;
    if (f.precPresent && f.prec < length) length = f.prec;
    let width = 2 * length;
    if (width > 0) {
      if (f.space) {
        if (f.sharp) width *= 2;
        width += length - 1;
      } else if (f.sharp) width += 2;
    } else {
      if (f.widPresent) this.writePadding(f.wid);
      return;
    }
    if (f.widPresent && f.wid > width && !f.minus) this.writePadding(f.wid - width);
    const prefix = upper ? '0X' : '0x';
    let buf = f.sharp ? prefix : '';
    for (let i = 0; i < length; i++) {
      if (f.space && i > 0) {
        buf += ' ';
        if (f.sharp) buf += prefix;
      }
      const c = bytes[i] ?? 0;
      buf += (digits[c >> 4] ?? '') + (digits[c & 15] ?? '');
    }
    this.out += buf;
    if (f.widPresent && f.wid > width && f.minus) this.writePadding(f.wid - width);
  }

  /** fmt.fmtInteger: `u` is the value (negative allowed when signed). */
  fmtInteger(v: bigint, base: number, verb: string, upper: boolean): void {
    const f = this.f;
    const negative = v < 0n;
    const u = negative ? -v : v;
    let prec = 0;
    if (f.precPresent) {
      prec = f.prec;
      if (prec === 0 && u === 0n) {
        const oldZero = f.zero;
        f.zero = false;
        this.writePadding(f.wid);
        f.zero = oldZero;
        return;
      }
    } else if (f.zero && f.widPresent) {
      prec = f.wid;
      if (negative || f.plus || f.space) prec--;
    }
    let digits = u.toString(base);
    if (upper) digits = digits.toUpperCase();
    if (digits.length < prec) digits = '0'.repeat(prec - digits.length) + digits;
    if (f.sharp) {
      if (base === 2) digits = '0b' + digits;
      else if (base === 8) {
        if (digits[0] !== '0') digits = '0' + digits;
      } else if (base === 16) digits = (upper ? '0X' : '0x') + digits;
    }
    if (verb === 'O') digits = '0o' + digits;
    if (negative) digits = '-' + digits;
    else if (f.plus) digits = '+' + digits;
    else if (f.space) digits = ' ' + digits;
    const oldZero = f.zero;
    f.zero = false;
    this.pad(digits);
    f.zero = oldZero;
  }

  fmtC(v: bigint): void {
    let cp = v > 0x10ffffn || v < 0n ? 0xfffd : Number(v);
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    this.pad(String.fromCodePoint(cp));
  }

  fmtQc(v: bigint): void {
    const cp = v > 0x10ffffn || v < 0n ? 0xfffd : Number(v);
    this.pad(quoteRune(cp, this.f.plus));
  }

  fmtUnicode(v: bigint): void {
    const f = this.f;
    let prec = 4;
    if (f.precPresent && f.prec > 4) prec = f.prec;
    let s = 'U+' + v.toString(16).toUpperCase().padStart(prec, '0');
    if (f.sharp && v <= 0x10ffffn && v >= 0n) {
      const cp = Number(v);
      if (!(cp >= 0xd800 && cp <= 0xdfff) && /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(String.fromCodePoint(cp))) {
        s += ` '${String.fromCodePoint(cp)}'`;
      }
    }
    const oldZero = f.zero;
    f.zero = false;
    this.pad(s);
    f.zero = oldZero;
  }

  /** fmt.fmtFloat with strconv format `verb` and default precision `prec`. */
  fmtFloat(v: number, verb: 'e' | 'E' | 'f' | 'g' | 'G' | 'b' | 'x' | 'X', prec: number): void {
    const f = this.f;
    if (f.precPresent) prec = f.prec;
    let num = strconvFormatFloat(v, verb, prec);
    if (num[0] === '-' || num[0] === '+') {
      // keep
    } else num = '+' + num;
    if (f.space && num[0] === '+' && !f.plus) num = ' ' + num.slice(1);
    if (num[1] === 'I' || num[1] === 'N') {
      const oldZero = f.zero;
      f.zero = false;
      if (num[1] === 'N' && !f.space && !f.plus) num = num.slice(1);
      this.pad(num);
      f.zero = oldZero;
      return;
    }
    if (f.sharp && verb !== 'b') {
      let digits = 0;
      if (verb === 'g' || verb === 'G' || verb === 'x') {
        digits = prec;
        if (digits === -1) digits = 6;
      }
      let tail = '';
      let hasDecimalPoint = false;
      let sawNonzeroDigit = false;
      for (let i = 1; i < num.length; i++) {
        const c = num[i];
        if (c === '.') hasDecimalPoint = true;
        else if (c === 'p' || c === 'P' || ((c === 'e' || c === 'E') && verb !== 'x' && verb !== 'X')) {
          tail = num.slice(i);
          num = num.slice(0, i);
          break;
        } else {
          if (c !== '0') sawNonzeroDigit = true;
          if (sawNonzeroDigit) digits--;
        }
      }
      if (!hasDecimalPoint) {
        if (num.length === 2 && num[1] === '0') digits--;
        num += '.';
      }
      while (digits > 0) {
        num += '0';
        digits--;
      }
      num += tail;
    }
    if (f.plus || num[0] !== '+') {
      if (f.zero && f.widPresent && f.wid > num.length) {
        this.out += num[0] ?? '';
        this.writePadding(f.wid - num.length);
        this.out += num.slice(1);
        return;
      }
      this.pad(num);
      return;
    }
    this.pad(num.slice(1));
  }

  badVerb(verb: string, arg: GoValue | undefined): void {
    this.erroring = true;
    this.out += '%!' + verb + '(';
    if (arg === undefined || arg === null) this.out += '<nil>';
    else {
      this.out += goTypeName(arg) + '=';
      this.printArg(arg, 'v', 0);
    }
    this.out += ')';
    this.erroring = false;
  }

  /** Print one operand (pp.printArg / printValue); depth > 0 inside collections. */
  printArg(arg: GoValue, verb: string, depth: number): void {
    if (arg === null) {
      if (depth > 0) {
        if (this.f.sharpV) this.out += 'interface {}(nil)';
        else this.out += '<nil>';
        return;
      }
      if (verb === 'T' || verb === 'v') this.pad('<nil>');
      else this.badVerb(verb, null);
      return;
    }
    if (depth === 0) {
      if (verb === 'T') {
        this.fmtS(goTypeName(arg));
        return;
      }
      if (verb === 'p') {
        this.badVerb(verb, arg);
        return;
      }
    }
    switch (typeof arg) {
      case 'boolean':
        if (verb === 't' || verb === 'v') this.fmtBoolean(arg);
        else this.badVerb(verb, arg);
        return;
      case 'bigint':
        this.printInt(arg, verb);
        return;
      case 'number':
        this.printFloat(arg, verb);
        return;
      case 'string':
        this.printString(arg, verb);
        return;
      default:
        break;
    }
    if (arg instanceof GoOpaque) {
      if (!this.erroring && !this.f.sharpV && 'vsxXq'.includes(verb)) {
        this.printString(arg.display(), verb);
        return;
      }
      if (this.f.sharpV) {
        this.out += arg.display();
        return;
      }
      this.badVerb(verb, arg);
      return;
    }
    if (Array.isArray(arg)) {
      const type = goTypeName(arg);
      if ((verb === 's' || verb === 'q' || verb === 'x' || verb === 'X') && (type === '[]uint8' || type === '[]byte')) {
        const s = new TextDecoder('utf-8', { ignoreBOM: true }).decode(Uint8Array.from(arg.map((b) => Number(b))));
        this.printString(s, verb);
        return;
      }
      if (this.f.sharpV) {
        this.out += type + '{';
        arg.forEach((e, i) => {
          if (i > 0) this.out += ', ';
          this.printArg(e, verb, depth + 1);
        });
        this.out += '}';
      } else {
        this.out += '[';
        arg.forEach((e, i) => {
          if (i > 0) this.out += ' ';
          this.printArg(e, verb, depth + 1);
        });
        this.out += ']';
      }
      return;
    }
    const type = goTypeName(arg);
    const sharpV = this.f.sharpV;
    this.out += sharpV ? type + '{' : 'map[';
    const entries = sortedEntries(arg);
    const ifaceKeys = arg instanceof GoIfaceMap;
    entries.forEach(([k, v], i) => {
      if (i > 0) this.out += sharpV ? ', ' : ' ';
      if (ifaceKeys && k === null && sharpV) this.out += 'interface {}(nil)';
      else this.printArg(k, verb, depth + 1);
      this.out += ':';
      this.printArg(v, verb, depth + 1);
    });
    this.out += sharpV ? '}' : ']';
  }

  private printInt(v: bigint, verb: string): void {
    // Values above int64 come from uint64 data.
    const unsigned = v > INT64_MAX;
    switch (verb) {
      case 'v':
        if (this.f.sharpV && unsigned) {
          const sharp = this.f.sharp;
          this.f.sharp = true;
          this.fmtInteger(v, 16, 'v', false);
          this.f.sharp = sharp;
        } else this.fmtInteger(v, 10, verb, false);
        return;
      case 'd':
        this.fmtInteger(v, 10, verb, false);
        return;
      case 'b':
        this.fmtInteger(v, 2, verb, false);
        return;
      case 'o':
      case 'O':
        this.fmtInteger(v, 8, verb, false);
        return;
      case 'x':
        this.fmtInteger(v, 16, verb, false);
        return;
      case 'X':
        this.fmtInteger(v, 16, verb, true);
        return;
      case 'c':
        this.fmtC(v);
        return;
      case 'q':
        this.fmtQc(v);
        return;
      case 'U':
        this.fmtUnicode(v < 0n ? v & UINT64_MASK : v);
        return;
      default:
        this.badVerb(verb, v);
    }
  }

  private printFloat(v: number, verb: string): void {
    switch (verb) {
      case 'v':
        this.fmtFloat(v, 'g', -1);
        return;
      case 'b':
      case 'g':
      case 'G':
      case 'x':
      case 'X':
        this.fmtFloat(v, verb, -1);
        return;
      case 'f':
      case 'e':
      case 'E':
        this.fmtFloat(v, verb, 6);
        return;
      case 'F':
        this.fmtFloat(v, 'f', 6);
        return;
      default:
        this.badVerb(verb, v);
    }
  }

  private printString(v: string, verb: string): void {
    switch (verb) {
      case 'v':
        if (this.f.sharpV) this.fmtQ(v);
        else this.fmtS(v);
        return;
      case 's':
        this.fmtS(v);
        return;
      case 'x':
        this.fmtSx(v, false);
        return;
      case 'X':
        this.fmtSx(v, true);
        return;
      case 'q':
        this.fmtQ(v);
        return;
      default:
        this.badVerb(verb, v);
    }
  }
}
