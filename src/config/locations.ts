/**
 * Where each configuration object and field came from. A side table keyed by object identity, so the objects
 * themselves stay plain data. The loader records locations; later stages copy them to the objects they derive
 * (`copyLocations`) and diagnostics read them (`locationOf`).
 *
 * Most objects are recorded by linking them to the YAML node they were read from (`setLocationNode`, kept in
 * src/yaml/node-links.ts so the YAML reader links what it reads without importing this layer): a field's location
 * is then looked up in the node when asked for. Loading a large stack creates hundreds of thousands of objects; one
 * link per object is far cheaper than one entry per field.
 */
import type { SourceLocation } from '../diagnostics/diagnostic.js';
import type { GoKey } from '../go-value/value.js';
import { formatGoKey } from '../yaml/scalar.js';
import { linkedNodeOrNodes, linkedNodes as nodesOf, setLocationNode } from '../yaml/node-links.js';
import type { YamlNode } from '../yaml/tree.js';

export { setLocationNode };

const selfTable = new WeakMap<object, SourceLocation>();
const fieldTable = new WeakMap<object, Map<string | number, SourceLocation>>();

/** Record where an object starts (`key` omitted) or where one of its fields' value is (`key` given). */
export function setLocation(obj: object, loc: SourceLocation, key?: string | number): void {
  if (key === undefined) {
    selfTable.set(obj, loc);
    return;
  }
  let fields = fieldTable.get(obj);
  if (!fields) {
    fields = new Map();
    fieldTable.set(obj, fields);
  }
  fields.set(key, loc);
}

function nodeFieldLocation(node: YamlNode, key: string | number): SourceLocation | undefined {
  if (node.kind === 'seq') return typeof key === 'number' ? node.items[key]?.loc : undefined;
  if (node.kind !== 'map') return undefined;
  if (typeof key === 'number') return node.entries[key]?.value.loc;
  const entries = node.entries;
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    if (e?.key.text === key) return e.value.loc;
  }
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    if (e && typeof e.key.value !== 'string' && formatGoKey(e.key.value as GoKey) === key) return e.value.loc;
  }
  return undefined;
}

/** Where the object (or its field `key`) came from; a field falls back to its object's location. */
export function locationOf(obj: object | undefined, key?: string | number): SourceLocation | undefined {
  if (!obj) return undefined;
  const linked = linkedNodeOrNodes(obj);
  if (key !== undefined) {
    const explicit = fieldTable.get(obj)?.get(key);
    if (explicit) return explicit;
    if (Array.isArray(linked)) {
      for (const n of linked as readonly YamlNode[]) {
        const loc = nodeFieldLocation(n, key);
        if (loc) return loc;
      }
    } else if (linked !== undefined) {
      const loc = nodeFieldLocation(linked as YamlNode, key);
      if (loc) return loc;
    }
  }
  const first = Array.isArray(linked) ? (linked as readonly YamlNode[])[0] : (linked as YamlNode | undefined);
  return selfTable.get(obj) ?? first?.loc;
}

/** Give `to` the locations recorded for `from` (fields included), keeping any `to` already has. */
export function copyLocations(from: object, to: object): void {
  const own = nodesOf(to);
  const self = selfTable.get(from);
  if (self && !selfTable.has(to) && own.length === 0) selfTable.set(to, self);
  const src = fieldTable.get(from);
  if (src) {
    let dst = fieldTable.get(to);
    if (!dst) {
      dst = new Map();
      fieldTable.set(to, dst);
    }
    for (const [k, v] of src) {
      if (!dst.has(k) && !own.some((n) => nodeFieldLocation(n, k))) dst.set(k, v);
    }
  }
  for (const n of nodesOf(from)) setLocationNode(to, n);
}
