/**
 * What a zod schema's definition says, as kapps' quick checks read it: `src/config/fast-check.ts` (a located YAML
 * tree) and `src/release/record-check.ts` (plain data) compile a schema into a check that answers "valid" only
 * where zod would, and "not sure" (zod decides) wherever they meet something they do not know. The parts of a
 * definition they read, and the string and number checks both make, are here.
 */
import type * as z from 'zod';

/** The parts of a zod schema's definition the quick checks read. */
export interface SchemaDef {
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

/** One check of a string or number schema. */
export interface CheckDef {
  readonly check: string;
  readonly format?: string;
  readonly pattern?: RegExp;
  readonly value?: unknown;
  readonly inclusive?: boolean;
  readonly minimum?: unknown;
}

/** The definition of `schema`. */
export const defOf = (schema: z.ZodType): SchemaDef => (schema as unknown as { _zod: { def: SchemaDef } })._zod.def;

/**
 * The checks of a string schema as predicates (a pattern — a regex or an ISO date-time — or a minimum length), or
 * undefined when it has another.
 */
export function stringChecks(def: SchemaDef): ((s: string) => boolean)[] | undefined {
  const own: CheckDef[] = def.check === 'string_format' ? [def as CheckDef] : [];
  const out: ((s: string) => boolean)[] = [];
  for (const d of [...own, ...(def.checks ?? []).map((c) => c._zod.def)]) {
    const check = stringCheck(d);
    if (!check) return undefined;
    out.push(check);
  }
  return out;
}

function stringCheck(d: CheckDef): ((s: string) => boolean) | undefined {
  if (d.check === 'min_length') {
    const min = d.minimum;
    return typeof min === 'number' ? (s) => s.length >= min : undefined;
  }
  const pattern = d.pattern;
  const known = d.check === 'string_format' && (d.format === 'regex' || d.format === 'datetime');
  // A global or sticky pattern keeps state between tests: zod's own answer is needed then.
  if (!known || !(pattern instanceof RegExp) || pattern.global || pattern.sticky) return undefined;
  return (s) => pattern.test(s);
}

/**
 * The checks of a number schema as predicates (a safe integer, bounds), or undefined when it has another. The
 * number itself must be finite: zod refuses the others.
 */
export function numberChecks(def: SchemaDef): ((n: number) => boolean)[] | undefined {
  if (def.format !== undefined && def.format !== 'safeint') return undefined;
  const out: ((n: number) => boolean)[] = def.format === 'safeint' ? [Number.isSafeInteger] : [];
  for (const c of def.checks ?? []) {
    const check = numberCheck(c._zod.def);
    if (!check) return undefined;
    out.push(check);
  }
  return out;
}

function numberCheck(d: CheckDef): ((n: number) => boolean) | undefined {
  if (d.check === 'number_format') return d.format === 'safeint' ? Number.isSafeInteger : undefined;
  const bound = d.value;
  if (typeof bound !== 'number') return undefined;
  if (d.check === 'greater_than') return d.inclusive ? (n) => n >= bound : (n) => n > bound;
  if (d.check === 'less_than') return d.inclusive ? (n) => n <= bound : (n) => n < bound;
  return undefined;
}

/**
 * The check `compile` makes of `schema`, made once: kept on the schema itself under `key` (null when it cannot be
 * compiled), a constant of the module that defines the schema, compiled the first time something is checked.
 */
export function compiledOnce<T>(
  schema: z.ZodType,
  key: symbol,
  compile: (schema: z.ZodType) => T | undefined,
): T | undefined {
  const holder = schema as unknown as Record<symbol, T | null | undefined>;
  let check = holder[key];
  if (check === undefined) {
    check = compile(schema) ?? null;
    if (Object.isExtensible(schema)) {
      Object.defineProperty(schema, key, { value: check, enumerable: false, configurable: true });
    }
  }
  return check ?? undefined;
}
