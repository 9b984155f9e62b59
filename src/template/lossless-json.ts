/**
 * A JSON reader that keeps Go's number typing: a number written without `.`, `e` or `E` is a Go int (bigint; one too
 * big for int64 stays exact as uint64, beyond that it becomes a float64), any other number is a float64. Objects
 * become map[string]interface{} (null-prototype objects), arrays []interface{}.
 */
import type { GoMap, GoValue } from '../go-value/value.js';
import { newGoMap } from '../go-value/value.js';

const UINT64_MAX = (1n << 64n) - 1n;

/** A JSON syntax error with the offset where it was found. */
export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`);
    this.name = 'JsonSyntaxError';
  }
}

class Reader {
  i = 0;
  constructor(readonly s: string) {}

  fail(message: string): never {
    throw new JsonSyntaxError(message, this.i);
  }

  ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++;
      else break;
    }
  }

  value(): GoValue {
    this.ws();
    const c = this.s[this.i];
    switch (c) {
      case '{':
        return this.object();
      case '[':
        return this.array();
      case '"':
        return this.string();
      case 't':
        return this.literal('true', true);
      case 'f':
        return this.literal('false', false);
      case 'n':
        return this.literal('null', null);
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number();
        return this.fail(c === undefined ? 'unexpected end of JSON' : `unexpected character ${JSON.stringify(c)}`);
    }
  }

  literal<T extends GoValue>(word: string, v: T): T {
    if (!this.s.startsWith(word, this.i)) this.fail('invalid literal');
    this.i += word.length;
    return v;
  }

  number(): GoValue {
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.s.slice(this.i, this.i + 400));
    if (!m) return this.fail('invalid number');
    const text = m[0];
    this.i += text.length;
    if (m[1] === undefined && m[2] === undefined) {
      const n = BigInt(text);
      if (n <= UINT64_MAX && n >= -(1n << 63n)) return n;
    }
    return Number(text);
  }

  string(): string {
    const s = this.s;
    this.i++;
    let out = '';
    let start = this.i;
    for (;;) {
      if (this.i >= s.length) this.fail('unterminated string');
      const c = s.charCodeAt(this.i);
      if (c === 0x22) {
        out += s.slice(start, this.i);
        this.i++;
        return out;
      }
      if (c < 0x20) this.fail('control character in string');
      if (c !== 0x5c) {
        this.i++;
        continue;
      }
      out += s.slice(start, this.i);
      const e = s[this.i + 1];
      this.i += 2;
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const hex = s.slice(this.i, this.i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('invalid \\u escape');
          out += String.fromCharCode(parseInt(hex, 16));
          this.i += 4;
          break;
        }
        default:
          this.fail('invalid escape');
      }
      start = this.i;
    }
  }

  array(): GoValue[] {
    this.i++;
    const out: GoValue[] = [];
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.ws();
      const c = this.s[this.i++];
      if (c === ']') return out;
      if (c !== ',') this.fail('expected , or ]');
    }
  }

  object(): GoMap {
    this.i++;
    const out = newGoMap();
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail('expected string key');
      const k = this.string();
      this.ws();
      if (this.s[this.i++] !== ':') this.fail('expected :');
      out[k] = this.value();
      this.ws();
      const c = this.s[this.i++];
      if (c === '}') return out;
      if (c !== ',') this.fail('expected , or }');
    }
  }
}

/** Parse JSON text into Go values with int/float typing kept. Throws JsonSyntaxError. */
export function parseLosslessJson(text: string): GoValue {
  const r = new Reader(text);
  const v = r.value();
  r.ws();
  if (r.i < text.length) r.fail('unexpected trailing data');
  return v;
}
