/**
 * sprig v3.2.3's dictionary functions on `map[string]interface {}` (nested YAML maps, which are
 * `map[interface {}]interface {}`, are rejected by the engine's type check, as in Go). `merge` and
 * `mergeOverwrite` follow imdario/mergo v0.3.12 as sprig calls it; `deepCopy` copies lists and maps recursively.
 * Go iterates maps in random order; `keys` and `values` here return sorted-key order.
 */
import { FuncError } from '../types.js';
import type { GoKey, GoMap, GoValue } from '../../go-value/value.js';
import { GoIfaceMap, goTypeName, isGoMap, newGoMap, tagType } from '../../go-value/value.js';
import { ANY, def, type FuncTable, MAP, str, stringList, variadic } from './define.js';
import { strval } from './go-convert.js';
import { compareGoStrings } from './go-string.js';
import { isEmptyValue, kindOf } from './go-reflect.js';

const S = 'string';

function mapArg(args: readonly GoValue[], i: number): GoMap | null {
  const v = args[i];
  return v !== undefined && v !== null && isGoMap(v) ? v : null;
}

function has(m: GoMap | GoIfaceMap, key: GoKey): boolean {
  if (m instanceof GoIfaceMap) return m.has(key);
  return typeof key === 'string' && Object.prototype.hasOwnProperty.call(m, key);
}

function get(m: GoMap | GoIfaceMap, key: GoKey): GoValue {
  if (m instanceof GoIfaceMap) return m.get(key) ?? null;
  return typeof key === 'string' ? (m[key] ?? null) : null;
}

function set(m: GoMap | GoIfaceMap, key: GoKey, v: GoValue): void {
  if (m instanceof GoIfaceMap) m.set(key, v);
  else m[String(key)] = v;
}

function entries(m: GoMap | GoIfaceMap): [GoKey, GoValue][] {
  return m instanceof GoIfaceMap ? [...m.entries()] : Object.entries(m);
}

function isMap(v: GoValue): v is GoMap | GoIfaceMap {
  return v instanceof GoIfaceMap || (v !== null && isGoMap(v));
}

/** mergo's deepMerge of one map into another (in place), with or without overwriting. */
function mergeMaps(dst: GoMap | GoIfaceMap, src: GoMap | GoIfaceMap, overwrite: boolean): void {
  for (const [key, srcVal] of entries(src)) {
    if (srcVal === null) {
      if (overwrite) set(dst, key, null);
      continue;
    }
    const dstHas = has(dst, key);
    const dstVal = get(dst, key);
    const kind = kindOf(srcVal);
    if (kind === 'slice') {
      // mergo stores a slice first: the source's when overwriting (or into an empty map), else what dst had.
      const dstEmptyMap = dst instanceof GoIfaceMap ? dst.size === 0 : Object.keys(dst).length === 0;
      const dstSlice = overwrite || dstEmptyMap ? srcVal : dstHas && dstVal !== null ? dstVal : [];
      set(dst, key, dstSlice);
    }
    if (kind === 'map' && dstHas && isMap(dstVal) && isMap(srcVal)) {
      if (!(dstVal instanceof GoIfaceMap) && srcVal instanceof GoIfaceMap && srcVal.size > 0) {
        // reflect cannot look up an interface{} key in a string-keyed map.
        throw new FuncError(
          'reflect.Value.MapIndex: value of type interface {} is not assignable to type string',
          true,
        );
      }
      mergeMaps(dstVal, srcVal, overwrite);
    }
    if (dstHas && !isEmptyValue(dstVal) && (kind === 'map' || kind === 'slice')) continue;
    if (overwrite || !dstHas || isEmptyValue(dstVal)) set(dst, key, srcVal);
  }
}

function merge(args: readonly GoValue[], overwrite: boolean): GoValue {
  let dst = mapArg(args, 0);
  for (let i = 1; i < args.length; i++) {
    const src = mapArg(args, i);
    if (src === null) continue;
    dst ??= newGoMap();
    mergeMaps(dst, src, overwrite);
  }
  return dst ?? newGoMap();
}

/** copystructure.Copy for template values: new lists and maps all the way down, same Go types. */
export function deepCopy(v: GoValue): GoValue {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const out = v.map(deepCopy);
    const type = goTypeName(v);
    return type === '[]interface {}' ? out : tagType(out, type);
  }
  if (v instanceof GoIfaceMap) {
    const out = new GoIfaceMap();
    for (const [k, val] of v) out.set(k, deepCopy(val));
    return out;
  }
  if (!isGoMap(v)) return v;
  const out = newGoMap();
  for (const [k, val] of Object.entries(v)) out[k] = deepCopy(val);
  const type = goTypeName(v);
  return type === 'map[string]interface {}' ? out : tagType(out, type);
}

