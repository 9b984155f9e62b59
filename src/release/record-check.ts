/**
 * A quick yes to checking a release record with zod: the record's schema compiled into a check that walks the plain
 * data itself. It answers "valid" only when zod would accept the data and give back the same data (no field it
 * would drop, no default it would add); anything else — a problem, or a schema feature it does not know — answers
 * "not sure", and zod then checks and words every problem as before. So it changes no error, only the time a valid
 * record takes: zod's check of a 1,000-kapp record was a tenth of `kapps preview`.
 */
import type * as z from 'zod';

/** Whether a value (undefined: the field is absent) certainly passes and comes out of zod unchanged. */
export type PlainCheck = (value: unknown) => boolean;

/** The parts of a zod schema's definition the compiler reads. */
interface Def {
  readonly type: string;
  readonly innerType?: z.ZodType;
  readonly options?: readonly z.ZodType[];
  readonly element?: z.ZodType;
  readonly keyType?: z.ZodType;
  readonly valueType?: z.ZodType;
  readonly shape?: Readonly<Record<string, z.ZodType>>;
  readonly catchall?: z.ZodType;
  readonly entries?: Readonly<Record<string, unknown>>;
  readonly getter?: () => z.ZodType;
  readonly check?: string;
  readonly format?: string;
  readonly pattern?: RegExp;
  readonly checks?: readonly { _zod: { def: CheckDef } }[];
}

interface CheckDef {
  readonly check: string;
  readonly format?: string;
  readonly pattern?: RegExp;
  readonly value?: unknown;
  readonly inclusive?: boolean;
  readonly minimum?: unknown;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The string checks a compiled check honours: patterns (regex, ISO date-time) and a minimum length. */
function stringChecks(def: Def): ((s: string) => boolean)[] | undefined {
  const out: ((s: string) => boolean)[] = [];
  const own: CheckDef[] = def.check === 'string_format' ? [def as CheckDef] : [];
  for (const d of [...own, ...(def.checks ?? []).map((c) => c._zod.def)]) {
    if (d.check === 'string_format' && (d.format === 'regex' || d.format === 'datetime')) {
      const pattern = d.pattern;
      if (!(pattern instanceof RegExp) || pattern.global || pattern.sticky) return undefined;
      out.push((s) => pattern.test(s));
    } else if (d.check === 'min_length' && typeof d.minimum === 'number') {
      const min = d.minimum;
      out.push((s) => s.length >= min);
    } else {
      return undefined;
    }
  }
  return out;
}

/** The number checks a compiled check honours: safe integers and bounds. */
function numberChecks(def: Def): ((n: number) => boolean)[] | undefined {
  if (def.format !== undefined) return undefined;
  const out: ((n: number) => boolean)[] = [];
  for (const c of def.checks ?? []) {
    const d = c._zod.def;
    if (d.check === 'number_format' && d.format === 'safeint') {
      out.push((n) => Number.isSafeInteger(n));
      continue;
    }
    if (typeof d.value !== 'number') return undefined;
    const bound = d.value;
    if (d.check === 'greater_than') out.push(d.inclusive ? (n) => n >= bound : (n) => n > bound);
    else if (d.check === 'less_than') out.push(d.inclusive ? (n) => n <= bound : (n) => n < bound);
    else return undefined;
  }
  return out;
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

function compileObject(def: Def): PlainCheck | undefined {
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

/** Where a schema keeps its compiled check (null: it cannot be compiled). */
const COMPILED = Symbol('kapps.plainCheck');

type WithCheck = { [COMPILED]?: PlainCheck | null };

/** The quick check of `schema` (see the module doc), or undefined when it cannot be compiled. */
export function plainCheckOf(schema: z.ZodType): PlainCheck | undefined {
  const holder = schema as unknown as WithCheck;
  let check = holder[COMPILED];
  if (check === undefined) {
    check = compile(schema) ?? null;
    if (Object.isExtensible(schema)) {
      Object.defineProperty(schema, COMPILED, { value: check, enumerable: false, configurable: true });
    }
  }
  return check ?? undefined;
}
