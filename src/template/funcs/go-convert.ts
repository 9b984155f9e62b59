/**
 * Conversions sprig relies on: strconv's number parsing, spf13/cast's ToInt64/ToInt/ToFloat64 (v1.5.0) and
 * sprig's own strval/strslice. Ints are bigint (int64 wraps like Go's), floats are numbers.
 */
import { formatValue } from '../fmt.js';
import type { GoValue } from '../../go-value/value.js';
import { GoOpaque } from '../../go-value/value.js';
import { underscoreOK } from '../literals.js';

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

/** Wrap a bigint to int64 as Go's integer arithmetic and conversions do. */
export function int64(v: bigint): bigint {
  return BigInt.asIntN(64, v);
}

/** A parse result: the value, or the kind of strconv error. */
export interface ParsedNumber<T> {
  value: T;
  err?: 'syntax' | 'range';
}

function lower(c: string): string {
  return c.toLowerCase();
}

/** strconv.ParseUint(s, base, 64); base 0 reads 0x, 0o, 0b and leading-0 octal prefixes and allows underscores. */
export function parseUint(s: string, base: number): ParsedNumber<bigint> {
  if (s === '') return { value: 0n, err: 'syntax' };
  const base0 = base === 0;
  const s0 = s;
  if (base === 0) {
    base = 10;
    if (s[0] === '0') {
      const p = lower(s[1] ?? '');
      if (s.length >= 3 && p === 'b') {
        base = 2;
        s = s.slice(2);
      } else if (s.length >= 3 && p === 'o') {
        base = 8;
        s = s.slice(2);
      } else if (s.length >= 3 && p === 'x') {
        base = 16;
        s = s.slice(2);
      } else {
        base = 8;
        s = s.slice(1);
      }
    }
  }
  const b = BigInt(base);
  let n = 0n;
  let underscores = false;
  let range = false;
  for (const c of s) {
    if (c === '_' && base0) {
      underscores = true;
      continue;
    }
    let d: number;
    const code = c.charCodeAt(0);
    if (code >= 48 && code <= 57) d = code - 48;
    else {
      const l = lower(c).charCodeAt(0);
      if (c.length === 1 && l >= 97 && l <= 122) d = l - 97 + 10;
      else return { value: 0n, err: 'syntax' };
    }
    if (d >= base) return { value: 0n, err: 'syntax' };
    if (!range) {
      n = n * b + BigInt(d);
      if (n > UINT64_MAX) range = true;
    }
  }
  if (range) return { value: UINT64_MAX, err: 'range' };
  if (underscores && !underscoreOK(s0)) return { value: 0n, err: 'syntax' };
  return { value: n };
}

/** strconv.ParseInt(s, base, 64): on overflow the value is clamped and err is 'range'. */
export function parseInt64(s: string, base: number): ParsedNumber<bigint> {
  if (s === '') return { value: 0n, err: 'syntax' };
  let neg = false;
  let t = s;
  if (t[0] === '+') t = t.slice(1);
  else if (t[0] === '-') {
    neg = true;
    t = t.slice(1);
  }
  const u = parseUint(t, base);
  if (u.err === 'syntax') return { value: 0n, err: 'syntax' };
  if (!neg && (u.err === 'range' || u.value > INT64_MAX)) return { value: INT64_MAX, err: 'range' };
  if (neg && (u.err === 'range' || u.value > -INT64_MIN)) return { value: INT64_MIN, err: 'range' };
  return { value: neg ? -u.value : u.value };
}

/** strconv.Atoi: base 10, no prefixes or underscores; out-of-range values are clamped (and reported). */
export function atoi(s: string): ParsedNumber<bigint> {
  if (s.length > 0 && s.length < 19) {
    let t = s;
    if (t[0] === '-' || t[0] === '+') {
      t = t.slice(1);
      if (t.length < 1) return { value: 0n, err: 'syntax' };
    }
    if (!/^[0-9]*$/.test(t)) return { value: 0n, err: 'syntax' };
    const n = BigInt(t);
    return { value: s[0] === '-' ? -n : n };
  }
  if (s.includes('_')) return { value: 0n, err: 'syntax' };
  return parseInt64(s, 10);
}

