/**
 * YAML 1.1 scalar resolution exactly as Go's gopkg.in/yaml.v2 (v2.4.0) performs it when decoding into
 * `interface{}`: which plain scalars are booleans, nulls, ints and floats, and what explicit `!!` tags do.
 *
 * Not handled here: scalar syntax (quoting, folding, escapes), which the YAML parser resolves before this runs.
 */
import { formatFloat } from '../go-value/float-format.js';
import type { GoKey, GoValue } from '../go-value/value.js';

/** The long form of the standard tags that yaml.v2 resolves. */
const TAG = 'tag:yaml.org,2002:';
const STR = `${TAG}str`;
const BINARY = `${TAG}binary`;
const BOOL = `${TAG}bool`;
const INT = `${TAG}int`;
const FLOAT = `${TAG}float`;
const TIMESTAMP = `${TAG}timestamp`;
const NULL = `${TAG}null`;
const MERGE = `${TAG}merge`;

/** Resolution kinds, named after yaml.v2's tags. */
type Kind = 'str' | 'bool' | 'int' | 'float' | 'null' | 'timestamp';

/** Words resolved by lookup (yaml.v2's resolve map). */
const WORDS = new Map<string, [Kind, GoValue]>();
for (const w of ['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']) WORDS.set(w, ['bool', true]);
for (const w of ['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF'])
  WORDS.set(w, ['bool', false]);
for (const w of ['', '~', 'null', 'Null', 'NULL']) WORDS.set(w, ['null', null]);
for (const w of ['.nan', '.NaN', '.NAN']) WORDS.set(w, ['float', NaN]);
for (const w of ['.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF']) WORDS.set(w, ['float', Infinity]);
for (const w of ['-.inf', '-.Inf', '-.INF']) WORDS.set(w, ['float', -Infinity]);

/** yaml.v2's `yamlStyleFloat`. */
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** Go's float literal syntax for text starting with `.` (underscores only between digits). */
const DOT_FLOAT = /^\.[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+(?:_[0-9]+)*)?$/;
/** The timestamp forms yaml.v2 recognises (date only; date and time with a zone; date and time with a space). */
const TIMESTAMP_RE =
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?(?:Z|[-+][0-9]{2}:[0-9]{2}))|(?: [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?))?$/;
/** The first character of a scalar decides which resolutions are tried (yaml.v2's resolve table). */
function hint(c: string | undefined): 'S' | 'D' | 'M' | '.' | undefined {
  if (c === undefined) return 'M';
  if (c === '+' || c === '-') return 'S';
  if (c >= '0' && c <= '9') return 'D';
  if ('yYnNtTfFoO~'.includes(c)) return 'M';
  if (c === '.') return '.';
  return undefined;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;
const DIGITS: Record<number, RegExp> = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ };

/** strconv.ParseUint(s, base, 64) without sign handling; base 0 detects 0x/0o/0b/0 prefixes. */
function parseUnsigned(s: string, base: number): bigint | undefined {
  let b = base;
  let digits = s;
  if (base === 0) {
    b = 10;
    if (s.length > 1 && s[0] === '0') {
      const p = s[1]?.toLowerCase();
      if (p === 'x') [b, digits] = [16, s.slice(2)];
      else if (p === 'o') [b, digits] = [8, s.slice(2)];
      else if (p === 'b') [b, digits] = [2, s.slice(2)];
      else [b, digits] = [8, s.slice(1)];
    }
  }
  const re = DIGITS[b];
  if (!re?.test(digits)) return undefined;
  const prefix = b === 16 ? '0x' : b === 8 ? '0o' : b === 2 ? '0b' : '';
  const v = BigInt(prefix + digits);
  return v > UINT64_MAX ? undefined : v;
}

/** strconv.ParseInt(s, base, 64): optional sign, then digits; undefined on syntax or range error. */
function parseSigned(s: string, base: number): bigint | undefined {
  let neg = false;
  let body = s;
  if (s[0] === '+' || s[0] === '-') {
    neg = s[0] === '-';
    body = s.slice(1);
  }
  const u = parseUnsigned(body, base);
  if (u === undefined) return undefined;
  const v = neg ? -u : u;
  return v < INT64_MIN || v > INT64_MAX ? undefined : v;
}

/** strconv.ParseFloat for decimal text already known to be well formed; undefined when out of range. */
function parseDecimalFloat(s: string): number | undefined {
  const f = Number(s);
  return Number.isFinite(f) ? f : undefined;
}

/**
 * The value of an untagged plain scalar: yaml.v2's `resolve("", in)` as decoded into `interface{}` (so a
 * timestamp stays its text). The merge key `<<` is a string here; `isMergeKey` recognises it as a key.
 */
