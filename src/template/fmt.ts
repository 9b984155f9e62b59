/**
 * Go's fmt package for Go values: `%v` printing (`formatValue`), Sprintf with Go's verbs, flags, width, precision and
 * its in-band mistakes (`%!d(string=a)`, `%!s(MISSING)`, `%!(EXTRA int=2)`), Sprint and Sprintln.
 *
 * Strings are JS strings standing for UTF-8 text: widths and precisions count code points (Go counts runes), `%x`
 * encodes the UTF-8 bytes.
 */
import { formatFloat as strconvFormatFloat } from '../go-value/float-format.js';
import { INT64_MAX, newFlags, Printer } from './fmt-printer.js';
import { quoteGo as quoteString } from './quote.js';
import type { GoValue } from '../go-value/value.js';
import { goTypeName } from '../go-value/value.js';

export { canBackquote } from './quote.js';

/** strconv.Quote: a double-quoted Go string literal with Go's escapes. */
export function quoteGo(s: string): string {
  return quoteString(s);
}

/** strconv.FormatFloat(f, fmt, prec, 64); `prec` -1 gives the shortest round-trip digits. */
export function formatFloat(f: number, fmt: 'e' | 'f' | 'g', prec: number): string {
  return strconvFormatFloat(f, fmt, prec);
}

/** Go's `%v` of a value: `[a b]`, `map[a:1 b:2]` (sorted keys), `<nil>`, floats as strconv 'g' -1. */
export function formatValue(v: GoValue): string {
  switch (typeof v) {
    case 'string':
      return v;
    case 'bigint':
      return v.toString();
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      return strconvFormatFloat(v, 'g', -1);
    default: {
      const p = new Printer();
      p.printArg(v, 'v', 0);
      return p.out;
    }
  }
}

/** Parse a decimal number in `format` from `i`; Go caps it at 1e6 (larger is treated as no number). */
function parseNum(format: string, start: number, end: number): { num: number; isNum: boolean; next: number } {
  if (start >= end) return { num: 0, isNum: false, next: end };
  let num = 0;
  let isNum = false;
  let i = start;
  for (; i < end; i++) {
    const c = format.charCodeAt(i);
    if (c < 48 || c > 57) break;
    if (num > 1e6 || num < -1e6) return { num: 0, isNum: false, next: end };
    num = num * 10 + (c - 48);
    isNum = true;
  }
  return { num, isNum, next: i };
}

/** fmt's intFromArg: a `*` width or precision operand. */
function intFromArg(a: readonly GoValue[], argNum: number): { num: number; isInt: boolean; next: number } {
  let num = 0;
  let isInt = false;
  let next = argNum;
  if (argNum < a.length) {
    const v = a[argNum];
    if (typeof v === 'bigint' && v <= INT64_MAX && v >= -INT64_MAX - 1n) {
      num = Number(v);
      isInt = true;
    }
    next = argNum + 1;
    if (num > 1e6 || num < -1e6) {
      num = 0;
      isInt = false;
    }
  }
  return { num, isInt, next };
}

