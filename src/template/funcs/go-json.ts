/**
 * Go's encoding/json (Go 1.19) Marshal for template values: sorted map keys, `<>&` escaped unless disabled, Go's
 * float format, MarshalIndent's layout, and Go's errors for values JSON cannot hold. Decoding: go-json-decode.ts.
 */
import { formatFloat } from '../fmt.js';
import type { GoValue } from '../../go-value/value.js';
import { GoIfaceMap, GoOpaque, goTypeName } from '../../go-value/value.js';
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
      const paired = c <= 0xdbff ? i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00 : false;
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
