/**
 * Where each configuration object and field came from. A side table keyed by object identity, so the objects
 * themselves stay plain data. The loader records locations; later stages copy them to the objects they derive
 * (`copyLocations`) and diagnostics read them (`locationOf`).
 */
import type { SourceLocation } from '../diagnostics/diagnostic.js';

interface Entry {
  self?: SourceLocation;
  fields?: Map<string | number, SourceLocation>;
}

const table = new WeakMap<object, Entry>();

function entry(obj: object): Entry {
  let e = table.get(obj);
  if (!e) {
    e = {};
    table.set(obj, e);
  }
  return e;
}

/** Record where an object starts (`key` omitted) or where one of its fields' value is (`key` given). */
export function setLocation(obj: object, loc: SourceLocation, key?: string | number): void {
  const e = entry(obj);
  if (key === undefined) e.self = loc;
  else (e.fields ??= new Map()).set(key, loc);
}

/** Where the object (or its field `key`) came from; a field falls back to its object's location. */
export function locationOf(obj: object | undefined, key?: string | number): SourceLocation | undefined {
  if (!obj) return undefined;
  const e = table.get(obj);
  if (!e) return undefined;
  if (key !== undefined) return e.fields?.get(key) ?? e.self;
  return e.self;
}

/** Give `to` the locations recorded for `from` (fields included), keeping any `to` already has. */
export function copyLocations(from: object, to: object): void {
  const src = table.get(from);
  if (!src) return;
  const dst = entry(to);
  dst.self ??= src.self;
  if (src.fields) {
    dst.fields ??= new Map();
    for (const [k, v] of src.fields) if (!dst.fields.has(k)) dst.fields.set(k, v);
  }
}
