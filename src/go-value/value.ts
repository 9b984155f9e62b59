/**
 * Go's value model, as text/template sees data decoded from YAML or JSON.
 *
 * | Go                              | TypeScript                                   |
 * |---------------------------------|----------------------------------------------|
 * | nil                             | `null`                                       |
 * | bool                            | `boolean`                                    |
 * | int (int64)                     | `bigint` (always; exact beyond 2^53)         |
 * | uint64 (data beyond int64)      | `bigint` above 2^63-1                         |
 * | float64                         | `number` (always, even when integral: 1.0)   |
 * | string                          | `string` (Go strings are bytes: len, index and slicing are UTF-8 byte based) |
 * | []interface{}                   | `GoValue[]`                                  |
 * | map[string]interface{}          | a plain object (`GoMap`)                     |
 * | map[interface{}]interface{}     | `GoIfaceMap` (a `Map`, keys may be bigint, bool, ...) — only YAML data decoded the way yaml.v2 does |
 *
 * Other Go types that functions produce (e.g. `[]string` from `listString`, `map[string]string` from `split`,
 * `int64` from `int64`) keep the representation above and carry a type tag (see `tagType`), which only `%T`,
 * type checks of function arguments and a few functions consult.
 */

export type GoValue = null | boolean | bigint | number | string | GoValue[] | GoMap | GoIfaceMap | GoOpaque;

/** map[string]interface{}: a plain object. Create with `newGoMap()` (null prototype, so any key is safe). */
export interface GoMap {
  [key: string]: GoValue;
}

/** A key of a map[interface{}]interface{}. */
export type GoKey = string | bigint | number | boolean | null;

/** map[interface{}]interface{}, as yaml.v2 decodes nested maps. */
export class GoIfaceMap extends Map<GoKey, GoValue> {}

/**
 * A Go value that is not plain data, returned by a function (e.g. sprig's `semver` returns a `*semver.Version`).
 * `%v` prints `display()`; the engine's field access `.Name` calls `members.Name()` (Go fields and niladic methods).
 */
export class GoOpaque {
  constructor(
    /** The Go type name as `%T` prints it, e.g. `*semver.Version`. */
    readonly goType: string,
    /** Fields and niladic methods reachable with `.Name` in a template. */
    readonly members: Readonly<Record<string, () => GoValue>>,
    /** What `%v` (and `{{ x }}`) prints. */
    readonly display: () => string,
  ) {}
}

/** A new empty map[string]interface{} with a null prototype. */
export function newGoMap(entries?: Iterable<readonly [string, GoValue]>): GoMap {
  const m = Object.create(null) as GoMap;
  if (entries) for (const [k, v] of entries) m[k] = v;
  return m;
}

/** Whether a value is a map[string]interface{} (a plain object, not a list, iface map or opaque value). */
export function isGoMap(v: unknown): v is GoMap {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map) && !(v instanceof GoOpaque);
}

/** Go type names of values that are not the default for their representation (e.g. `[]string`, `int64`). */
const typeTags = new WeakMap<object, string>();

/**
 * Tag a list or map with a Go type name other than its default (`[]interface {}` / `map[string]interface {}`),
 * e.g. `tagType(list, '[]string')`. Returns the value for chaining.
 */
export function tagType<T extends object>(value: T, goType: string): T {
  typeTags.set(value, goType);
  return value;
}

const INT64_MAX = (1n << 63n) - 1n;

/** The Go type name of a value, as `%T` prints it (`int`, `float64`, `[]interface {}`, `map[string]interface {}`, ...). */
export function goTypeName(v: GoValue): string {
  if (v === null) return '<nil>';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'bigint':
      // Integers beyond int64 only come from data (JSON/YAML decoding gives uint64 there).
      return v > INT64_MAX ? 'uint64' : 'int';
    case 'number':
      return 'float64';
    case 'string':
      return 'string';
    default: {
      if (v instanceof GoOpaque) return v.goType;
      const tag = typeTags.get(v);
      if (tag) return tag;
      if (Array.isArray(v)) return '[]interface {}';
      if (v instanceof GoIfaceMap) return 'map[interface {}]interface {}';
      return 'map[string]interface {}';
    }
  }
}

/** Go template truthiness: false, 0, 0.0, "", nil, empty list/map are false; everything else is true. */
export function isTrue(v: GoValue): boolean {
  if (v === null) return false;
  switch (typeof v) {
    case 'boolean':
      return v;
    case 'bigint':
      return v !== 0n;
    case 'number':
      return v !== 0;
    case 'string':
      return v.length > 0;
    default:
      if (Array.isArray(v)) return v.length > 0;
      if (v instanceof Map) return v.size > 0;
      if (v instanceof GoOpaque) return true;
      for (const _ in v) return true;
      return false;
  }
}

/** Convert plain JS data (numbers: integral → int, else float; objects → maps) into Go values. Strings, bools, null pass through. */
export function fromJS(v: unknown): GoValue {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'boolean':
    case 'string':
    case 'bigint':
      return v;
    case 'number':
      return Number.isInteger(v) ? BigInt(v) : v;
    case 'object': {
      if (Array.isArray(v)) return v.map(fromJS);
      if (v instanceof Map) {
        const m = new GoIfaceMap();
        for (const [k, val] of v as Map<unknown, unknown>) m.set(k as GoKey, fromJS(val));
        return m;
      }
      const m = newGoMap();
      for (const [k, val] of Object.entries(v as Record<string, unknown>)) m[k] = fromJS(val);
      return m;
    }
    default:
      return null;
  }
}

/**
 * Convert Go values to plain JSON-safe JS data: ints become numbers when they fit in a double exactly, otherwise
 * decimal strings; iface maps become objects with `%v`-printed keys.
 */
export function toJS(v: GoValue): unknown {
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
    return v;
  }
  if (Array.isArray(v)) return v.map(toJS);
  if (v instanceof GoOpaque) return v.display();
  const out: Record<string, unknown> = {};
  if (v instanceof Map) {
    for (const [k, val] of v) out[String(k)] = toJS(val);
    return out;
  }
  for (const [k, val] of Object.entries(v)) out[k] = toJS(val);
  return out;
}
