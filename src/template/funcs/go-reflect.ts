/**
 * The bits of Go's reflect package sprig uses on template values: Kind names, reflect.DeepEqual, sprig's notion
 * of an empty value, and "is this a slice" checks with Go's panic for nil.
 */
import { FuncError } from '../types.js';
import type { GoValue } from '../../go-value/value.js';
import { GoIfaceMap, GoOpaque, goTypeName } from '../../go-value/value.js';

/** The panic text Go gives when sprig calls reflect.TypeOf(nil).Kind(). */
export const NIL_DEREFERENCE = 'runtime error: invalid memory address or nil pointer dereference';

/** reflect.Value.Kind().String() of a value: `string`, `int`, `float64`, `bool`, `slice`, `map`, `ptr`, `invalid`. */
export function kindOf(v: GoValue): string {
  if (v === null) return 'invalid';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'bigint':
      return 'int';
    case 'number':
      return 'float64';
    case 'string':
      return 'string';
    default:
      if (Array.isArray(v)) return 'slice';
      if (v instanceof GoOpaque) return v.goType.startsWith('*') ? 'ptr' : 'struct';
      return 'map';
  }
}

/**
 * The items of a slice argument, or an error built from the value's kind (sprig's `Cannot find first on type
 * string`). A nil argument is Go's nil dereference panic, as in sprig.
 */
export function requireList(v: GoValue, message: (kind: string) => string, panic: boolean): GoValue[] {
  if (v === null) throw new FuncError(NIL_DEREFERENCE, true);
  if (Array.isArray(v)) return v;
  throw new FuncError(message(kindOf(v)), panic);
}

/** sprig's empty: nil, false, 0, 0.0, "" and empty lists and maps are empty; opaque (pointer) values are not. */
export function isEmptyValue(v: GoValue): boolean {
  if (v === null) return true;
  switch (typeof v) {
    case 'boolean':
      return !v;
    case 'bigint':
      return v === 0n;
    case 'number':
      return v === 0;
    case 'string':
      return v.length === 0;
    default:
      if (Array.isArray(v)) return v.length === 0;
      if (v instanceof GoIfaceMap) return v.size === 0;
      if (v instanceof GoOpaque) return false;
      for (const _ in v) return false;
      return true;
  }
}

/** reflect.DeepEqual: same Go type and equal contents (floats with ==, so NaN is never equal). */
export function deepEqual(a: GoValue, b: GoValue): boolean {
  // Primitives (bigints, numbers with +0 == -0, strings, bools, nil) compare with ===; NaN never equals itself.
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (goTypeName(a) !== goTypeName(b)) return false;
  if (Array.isArray(a)) {
    const bl = b as GoValue[];
    if (a.length !== bl.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i] ?? null, bl[i] ?? null)) return false;
    return true;
  }
  if (a instanceof GoOpaque) return b instanceof GoOpaque && a.display() === b.display();
  if (a instanceof GoIfaceMap) {
    const bm = b as GoIfaceMap;
    if (a.size !== bm.size) return false;
    for (const [k, v] of a) {
      if (!bm.has(k)) return false;
      if (!deepEqual(v, bm.get(k) ?? null)) return false;
    }
    return true;
  }
  const bm = b as Record<string, GoValue>;
  const ak = Object.keys(a);
  if (ak.length !== Object.keys(bm).length) return false;
  for (const k of ak) {
    if (!Object.prototype.hasOwnProperty.call(bm, k)) return false;
    if (!deepEqual((a as Record<string, GoValue>)[k] ?? null, bm[k] ?? null)) return false;
  }
  return true;
}
