/**
 * The generic map merge of Sugarkube (mergo with override), used for vars, metadata, provider vars, kapp vars files
 * and every fragment of the variable map. Later (higher) maps win; see `mergeMaps`.
 */
import { GoIfaceMap, isGoMap, newGoMap, type GoMap, type GoValue } from '../go-value/value.js';

function isMapLike(v: GoValue | undefined): v is GoMap | GoIfaceMap {
  return v instanceof GoIfaceMap || isGoMap(v);
}

/** Zero values in Go's sense for the quirk below: nil, "", 0, false. */
function isEmptyScalarOrList(v: GoValue): boolean {
  if (v === null || v === '' || v === false || v === 0n || v === 0) return true;
  return Array.isArray(v) && v.length === 0;
}

function mapEntries(m: GoMap | GoIfaceMap): Iterable<[string, GoValue]> {
  if (m instanceof GoIfaceMap) return [...m].map(([k, v]) => [String(k), v] as [string, GoValue]);
  return Object.entries(m);
}

/**
 * Merge `higher` over `lower`, returning a new map (inputs are not modified; untouched sub-values are shared):
 * - a key only in one side is kept (a `null` value in `higher` is skipped);
 * - both maps: merged recursively;
 * - `higher` is a list: it replaces whatever was there (even an empty list, even over a map);
 * - `higher` is a scalar (zero values included: `0`, `false`, `""`): it wins;
 * - `higher` is a map but `lower` is a non-empty scalar or a non-empty list: `lower` is kept (as Sugarkube does).
 */
export function mergeMaps(lower: GoMap, higher: GoMap | GoIfaceMap): GoMap {
  const out = newGoMap();
  for (const k in lower) out[k] = lower[k] as GoValue;
  return mergeInto(out, higher);
}

/** `mergeMaps` writing into `out` (a fresh copy of the lower map). */
function mergeInto(out: GoMap, higher: GoMap | GoIfaceMap): GoMap {
  if (higher instanceof GoIfaceMap) return mergeInto(out, toGoMap(higher));
  for (const k in higher) {
    const hv = higher[k] as GoValue;
    if (hv === null) continue;
    const lv = out[k];
    if (lv === undefined || lv === null) {
      out[k] = hv;
    } else if (isMapLike(hv)) {
      if (isMapLike(lv)) out[k] = mergeMaps(toGoMap(lv), hv);
      else if (isEmptyScalarOrList(lv)) out[k] = hv;
      // else: a non-empty scalar or list below a map is kept (mergo's behaviour).
    } else {
      out[k] = hv;
    }
  }
  return out;
}

/** Fold several maps, lowest precedence first. */
export function mergeAll(maps: readonly (GoMap | undefined)[]): GoMap {
  const out = newGoMap();
  for (const m of maps) if (m) mergeInto(out, m);
  return out;
}

/** A string-keyed copy of a map (iface map keys printed as strings). */
export function toGoMap(m: GoMap | GoIfaceMap): GoMap {
  if (!(m instanceof GoIfaceMap)) return m;
  return newGoMap(mapEntries(m));
}

/** Deep copy of a value (maps and lists copied; scalars shared). */
export function deepCopy(v: GoValue): GoValue {
  if (Array.isArray(v)) return v.map(deepCopy);
  if (v instanceof GoIfaceMap) {
    const m = new GoIfaceMap();
    for (const [k, val] of v) m.set(k, deepCopy(val));
    return m;
  }
  if (isGoMap(v)) {
    const m = newGoMap();
    for (const k in v) m[k] = deepCopy(v[k] as GoValue);
    return m;
  }
  return v;
}

/** Set a dotted path in a map, creating (or replacing non-map) intermediate maps. Mutates `m`. */
export function setPath(m: GoMap, path: readonly string[], value: GoValue): void {
  let cur = m;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i] as string;
    const next = cur[key];
    if (isGoMap(next)) cur = next;
    else {
      const created = next instanceof GoIfaceMap ? toGoMap(next) : newGoMap();
      cur[key] = created;
      cur = created;
    }
  }
  cur[path[path.length - 1] as string] = value;
}
