/**
 * A quick yes to schema validation: a zod schema compiled into a check that walks the located YAML tree itself,
 * with no plain view built and no zod issue machinery. It answers "valid" only when zod would accept the view that
 * `validateTree` builds (maps keyed by key text, null-valued entries dropped, YAML ints as numbers, non-finite floats
 * as their text); anything else — a problem, or a schema feature it does not know — answers "not sure", and zod
 * then validates and reports as before. So it changes no diagnostic, only the time a valid file takes: loading a
 * 10,000-kapp stack checked each manifest's view with zod, which was a fifth of the command.
 */
import type * as z from 'zod';
import { compiledOnce, defOf, numberChecks, stringChecks, type SchemaDef } from '../diagnostics/schema-defs.js';
import type { YamlNode } from '../yaml/read.js';

/** Whether a node (undefined: the field is absent) certainly passes; false means "let zod decide". */
export type FastCheck = (node: YamlNode | undefined) => boolean;

/** A scalar as the view has it: ints as numbers, non-finite floats as their text. */
function scalarView(node: YamlNode & { kind: 'scalar' }): unknown {
  const v = node.value;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number' && !Number.isFinite(v)) return node.text;
  return v;
}

/** Whether a node is what the view drops from a map (a null scalar). */
function isNullScalar(node: YamlNode): boolean {
  return node.kind === 'scalar' && node.value === null;
}

/** The compiled check of `schema`, or undefined when it uses a feature this compiler does not know. */
function compile(schema: z.ZodType): FastCheck | undefined {
  const def = defOf(schema);
  switch (def.type) {
    case 'unknown':
    case 'any':
      return () => true;
    case 'optional': {
      const inner = def.innerType && compile(def.innerType);
      return inner && ((n) => n === undefined || inner(n));
    }
    case 'nullable': {
      const inner = def.innerType && compile(def.innerType);
      return inner && ((n) => (n !== undefined && isNullScalar(n)) || inner(n));
    }
    case 'boolean':
      if (def.checks?.length) return undefined;
      return (n) => n?.kind === 'scalar' && typeof scalarView(n) === 'boolean';
    case 'string': {
      const checks = stringChecks(def);
      return (
        checks &&
        ((n) => {
          if (n?.kind !== 'scalar') return false;
          const v = scalarView(n);
          return typeof v === 'string' && checks.every((c) => c(v));
        })
      );
    }
    case 'number': {
      const checks = numberChecks(def);
      return (
        checks &&
        ((n) => {
          if (n?.kind !== 'scalar') return false;
          const v = scalarView(n);
          return typeof v === 'number' && Number.isFinite(v) && checks.every((c) => c(v));
        })
      );
    }
    case 'union': {
      const options = (def.options ?? []).map(compile);
      if (options.length === 0 || options.some((o) => o === undefined)) return undefined;
      const checks = options as FastCheck[];
      return (n) => checks.some((c) => c(n));
    }
    case 'array': {
      const element = def.element && !def.checks?.length ? compile(def.element) : undefined;
      return element && ((n) => n?.kind === 'seq' && n.items.every((item) => element(item)));
    }
    case 'record': {
      const key = def.keyType && defOf(def.keyType);
      if (key?.type !== 'string' || key.checks?.length) return undefined;
      const value = def.valueType && compile(def.valueType);
      return (
        value &&
        ((n) => {
          if (n?.kind !== 'map') return false;
          for (const e of n.entries) {
            if (isNullScalar(e.value)) continue;
            if (e.key.text === '__proto__' || !value(e.value)) return false;
          }
          return true;
        })
      );
    }
    case 'object':
      return compileObject(def);
    default:
      return undefined;
  }
}

function compileObject(def: SchemaDef): FastCheck | undefined {
  const catchall = def.catchall && defOf(def.catchall).type;
  if (catchall !== undefined && catchall !== 'never') return undefined;
  const strict = catchall === 'never';
  const fields = new Map<string, FastCheck>();
  for (const [key, schema] of Object.entries(def.shape ?? {})) {
    const check = compile(schema);
    if (!check) return undefined;
    fields.set(key, check);
  }
  const required = [...fields].filter(([, check]) => !check(undefined)).map(([key]) => key);
  return (n) => {
    if (n?.kind !== 'map') return false;
    // Two keys of a nested map can share a text (`1` and `"1"`): each required key is counted once.
    const met: string[] | undefined = required.length > 0 ? [] : undefined;
    for (const e of n.entries) {
      if (isNullScalar(e.value)) continue;
      const key = e.key.text;
      if (key === '__proto__') return false;
      const check = fields.get(key);
      if (check === undefined) {
        if (strict) return false;
        continue;
      }
      if (!check(e.value)) return false;
      if (met && required.includes(key) && !met.includes(key)) met.push(key);
    }
    return (met?.length ?? 0) === required.length;
  };
}

/** The quick check of `schema` (see the module doc), or undefined when it cannot be compiled. */
export function fastCheckOf(schema: z.ZodType): FastCheck | undefined {
  return compiledOnce(schema, COMPILED, compile);
}

const COMPILED = Symbol('kapps.fastCheck');