/** deepCopy's argument: nil makes copystructure call reflect on a zero Value, which panics. */
function deepCopyArg(v: GoValue): GoValue {
  if (v === null) throw new FuncError('reflect: call of reflect.Value.Type on zero Value', true);
  return deepCopy(v);
}

function interfaceConversion(v: GoValue, want: string): FuncError {
  const got = v === null ? 'nil' : goTypeName(v);
  return new FuncError(`interface conversion: interface {} is ${got}, not ${want}`, true);
}

/** sprig's dig: walk nested map[string]interface{} by keys, with a default for a missing key. */
function dig(ps: readonly GoValue[]): GoValue {
  if (ps.length < 3) throw new FuncError('dig needs at least three arguments', true);
  const last = ps[ps.length - 1] ?? null;
  if (last === null || !isGoMap(last) || goTypeName(last) !== MAP) throw interfaceConversion(last, MAP);
  const dflt = ps[ps.length - 2] ?? null;
  const keys = ps.slice(0, -2).map((k) => {
    if (typeof k !== 'string') throw interfaceConversion(k, 'string');
    return k;
  });
  let dict: GoMap = last;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] ?? '';
    if (!Object.prototype.hasOwnProperty.call(dict, k)) return dflt;
    const step = dict[k] ?? null;
    if (i === keys.length - 1) return step;
    if (step === null || !isGoMap(step) || goTypeName(step) !== MAP) throw interfaceConversion(step, MAP);
    dict = step;
  }
  return dflt;
}

/** sprig's dictionary functions by name. */
export function dictFuncs(): FuncTable {
  return {
    dict: variadic([], ANY, (a) => {
      const m = newGoMap();
      for (let i = 0; i < a.length; i += 2) m[strval(a[i] ?? null)] = i + 1 < a.length ? (a[i + 1] ?? null) : '';
      return m;
    }),
    get: def([MAP, S], (a) => {
      const m = mapArg(a, 0);
      const k = str(a, 1);
      return m && Object.prototype.hasOwnProperty.call(m, k) ? (m[k] ?? null) : '';
    }),
    set: def([MAP, S, ANY], (a) => {
      const m = mapArg(a, 0);
      if (!m) throw new FuncError('assignment to entry in nil map', true);
      m[str(a, 1)] = a[2] ?? null;
      return m;
    }),
    unset: def([MAP, S], (a) => {
      const m = mapArg(a, 0);
      if (!m) return newGoMap();
      delete m[str(a, 1)];
      return m;
    }),
    hasKey: def([MAP, S], (a) => {
      const m = mapArg(a, 0);
      return m !== null && Object.prototype.hasOwnProperty.call(m, str(a, 1));
    }),
    pluck: variadic([S], MAP, (a) => {
      const k = str(a, 0);
      const out: GoValue[] = [];
      for (let i = 1; i < a.length; i++) {
        const m = mapArg(a, i);
        if (m && Object.prototype.hasOwnProperty.call(m, k)) out.push(m[k] ?? null);
      }
      return out;
    }),
    keys: variadic([], MAP, (a) => {
      const out: string[] = [];
      for (let i = 0; i < a.length; i++) out.push(...Object.keys(mapArg(a, i) ?? {}).sort(compareGoStrings));
      return stringList(out);
    }),
    values: def([MAP], (a) => {
      const m = mapArg(a, 0) ?? newGoMap();
      return Object.keys(m)
        .sort(compareGoStrings)
        .map((k) => m[k] ?? null);
    }),
    pick: variadic([MAP], S, (a) => {
      const m = mapArg(a, 0);
      const out = newGoMap();
      for (let i = 1; i < a.length; i++) {
        const k = str(a, i);
        if (m && Object.prototype.hasOwnProperty.call(m, k)) out[k] = m[k] ?? null;
      }
      return out;
    }),
    omit: variadic([MAP], S, (a) => {
      const m = mapArg(a, 0) ?? newGoMap();
      const drop = new Set(a.slice(1).map(String));
      const out = newGoMap();
      for (const [k, v] of Object.entries(m)) if (!drop.has(k)) out[k] = v;
      return out;
    }),
    merge: variadic([MAP], MAP, (a) => merge(a, false)),
    mustMerge: variadic([MAP], MAP, (a) => merge(a, false)),
    mergeOverwrite: variadic([MAP], MAP, (a) => merge(a, true)),
    mustMergeOverwrite: variadic([MAP], MAP, (a) => merge(a, true)),
    deepCopy: def([ANY], (a) => deepCopyArg(a[0] ?? null)),
    mustDeepCopy: def([ANY], (a) => deepCopyArg(a[0] ?? null)),
    dig: variadic([], ANY, (a) => dig(a)),
  };
}
