/**
 * The decimal arithmetic behind sprig's float functions (`addf`, `subf`, `mulf`, `divf`, `add1f`), which use
 * shopspring/decimal v1.2.0: each float is turned into its shortest decimal form, the operation is exact (division
 * rounds to 16 places, half away from zero) and the result is converted back to the nearest float. So
 * `addf 0.1 0.2` is 0.3, not 0.30000000000000004.
 */
import { FuncError } from '../types.js';

/** value × 10^exp. */
export interface Decimal {
  value: bigint;
  exp: number;
}

const DIVISION_PRECISION = 16;

function pow10(n: number): bigint {
  return 10n ** BigInt(n);
}

/** decimal.NewFromFloat: the shortest decimal that reads back as `f`; NaN and infinities panic as in Go. */
export function decimalFromFloat(f: number): Decimal {
  if (Number.isNaN(f) || !Number.isFinite(f)) {
    const text = Number.isNaN(f) ? 'NaN' : f > 0 ? '+Inf' : '-Inf';
    throw new FuncError(`Cannot create a Decimal from ${text}`, true);
  }
  if (f === 0) return { value: 0n, exp: 0 };
  const [mant = '0', e = '0'] = f.toExponential().split('e');
  const digits = mant.replace('.', '').replace('-', '');
  const fracDigits = mant.includes('.') ? (mant.split('.')[1] ?? '').length : 0;
  const value = BigInt(digits) * (f < 0 ? -1n : 1n);
  return { value, exp: Number(e) - fracDigits };
}

function rescale(a: Decimal, b: Decimal): [bigint, bigint, number] {
  if (a.exp === b.exp) return [a.value, b.value, a.exp];
  if (a.exp < b.exp) return [a.value, b.value * pow10(b.exp - a.exp), a.exp];
  return [a.value * pow10(a.exp - b.exp), b.value, b.exp];
}

/** d1 + d2. */
export function decimalAdd(a: Decimal, b: Decimal): Decimal {
  const [x, y, exp] = rescale(a, b);
  return { value: x + y, exp };
}

/** d1 - d2. */
export function decimalSub(a: Decimal, b: Decimal): Decimal {
  const [x, y, exp] = rescale(a, b);
  return { value: x - y, exp };
}

/** d1 × d2. */
export function decimalMul(a: Decimal, b: Decimal): Decimal {
  return { value: a.value * b.value, exp: a.exp + b.exp };
}

/** d1 / d2 to 16 decimal places, the last one rounded half away from zero; division by 0 panics as in Go. */
export function decimalDiv(a: Decimal, b: Decimal): Decimal {
  if (b.value === 0n) throw new FuncError('decimal division by 0', true);
  const scale = -DIVISION_PRECISION;
  const e = a.exp - b.exp - scale;
  let num: bigint;
  let den: bigint;
  if (e < 0) {
    num = a.value;
    den = b.value * pow10(-e);
  } else {
    num = a.value * pow10(e);
    den = b.value;
  }
  const q = num / den;
  const r = num % den;
  // Round away from zero when 2|r| >= |den|.
  const abs = (v: bigint): bigint => (v < 0n ? -v : v);
  if (2n * abs(r) < abs(den)) return { value: q, exp: scale };
  const negative = a.value < 0n !== b.value < 0n;
  return { value: negative ? q - 1n : q + 1n, exp: scale };
}

/** decimal.Float64: the float nearest to the decimal. */
export function decimalToFloat(d: Decimal): number {
  if (d.value === 0n) return 0;
  return Number(`${d.value}e${d.exp}`);
}
