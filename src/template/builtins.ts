/**
 * text/template's builtin functions (and, or, not, len, index, slice, print, printf, println, eq, ne, lt, le, gt,
 * ge, html, js, urlquery, call) with Go's semantics and error texts. A FuncMap entry of the same name overrides a
 * builtin. Builtins see executor values: `INVALID` (a missing value) and `null` (a nil interface) stay distinct.
 */
import type { Val } from './exec-value.js';
import { INVALID } from './exec-value.js';
import { sprint, sprintf, sprintln } from './fmt.js';
import { compareStrings } from './map-order.js';
import { isPrintRune } from './quote.js';
import type { GoType } from './types.js';
import { FuncError } from './types.js';
import type { GoValue } from '../go-value/value.js';
import { GoIfaceMap, GoOpaque, goTypeName, isTrue, tagType } from '../go-value/value.js';

/** A builtin: its Go signature (for arity and argument checks) and implementation. */
export interface Builtin {
  readonly params: readonly GoType[];
  readonly variadic?: GoType;
  readonly call: (args: Val[]) => Val;
}

const RV = 'reflect.Value';
const IFACE = 'interface {}';
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/** Go's truth of a reflect.Value argument (nil and missing are false). */
export function truth(v: Val): boolean {
  return v !== INVALID && isTrue(v);
}

/** Type name of a non-nil value as reflect prints it after indirection (pointers lose their `*`). */
function indirectTypeName(v: GoValue): string {
  if (v instanceof GoOpaque) return v.goType.replace(/^\*/, '');
  return goTypeName(v);
}

/** Argument `i` of a builtin (INVALID when absent; a nil `null` stays nil). */
function argAt(args: readonly Val[], i: number): Val {
  const v = args[i];
  return v === undefined ? INVALID : v;
}

function indexArg(index: Val, cap: number): number {
  if (index === INVALID || index === null) throw new FuncError('cannot index slice/array with nil');
  if (typeof index !== 'bigint') throw new FuncError(`cannot index slice/array with type ${goTypeName(index)}`);
  if (index < 0n || index > BigInt(cap)) throw new FuncError(`index out of range: ${index}`);
  return Number(index);
}

function mapKeyFor(item: Record<string, GoValue>, index: Val): string {
  if (index === INVALID || index === null) throw new FuncError('value is nil; should be of type string');
  if (typeof index !== 'string') throw new FuncError(`value has type ${goTypeName(index)}; should be string`);
  void item;
  return index;
}

function zeroOfMapElem(typeName: string): GoValue {
  const m = /^map\[[^\]]*\](.*)$/.exec(typeName);
  const elem = m?.[1] ?? IFACE;
  switch (elem) {
    case 'string':
      return '';
    case 'int':
    case 'int64':
      return 0n;
    case 'float64':
      return 0;
    case 'bool':
      return false;
    default:
      return null;
  }
}

function index(args: Val[]): Val {
  const first: Val = argAt(args, 0);
  if (first === null || first === INVALID) throw new FuncError('index of untyped nil');
  let item: GoValue = first;
  for (let i = 1; i < args.length; i++) {
    let idx: Val = argAt(args, i);
    if (idx === null) idx = INVALID;
    if (item === null) throw new FuncError('index of nil pointer');
    if (typeof item === 'string') {
      const bytes = encoder.encode(item);
      const x = indexArg(idx, bytes.length);
      if (x >= bytes.length) throw new FuncError('reflect: string index out of range');
      item = BigInt(bytes[x] ?? 0);
    } else if (Array.isArray(item)) {
      const x = indexArg(idx, item.length);
      if (x >= item.length) throw new FuncError('reflect: slice index out of range');
      item = item[x] ?? null;
    } else if (item instanceof GoIfaceMap) {
      const key = idx === INVALID ? null : idx;
      if (key !== null && typeof key === 'object' && !(key instanceof GoOpaque)) {
        throw new FuncError(`runtime error: hash of unhashable type ${goTypeName(key)}`);
      }
      item = item.has(key as never) ? (item.get(key as never) ?? null) : null;
    } else if (typeof item === 'object' && !(item instanceof GoOpaque)) {
      const key: string = mapKeyFor(item, idx);
      item = Object.prototype.hasOwnProperty.call(item, key) ? (item[key] ?? null) : zeroOfMapElem(goTypeName(item));
    } else {
      throw new FuncError(`can't index item of type ${indirectTypeName(item)}`);
    }
  }
  return item;
}

