/**
 * Go literal syntax as text/template's parser reads it: strconv.Unquote / UnquoteChar for string and character
 * constants, and strconv.ParseInt / ParseUint / ParseFloat (base 0, underscores) for numbers.
 */

/** A failed literal conversion; `message` is the text Go's parser reports. */
export class LiteralError extends Error {}

const SYNTAX = 'invalid syntax';

function hexVal(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

function pushRune(out: number[], r: number): void {
  const bytes = new TextEncoder().encode(String.fromCodePoint(r));
  for (const b of bytes) out.push(b);
}

/**
 * strconv.UnquoteChar on `s` from index `i`: returns the decoded value, whether it is a raw byte (\x, octal) and the
 * index after it. Throws LiteralError("invalid syntax").
 */
function unquoteChar(s: string, i: number, quote: number): { value: number; isByte: boolean; next: number } {
  const c = s.charCodeAt(i);
  if (c === quote && (quote === 0x27 || quote === 0x22)) throw new LiteralError(SYNTAX);
  if (c >= 0x80) {
    const cp = s.codePointAt(i) ?? 0xfffd;
    return { value: cp, isByte: false, next: i + (cp > 0xffff ? 2 : 1) };
  }
  if (c !== 0x5c) return { value: c, isByte: false, next: i + 1 };
  if (s.length - i <= 1) throw new LiteralError(SYNTAX);
  const e = s[i + 1];
  let j = i + 2;
  switch (e) {
    case 'a':
      return { value: 7, isByte: false, next: j };
    case 'b':
      return { value: 8, isByte: false, next: j };
    case 'f':
      return { value: 12, isByte: false, next: j };
    case 'n':
      return { value: 10, isByte: false, next: j };
    case 'r':
      return { value: 13, isByte: false, next: j };
    case 't':
      return { value: 9, isByte: false, next: j };
    case 'v':
      return { value: 11, isByte: false, next: j };
    case 'x':
    case 'u':
    case 'U': {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      if (s.length - j < n) throw new LiteralError(SYNTAX);
      let v = 0;
      for (let k = 0; k < n; k++) {
        const h = hexVal(s.charCodeAt(j + k));
        if (h < 0) throw new LiteralError(SYNTAX);
        v = v * 16 + h;
      }
      j += n;
      if (e === 'x') return { value: v, isByte: true, next: j };
      if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) throw new LiteralError(SYNTAX);
      return { value: v, isByte: false, next: j };
    }
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7': {
      let v = Number(e);
      if (s.length - j < 2) throw new LiteralError(SYNTAX);
      for (let k = 0; k < 2; k++) {
        const d = s.charCodeAt(j + k) - 0x30;
        if (d < 0 || d > 7) throw new LiteralError(SYNTAX);
        v = v * 8 + d;
      }
      j += 2;
      if (v > 255) throw new LiteralError(SYNTAX);
      return { value: v, isByte: true, next: j };
    }
    case '\\':
      return { value: 0x5c, isByte: false, next: j };
    case "'":
    case '"':
      if (e.charCodeAt(0) !== quote) throw new LiteralError(SYNTAX);
      return { value: e.charCodeAt(0), isByte: false, next: j };
    default:
      throw new LiteralError(SYNTAX);
  }
}

/** strconv.Unquote of a "…" or `…` literal (bytes from \x / octal escapes are decoded as UTF-8). */
export function unquoteString(lit: string): string {
  const n = lit.length;
  if (n < 2) throw new LiteralError(SYNTAX);
  const q = lit[0];
  if (q !== lit[n - 1]) throw new LiteralError(SYNTAX);
  const body = lit.slice(1, n - 1);
  if (q === '`') {
    if (body.includes('`')) throw new LiteralError(SYNTAX);
    return body.includes('\r') ? body.replaceAll('\r', '') : body;
  }
  if (q !== '"') throw new LiteralError(SYNTAX);
  if (body.includes('\n')) throw new LiteralError(SYNTAX);
  if (!body.includes('\\') && !body.includes('"')) return body;
  const bytes: number[] = [];
  let i = 0;
  while (i < body.length) {
    const r = unquoteChar(body, i, 0x22);
    if (r.isByte) bytes.push(r.value);
    else pushRune(bytes, r.value);
    i = r.next;
  }
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(Uint8Array.from(bytes));
}

