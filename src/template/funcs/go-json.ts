/**
 * Go's encoding/json (Go 1.19) for template values: Marshal (sorted map keys, `<>&` escaped unless disabled,
 * Go's float format, MarshalIndent) and Unmarshal into interface{} (numbers become float64) with Go's syntax error
 * texts (`invalid character 'x' looking for beginning of value`, `unexpected end of JSON input`).
 */
import { formatFloat, quoteGo } from '../fmt.js';
import type { GoValue } from '../value.js';
import { GoIfaceMap, GoOpaque, goTypeName, newGoMap } from '../value.js';
import { compareGoStrings } from './go-string.js';

/** A Marshal or Unmarshal failure, with Go's error text. */
export class JsonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonError';
  }
}

/** Lists that stand for Go's nil slice: they marshal as `null` (e.g. `rest` of an empty list). */
const nilSlices = new WeakSet<object>();

/** Mark a list as Go's nil slice (prints `[]`, marshals as `null`). */
export function nilSlice(list: GoValue[] = []): GoValue[] {
  nilSlices.add(list);
  return list;
}

/** Opaque values that marshal as a JSON string of their display (types with MarshalJSON/MarshalText). */
const jsonStringers = new WeakSet<GoOpaque>();

/** Declare that an opaque value marshals as the JSON string of what it prints. */
export function marshalsAsString(v: GoOpaque): GoOpaque {
  jsonStringers.add(v);
  return v;
}

const HEX = '0123456789abcdef';

function encodeString(s: string, escapeHTML: boolean): string {
  let out = '"';
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let rep: string | undefined;
    if (c < 0x20 || c === 0x22 || c === 0x5c || (escapeHTML && (c === 0x3c || c === 0x3e || c === 0x26))) {
      if (c === 0x22 || c === 0x5c) rep = '\\' + String.fromCharCode(c);
      else if (c === 0x0a) rep = '\\n';
      else if (c === 0x0d) rep = '\\r';
      else if (c === 0x09) rep = '\\t';
      else rep = `\\u00${HEX[c >> 4] ?? '0'}${HEX[c & 15] ?? '0'}`;
    } else if (c === 0x2028 || c === 0x2029) rep = `\\u202${c & 15}`;
    else if (c >= 0xd800 && c <= 0xdfff) {
      // A lone surrogate has no UTF-8 form: Go sees an invalid byte and writes U+FFFD.
      const paired =
        c <= 0xdbff ? i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00 : false;
      if (paired) {
        i++;
        continue;
      }
      rep = '\\ufffd';
    }
    if (rep !== undefined) {
      out += s.slice(start, i) + rep;
      start = i + 1;
    }
  }
  return out + s.slice(start) + '"';
}

function encodeFloat(f: number): string {
  if (!Number.isFinite(f)) throw new JsonError(`json: unsupported value: ${formatFloat(f, 'g', -1)}`);
  const abs = Math.abs(f);
  if (abs !== 0 && (abs < 1e-6 || abs >= 1e21)) {
    // Go writes e-07 as e-7.
    return formatFloat(f, 'e', -1).replace(/e-0(\d)$/, 'e-$1');
  }
  return formatFloat(f, 'f', -1);
}

function encode(v: GoValue, escapeHTML: boolean): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    case 'number':
      return encodeFloat(v);
    case 'string':
      return encodeString(v, escapeHTML);
    default:
      break;
  }
  if (Array.isArray(v)) {
    if (v.length === 0 && nilSlices.has(v)) return 'null';
    return '[' + v.map((e) => encode(e, escapeHTML)).join(',') + ']';
  }
  if (v instanceof GoOpaque) {
    if (jsonStringers.has(v)) return encodeString(v.display(), escapeHTML);
    return '{}';
  }
  if (v instanceof GoIfaceMap) throw new JsonError(`json: unsupported type: ${goTypeName(v)}`);
  const keys = Object.keys(v).sort(compareGoStrings);
  return '{' + keys.map((k) => encodeString(k, escapeHTML) + ':' + encode(v[k] ?? null, escapeHTML)).join(',') + '}';
}