function slice(args: Val[]): Val {
  let item: Val = argAt(args, 0);
  if (item === null) item = INVALID;
  if (item === INVALID) throw new FuncError('slice of untyped nil');
  const indexes = args.slice(1);
  if (indexes.length > 3) throw new FuncError(`too many slice indexes: ${indexes.length}`);
  let len: number;
  let bytes: Uint8Array | null = null;
  if (typeof item === 'string') {
    if (indexes.length === 3) throw new FuncError('cannot 3-index slice a string');
    bytes = encoder.encode(item);
    len = bytes.length;
  } else if (Array.isArray(item)) len = item.length;
  else throw new FuncError(`can't slice item of type ${indirectTypeName(item)}`);
  const idx = [0, len, len];
  indexes.forEach((v, i) => (idx[i] = indexArg(v === null ? INVALID : v, len)));
  const [lo = 0, hi = len, max = len] = idx;
  if (lo > hi) throw new FuncError(`invalid slice index: ${lo} > ${hi}`);
  if (indexes.length === 3 && hi > max) throw new FuncError(`invalid slice index: ${hi} > ${max}`);
  if (bytes) return decoder.decode(bytes.subarray(lo, hi));
  const list = item as GoValue[];
  const out = list.slice(lo, hi);
  const type = goTypeName(list);
  return type === '[]interface {}' ? out : tagType(out, type);
}

function length(args: Val[]): Val {
  const item = argAt(args, 0);
  if (item === null) throw new FuncError('len of nil pointer');
  if (item === INVALID) throw new FuncError('reflect: call of reflect.Value.Type on zero Value');
  if (typeof item === 'string') return BigInt(encoder.encode(item).length);
  if (Array.isArray(item)) return BigInt(item.length);
  if (item instanceof Map) return BigInt(item.size);
  if (typeof item === 'object' && !(item instanceof GoOpaque)) return BigInt(Object.keys(item).length);
  throw new FuncError(`len of type ${indirectTypeName(item)}`);
}

type Kind = 'invalid' | 'bool' | 'int' | 'float' | 'string';

function basicKind(v: Val): Kind {
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'bigint':
      return 'int';
    case 'number':
      return 'float';
    case 'string':
      return 'string';
    default:
      return 'invalid';
  }
}

const errBadComparisonType = 'invalid type for comparison';
const errBadComparison = 'incompatible types for comparison';

function reflectKind(v: Val): string {
  if (v === INVALID || v === null) return 'invalid';
  if (Array.isArray(v)) return 'slice';
  if (v instanceof GoOpaque) return 'ptr';
  if (typeof v === 'object') return 'map';
  return typeof v;
}

function eq(args: Val[]): Val {
  const a1 = args[0] === null ? INVALID : argAt(args, 0);
  if (args.length < 2) throw new FuncError('missing argument for comparison');
  const k1 = basicKind(a1);
  for (let i = 1; i < args.length; i++) {
    const a = args[i] === null ? INVALID : argAt(args, i);
    const k2 = basicKind(a);
    let t = false;
    if (k1 !== k2) {
      if (a1 !== INVALID && a !== INVALID) throw new FuncError(errBadComparison);
    } else if (k1 !== 'invalid') {
      t = a1 === a;
    } else {
      const r1 = reflectKind(a1);
      const r2 = reflectKind(a);
      if (r1 !== r2 && r1 !== 'invalid' && r2 !== 'invalid') {
        const x = a1 as GoValue;
        const y = a as GoValue;
        throw new FuncError(sprintf('non-comparable types %s: %v, %s: %v', [x, goTypeName(x), goTypeName(y), y]));
      }
      if (a1 === INVALID || a === INVALID) t = a1 === a;
      else if (r2 === 'slice' || r2 === 'map') {
        throw new FuncError(sprintf('non-comparable type %s: %v', [a, goTypeName(a)]));
      } else t = a1 === a;
    }
    if (t) return true;
  }
  return false;
}

function lt(a1: Val, a2: Val): boolean {
  if (a1 === null) a1 = INVALID;
  if (a2 === null) a2 = INVALID;
  const k1 = basicKind(a1);
  if (k1 === 'invalid') throw new FuncError(errBadComparisonType);
  const k2 = basicKind(a2);
  if (k2 === 'invalid') throw new FuncError(errBadComparisonType);
  if (k1 !== k2) throw new FuncError(errBadComparison);
  switch (k1) {
    case 'bool':
      throw new FuncError(errBadComparisonType);
    case 'string':
      return compareStrings(a1 as string, a2 as string) < 0;
    default:
      return (a1 as number | bigint) < (a2 as number | bigint);
  }
}