/** Go's fmt.Sprintf. */
export function sprintf(format: string, args: readonly GoValue[]): string {
  const p = new Printer();
  const end = format.length;
  let argNum = 0;
  let reordered = false;
  // Whether every argument index of the current verb was valid (Go's goodArgNum).
  let goodArgNum: boolean;

  const argNumber = (argN: number, i: number): { argNum: number; i: number; found: boolean } => {
    if (end <= i || format[i] !== '[') return { argNum: argN, i, found: false };
    reordered = true;
    // parseArgNumber
    let index = 0;
    let wid = 1;
    let ok = false;
    if (end - i >= 3) {
      for (let j = i + 1; j < end; j++) {
        if (format[j] === ']') {
          const n = parseNum(format, i + 1, j);
          if (!n.isNum || n.next !== j) {
            index = 0;
            wid = j - i + 1;
            ok = false;
          } else {
            index = n.num - 1;
            wid = j - i + 1;
            ok = true;
          }
          break;
        }
      }
    }
    if (ok && index >= 0 && index < args.length) return { argNum: index, i: i + wid, found: true };
    goodArgNum = false;
    return { argNum: argN, i: i + wid, found: ok };
  };

  for (let i = 0; i < end;) {
    goodArgNum = true;
    const lasti = i;
    while (i < end && format[i] !== '%') i++;
    if (i > lasti) p.out += format.slice(lasti, i);
    if (i >= end) break;
    i++;
    p.f = newFlags();
    const f = p.f;
    let simpleDone = false;
    for (; i < end; i++) {
      const c = format[i] ?? '';
      if (c === '#') f.sharp = true;
      else if (c === '0') f.zero = !f.minus;
      else if (c === '+') f.plus = true;
      else if (c === '-') {
        f.minus = true;
        f.zero = false;
      } else if (c === ' ') f.space = true;
      else {
        if (c >= 'a' && c <= 'z' && argNum < args.length) {
          if (c === 'v') {
            f.sharpV = f.sharp;
            f.sharp = false;
            f.plusV = f.plus;
            f.plus = false;
          }
          p.printArg(args[argNum] ?? null, c, 0);
          argNum++;
          i++;
          simpleDone = true;
        }
        break;
      }
    }
    if (simpleDone) continue;

    let r = argNumber(argNum, i);
    argNum = r.argNum;
    i = r.i;
    let afterIndex = r.found;

    if (i < end && format[i] === '*') {
      i++;
      const w = intFromArg(args, argNum);
      f.wid = w.num;
      f.widPresent = w.isInt;
      argNum = w.next;
      if (!f.widPresent) p.out += '%!(BADWIDTH)';
      if (f.wid < 0) {
        f.wid = -f.wid;
        f.minus = true;
        f.zero = false;
      }
      afterIndex = false;
    } else {
      const n = parseNum(format, i, end);
      f.wid = n.num;
      f.widPresent = n.isNum;
      i = n.next;
      if (afterIndex && f.widPresent) goodArgNum = false;
    }

    if (i + 1 < end && format[i] === '.') {
      i++;
      if (afterIndex) goodArgNum = false;
      r = argNumber(argNum, i);
      argNum = r.argNum;
      i = r.i;
      afterIndex = r.found;
      if (i < end && format[i] === '*') {
        i++;
        const w = intFromArg(args, argNum);
        f.prec = w.num;
        f.precPresent = w.isInt;
        argNum = w.next;
        if (f.prec < 0) {
          f.prec = 0;
          f.precPresent = false;
        }
        if (!f.precPresent) p.out += '%!(BADPREC)';
        afterIndex = false;
      } else {
        const n = parseNum(format, i, end);
        f.prec = n.num;
        f.precPresent = n.isNum;
        i = n.next;
        if (!f.precPresent) {
          f.prec = 0;
          f.precPresent = true;
        }
      }
    }

    if (!afterIndex) {
      r = argNumber(argNum, i);
      argNum = r.argNum;
      i = r.i;
    }

    if (i >= end) {
      p.out += '%!(NOVERB)';
      break;
    }

    const cp = format.codePointAt(i) ?? 0;
    const verb = String.fromCodePoint(cp);
    i += verb.length;

    if (verb === '%') p.out += '%';
    else if (!goodArgNum) p.out += `%!${verb}(BADINDEX)`;
    else if (argNum >= args.length) p.out += `%!${verb}(MISSING)`;
    else {
      if (verb === 'v') {
        f.sharpV = f.sharp;
        f.sharp = false;
        f.plusV = f.plus;
        f.plus = false;
      }
      p.printArg(args[argNum] ?? null, verb, 0);
      argNum++;
    }
  }

  if (!reordered && argNum < args.length) {
    p.f = newFlags();
    p.out += '%!(EXTRA ';
    args.slice(argNum).forEach((arg, i) => {
      if (i > 0) p.out += ', ';
      if (arg === null) p.out += '<nil>';
      else {
        p.out += goTypeName(arg) + '=';
        p.printArg(arg, 'v', 0);
      }
    });
    p.out += ')';
  }
  return p.out;
}

/** Go's fmt.Sprint: operands separated by a space when neither neighbour is a string. */
export function sprint(args: readonly GoValue[]): string {
  let out = '';
  let prevString = false;
  args.forEach((arg, i) => {
    const isString = typeof arg === 'string';
    if (i > 0 && !isString && !prevString) out += ' ';
    out += formatValue(arg === undefined ? null : arg);
    prevString = isString;
  });
  return out;
}

/** Go's fmt.Sprintln: operands always separated by a space, and a trailing newline. */
export function sprintln(args: readonly GoValue[]): string {
  return args.map((a) => formatValue(a)).join(' ') + '\n';
}