/** A character constant ('a', '\n', '\x41'): its rune value. */
export function unquoteCharConstant(lit: string): number {
  const r = unquoteChar(lit, 1, 0x27);
  if (lit.slice(r.next) !== "'") throw new LiteralError(`malformed character constant: ${lit}`);
  return r.value;
}

/** Go's underscoreOK: underscores only between digits (or after a base prefix). */
export function underscoreOK(s: string): boolean {
  let saw = '^';
  let i = 0;
  if (s.length >= 1 && (s[0] === '-' || s[0] === '+')) s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === '0') {
    const c = (s[1] ?? '').toLowerCase();
    if (c === 'b' || c === 'o' || c === 'x') {
      i = 2;
      saw = '0';
      hex = c === 'x';
    }
  }
  for (; i < s.length; i++) {
    const c = s[i] ?? '';
    if ((c >= '0' && c <= '9') || (hex && c.toLowerCase() >= 'a' && c.toLowerCase() <= 'f')) {
      saw = '0';
      continue;
    }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

const UINT64_MAX = (1n << 64n) - 1n;

/** strconv.ParseUint(s, 0, 64): the value, or 'syntax' / 'range'. */
export function parseUint(s: string): bigint | 'syntax' | 'range' {
  if (s.length === 0) return 'syntax';
  const s0 = s;
  let base = 10;
  if (s[0] === '0') {
    const c = (s[1] ?? '').toLowerCase();
    if (s.length >= 3 && (c === 'b' || c === 'o' || c === 'x')) {
      base = c === 'b' ? 2 : c === 'o' ? 8 : 16;
      s = s.slice(2);
    } else {
      base = 8;
      s = s.slice(1);
    }
  }
  let n = 0n;
  let underscores = false;
  const b = BigInt(base);
  for (const ch of s) {
    if (ch === '_') {
      underscores = true;
      continue;
    }
    const d = hexVal(ch.charCodeAt(0));
    if (d < 0 || d >= base) return 'syntax';
    n = n * b + BigInt(d);
    if (n > UINT64_MAX) return 'range';
  }
  if (underscores && !underscoreOK(s0)) return 'syntax';
  return n;
}

/** strconv.ParseInt(s, 0, 64): the value, or 'syntax' / 'range'. */
export function parseInt64(s: string): bigint | 'syntax' | 'range' {
  if (s.length === 0) return 'syntax';
  let neg = false;
  let body = s;
  if (s[0] === '+' || s[0] === '-') {
    neg = s[0] === '-';
    body = s.slice(1);
  }
  const u = parseUint(body);
  if (typeof u !== 'bigint') return u;
  if (!neg && u >= 1n << 63n) return 'range';
  if (neg && u > 1n << 63n) return 'range';
  return neg ? -u : u;
}

const decimalFloat = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const hexFloat = /^([+-]?)0[xX]([0-9a-fA-F]*)\.?([0-9a-fA-F]*)[pP]([+-]?\d+)$/;

/** strconv.ParseFloat(s, 64) for Go literal syntax: the value, or 'syntax' / 'range'. */
export function parseFloat64(s: string): number | 'syntax' | 'range' {
  let t = s;
  if (t.includes('_')) {
    if (!underscoreOK(t)) return 'syntax';
    t = t.replaceAll('_', '');
  }
  const lower = t.toLowerCase().replace(/^[+-]/, '');
  if (lower === 'inf' || lower === 'infinity') return t[0] === '-' ? -Infinity : Infinity;
  if (lower === 'nan') return NaN;
  let f: number;
  if (decimalFloat.test(t)) f = Number(t);
  else {
    const m = hexFloat.exec(t);
    if (!m || (m[2] === '' && m[3] === '')) return 'syntax';
    const mant = BigInt('0x' + (m[2] || '0') + (m[3] ?? ''));
    const exp = Number(m[4]) - 4 * (m[3] ?? '').length;
    f = Number(mant) * 2 ** exp;
    if (m[1] === '-') f = -f;
  }
  if (!Number.isFinite(f)) return 'range';
  return f;
}

/** A parsed number literal: which Go kinds it fits and its value in each (Go's parse.NumberNode). */
export interface NumberValue {
  isInt: boolean;
  isUint: boolean;
  isFloat: boolean;
  isComplex: boolean;
  int64: bigint;
  uint64: bigint;
  float64: number;
  /** The imaginary part of a complex constant. */
  imag: number;
}

function simplifyComplex(n: NumberValue, re: number, im: number): void {
  n.isComplex = true;
  n.float64 = re;
  n.imag = im;
  n.isFloat = im === 0;
  if (n.isFloat) {
    n.isInt = Number.isInteger(re) && re >= -(2 ** 63) && re < 2 ** 63;
    if (n.isInt) n.int64 = BigInt(re);
    n.isUint = Number.isInteger(re) && re >= 0 && re < 2 ** 64;
    if (n.isUint) n.uint64 = BigInt(re);
  }
}

/** Parse a number token (Go's newNumber); throws LiteralError with Go's message. */
export function parseNumber(text: string, isChar: boolean, isComplex: boolean): NumberValue {
  const n: NumberValue = {
    isInt: false,
    isUint: false,
    isFloat: false,
    isComplex: false,
    int64: 0n,
    uint64: 0n,
    float64: 0,
    imag: 0,
  };
  if (isChar) {
    const r = unquoteCharConstant(text);
    n.int64 = BigInt(r);
    n.uint64 = BigInt(r);
    n.float64 = r;
    n.isInt = n.isUint = n.isFloat = true;
    return n;
  }
  if (isComplex) {
    // Go scans "re±imi" with fmt.Sscan.
    const m = /^([+-]?[^+-]*(?:[eEpP][+-][^+-]*)?)([+-].*)i$/.exec(text);
    const re = m ? parseFloat64(m[1] ?? '') : 'syntax';
    const im = m ? parseFloat64(m[2] ?? '') : 'syntax';
    if (typeof re !== 'number' || typeof im !== 'number') throw new LiteralError(`illegal number syntax: "${text}"`);
    simplifyComplex(n, re, im);
    return n;
  }
  if (text.endsWith('i')) {
    const f = parseFloat64(text.slice(0, -1));
    if (typeof f === 'number') {
      simplifyComplex(n, 0, f);
      return n;
    }
  }
  const u = parseUint(text);
  if (typeof u === 'bigint') {
    n.isUint = true;
    n.uint64 = u;
  }
  const i = parseInt64(text);
  if (typeof i === 'bigint') {
    n.isInt = true;
    n.int64 = i;
    if (i === 0n) {
      n.isUint = true;
      n.uint64 = typeof u === 'bigint' ? u : 0n;
    }
  }
  if (n.isInt) {
    n.isFloat = true;
    n.float64 = Number(n.int64);
  } else if (n.isUint) {
    n.isFloat = true;
    n.float64 = Number(n.uint64);
  } else {
    const f = parseFloat64(text);
    if (typeof f === 'number') {
      if (!/[.eEpP]/.test(text)) throw new LiteralError(`integer overflow: ${JSON.stringify(text)}`);
      n.isFloat = true;
      n.float64 = f;
      if (Number.isInteger(f) && f >= -(2 ** 63) && f < 2 ** 63) {
        n.isInt = true;
        n.int64 = BigInt(f);
      }
      if (Number.isInteger(f) && f >= 0 && f < 2 ** 64) {
        n.isUint = true;
        n.uint64 = BigInt(f);
      }
    }
  }
  if (!n.isInt && !n.isUint && !n.isFloat) throw new LiteralError(`illegal number syntax: ${JSON.stringify(text)}`);
  return n;
}