const decimalFloat = /^[+-]?(?:[0-9_]+(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][+-]?[0-9_]+)?$/;
const hexFloat = /^([+-]?)0[xX]([0-9a-fA-F_]*)(?:\.([0-9a-fA-F_]*))?[pP]([+-]?[0-9_]+)$/;

/** strconv.ParseFloat(s, 64): decimal and hex forms, inf/infinity/nan, underscores as Go allows them. */
export function parseFloat64(s: string): ParsedNumber<number> {
  const special = /^([+-]?)(inf|infinity)$/i.exec(s);
  if (special) return { value: special[1] === '-' ? -Infinity : Infinity };
  if (/^nan$/i.test(s)) return { value: NaN };
  let value: number;
  if (decimalFloat.test(s)) {
    // Go checks underscores over the whole literal: one next to '.', 'e' or a sign is an error.
    if (s.includes('_') && !underscoreOK(s)) return { value: 0, err: 'syntax' };
    value = Number(s.replace(/_/g, ''));
  } else {
    const m = hexFloat.exec(s);
    if (!m) return { value: 0, err: 'syntax' };
    const intPart = m[2] ?? '';
    const fracPart = m[3] ?? '';
    if (s.includes('_') && !underscoreOK(s)) return { value: 0, err: 'syntax' };
    const digits = (intPart + fracPart).replace(/_/g, '');
    if (digits === '') return { value: 0, err: 'syntax' };
    const exp = Number((m[4] ?? '0').replace(/_/g, '')) - 4 * fracPart.replace(/_/g, '').length;
    const mant = Number(BigInt('0x' + digits));
    value = mant * 2 ** exp;
    if (!Number.isFinite(value) && mant !== 0 && exp < 0) value = 0;
    if (m[1] === '-') value = -value;
  }
  if (!Number.isFinite(value)) return { value, err: 'range' };
  return { value };
}

/** cast's trimZeroDecimal: "3.000" → "3" (only zeros after the point). */
function trimZeroDecimal(s: string): string {
  let foundZero = false;
  for (let i = s.length; i > 0; i--) {
    const c = s[i - 1];
    if (c === '.') {
      if (foundZero) return s.slice(0, i - 1);
    } else if (c === '0') foundZero = true;
    else return s;
  }
  return s;
}

/** Go's int64(f) on amd64: truncation; NaN and out-of-range values give math.MinInt64. */
export function floatToInt64(f: number): bigint {
  if (!Number.isFinite(f) || f >= 9223372036854775808 || f < -9223372036854775808) return INT64_MIN;
  return BigInt(Math.trunc(f));
}

/** cast.ToInt64 (errors give 0): ints, floats (truncated), numeric strings (base prefixes allowed), bools, nil. */
export function toInt64(v: GoValue): bigint {
  switch (typeof v) {
    case 'bigint':
      return int64(v);
    case 'number':
      return floatToInt64(v);
    case 'string': {
      const r = parseInt64(trimZeroDecimal(v), 0);
      return r.err ? 0n : r.value;
    }
    case 'boolean':
      return v ? 1n : 0n;
    default:
      return 0n;
  }
}

/** cast.ToFloat64 (errors give 0). */
export function toFloat64(v: GoValue): number {
  switch (typeof v) {
    case 'bigint':
      return Number(v);
    case 'number':
      return v;
    case 'string': {
      const r = parseFloat64(v);
      return r.err ? 0 : r.value;
    }
    case 'boolean':
      return v ? 1 : 0;
    default:
      return 0;
  }
}

/** sprig's strval: strings as they are, Stringers (opaque values) through String(), the rest with %v. */
export function strval(v: GoValue): string {
  if (typeof v === 'string') return v;
  if (v instanceof GoOpaque) return v.display();
  return formatValue(v);
}

/**
 * sprig's strslice: a []string as it is; other lists element by element with nil elements dropped; nil gives an
 * empty list; any other value a one-element list.
 */
export function strslice(v: GoValue): string[] {
  if (Array.isArray(v)) {
    const out: string[] = [];
    for (const e of v) if (e !== null) out.push(strval(e));
    return out;
  }
  if (v === null) return [];
  return [strval(v)];
}