/** json.Marshal (escapeHTML) or an Encoder with SetEscapeHTML(false); throws JsonError. */
export function marshalJson(v: GoValue, escapeHTML = true): string {
  return encode(v, escapeHTML);
}

/** json.Indent with prefix "" and the given indent, applied to compact JSON. */
export function indentJson(compact: string, indent: string): string {
  let out = '';
  let depth = 0;
  let inString = false;
  let needIndent = false;
  for (let i = 0; i < compact.length; i++) {
    const c = compact[i] ?? '';
    if (inString) {
      out += c;
      if (c === '\\') {
        out += compact[i + 1] ?? '';
        i++;
      } else if (c === '"') inString = false;
      continue;
    }
    if (needIndent && c !== ']' && c !== '}') {
      out += '\n' + indent.repeat(depth);
      needIndent = false;
    }
    switch (c) {
      case '"':
        inString = true;
        out += c;
        break;
      case '{':
      case '[':
        out += c;
        depth++;
        needIndent = true;
        break;
      case ',':
        out += c + '\n' + indent.repeat(depth);
        break;
      case ':':
        out += ': ';
        break;
      case '}':
      case ']':
        depth--;
        if (needIndent) needIndent = false;
        else out += '\n' + indent.repeat(depth);
        out += c;
        break;
      default:
        out += c;
    }
  }
  return out;
}

// ---- decoding ----

/** encoding/json's quoteChar for an error message (one byte, shown as a quoted character). */
function quoteChar(b: number): string {
  if (b === 0x27) return `'\\''`;
  if (b === 0x22) return `'"'`;
  const q = quoteGo(String.fromCharCode(b));
  return `'${q.slice(1, -1)}'`;
}

const MAX_DEPTH = 10000;

/** A byte-level JSON validator with Go's error messages (the scanner's states, written as a recursive reader). */
class Scanner {
  private i = 0;
  private depth = 0;

  constructor(private readonly b: Uint8Array) {}

  /**
   * Fail at the current byte. At the end of the input Go feeds the scanner a space: inside a number or a literal
   * that space is the offending character (`eofAsSpace`), elsewhere the input simply ended.
   */
  private err(context: string, eofAsSpace = false): never {
    let c = this.b[this.i];
    if (c === undefined && eofAsSpace) c = 0x20;
    if (c === undefined) throw new JsonError('unexpected end of JSON input');
    throw new JsonError(`invalid character ${quoteChar(c)} ${context}`);
  }

