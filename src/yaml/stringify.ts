/**
 * The `yaml` package's writer, for the commands that print YAML. They load it with `import()` of this module, not
 * of the package: bundled, a CommonJS package loaded with `import()` would offer only its default export.
 */
import { Document, stringify } from 'yaml';

export { stringify };

/**
 * `stringify(value, { lineWidth: 0 })`, the same text, written directly when the data is of the kinds a plan is
 * made of: plain objects and lists, safe integers, booleans, null, and strings of printable ASCII that the package
 * writes as they are or between double quotes. The package builds a document node by node and then writes it:
 * most of the time `kapps generate` of a small stack took after planning it. Anything else (another kind of value,
 * a string the package would write another way, an object met twice, which it writes as an alias) is left to the
 * package, for the whole value.
 */
export function stringifyData(value: unknown): string {
  return writeDirectly(value) ?? stringify(value, { lineWidth: 0 });
}

/** The package's tests for a plain scalar that would read back as another type than a string (`1`, `true`, `~`). */
const NON_STRING_TESTS: readonly RegExp[] = new Document().schema.tags.flatMap((tag) =>
  tag.default && tag.tag !== 'tag:yaml.org,2002:str' && tag.test instanceof RegExp ? [tag.test] : [],
);

/** What the package writes in quotes (or as a block), from its plain-scalar rules. */
const NOT_PLAIN = /^[\n\t ,[\]{}#&*!|>'"%@`]|^[?-]$|^[?-][ \t]|[\n:][ \t]|[ \t]\n|[\n\t ]#|[\n\t :]$/;
const DOCUMENT_MARKER = /^(%|---|\.\.\.)/m;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** A string as the package writes it (a map key or a value, block context), or undefined when it is not sure. */
function scalarText(s: string): string | undefined {
  if (s.length > 1000 || !PRINTABLE_ASCII.test(s) || DOCUMENT_MARKER.test(s)) return undefined;
  const quoted = NOT_PLAIN.test(s) || NON_STRING_TESTS.some((test) => test.test(s));
  if (!quoted) return s;
  // Double quotes, nothing escaped: the package chooses them for a text with neither kind of quote.
  return /["'\\]/.test(s) ? undefined : `"${s}"`;
}

class NotSure extends Error {}

/** The text, or undefined when it is left to the package. */
function writeDirectly(value: unknown): string | undefined {
  const seen = new Set<object>();
  const scalar = (v: unknown): string | undefined => {
    if (v === null) return 'null';
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (typeof v === 'number') return Number.isSafeInteger(v) && !Object.is(v, -0) ? String(v) : undefined;
    if (typeof v === 'string') return scalarText(v);
    return undefined;
  };
  /** A list or plain object, marked as met (once only), or undefined for a scalar. */
  const collection = (v: unknown): unknown[] | [string, unknown][] | undefined => {
    if (typeof v !== 'object' || v === null) return undefined;
    if (seen.has(v)) throw new NotSure();
    seen.add(v);
    if (Array.isArray(v)) return v as unknown[];
    const proto = Object.getPrototypeOf(v) as unknown;
    if ((proto !== Object.prototype && proto !== null) || 'toJSON' in v) throw new NotSure();
    return Object.entries(v);
  };
  /** A non-empty collection whose first line the caller has placed; its other lines start at `indent`. */
  const block = (v: unknown, entries: unknown[] | [string, unknown][], indent: number): string => {
    const pad = `\n${' '.repeat(indent)}`;
    let out = '';
    if (Array.isArray(v)) {
      for (const [i, item] of (entries as unknown[]).entries()) {
        out += `${i === 0 ? '' : pad}- ${nested(item, indent + 2, false)}`;
      }
      return out;
    }
    for (const [i, [key, item]] of (entries as [string, unknown][]).entries()) {
      const k = scalarText(key);
      if (k === undefined || k.length > 100) throw new NotSure();
      out += `${i === 0 ? '' : pad}${k}:${nested(item, indent + 2, true)}`;
    }
    return out;
  };
  /** An item of a list (`afterKey` false) or the value of a key, whose collection would start at `indent`. */
  const nested = (v: unknown, indent: number, afterKey: boolean): string => {
    const entries = collection(v);
    if (entries === undefined) {
      const s = scalar(v);
      if (s === undefined) throw new NotSure();
      return afterKey ? ` ${s}` : s;
    }
    if (entries.length === 0) {
      const empty = Array.isArray(v) ? '[]' : '{}';
      return afterKey ? ` ${empty}` : empty;
    }
    const text = block(v, entries, indent);
    return afterKey ? `\n${' '.repeat(indent)}${text}` : text;
  };
  try {
    const entries = collection(value);
    if (entries === undefined) return undefined;
    if (entries.length === 0) return Array.isArray(value) ? '[]\n' : '{}\n';
    return `${block(value, entries, 0)}\n`;
  } catch (e) {
    if (e instanceof NotSure) return undefined;
    throw e;
  }
}
