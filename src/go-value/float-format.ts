/**
 * strconv.FormatFloat(f, fmt, prec, 64) for the formats kapps templates use ('e', 'E', 'f', 'g', 'G', 'b', 'x',
 * 'X'). Shortest digits come from JS's own shortest round-trip conversion (the same digits Go picks); fixed
 * precisions round the exact binary value half-to-even, as Go does.
 */

/** Decimal digits of |f| (no leading zeros) with the decimal point after `dp` digits: value = 0.d1d2... × 10^dp. */
interface Decimal {
  digits: string;
  dp: number;
}

/** Shortest round-trip digits of a finite non-negative float. */
function shortestDecimal(f: number): Decimal {
  if (f === 0) return { digits: '', dp: 0 };
  const s = f.toExponential();
  const e = s.indexOf('e');
  const mant = s.slice(0, e).replace('.', '');
  const exp = Number(s.slice(e + 1));
  return { digits: mant.replace(/0+$/, ''), dp: exp + 1 };
}

const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);

/** The mantissa and binary exponent of a finite non-negative float: f = mant × 2^exp. */
function decompose(f: number): { mant: bigint; exp: number } {
  f64[0] = f;
  const bits = u64[0] ?? 0n;
  const biased = Number((bits >> 52n) & 0x7ffn);
  const frac = bits & ((1n << 52n) - 1n);
  if (biased === 0) return { mant: frac, exp: -1074 };
  return { mant: frac | (1n << 52n), exp: biased - 1075 };
}

/** The exact decimal expansion of a finite non-negative float. */
function exactDecimal(f: number): Decimal {
  if (f === 0) return { digits: '', dp: 0 };
  const { mant, exp } = decompose(f);
  let digits: string;
  let dp: number;
  if (exp >= 0) {
    digits = (mant << BigInt(exp)).toString();
    dp = digits.length;
  } else {
    const k = -exp;
    digits = (mant * 5n ** BigInt(k)).toString();
    dp = digits.length - k;
  }
  const trimmed = digits.replace(/0+$/, '');
  const lead = trimmed.length - trimmed.replace(/^0+/, '').length;
  return { digits: trimmed.slice(lead), dp: dp - lead };
}

/** Round an exact decimal to `nd` significant digits, half to even (Go's decimal.Round). */
function roundTo(d: Decimal, nd: number): Decimal {
  if (nd < 0) return { digits: '', dp: 0 };
  if (nd >= d.digits.length) return d;
  const next = d.digits.charCodeAt(nd) - 48;
  let up: boolean;
  if (next > 5) up = true;
  else if (next < 5) up = false;
  else if (nd + 1 < d.digits.length) up = true;
  else up = nd > 0 && (d.digits.charCodeAt(nd - 1) - 48) % 2 === 1;
  let kept = d.digits.slice(0, nd);
  if (!up) return { digits: kept.replace(/0+$/, ''), dp: kept.length === 0 ? 0 : d.dp };
  // Propagate the carry.
  let i = kept.length - 1;
  while (i >= 0 && kept[i] === '9') i--;
  if (i < 0) return { digits: '1', dp: d.dp + 1 };
  kept = kept.slice(0, i) + String.fromCharCode(kept.charCodeAt(i) + 1);
  return { digits: kept, dp: d.dp };
}

function fmtE(neg: boolean, d: Decimal, prec: number, ch: string): string {
  let out = neg ? '-' : '';
  out += d.digits.length ? d.digits[0] : '0';
  if (prec > 0) {
    out += '.';
    const frac = d.digits.slice(1, prec + 1);
    out += frac + '0'.repeat(prec - frac.length);
  }
  let exp = d.digits.length === 0 ? 0 : d.dp - 1;
  out += ch;
  if (exp < 0) {
    out += '-';
    exp = -exp;
  } else out += '+';
  out += exp < 10 ? `0${exp}` : String(exp);
  return out;
}

function fmtF(neg: boolean, d: Decimal, prec: number): string {
  let out = neg ? '-' : '';
  if (d.dp > 0) {
    const m = Math.min(d.digits.length, d.dp);
    out += d.digits.slice(0, m) + '0'.repeat(d.dp - m);
  } else out += '0';
  if (prec > 0) {
    out += '.';
    for (let i = 0; i < prec; i++) {
      const j = d.dp + i;
      out += j >= 0 && j < d.digits.length ? d.digits[j] : '0';
    }
  }
  return out;
}