  private ws(): void {
    for (;;) {
      const c = this.b[this.i];
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) this.i++;
      else return;
    }
  }

  validate(): void {
    this.ws();
    this.value('looking for beginning of value');
    this.ws();
    if (this.i < this.b.length) this.err('after top-level value');
  }

  private value(context: string): void {
    const c = this.b[this.i];
    switch (c) {
      case 0x7b:
        this.object();
        return;
      case 0x5b:
        this.array();
        return;
      case 0x22:
        this.string();
        return;
      case 0x74:
        this.literal('true');
        return;
      case 0x66:
        this.literal('false');
        return;
      case 0x6e:
        this.literal('null');
        return;
      default:
        if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) {
          this.number();
          return;
        }
        this.err(context);
    }
  }

  private push(): void {
    if (++this.depth > MAX_DEPTH) this.err('exceeded max depth');
  }

  private object(): void {
    this.push();
    this.i++;
    this.ws();
    if (this.b[this.i] === 0x7d) {
      this.i++;
      this.depth--;
      return;
    }
    for (;;) {
      if (this.b[this.i] !== 0x22) this.err('looking for beginning of object key string');
      this.string();
      this.ws();
      if (this.b[this.i] !== 0x3a) this.err('after object key');
      this.i++;
      this.ws();
      this.value('looking for beginning of value');
      this.ws();
      const c = this.b[this.i];
      if (c === 0x2c) {
        this.i++;
        this.ws();
        continue;
      }
      if (c === 0x7d) {
        this.i++;
        this.depth--;
        return;
      }
      this.err('after object key:value pair');
    }
  }

  private array(): void {
    this.push();
    this.i++;
    this.ws();
    if (this.b[this.i] === 0x5d) {
      this.i++;
      this.depth--;
      return;
    }
    for (;;) {
      this.value('looking for beginning of value');
      this.ws();
      const c = this.b[this.i];
      if (c === 0x2c) {
        this.i++;
        this.ws();
        continue;
      }
      if (c === 0x5d) {
        this.i++;
        this.depth--;
        return;
      }
      this.err('after array element');
    }
  }

  private string(): void {
    this.i++;
    for (;;) {
      const c = this.b[this.i];
      if (c === undefined) this.err('in string literal');
      if (c === 0x22) {
        this.i++;
        return;
      }
      if (c < 0x20) this.err('in string literal');
      if (c === 0x5c) {
        this.i++;
        const e = this.b[this.i];
        if (e === 0x75) {
          this.i++;
          for (let k = 0; k < 4; k++) {
            const h = this.b[this.i];
            const isHex =
              h !== undefined && ((h >= 0x30 && h <= 0x39) || (h >= 0x61 && h <= 0x66) || (h >= 0x41 && h <= 0x46));
            if (!isHex) this.err('in \\u hexadecimal character escape');
            this.i++;
          }
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(String.fromCharCode(e))) this.err('in string escape code');
        this.i++;
        continue;
      }
      this.i++;
    }
  }

  private digits(): number {
    const start = this.i;
    while (this.i < this.b.length && (this.b[this.i] ?? 0) >= 0x30 && (this.b[this.i] ?? 0) <= 0x39) this.i++;
    return this.i - start;
  }

  private number(): void {
    if (this.b[this.i] === 0x2d) {
      this.i++;
      const c = this.b[this.i];
      if (c === undefined || c < 0x30 || c > 0x39) this.err('in numeric literal', true);
    }
    if (this.b[this.i] === 0x30) this.i++;
    else this.digits();
    if (this.b[this.i] === 0x2e) {
      this.i++;
      if (this.digits() === 0) this.err('after decimal point in numeric literal', true);
    }
    const e = this.b[this.i];
    if (e === 0x65 || e === 0x45) {
      this.i++;
      const s = this.b[this.i];
      if (s === 0x2b || s === 0x2d) this.i++;
      if (this.digits() === 0) this.err('in exponent of numeric literal', true);
    }
  }

  private literal(word: string): void {
    this.i++;
    for (let k = 1; k < word.length; k++) {
      if (this.b[this.i] !== word.charCodeAt(k)) this.err(`in literal ${word} (expecting '${word[k] ?? ''}')`, true);
      this.i++;
    }
  }
}

function fromParsed(v: unknown): GoValue {
  if (v === null) return null;
  switch (typeof v) {
    case 'boolean':
    case 'string':
      return v;
    case 'number':
      return v;
    default:
      break;
  }
  if (Array.isArray(v)) return v.map(fromParsed);
  const m = newGoMap();
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) m[k] = fromParsed(val);
  return m;
}

/** json.Unmarshal into interface{}: objects → map[string]interface{}, numbers → float64; throws JsonError. */
export function unmarshalJson(text: string): GoValue {
  const bytes = new TextEncoder().encode(text);
  new Scanner(bytes).validate();
  const parsed: unknown = JSON.parse(text);
  if (containsOverflow(parsed)) throw new JsonError(overflowMessage(text));
  return fromParsed(parsed);
}

function containsOverflow(v: unknown): boolean {
  if (typeof v === 'number') return !Number.isFinite(v);
  if (Array.isArray(v)) return v.some(containsOverflow);
  if (v !== null && typeof v === 'object') return Object.values(v as Record<string, unknown>).some(containsOverflow);
  return false;
}

function overflowMessage(text: string): string {
  const m = /-?\d+(?:\.\d+)?[eE][+-]?\d+|-?\d{309,}(?:\.\d+)?/.exec(text);
  return `json: cannot unmarshal number ${m ? m[0] : ''} into Go value of type float64`;
}
