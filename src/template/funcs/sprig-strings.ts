/**
 * sprig v3.2.3's string functions. Note sprig's argument order: the subject string comes last, so that
 * `"foobar" | contains "foo"` reads naturally.
 */
import { formatValue, quoteGo } from '../fmt.js';
import { checkResultSize } from '../limits.js';
import { FuncError } from '../types.js';
import type { GoValue } from '../../go-value/value.js';
import { goTypeName, newGoMap, tagType } from '../../go-value/value.js';
import { ANY, def, type FuncTable, int, intNum, str, stringList, variadic } from './define.js';
import { strslice, strval } from './go-convert.js';
import { byteLength, byteSlice, compareGoStrings } from './go-string.js';
import { replaceAll, splitN, trimCutset, trimSpace } from './go-strings.js';
import { goToLower, goToUpper } from './go-unicode.js';
import { abbreviateFull, deleteWhiteSpace, initials, wrapCustom } from './text-bytes.js';
import { goTitle, swapCase, toCamelCase, toKebabCase, toSnakeCase, uncapitalize } from './text-case.js';
import { kindOf } from './go-reflect.js';

const S = 'string';
const I = 'int';

/** strings.Repeat, with Go's panic for a negative count. */
function repeat(s: string, count: bigint): string {
  if (count < 0n) throw new FuncError('strings: negative Repeat count', true);
  checkResultSize(BigInt(s.length) * count);
  return s.repeat(Number(count));
}

/** Go's panic text for s[lo:hi] out of range on a string of `len` bytes. */
function sliceBoundsPanic(lo: number | null, hi: number | null, len: number): FuncError {
  let msg: string;
  // Go leaves out the length when the offending bound is negative.
  if (lo === null) msg = `slice bounds out of range [:${hi ?? 0}]${(hi ?? 0) < 0 ? '' : ` with length ${len}`}`;
  else if (hi === null) msg = `slice bounds out of range [${lo}:${len}]`;
  else msg = `slice bounds out of range [${lo}:${hi}]`;
  return new FuncError(`runtime error: ${msg}`, true);
}

/** sprig's substring: byte offsets; start < 0 means s[:end], end < 0 or past the end means s[start:]. */
function substring(start: number, end: number, s: string): string {
  const len = byteLength(s);
  if (start < 0) {
    if (end < 0 || end > len) throw sliceBoundsPanic(null, end, len);
    return byteSlice(s, 0, end);
  }
  if (end < 0 || end > len) {
    if (start > len) throw sliceBoundsPanic(start, null, len);
    return byteSlice(s, start);
  }
  if (start > end) throw sliceBoundsPanic(start, end, len);
  return byteSlice(s, start, end);
}

/** sprig's trunc: keep the first c bytes, or with c < 0 the last -c bytes. */
function trunc(c: number, s: string): string {
  const len = byteLength(s);
  if (c < 0 && len + c > 0) return byteSlice(s, len + c);
  if (c >= 0 && len > c) return byteSlice(s, 0, c);
  return s;
}

function indent(spaces: bigint, v: string): string {
  if (spaces > 0n) checkResultSize(BigInt(v.length) + spaces * BigInt(v.split('\n').length));
  const pad = repeat(' ', spaces);
  return pad + replaceAll(v, '\n', '\n' + pad);
}

/** sprig's split/splitn result: map[string]string with keys _0, _1, ... */
function indexedMap(parts: readonly string[]): GoValue {
  const m = newGoMap();
  parts.forEach((p, i) => (m[`_${i}`] = p));
  return tagType(m, 'map[string]string');
}

function quoteAll(args: readonly GoValue[], quote: (v: GoValue) => string): string {
  const out: string[] = [];
  for (const a of args) if (a !== null) out.push(quote(a));
  return out.join(' ');
}

function isStringList(v: GoValue): v is GoValue[] {
  return Array.isArray(v) && goTypeName(v) === '[]string';
}

