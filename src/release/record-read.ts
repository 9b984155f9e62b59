/**
 * Reading back a release record written by `recordYaml` (./record-yaml.ts), without the `yaml` package: the record
 * of a 1,000-kapp stack took the package over half a second to parse, most of `kapps preview`. The reader takes
 * exactly the writer's form — block maps and sequences indented by two spaces, keys and plain scalars the writer
 * leaves plain, JSON-style double-quoted strings, numbers as JavaScript prints them, `true`, `false`, `null`, `{}`,
 * `[]` and literal blocks (`|`, `|-`) — and gives the data the `yaml` package's `parse` gives for it. Anything else
 * (an older record, a hand-edited one, a comment but those the record starts with, an anchor, a duplicate key)
 * returns undefined: the caller parses
 * the text with the package then, and reports its problems as before.
 */
import { plainOk } from './record-yaml.js';

/** Numbers as `String(number)` writes them; longer integers are left to the package (its rounding). */
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:e[+-][0-9]+)?$/;
const LONG_INT = /^-?[0-9]{16,}$/;

/** Gave up: the text is not in the writer's form. */
class NotRecordForm extends Error {}

function fail(): never {
  throw new NotRecordForm();
}

/** The data of a record written by `recordYaml`, or undefined when the text is not in its form. */
export function readRecordYaml(text: string): unknown {
  if (!text.endsWith('\n')) return undefined;
  const lines = text.split('\n');
  lines.pop();
  try {
    const reader = new Reader(lines);
    // The comment lines a record starts with (the store's header).
    while (lines[reader.line]?.startsWith('#')) reader.line++;
    const first = lines[reader.line];
    if (first === undefined || first === '' || first.startsWith(' ')) return undefined;
    const value = reader.block(0, 0, 0);
    if (reader.line !== lines.length) return undefined;
    return value;
  } catch (e) {
    if (e instanceof NotRecordForm) return undefined;
    throw e;
  }
}

class Reader {
  /** The next line to read. */
  line = 0;

  constructor(readonly lines: readonly string[]) {}

  /** Whether line `i` holds content at exactly `indent` spaces. */
  #at(i: number, indent: number): boolean {
    const l = this.lines[i];
    if (l === undefined || l.length <= indent) return false;
    for (let k = 0; k < indent; k++) if (l.charCodeAt(k) !== 0x20) return false;
    return l.charCodeAt(indent) !== 0x20;
  }

  /** A non-empty block collection whose first item starts at column `start` of the current line; later lines at `indent`. */
  block(indent: number, start: number, depth: number): unknown {
    if (depth > 256) fail();
    const l = this.lines[this.line] as string;
    return l.startsWith('- ', start) || (l.length === start + 1 && l[start] === '-')
      ? this.seq(indent, start, depth)
      : this.map(indent, start, depth);
  }

  seq(indent: number, start: number, depth: number): unknown[] {
    const out: unknown[] = [];
    let col = start;
    for (;;) {
      const l = this.lines[this.line] as string;
      if (!l.startsWith('- ', col)) fail();
      out.push(this.item(l, col + 2, indent + 2, depth));
      if (!this.#at(this.line, indent) || !(this.lines[this.line] as string).startsWith('- ', indent)) return out;
      col = indent;
    }
  }

  /** A sequence item starting at column `col` of the current line (after `- `); its nested lines at `indent`. */
  item(l: string, col: number, indent: number, depth: number): unknown {
    const c = l.charCodeAt(col);
    if (c === 0x2d && l.startsWith('- ', col)) return this.block(indent, col, depth + 1);
    if (c === 0x22) {
      const end = quotedEnd(l, col);
      if (end === l.length) return this.inline(l, col, indent);
      if (l[end] === ':') return this.block(indent, col, depth + 1);
      fail();
    }
    const rest = l.slice(col);
    if (rest.includes(': ') || rest.endsWith(':')) return this.block(indent, col, depth + 1);
    return this.inline(l, col, indent);
  }

  map(indent: number, start: number, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    let col = start;
    for (;;) {
      const l = this.lines[this.line] as string;
      let key: string;
      let after: number;
      if (l.charCodeAt(col) === 0x22) {
        const end = quotedEnd(l, col);
        key = parseQuoted(l.slice(col, end));
        after = end;
      } else {
        let end = l.indexOf(': ', col);
        if (end < 0) end = l.endsWith(':') ? l.length - 1 : fail();
        key = l.slice(col, end);
        if (!plainOk(key)) fail();
        after = end;
      }
      if (l[after] !== ':' || key === '__proto__' || Object.hasOwn(out, key)) fail();
      if (after + 1 === l.length) {
        // A non-empty collection on the lines below, two spaces in.
        this.line++;
        if (!this.#at(this.line, indent + 2)) fail();
        out[key] = this.block(indent + 2, indent + 2, depth + 1);
      } else {
        if (l[after + 1] !== ' ') fail();
        out[key] = this.inline(l, after + 2, indent + 2);
      }
      if (!this.#at(this.line, indent) || (this.lines[this.line] as string).startsWith('- ', indent)) return out;
      col = indent;
    }
  }

  /** A scalar, `{}` or `[]` from column `col` to the end of the current line; a literal block's lines at `indent`. */
  inline(l: string, col: number, indent: number): unknown {
    const t = l.slice(col);
    this.line++;
    if (t.charCodeAt(0) === 0x22) {
      if (quotedEnd(t, 0) !== t.length) fail();
      return parseQuoted(t);
    }
    switch (t) {
      case 'true':
        return true;
      case 'false':
        return false;
      case 'null':
        return null;
      case '{}':
        return {};
      case '[]':
        return [];
      case '|':
      case '|-':
        return this.literal(indent, t === '|');
    }
    if (NUMBER.test(t)) {
      if (LONG_INT.test(t)) fail();
      return Number(t);
    }
    if (!plainOk(t)) fail();
    return t;
  }

  /** The lines of a literal block, `indent` spaces in (empty lines empty), from the current line. */
  literal(indent: number, keepNewline: boolean): string {
    const body: string[] = [];
    const pad = ' '.repeat(indent);
    for (;;) {
      const l = this.lines[this.line];
      if (l === undefined) break;
      if (l === '') {
        body.push('');
      } else if (l.length > indent && l.startsWith(pad)) {
        body.push(l.slice(indent));
      } else break;
      this.line++;
    }
    // The writer's literals start with a line of text and end with one (no leading blank, at most one final newline).
    if (body.length === 0 || body[0] === '' || body[0]?.startsWith(' ') || body.at(-1) === '') fail();
    const text = body.join('\n');
    if (/[ \t]\n|[ \t]$/.test(text)) fail();
    return keepNewline ? `${text}\n` : text;
  }
}

/** The index after the closing quote of the double-quoted scalar starting at `start`. */
function quotedEnd(l: string, start: number): number {
  for (let i = start + 1; i < l.length; i++) {
    const c = l.charCodeAt(i);
    if (c === 0x5c) i++;
    else if (c === 0x22) return i + 1;
  }
  return fail();
}

/** A JSON-style double-quoted scalar (the escapes JSON and YAML share). */
function parseQuoted(q: string): string {
  try {
    const v: unknown = JSON.parse(q);
    return typeof v === 'string' ? v : fail();
  } catch (e) {
    if (e instanceof NotRecordForm) throw e;
    return fail();
  }
}
