/**
 * Where each configuration object and field came from. A side table keyed by object identity, so the objects
 * themselves stay plain data. The loader records locations; later stages copy them to the objects they derive
 * (`copyLocations`) and diagnostics read them (`locationOf`).
 */
import type { SourceLocation } from '../diagnostics/diagnostic.js';

// Two tables rather than one entry object per object: loading a large stack records hundreds of thousands of
// locations, and the fewer objects this allocates the faster it is.
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
  if (key !== undefined) return fieldTable.get(obj)?.get(key) ?? selfTable.get(obj);
  return selfTable.get(obj);
}

/** Give `to` the locations recorded for `from` (fields included), keeping any `to` already has. */
export function copyLocations(from: object, to: object): void {
  const self = selfTable.get(from);
  if (self && !selfTable.has(to)) selfTable.set(to, self);
  const src = fieldTable.get(from);
  if (!src) return;
  let dst = fieldTable.get(to);
  if (!dst) {
    dst = new Map();
    fieldTable.set(to, dst);
  }
  for (const [k, v] of src) if (!dst.has(k)) dst.set(k, v);
}
