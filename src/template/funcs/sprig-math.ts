/**
 * sprig v3.2.3's numbers: integer math converts every operand to int64 first (`add 1 2.9` is 3, `add "1" "2"` is
 * 3) and wraps on overflow; float math goes through decimals (see decimal.ts); conversions follow spf13/cast.
 *
 * Go's integer math returns int64, which `printf "%T"` shows as `int64`; kapps represents every Go integer as
 * bigint, so those results show as `int`.
 */
import type * as Crypto from 'node:crypto';
import { formatValue } from '../fmt.js';
import { checkListSize, MAX_LIST_ITEMS } from '../limits.js';
import { FuncError } from '../types.js';
import type { GoValue } from '../../go-value/value.js';
import { tagType } from '../../go-value/value.js';
import { ANY, def, type FuncTable, int, str, variadic } from './define.js';
import type { Decimal } from './decimal.js';
import { decimalAdd, decimalDiv, decimalFromFloat, decimalMul, decimalSub, decimalToFloat } from './decimal.js';
import { atoi, int64, parseInt64, toFloat64, toInt64 } from './go-convert.js';

const I = 'int';
const DIVIDE_BY_ZERO = 'runtime error: integer divide by zero';

/** node:crypto, loaded by the first function that needs it, not with the module (milliseconds of every command). */
const crypto = (): typeof Crypto => process.getBuiltinModule('node:crypto');

/** The number of items of untilStep(start, stop, step), checked against the list limit before building. */
function checkStepCount(start: bigint, stop: bigint, step: bigint): void {
  if (step === 0n || (stop - start) * step <= 0n) return;
  const span = stop > start ? stop - start : start - stop;
  const by = step > 0n ? step : -step;
  checkListSize((span + by - 1n) / by);
}

/** Append, within the list limit (a step that wraps around int64 would otherwise never end). */
function push(v: bigint[], i: bigint): void {
  if (v.length >= MAX_LIST_ITEMS) checkListSize(v.length + 1);
  v.push(i);
}

/** sprig's untilStep: a []int from start towards stop (exclusive) by step; a wrong-signed step gives []. */
function untilStep(start: bigint, stop: bigint, step: bigint): bigint[] {
  const v: bigint[] = [];
  checkStepCount(start, stop, step);
  if (stop < start) {
    if (step >= 0n) return v;
    for (let i = start; i > stop; i = int64(i + step)) push(v, i);
    return v;
  }
  if (step <= 0n) return v;
  for (let i = start; i < stop; i = int64(i + step)) push(v, i);
  return v;
}

function intList(items: bigint[]): GoValue {
  return tagType(items as GoValue[], '[]int');
}

/** sprig's seq: like the shell's `seq`, as one space-separated string. */
function seq(params: readonly bigint[]): string {
  const join = (l: bigint[]): string => l.join(' ');
  switch (params.length) {
    case 1: {
      const end = params[0] ?? 0n;
      const inc = end < 1n ? -1n : 1n;
      return join(untilStep(1n, end + inc, inc));
    }
    case 2: {
      const [start = 0n, end = 0n] = params;
      const step = end < start ? -1n : 1n;
      return join(untilStep(start, end + step, step));
    }
    case 3: {
      const [start = 0n, step = 0n, end = 0n] = params;
      let inc = 1n;
      if (end < start) {
        inc = -1n;
        if (step > 0n) return '';
      }
      return join(untilStep(start, end + inc, step));
    }
    default:
      return '';
  }
}

/** x × 2^e without intermediate overflow (math.Ldexp for the ranges used here). */
function ldexp(x: number, e: number): number {
  let r = x;
  while (e > 1000) {
    r *= 2 ** 1000;
    e -= 1000;
  }
  while (e < -1000) {
    r *= 2 ** -1000;
    e += 1000;
  }
  return r * 2 ** e;
}

/**
 * Go's math.Pow(10, y) for an integer y, by Go's repeated squaring on the mantissa (Math.pow differs in the last
 * bit for some exponents: JavaScript gives 10^-5 as 0.000009999999999999999, Go as 1e-05).
 */
function pow10(y: bigint): number {
  if (y === 0n) return 1;
  const abs = y < 0n ? -y : y;
  if (abs >= 1n << 63n) return y > 0n ? Infinity : 0;
  let a1 = 1;
  let ae = 0;
  let x1 = 0.625; // frexp(10) = 0.625 × 2^4
  let xe = 4;
  for (let i = abs; i !== 0n; i >>= 1n) {
    if (xe < -(1 << 12) || 1 << 12 < xe) {
      // Catastrophic overflow: the result is 0 or infinite.
      ae += xe;
      break;
    }
    if ((i & 1n) === 1n) {
      a1 *= x1;
      ae += xe;
    }
    x1 *= x1;
    xe <<= 1;
    if (x1 < 0.5) {
      x1 += x1;
      xe--;
    }
  }
  if (y < 0n) {
    a1 = 1 / a1;
    ae = -ae;
  }
  return ldexp(a1, ae);
}