function le(a1: Val, a2: Val): boolean {
  return lt(a1, a2) || (eq([a1, a2]) as boolean);
}

function toIface(args: Val[]): GoValue[] {
  return args.map((a) => (a === INVALID ? null : a));
}

/** Go's evalArgs for html/js/urlquery: one string as is, else Sprint with nil shown as `<no value>`. */
function evalArgs(args: Val[]): string {
  if (args.length === 1 && typeof args[0] === 'string') return args[0];
  return sprint(args.map((a) => (a === INVALID || a === null ? '<no value>' : a)));
}

/** Go's template.HTMLEscapeString. */
export function htmlEscape(s: string): string {
  return s.replace(/[\0"'&<>]/g, (c) => {
    switch (c) {
      case '\0':
        return '\uFFFD';
      case '"':
        return '&#34;';
      case "'":
        return '&#39;';
      case '&':
        return '&amp;';
      case '<':
        return '&lt;';
      default:
        return '&gt;';
    }
  });
}

/** Go's template.JSEscapeString. */
export function jsEscape(s: string): string {
  let out = '';
  for (const ch of s) {
    const r = ch.codePointAt(0) ?? 0;
    if (r >= 0x80) {
      out += isPrintRune(r) ? ch : `\\u${r.toString(16).toUpperCase().padStart(4, '0')}`;
      continue;
    }
    switch (ch) {
      case '\\':
        out += '\\\\';
        break;
      case "'":
        out += "\\'";
        break;
      case '"':
        out += '\\"';
        break;
      case '<':
        out += '\\u003C';
        break;
      case '>':
        out += '\\u003E';
        break;
      case '&':
        out += '\\u0026';
        break;
      case '=':
        out += '\\u003D';
        break;
      default:
        out += r < 0x20 ? `\\u00${r.toString(16).toUpperCase().padStart(2, '0')}` : ch;
    }
  }
  return out;
}

/** Go's url.QueryEscape. */
export function queryEscape(s: string): string {
  let out = '';
  for (const b of encoder.encode(s)) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (b === 0x20) out += '+';
    else out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

function cmp(f: (a: Val, b: Val) => boolean): (args: Val[]) => Val {
  return (args) => f(argAt(args, 0), argAt(args, 1));
}

/** The builtin functions by name. `and` and `or` are evaluated lazily by the executor; their `call` is unused. */
export const builtins: ReadonlyMap<string, Builtin> = new Map<string, Builtin>([
  ['and', { params: [RV], variadic: RV, call: () => INVALID }],
  ['or', { params: [RV], variadic: RV, call: () => INVALID }],
  ['not', { params: [RV], call: (a) => !truth(argAt(a, 0)) }],
  ['len', { params: [RV], call: length }],
  ['index', { params: [RV], variadic: RV, call: index }],
  ['slice', { params: [RV], variadic: RV, call: slice }],
  ['print', { params: [], variadic: IFACE, call: (a) => sprint(toIface(a)) }],
  ['printf', { params: ['string'], variadic: IFACE, call: (a) => sprintf(a[0] as string, toIface(a.slice(1))) }],
  ['println', { params: [], variadic: IFACE, call: (a) => sprintln(toIface(a)) }],
  ['eq', { params: [RV], variadic: RV, call: eq }],
  ['ne', { params: [RV, RV], call: (a) => !(eq(a) as boolean) }],
  ['lt', { params: [RV, RV], call: cmp(lt) }],
  ['le', { params: [RV, RV], call: cmp(le) }],
  ['gt', { params: [RV, RV], call: cmp((x, y) => !le(x, y)) }],
  ['ge', { params: [RV, RV], call: cmp((x, y) => !lt(x, y)) }],
  ['html', { params: [], variadic: IFACE, call: (a) => htmlEscape(evalArgs(a)) }],
  ['js', { params: [], variadic: IFACE, call: (a) => jsEscape(evalArgs(a)) }],
  ['urlquery', { params: [], variadic: IFACE, call: (a) => queryEscape(evalArgs(a)) }],
  [
    'call',
    {
      params: [RV],
      variadic: RV,
      call: (a) => {
        const fn = argAt(a, 0);
        if (fn === INVALID || fn === null) throw new FuncError('call of nil');
        throw new FuncError(`non-function of type ${goTypeName(fn)}`);
      },
    },
  ],
]);
