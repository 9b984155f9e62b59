/**
 * A quick yes to checking a release record with zod: the record's schema compiled into a check that walks the plain
 * data itself. It answers "valid" only when zod would accept the data and give back the same data (no field it
 * would drop, no default it would add); anything else — a problem, or a schema feature it does not know — answers
 * "not sure", and zod then checks and words every problem as before. So it changes no error, only the time a valid
 * record takes: zod's check of a 1,000-kapp record was a tenth of `kapps preview`.
 */
import type * as z from 'zod';
import { compiledOnce, defOf, numberChecks, stringChecks, type SchemaDef } from '../diagnostics/schema-defs.js';

/** Whether a value (undefined: the field is absent) certainly passes and comes out of zod unchanged. */
export type PlainCheck = (value: unknown) => boolean;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The compiled check of `schema`, or undefined when it uses a feature this compiler does not know. */
function compile(schema: z.ZodType): PlainCheck | undefined {
  const def = defOf(schema);
  switch (def.type) {
    case 'unknown':
    case 'any':
      return () => true;
    case 'null':
      return (v) => v === null;
    case 'optional': {
      const inner = def.innerType && compile(def.innerType);
      return inner && ((v) => v === undefined || inner(v));
    }
    case 'nullable': {
      const inner = def.innerType && compile(def.innerType);
      return inner && ((v) => v === null || inner(v));
    }
    case 'boolean':
      return def.checks?.length ? undefined : (v) => typeof v === 'boolean';
    case 'enum': {
      const values = new Set(Object.values(def.entries ?? {}));
      return (v) => values.has(v);
    }
    case 'string': {
      const checks = stringChecks(def);
      return checks && ((v) => typeof v === 'string' && checks.every((c) => c(v)));
    }
    case 'number': {
      const checks = numberChecks(def);
      return checks && ((v) => typeof v === 'number' && Number.isFinite(v) && checks.every((c) => c(v)));
    }
    case 'union': {
      const options = (def.options ?? []).map(compile);
      if (options.length === 0 || options.some((o) => o === undefined)) return undefined;
      const checks = options as PlainCheck[];
      return (v) => checks.some((c) => c(v));
    }
    case 'lazy': {
      // Compiled on first use (a lazy schema may refer to itself, as `z.json()` does); unknown: "not sure".
      const getter = def.getter;
      if (!getter) return undefined;
      let inner: PlainCheck | null | undefined;
      return (v) => {
        if (inner === undefined) inner = compile(getter()) ?? null;
        return inner !== null && inner(v);
      };
    }
    case 'array': {
      const element = def.element && !def.checks?.length ? compile(def.element) : undefined;
      return (
        element &&
        ((v) => {
          if (!Array.isArray(v)) return false;
          // Index by index: a hole is an undefined item to zod.
          for (let i = 0; i < v.length; i++) if (!element(v[i])) return false;
          return true;
        })
      );
    }
    case 'record': {
      const key = def.keyType && defOf(def.keyType);
      if (key?.type !== 'string' || key.checks?.length) return undefined;
      const value = def.valueType && compile(def.valueType);
      return (
        value && ((v) => isPlainObject(v) && !Object.hasOwn(v, '__proto__') && Object.values(v).every((m) => value(m)))
      );
    }
    case 'object':
      return compileObject(def);
    default:
      return undefined;
  }
}

function compileObject(def: SchemaDef): PlainCheck | undefined {
  const catchall = def.catchall && defOf(def.catchall).type;
  // A loose object keeps unknown keys; a strict one refuses them; the default drops them (then the data would
  // change: not sure).
  if (catchall !== undefined && catchall !== 'unknown' && catchall !== 'never') return undefined;
  const keepsUnknown = catchall === 'unknown';
  const fields = new Map<string, PlainCheck>();
  for (const [key, schema] of Object.entries(def.shape ?? {})) {
    const check = compile(schema);
    if (!check) return undefined;
    fields.set(key, check);
  }
  return (v) => {
    if (!isPlainObject(v)) return false;
    for (const [key, check] of fields) if (!check(v[key])) return false;
    for (const key in v) if (key === '__proto__' || (!keepsUnknown && !fields.has(key))) return false;
    return true;
  };
}

/** The quick check of `schema` (see the module doc), or undefined when it cannot be compiled. */
export function plainCheckOf(schema: z.ZodType): PlainCheck | undefined {
  return compiledOnce(schema, COMPILED, compile);
}

const COMPILED = Symbol('kapps.plainCheck');