/** sprig's round: away from zero at `roundOn` (0.5 by default) of the digit after `places` decimals. */
function round(a: GoValue, places: bigint, roundOn: number): number {
  const val = toFloat64(a);
  const pow = pow10(places);
  const digit = pow * val;
  const frac = digit - Math.trunc(digit);
  const r = frac >= roundOn ? Math.ceil(digit) : Math.floor(digit);
  return r / pow;
}

function decimalOp(first: GoValue, rest: readonly GoValue[], op: (a: Decimal, b: Decimal) => Decimal): number {
  let acc = decimalFromFloat(toFloat64(first));
  for (const x of rest) acc = op(acc, decimalFromFloat(toFloat64(x)));
  return decimalToFloat(acc);
}

/** sprig's math and number-conversion functions by name. */
export function mathFuncs(): FuncTable {
  const intMax = (a: GoValue[], pick: (x: bigint, y: bigint) => boolean): bigint => {
    let acc = toInt64(a[0] ?? null);
    for (let i = 1; i < a.length; i++) {
      const b = toInt64(a[i] ?? null);
      if (pick(b, acc)) acc = b;
    }
    return acc;
  };
  const floatFold = (a: GoValue[], f: (x: number, y: number) => number): number => {
    let acc = toFloat64(a[0] ?? null);
    for (let i = 1; i < a.length; i++) acc = f(acc, toFloat64(a[i] ?? null));
    return acc;
  };
  return {
    add1: def([ANY], (a) => int64(toInt64(a[0] ?? null) + 1n)),
    add: variadic([], ANY, (a) => a.reduce<bigint>((acc, v) => int64(acc + toInt64(v)), 0n)),
    sub: def([ANY, ANY], (a) => int64(toInt64(a[0] ?? null) - toInt64(a[1] ?? null))),
    div: def([ANY, ANY], (a) => {
      const d = toInt64(a[1] ?? null);
      if (d === 0n) throw new FuncError(DIVIDE_BY_ZERO, true);
      return int64(toInt64(a[0] ?? null) / d);
    }),
    mod: def([ANY, ANY], (a) => {
      const d = toInt64(a[1] ?? null);
      if (d === 0n) throw new FuncError(DIVIDE_BY_ZERO, true);
      return int64(toInt64(a[0] ?? null) % d);
    }),
    mul: variadic([ANY], ANY, (a) =>
      a.slice(1).reduce<bigint>((acc, v) => int64(acc * toInt64(v)), toInt64(a[0] ?? null)),
    ),
    randInt: def([I, I], (a) => {
      const n = int(a, 1) - int(a, 0);
      if (n <= 0n) throw new FuncError('invalid argument to Intn', true);
      // crypto.randomInt takes ranges below 2^48; beyond that a float draw is good enough for a template.
      const r =
        n < 0xffffffffffffn ? BigInt(crypto().randomInt(Number(n))) : BigInt(Math.floor(Math.random() * Number(n)));
      return int(a, 0) + r;
    }),
    add1f: def([ANY], (a) => decimalOp(a[0] ?? null, [1n], decimalAdd)),
    addf: variadic([], ANY, (a) => decimalOp(0, a, decimalAdd)),
    subf: variadic([ANY], ANY, (a) => decimalOp(a[0] ?? null, a.slice(1), decimalSub)),
    mulf: variadic([ANY], ANY, (a) => decimalOp(a[0] ?? null, a.slice(1), decimalMul)),
    divf: variadic([ANY], ANY, (a) => decimalOp(a[0] ?? null, a.slice(1), decimalDiv)),
    biggest: variadic([ANY], ANY, (a) => intMax(a, (x, y) => x > y)),
    max: variadic([ANY], ANY, (a) => intMax(a, (x, y) => x > y)),
    min: variadic([ANY], ANY, (a) => intMax(a, (x, y) => x < y)),
    maxf: variadic([ANY], ANY, (a) => floatFold(a, Math.max)),
    minf: variadic([ANY], ANY, (a) => floatFold(a, Math.min)),
    ceil: def([ANY], (a) => Math.ceil(toFloat64(a[0] ?? null))),
    floor: def([ANY], (a) => Math.floor(toFloat64(a[0] ?? null))),
    round: variadic([ANY, I], 'float64', (a) => {
      const opt = a[2];
      return round(a[0] ?? null, int(a, 1), typeof opt === 'number' ? opt : 0.5);
    }),
    until: def([I], (a) => {
      const count = int(a, 0);
      return intList(untilStep(0n, count, count < 0n ? -1n : 1n));
    }),
    untilStep: def([I, I, I], (a) => intList(untilStep(int(a, 0), int(a, 1), int(a, 2)))),
    seq: variadic([], I, (a) => seq(a.map((v) => (typeof v === 'bigint' ? v : 0n)))),
    atoi: def(['string'], (a) => atoi(str(a, 0)).value),
    int64: def([ANY], (a) => toInt64(a[0] ?? null)),
    int: def([ANY], (a) => toInt64(a[0] ?? null)),
    float64: def([ANY], (a) => toFloat64(a[0] ?? null)),
    toDecimal: def([ANY], (a) => {
      const r = parseInt64(formatValue(a[0] ?? null), 8);
      return r.err ? 0n : r.value;
    }),
  };
}
