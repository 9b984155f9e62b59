/**
 * Building template data from several sources, as `kapps render` does with `--vars` files and `--set` values: deep
 * merges of Go maps (string-keyed or iface maps alike) where later sources win and lists replace, and dotted-path
 * assignment that creates nested maps the way yaml.v2 would have decoded them (`map[interface {}]interface {}`).
 */
import type { GoKey, GoMap, GoValue } from '../go-value/value.js';
import { GoIfaceMap, isGoMap } from '../go-value/value.js';

type AnyMap = GoMap | GoIfaceMap;

function isMap(v: GoValue | undefined): v is AnyMap {
  return v instanceof GoIfaceMap || isGoMap(v);
}

function get(m: AnyMap, k: GoKey): GoValue | undefined {
  if (m instanceof GoIfaceMap) return m.get(k);
  const key = String(k);
  return Object.prototype.hasOwnProperty.call(m, key) ? m[key] : undefined;
}

function put(m: AnyMap, k: GoKey, v: GoValue): void {
  if (m instanceof GoIfaceMap) m.set(k, v);
  else m[String(k)] = v;
}

/**
 * Merge `over` into `base` and return the result: maps merge key by key (recursively), anything else in `over`
 * replaces what `base` had (lists are not concatenated). `base` is modified when it is a map.
 */
export function mergeGoData(base: GoValue, over: GoValue): GoValue {
  if (!isMap(base) || !isMap(over)) return over;
  const entries: [GoKey, GoValue][] = over instanceof GoIfaceMap ? [...over] : Object.entries(over);
  for (const [k, v] of entries) {
    const cur = get(base, k);
    put(base, k, cur !== undefined && isMap(cur) && isMap(v) ? mergeGoData(cur, v) : v);
  }
  return base;
}

/**
 * Set `value` at a dotted path (`['kapp', 'vars', 'replicas']`) in `data`, creating missing (or non-map)
 * intermediate entries as iface maps.
 */
export function setGoPath(data: GoMap, path: readonly string[], value: GoValue): void {
  let m: AnyMap = data;
  for (const seg of path.slice(0, -1)) {
    const cur = get(m, seg);
    if (cur !== undefined && isMap(cur)) m = cur;
    else {
      const next = new GoIfaceMap();
      put(m, seg, next);
      m = next;
    }
  }
  put(m, path[path.length - 1] ?? '', value);
}
