/**
 * Where each configuration object and field came from. A side table keyed by object identity, so the objects
 * themselves stay plain data. The loader records locations; later stages copy them to the objects they derive
 * (`copyLocations`) and diagnostics read them (`locationOf`).
 *
 * Most objects are recorded by linking them to the YAML node they were read from (`setLocationNode`, kept in
 * src/yaml/node-links.ts so the YAML reader links what it reads without importing this layer; the link keeps the
 * node's offsets, not the node): a field's location is then looked up there when asked for. Loading a large stack
 * creates hundreds of thousands of objects; one link per object is far cheaper than one entry per field.
 */
import type { SourceLocation } from '../diagnostics/diagnostic.js';
import { linkSite, linkedSiteOrSites, linkedSites, setLocationNode, type NodeSite } from '../yaml/node-links.js';

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

/** Where the object (or its field `key`) came from; a field falls back to its object's location. */
export function locationOf(obj: object | undefined, key?: string | number): SourceLocation | undefined {
  if (!obj) return undefined;
  const linked = linkedSiteOrSites(obj);
  if (key !== undefined) {
    const explicit = fieldTable.get(obj)?.get(key);
    if (explicit) return explicit;
    if (Array.isArray(linked)) {
      for (const site of linked as readonly NodeSite[]) {
        const loc = site.field(key);
        if (loc) return loc;
      }
    } else if (linked !== undefined) {
      const loc = (linked as NodeSite).field(key);
      if (loc) return loc;
    }
  }
  const first = Array.isArray(linked) ? (linked as readonly NodeSite[])[0] : (linked as NodeSite | undefined);
  return selfTable.get(obj) ?? first?.loc;
}

/** Give `to` the locations recorded for `from` (fields included), keeping any `to` already has. */
export function copyLocations(from: object, to: object): void {
  const own = linkedSites(to);
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
      if (!dst.has(k) && !own.some((site) => site.field(k))) dst.set(k, v);
    }
  }
  for (const site of linkedSites(from)) linkSite(to, site);
}