/** %b: decimal mantissa "p" binary exponent, e.g. 4503599627370496p-52. */
function fmtB(neg: boolean, f: number): string {
  f64[0] = f;
  const bits = u64[0] ?? 0n;
  let exp = Number((bits >> 52n) & 0x7ffn);
  let mant = bits & ((1n << 52n) - 1n);
  if (exp === 0) exp++;
  else mant |= 1n << 52n;
  exp -= 1075;
  return `${neg ? '-' : ''}${mant}p${exp >= 0 ? '+' : ''}${exp}`;
}

/** %x / %X: hexadecimal mantissa and binary exponent, e.g. 0x1.8p+01. */
function fmtX(neg: boolean, f: number, prec: number, ch: 'x' | 'X'): string {
  let { mant, exp } = f === 0 ? { mant: 0n, exp: 0 } : decompose(f);
  // Normalise so the leading 1 is at bit 60 (exp is then the exponent of that bit).
  const bit60 = 1n << 60n;
  if (mant !== 0n) {
    mant <<= 8n;
    exp += 52;
    while ((mant & bit60) === 0n) {
      mant <<= 1n;
      exp--;
    }
  }
  const mask60 = bit60 - 1n;
  if (prec >= 0 && prec < 15) {
    const shift = BigInt(prec * 4);
    const extra = (mant << shift) & mask60;
    mant >>= 60n - shift;
    if ((extra | (mant & 1n)) > 1n << 59n) mant++;
    mant <<= 60n - shift;
    if ((mant & (1n << 61n)) !== 0n) {
      mant >>= 1n;
      exp++;
    }
  }
  const hex = ch === 'X' ? '0123456789ABCDEF' : '0123456789abcdef';
  let out = `${neg ? '-' : ''}0${ch}${(mant >> 60n) & 1n}`;
  mant = (mant << 4n) & ((1n << 64n) - 1n);
  const mask64 = (1n << 64n) - 1n;
  if (prec < 0 && mant !== 0n) {
    out += '.';
    while (mant !== 0n) {
      out += hex[Number((mant >> 60n) & 15n)];
      mant = (mant << 4n) & mask64;
    }
  } else if (prec > 0) {
    out += '.';
    for (let i = 0; i < prec; i++) {
      out += hex[Number((mant >> 60n) & 15n)];
      mant = (mant << 4n) & mask64;
    }
  }
  out += ch === 'X' ? 'P' : 'p';
  let e = mant === 0n && f === 0 ? 0 : exp;
  out += e < 0 ? '-' : '+';
  e = Math.abs(e);
  out += e < 10 ? `0${e}` : String(e);
  return out;
}

/** A float format letter accepted by `formatFloat`. */
export type FloatFormat = 'e' | 'E' | 'f' | 'g' | 'G' | 'b' | 'x' | 'X';

/**
 * strconv.FormatFloat(f, fmt, prec, 64): `prec` -1 means the shortest digits that round-trip. Special values print
 * as `+Inf`, `-Inf`, `NaN`.
 */
export function formatFloat(f: number, fmt: FloatFormat, prec: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return '+Inf';
  if (f === -Infinity) return '-Inf';
  const neg = f < 0 || Object.is(f, -0);
  const a = Math.abs(f);
  if (fmt === 'b') return fmtB(neg, a);
  if (fmt === 'x' || fmt === 'X') return fmtX(neg, a, prec, fmt);
  const shortest = prec < 0;
  let d: Decimal;
  if (shortest) {
    d = shortestDecimal(a);
    if (fmt === 'e' || fmt === 'E') prec = Math.max(d.digits.length - 1, 0);
    else if (fmt === 'f') prec = Math.max(d.digits.length - d.dp, 0);
    else prec = d.digits.length;
  } else {
    const exact = exactDecimal(a);
    if (fmt === 'e' || fmt === 'E') d = roundTo(exact, prec + 1);
    else if (fmt === 'f') d = roundTo(exact, exact.dp + prec);
    else {
      if (prec === 0) prec = 1;
      d = roundTo(exact, prec);
    }
  }
  switch (fmt) {
    case 'e':
    case 'E':
      return fmtE(neg, d, prec, fmt);
    case 'f':
      return fmtF(neg, d, prec);
    default: {
      let eprec = prec;
      const nd = d.digits.length;
      if (eprec > nd && nd >= d.dp) eprec = nd;
      if (shortest) eprec = 6;
      const exp = d.dp - 1;
      if (exp < -4 || exp >= eprec) {
        if (prec > nd) prec = nd;
        return fmtE(neg, d, prec - 1, fmt === 'g' ? 'e' : 'E');
      }
      if (prec > d.dp) prec = nd;
      return fmtF(neg, d, Math.max(prec - d.dp, 0));
    }
  }
}
