/**
 * Go's encoding/json Unmarshal into interface{} (Go 1.19): objects become map[string]interface{}, numbers float64,
 * and invalid input fails with Go's syntax error texts (`invalid character 'x' looking for beginning of value`,
 * `unexpected end of JSON input`).
 */
import { quoteGo } from '../fmt.js';
import type { GoValue } from '../../go-value/value.js';
import { newGoMap } from '../../go-value/value.js';
import { JsonError } from './go-json.js';

/** encoding/json's quoteChar for an error message (one byte, shown as a quoted character). */
function quoteChar(b: number): string {
  if (b === 0x27) return `'\\''`;
  if (b === 0x22) return `'"'`;
  const q = quoteGo(String.fromCharCode(b));
  return `'${q.slice(1, -1)}'`;
}

/**
 * Go refuses nesting beyond 10000 levels; kapps stops at 1000, so that the decoded value can be walked (printed,
 * converted, compared) without exhausting the call stack.
 */
const MAX_DEPTH = 1000;

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
    if (++this.depth > MAX_DEPTH) {
      throw new JsonError(`JSON nesting deeper than ${MAX_DEPTH} levels of objects and arrays (kapps' limit)`);
    }
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
            if (!isHex) this.err('in \\u hexadecimal character escape', true);
            this.i++;
          }
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(String.fromCharCode(e))) this.err('in string escape code', true);
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