/** sprig's string functions by name. */
export function stringFuncs(): FuncTable {
  return {
    hello: def([], () => 'Hello!'),
    trim: def([S], (a) => trimSpace(str(a, 0))),
    trimAll: def([S, S], (a) => trimCutset(str(a, 1), str(a, 0))),
    trimall: def([S, S], (a) => trimCutset(str(a, 1), str(a, 0))),
    trimSuffix: def([S, S], (a) => {
      const suffix = str(a, 0);
      const s = str(a, 1);
      return suffix !== '' && s.endsWith(suffix) ? s.slice(0, s.length - suffix.length) : s;
    }),
    trimPrefix: def([S, S], (a) => {
      const prefix = str(a, 0);
      const s = str(a, 1);
      return s.startsWith(prefix) ? s.slice(prefix.length) : s;
    }),
    upper: def([S], (a) => goToUpper(str(a, 0))),
    lower: def([S], (a) => goToLower(str(a, 0))),
    title: def([S], (a) => goTitle(str(a, 0))),
    untitle: def([S], (a) => uncapitalize(str(a, 0))),
    substr: def([I, I, S], (a) => substring(intNum(a, 0), intNum(a, 1), str(a, 2))),
    repeat: def([I, S], (a) => repeat(str(a, 1), int(a, 0))),
    nospace: def([S], (a) => deleteWhiteSpace(str(a, 0))),
    initials: def([S], (a) => initials(str(a, 0))),
    swapcase: def([S], (a) => swapCase(str(a, 0))),
    snakecase: def([S], (a) => toSnakeCase(str(a, 0))),
    camelcase: def([S], (a) => toCamelCase(str(a, 0))),
    kebabcase: def([S], (a) => toKebabCase(str(a, 0))),
    wrap: def([I, S], (a) => wrapCustom(str(a, 1), intNum(a, 0), '', false)),
    wrapWith: def([I, S, S], (a) => wrapCustom(str(a, 2), intNum(a, 0), str(a, 1), true)),
    contains: def([S, S], (a) => str(a, 1).includes(str(a, 0))),
    hasPrefix: def([S, S], (a) => str(a, 1).startsWith(str(a, 0))),
    hasSuffix: def([S, S], (a) => str(a, 1).endsWith(str(a, 0))),
    quote: variadic([], ANY, (a) => quoteAll(a, (v) => quoteGo(strval(v)))),
    squote: variadic([], ANY, (a) => quoteAll(a, (v) => `'${formatValue(v)}'`)),
    cat: variadic([], ANY, (a) =>
      a
        .filter((v) => v !== null)
        .map(formatValue)
        .join(' '),
    ),
    indent: def([I, S], (a) => indent(int(a, 0), str(a, 1))),
    nindent: def([I, S], (a) => '\n' + indent(int(a, 0), str(a, 1))),
    replace: def([S, S, S], (a) => replaceAll(str(a, 2), str(a, 0), str(a, 1))),
    plural: def([S, S, I], (a) => (int(a, 2) === 1n ? str(a, 0) : str(a, 1))),
    abbrev: def([I, S], (a) => {
      const width = intNum(a, 0);
      return width < 4 ? str(a, 1) : abbreviateFull(str(a, 1), 0, width);
    }),
    abbrevboth: def([I, I, S], (a) => {
      const left = intNum(a, 0);
      const right = intNum(a, 1);
      if (right < 4 || (left > 0 && right < 7)) return str(a, 2);
      return abbreviateFull(str(a, 2), left, right);
    }),
    trunc: def([I, S], (a) => trunc(intNum(a, 0), str(a, 1))),
    toString: def([ANY], (a) => strval(a[0] ?? null)),
    toStrings: def([ANY], (a) => {
      const v = a[0] ?? null;
      // A []string comes back as the same list (sortAlpha of it then sorts both, as in Go).
      return isStringList(v) ? v : stringList(strslice(v));
    }),
    join: def([S, ANY], (a) => {
      const parts = strslice(a[1] ?? null);
      const sep = str(a, 0);
      checkResultSize(parts.reduce((n, p) => n + p.length, 0) + sep.length * Math.max(parts.length - 1, 0));
      return parts.join(sep);
    }),
    sortAlpha: def([ANY], (a) => {
      const v = a[0] ?? null;
      if (kindOf(v) !== 'slice') return stringList([strval(v)]);
      // Go sorts a []string in place: the argument itself ends up sorted.
      if (isStringList(v)) return (v as string[]).sort(compareGoStrings);
      return stringList(strslice(v).sort(compareGoStrings));
    }),
    split: def([S, S], (a) => indexedMap(splitN(str(a, 1), str(a, 0), -1))),
    splitList: def([S, S], (a) => stringList(splitN(str(a, 1), str(a, 0), -1))),
    splitn: def([S, I, S], (a) => indexedMap(splitN(str(a, 2), str(a, 0), intNum(a, 1)))),
  };
}