export function resolvePlain(text: string): GoValue {
  const h = hint(text[0]);
  if (h === undefined) return text;
  const word = WORDS.get(text);
  if (word) return word[1];
  if (h === 'M') return text;
  if (h === '.') {
    if (DOT_FLOAT.test(text)) {
      const f = parseDecimalFloat(text.replace(/_/g, ''));
      if (f !== undefined) return f;
    }
    return text;
  }
  if (TIMESTAMP_RE.test(text)) return text;
  const plain = text.includes('_') ? text.replace(/_/g, '') : text;
  const i = parseSigned(plain, 0);
  if (i !== undefined) return i;
  const u = plain[0] === '+' || plain[0] === '-' ? undefined : parseUnsigned(plain, 0);
  if (u !== undefined) return u;
  if (YAML_STYLE_FLOAT.test(plain)) {
    const f = parseDecimalFloat(plain);
    if (f !== undefined) return f;
  }
  if (plain.startsWith('0b')) {
    const b = parseSigned(plain.slice(2), 2) ?? parseUnsigned(plain.slice(2), 2);
    if (b !== undefined) return b;
  } else if (plain.startsWith('-0b')) {
    const b = parseSigned(`-${plain.slice(3)}`, 2);
    if (b !== undefined) return b;
  }
  return text;
}

/** How yaml.v2 resolves a plain scalar's text, as a tag kind (for checking explicit tags). */
function resolvePlainKind(text: string): [Kind, GoValue] {
  const value = resolvePlain(text);
  switch (typeof value) {
    case 'boolean':
      return ['bool', value];
    case 'bigint':
      return ['int', value];
    case 'number':
      return ['float', value];
    default:
      if (value === null) return ['null', null];
      return hint(text[0]) === 'D' && TIMESTAMP_RE.test(text) ? ['timestamp', text] : ['str', text];
  }
}

/** Whether an untagged plain scalar is the merge key `<<`. */
export function isMergeKey(text: string): boolean {
  return text === '<<';
}

/** A scalar's resolved value and whether it is the `<<` merge key. */
export interface ResolvedScalar {
  readonly value: GoValue;
  /** The text a string field receives (the scalar's text; decoded bytes for `!!binary`). */
  readonly text: string;
  readonly merge: boolean;
}

/** Thrown for a scalar whose explicit tag does not fit its text (`!!int abc`, bad `!!binary`). */
export class ScalarTagError extends Error {}

const KIND_TAG: Record<Kind, string> = {
  str: STR,
  bool: BOOL,
  int: INT,
  float: FLOAT,
  null: NULL,
  timestamp: TIMESTAMP,
};

function shortTag(tag: string): string {
  return tag.startsWith(TAG) ? `!!${tag.slice(TAG.length)}` : tag;
}

/**
 * Resolve a scalar as yaml.v2 decodes it into `interface{}`.
 * @param text the scalar's value after YAML unquoting and folding
 * @param plain whether it was written unquoted (plain style); quoted and block scalars are strings
 * @param tag the explicit tag in long form (`tag:yaml.org,2002:int`, `!custom`), if any
 */
export function resolveScalar(text: string, plain: boolean, tag?: string): ResolvedScalar {
  if (tag === undefined || tag === '') {
    if (!plain) return { value: text, text, merge: false };
    // yaml.v2 recognises the merge key by its text, before (and regardless of) scalar resolution.
    return { value: resolvePlain(text), text, merge: isMergeKey(text) };
  }
  if (tag === STR) return { value: text, text, merge: false };
  if (tag === BINARY) {
    const clean = text.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 !== 0) {
      throw new ScalarTagError('!!binary value contains invalid base64 data');
    }
    const decoded = Buffer.from(clean, 'base64').toString('utf8');
    return { value: decoded, text: decoded, merge: false };
  }
  if (tag === MERGE) return { value: text, text, merge: text === '<<' };
  if (tag !== BOOL && tag !== INT && tag !== FLOAT && tag !== TIMESTAMP && tag !== NULL) {
    // yaml.v2 leaves other tags (custom `!x`, `!!seq` on a scalar, ...) unresolved: the text as a string.
    return { value: text, text, merge: false };
  }
  const [kind, value] = resolvePlainKind(text);
  const rtag = KIND_TAG[kind];
  if (rtag === tag) return { value: kind === 'timestamp' ? text : value, text, merge: false };
  if (tag === FLOAT && kind === 'int' && typeof value === 'bigint') return { value: Number(value), text, merge: false };
  throw new ScalarTagError(`cannot decode ${shortTag(rtag)} \`${text}\` as a ${shortTag(tag)}`);
}

/** A Go map key as `%v` prints it (how kapps turns a YAML 1.1 key such as `1`, `y` or `1.5` into a string key). */
export function formatGoKey(key: GoKey): string {
  if (key === null) return '<nil>';
  switch (typeof key) {
    case 'string':
      return key;
    case 'bigint':
      return key.toString();
    case 'number':
      return formatFloat(key, 'g', -1);
    default:
      return key ? 'true' : 'false';
  }
}
