/**
 * `fmt.Sprintf("%T %v", x, x)` for decoded YAML data, to compare kapps' decoding with Go's yaml.v2. Map keys of one
 * type are sorted as Go's fmt sorts them (mixed-type keys sort in an address-dependent order in Go; not used).
 */
import { formatFloat } from '../../../src/go-value/float-format.js';
import { GoIfaceMap, goTypeName, type GoKey, type GoValue } from '../../../src/go-value/value.js';

function compareKeys(a: GoKey, b: GoKey): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const sa = String(a);
  const sb = String(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/** `%v` of a decoded value. */
export function goV(v: GoValue): string {
  if (v === null) return '<nil>';
  switch (typeof v) {
    case 'bigint':
      return v.toString();
    case 'number':
      return formatFloat(v, 'g', -1);
    case 'boolean':
    case 'string':
      return String(v);
    default:
      break;
  }
  if (Array.isArray(v)) return `[${v.map(goV).join(' ')}]`;
  const entries: [GoKey, GoValue][] = v instanceof GoIfaceMap ? [...v] : Object.entries(v as Record<string, GoValue>);
  entries.sort((x, y) => compareKeys(x[0], y[0]));
  return `map[${entries.map(([k, val]) => `${k === null ? '<nil>' : goV(k)}:${goV(val)}`).join(' ')}]`;
}

/** `%T %v` of a decoded value. */
export function goTV(v: GoValue): string {
  return `${goTypeName(v)} ${goV(v)}`;
}
