/**
 * sprig v3.2.3's list functions. They accept any slice type (`[]interface{}`, `[]string`, `[]int`), return
 * `[]interface{}`, and report non-lists with sprig's texts (`Cannot find first on type string`): the plain
 * variants panic with it, the `must*` variants return it as an error. A nil list is Go's nil-pointer panic.
 */
import { FuncError } from '../types.js';
import type { GoValue } from '../../go-value/value.js';
import { goTypeName, tagType } from '../../go-value/value.js';
import { ANY, def, type FuncTable, intNum, variadic } from './define.js';
import { floatToInt64, toInt64 } from './go-convert.js';
import { nilSlice } from './go-json.js';
import { deepEqual, isEmptyValue, kindOf, NIL_DEREFERENCE, requireList } from './go-reflect.js';

/** Define `name` (panicking) and `mustName` (returning the error) from one implementation. */
function pair(
  table: FuncTable,
  name: string,
  params: readonly string[],
  tail: string | undefined,
  impl: (args: GoValue[], panic: boolean) => GoValue,
): void {
  const mustName = 'must' + name[0]?.toUpperCase() + name.slice(1);
  if (tail === undefined) {
    table[name] = def(params, (a) => impl(a, true));
    table[mustName] = def(params, (a) => impl(a, false));
  } else {
    table[name] = variadic(params, tail, (a) => impl(a, true));
    table[mustName] = variadic(params, tail, (a) => impl(a, false));
  }
}

function inList(haystack: readonly GoValue[], needle: GoValue): boolean {
  return haystack.some((h) => deepEqual(needle, h));
}

/** sprig's chunk: lists of `size` items (the last may be shorter); Go's makeslice panic for bad sizes. */
function chunk(size: number, l: readonly GoValue[]): GoValue {
  const makesliceError = (): FuncError => new FuncError('runtime error: makeslice: len out of range', true);
  const cs = Number(floatToInt64(Math.floor((l.length - 1) / size) + 1));
  if (cs < 0 || !Number.isSafeInteger(cs)) throw makesliceError();
  const out: GoValue[] = [];
  for (let i = 0; i < cs; i++) {
    let clen = size;
    if (i === cs - 1) {
      clen = Math.floor(l.length % size);
      if (clen === 0 || Number.isNaN(clen)) clen = size;
    }
    if (clen < 0) throw makesliceError();
    out.push(l.slice(i * size, i * size + clen));
  }
  return tagType(out, '[][]interface {}');
}

/** sprig's slice: list[start:end] keeping the list's type; out-of-range bounds are reflect's panic. */
function sliceList(l: GoValue[], indices: readonly GoValue[]): GoValue {
  if (l.length === 0) return null;
  const start = indices.length > 0 ? toInt64(indices[0] ?? null) : 0n;
  const end = indices.length < 2 ? BigInt(l.length) : toInt64(indices[1] ?? null);
  if (start < 0n || end < start || end > BigInt(l.length)) {
    throw new FuncError('reflect.Value.Slice: slice index out of bounds', true);
  }
  const out = l.slice(Number(start), Number(end));
  const type = goTypeName(l);
  return type === '[]interface {}' ? out : tagType(out, type);
}

/** sprig's list functions by name. */
export function listFuncs(): FuncTable {
  const t: FuncTable = {
    list: variadic([], ANY, (a) => a.slice()),
    tuple: variadic([], ANY, (a) => a.slice()),
    concat: variadic([], ANY, (a) => {
      const out: GoValue[] = [];
      for (const l of a) {
        if (l === null) throw new FuncError(NIL_DEREFERENCE, true);
        if (!Array.isArray(l)) throw new FuncError(`Cannot concat type ${kindOf(l)} as list`, true);
        out.push(...l);
      }
      return out.length === 0 ? nilSlice() : out;
    }),
  };
  pair(t, 'push', [ANY, ANY], undefined, (a, p) => [
    ...requireList(a[0] ?? null, (k) => `Cannot push on type ${k}`, p),
    a[1] ?? null,
  ]);
  t.append = t.push as FuncTable[string];
  t.mustAppend = t.mustPush as FuncTable[string];
  pair(t, 'prepend', [ANY, ANY], undefined, (a, p) => [
    a[1] ?? null,
    ...requireList(a[0] ?? null, (k) => `Cannot prepend on type ${k}`, p),
  ]);
  pair(t, 'chunk', ['int', ANY], undefined, (a, p) =>
    chunk(
      intNum(a, 0),
      requireList(a[1] ?? null, (k) => `Cannot chunk type ${k}`, p),
    ),
  );
  pair(t, 'first', [ANY], undefined, (a, p) => {
    const l = requireList(a[0] ?? null, (k) => `Cannot find first on type ${k}`, p);
    return l.length === 0 ? null : (l[0] ?? null);
  });
  pair(t, 'last', [ANY], undefined, (a, p) => {
    const l = requireList(a[0] ?? null, (k) => `Cannot find last on type ${k}`, p);
    return l.length === 0 ? null : (l[l.length - 1] ?? null);
  });
  pair(t, 'rest', [ANY], undefined, (a, p) => {
    const l = requireList(a[0] ?? null, (k) => `Cannot find rest on type ${k}`, p);
    return l.length === 0 ? nilSlice() : l.slice(1);
  });
  pair(t, 'initial', [ANY], undefined, (a, p) => {
    const l = requireList(a[0] ?? null, (k) => `Cannot find initial on type ${k}`, p);
    return l.length === 0 ? nilSlice() : l.slice(0, -1);
  });
  pair(t, 'reverse', [ANY], undefined, (a, p) =>
    requireList(a[0] ?? null, (k) => `Cannot find reverse on type ${k}`, p)
      .slice()
      .reverse(),
  );
  pair(t, 'compact', [ANY], undefined, (a, p) =>
    requireList(a[0] ?? null, (k) => `Cannot compact on type ${k}`, p).filter((v) => !isEmptyValue(v)),
  );
  pair(t, 'uniq', [ANY], undefined, (a, p) => {
    const out: GoValue[] = [];
    for (const v of requireList(a[0] ?? null, (k) => `Cannot find uniq on type ${k}`, p)) {
      if (!inList(out, v)) out.push(v);
    }
    return out;
  });
  pair(t, 'without', [ANY], ANY, (a, p) => {
    const omit = a.slice(1);
    return requireList(a[0] ?? null, (k) => `Cannot find without on type ${k}`, p).filter((v) => !inList(omit, v));
  });
  pair(t, 'has', [ANY, ANY], undefined, (a, p) => {
    const haystack = a[1] ?? null;
    if (haystack === null) return false;
    return inList(
      requireList(haystack, (k) => `Cannot find has on type ${k}`, p),
      a[0] ?? null,
    );
  });
  pair(t, 'slice', [ANY], ANY, (a, p) =>
    sliceList(
      requireList(a[0] ?? null, (k) => `list should be type of slice or array but ${k}`, p),
      a.slice(1),
    ),
  );
  return t;
}
