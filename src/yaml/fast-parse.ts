/**
 * A fast YAML front-end for the common shape of configuration files: block maps and lists, plain scalars (also
 * over several lines), single-line quoted scalars, literal and folded block scalars, single-line flow collections,
 * anchors and aliases, comments. It gives up (returns undefined) on anything else — tags, multi-line quoted scalars,
 * explicit keys, tabs, CR line ends, directives, and every syntax error — and the caller then parses with the
 * `yaml` package, which produces the same tree or the error. The `yaml` package parses about 2 MB/s; stacks of
 * thousands of kapps need far more.
 *
 * Positions follow the `yaml` package's conventions exactly: a scalar spans its text (quotes included), an empty
 * value sits after its indicator and the spaces following it, collections and block scalars start where they begin.
 */
import {
  COLON,
  DASH,
  FLOW_END,
  GIVE_UP,
  HASH,
  LineScanner,
  NL,
  PLAIN_BLOCK,
  RESERVED_START,
  SPACE,
} from './fast-scanner.js';
import type { YamlNode, YamlScalarNode } from './tree.js';

/** The block and flow structure of the first document, on top of the scanner. */
class FastParser extends LineScanner {
  /** End of the key text found by the last successful `implicitKeyAt`. */
  keyEnd = 0;
  /** Position after the `:` of that key. */
  keyAfter = 0;

  /**
   * Whether an implicit key (`key: ...`) starts at i on this line; if so, `keyEnd` and `keyAfter` are set.
   */
  implicitKeyAt(i: number): boolean {
    const src = this.src;
    const c = this.code(i);
    if (c === 0x22 || c === 0x27) {
      const end = this.quotedEnd(i);
      let j = end;
      while (this.code(j) === SPACE) j++;
      if (this.code(j) !== COLON || !this.isBlank(j + 1)) return false;
      this.keyEnd = end;
      this.keyAfter = j + 1;
      return true;
    }
    if (RESERVED_START.has(c) || c === NL) return false;
    if ((c === DASH || c === 0x3f || c === COLON) && this.isBlank(i + 1)) return false;
    // The plain text runs up to `: `, ` #` or the line end; a key is text ending at `: `.
    PLAIN_BLOCK.lastIndex = i;
    PLAIN_BLOCK.test(src);
    const j = PLAIN_BLOCK.lastIndex;
    if (this.code(j) !== COLON) return false;
    let end = j;
    while (src.charCodeAt(end - 1) === SPACE) end--;
    if (end - i > 1024) this.giveUp();
    this.keyEnd = end;
    this.keyAfter = j + 1;
    return true;
  }

  /** The key at pos, just found by `implicitKeyAt`; leaves pos after the `:`. */
  key(): YamlScalarNode {
    const start = this.pos;
    const c = this.code(start);
    const quoted = c === 0x22 || c === 0x27;
    const text = quoted ? this.unquote(start, this.keyEnd) : this.src.slice(start, this.keyEnd);
    const node = this.asm.scalar(text, !quoted, undefined, start, this.keyEnd);
    this.pos = this.keyAfter;
    return node;
  }

  /** Read one collection, counting its nesting (a document nested too deeply is refused before recursing on). */
  private nested(read: () => YamlNode): YamlNode {
    this.asm.enter(this.pos);
    try {
      return read();
    } finally {
      this.asm.leave();
    }
  }

  /** A block mapping whose first key is at pos, at column `indent`. */
  blockMap(indent: number, top: boolean): YamlNode {
    return this.nested(() => this.blockMapContent(indent, top));
  }

  private blockMapContent(indent: number, top: boolean): YamlNode {
    const at = this.pos;
    const keys: YamlNode[] = [];
    const values: YamlNode[] = [];
    for (;;) {
      if (!this.implicitKeyAt(this.pos)) this.giveUp();
      keys.push(this.key());
      values.push(this.valueAfterIndicator(indent, true));
      const next = this.nextContentLine();
      if (next < indent) break;
      if (next > indent) this.giveUp();
      this.pos += indent;
      if (this.isSeqEntry(this.pos)) this.giveUp();
    }
    return this.asm.map(keys, values, at, top);
  }

  /** A block sequence whose first `-` is at pos, at column `indent`. */
  blockSeq(indent: number): YamlNode {
    return this.nested(() => this.blockSeqContent(indent));
  }

  private blockSeqContent(indent: number): YamlNode {
    const at = this.pos;
    const items: YamlNode[] = [];
    for (;;) {
      this.pos++;
      items.push(this.seqItem(indent));
      const next = this.nextContentLine();
      if (next < indent) break;
      if (next > indent) this.giveUp();
      // Anything else at this indentation ends the list (a `key:` after a list written at the key's indentation).
      if (!this.isSeqEntry(this.pos + indent)) break;
      this.pos += indent;
    }
    return this.asm.seq(items, at);
  }

  /** The content of a sequence item; pos is after its `-`. */
  seqItem(indent: number): YamlNode {
    this.skipSpaces();
    const i = this.pos;
    if (!this.isEol(i) && this.code(i) !== HASH) {
      const column = i - this.lineStart;
      if (this.isSeqEntry(i)) return this.blockSeq(column);
      if (this.implicitKeyAt(i)) return this.blockMap(column, false);
    }
    return this.valueAfterIndicator(indent, false);
  }

  /**
   * The value after `key:` or `- ` (pos is after the indicator), whose parent collection is at column `indent`.
   * `inMap` allows a sequence at the same indentation as the key (`key:\n- item`).
   */
  valueAfterIndicator(indent: number, inMap: boolean): YamlNode {
    this.skipSpaces();
    const i = this.pos;
    if (this.isEol(i) || this.code(i) === HASH) {
      const empty = this.asm.nullScalar(i, i);
      this.newLine();
      const next = this.nextContentLine();
      if (next > indent) {
        this.pos += next;
        return this.blockNode(indent);
      }
      if (inMap && next === indent && this.isSeqEntry(this.pos + next)) {
        this.pos += next;
        return this.blockSeq(next);
      }
      return empty;
    }
    if (this.code(i) === 0x26) return this.anchored(indent, inMap);
    return this.inlineLine(indent);
  }

  /**
   * A value starting on the current line at pos: a block scalar or a (possibly multi-line) plain scalar, which
   * consume their lines, or an alias, flow collection or quoted scalar, after which the line must end.
   */
  inlineLine(parentIndent: number): YamlNode {
    const c = this.code(this.pos);
    let node: YamlNode;
    if (c === 0x7c || c === 0x3e) return this.blockScalar(parentIndent);
    if (c === 0x2a) node = this.alias(false);
    else if (c === 0x5b || c === 0x7b) node = this.flowNode();
    else if (c === 0x22 || c === 0x27) node = this.quoted();
    else return this.plainBlock(parentIndent);
    this.endLine();
    return node;
  }

  /** `&anchor` followed by a value on the same line or on the next lines. */
  anchored(indent: number, inMap: boolean): YamlNode {
    const start = this.pos + 1;
    let j = start;
    while (!this.isBlank(j) && !FLOW_END.has(this.code(j))) j++;
    if (j === start || !this.isBlank(j)) this.giveUp();
    const name = this.src.slice(start, j);
    this.asm.beginAnchor(name);
    this.pos = j;
    this.skipSpaces();
    let node: YamlNode;
    if (this.isEol(this.pos) || this.code(this.pos) === HASH) {
      this.newLine();
      const next = this.nextContentLine();
      if (next > indent) {
        this.pos += next;
        node = this.blockNode(indent);
      } else if (inMap && next === indent && this.isSeqEntry(this.pos + next)) {
        this.pos += next;
        node = this.blockSeq(next);
      } else this.giveUp();
    } else {
      const c = this.code(this.pos);
      if (c === 0x26 || c === 0x2a || this.implicitKeyAt(this.pos)) this.giveUp();
      node = this.inlineLine(indent);
    }
    this.asm.endAnchor(name, node);
    return node;
  }

  /** A node starting on the current line at pos, below a collection at column `parentIndent`. */
  blockNode(parentIndent: number): YamlNode {
    const column = this.pos - this.lineStart;
    if (this.isSeqEntry(this.pos)) return this.blockSeq(column);
    if (this.implicitKeyAt(this.pos)) return this.blockMap(column, false);
    if (this.code(this.pos) === 0x26) this.giveUp();
    return this.inlineLine(parentIndent);
  }

  /** A single-line quoted scalar at pos. */
  quoted(): YamlNode {
    const i = this.pos;
    const end = this.quotedEnd(i);
    const text = this.unquote(i, end);
    this.pos = end;
    return this.asm.scalar(text, false, undefined, i, end);
  }

  alias(flow: boolean): YamlNode {
    const start = this.pos + 1;
    let j = start;
    while (!this.isBlank(j) && !FLOW_END.has(this.code(j))) j++;
    if (j === start || (!flow && !this.isBlank(j))) this.giveUp();
    this.pos = j;
    return this.asm.alias(this.src.slice(start, j), start - 1, j);
  }

  /** A plain scalar in a flow collection (single-line). */
  flowPlain(): YamlNode {
    const start = this.pos;
    const end = this.scanPlain(true);
    return this.asm.scalar(this.src.slice(start, end), true, undefined, start, end);
  }

  /**
   * A plain scalar in block context, which may continue on following lines indented more than `parentIndent`
   * (lines are joined with a space; each empty line between them becomes a line break). Consumes its lines.
   */
  plainBlock(parentIndent: number): YamlNode {
    const src = this.src;
    const start = this.pos;
    let end = this.scanPlain(false);
    let text = src.slice(start, end);
    for (;;) {
      this.skipSpaces();
      if (!this.isEol(this.pos)) {
        // A comment ends the scalar.
        this.endLine();
        break;
      }
      this.newLine();
      const save = { pos: this.pos, line: this.line, lineStart: this.lineStart };
      let empties = 0;
      let spaces = -1;
      while (this.pos < src.length) {
        let k = this.pos;
        while (k < src.length && src.charCodeAt(k) === SPACE) k++;
        if (!this.isEol(k)) {
          spaces = k - this.pos;
          break;
        }
        if (k >= src.length) break;
        empties++;
        this.pos = k;
        this.newLine();
      }
      const first = spaces < 0 ? NL : this.code(this.pos + spaces);
      const marker = spaces === 0 && (src.startsWith('---', this.pos) || src.startsWith('...', this.pos));
      if (spaces <= parentIndent || first === HASH || marker) {
        this.pos = save.pos;
        this.line = save.line;
        this.lineStart = save.lineStart;
        break;
      }
      this.pos += spaces;
      const from = this.pos;
      end = this.scanPlain(false, true);
      text += (empties > 0 ? '\n'.repeat(empties) : ' ') + src.slice(from, end);
    }
    return this.asm.scalar(text, true, undefined, start, end);
  }

  /** A flow node inside `[...]` / `{...}` on the current line. */
  flowNode(): YamlNode {
    const i = this.pos;
    const c = this.code(i);
    if (c === 0x5b) return this.flowSeq();
    if (c === 0x7b) return this.flowMap();
    if (c === 0x2a) return this.alias(true);
    if (c === 0x22 || c === 0x27) return this.quoted();
    return this.flowPlain();
  }

  flowSpaces(): void {
    this.skipSpaces();
    if (this.isEol(this.pos) || this.code(this.pos) === HASH) this.giveUp();
  }

  flowSeq(): YamlNode {
    return this.nested(() => this.flowSeqContent());
  }

  private flowSeqContent(): YamlNode {
    const at = this.pos;
    this.pos++;
    const items: YamlNode[] = [];
    this.flowSpaces();
    if (this.code(this.pos) === 0x5d) {
      this.pos++;
      return this.asm.seq(items, at);
    }
    for (;;) {
      items.push(this.flowNode());
      this.flowSpaces();
      const c = this.code(this.pos);
      this.pos++;
      if (c === 0x5d) return this.asm.seq(items, at);
      if (c !== 0x2c) this.giveUp();
      this.flowSpaces();
      if (this.code(this.pos) === 0x5d) this.giveUp();
    }
  }

  flowMap(): YamlNode {
    return this.nested(() => this.flowMapContent());
  }

  private flowMapContent(): YamlNode {
    const at = this.pos;
    this.pos++;
    const keys: YamlNode[] = [];
    const values: YamlNode[] = [];
    this.flowSpaces();
    if (this.code(this.pos) === 0x7d) {
      this.pos++;
      return this.asm.map(keys, values, at, false);
    }
    for (;;) {
      const key = this.flowNode();
      if (key.kind !== 'scalar') this.giveUp();
      this.skipSpaces();
      if (this.code(this.pos) !== COLON || this.code(this.pos + 1) !== SPACE) this.giveUp();
      this.pos++;
      this.flowSpaces();
      const vc = this.code(this.pos);
      if (vc === 0x2c || vc === 0x7d) this.giveUp();
      keys.push(key);
      values.push(this.flowNode());
      this.flowSpaces();
      const c = this.code(this.pos);
      this.pos++;
      if (c === 0x7d) return this.asm.map(keys, values, at, false);
      if (c !== 0x2c) this.giveUp();
      this.flowSpaces();
      if (this.code(this.pos) === 0x7d) this.giveUp();
    }
  }

  /** A literal (`|`) or folded (`>`) block scalar; consumes its lines. */
  blockScalar(parentIndent: number): YamlNode {
    const src = this.src;
    if (parentIndent < 0) this.giveUp();
    const at = this.pos;
    const folded = this.code(this.pos) === 0x3e;
    let j = this.pos + 1;
    const strip = this.code(j) === DASH;
    if (strip) j++;
    if (!this.isBlank(j)) this.giveUp();
    this.pos = j;
    this.endLine();
    const lines: string[] = [];
    let maxLeading = 0;
    let contentIndent = -1;
    while (this.pos < src.length) {
      let k = this.pos;
      while (k < src.length && src.charCodeAt(k) === SPACE) k++;
      const spaces = k - this.pos;
      if (this.isEol(k)) {
        if (contentIndent < 0) maxLeading = Math.max(maxLeading, spaces);
        else if (spaces > contentIndent) this.giveUp();
        lines.push('');
        if (k >= src.length) {
          this.pos = k;
          break;
        }
        this.pos = k;
        this.newLine();
        continue;
      }
      if (contentIndent < 0) {
        if (spaces <= parentIndent) break;
        if (maxLeading > spaces) this.giveUp();
        contentIndent = spaces;
      }
      if (spaces < contentIndent) break;
      if (folded && spaces > contentIndent) this.giveUp();
      const nl = src.indexOf('\n', k);
      // A last line without a line break is chomped differently; leave that to the complete parser.
      if (nl < 0) this.giveUp();
      lines.push(src.slice(this.pos + contentIndent, nl));
      this.pos = nl;
      this.newLine();
    }
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    let leading = 0;
    while (leading < lines.length && lines[leading] === '') leading++;
    let text = '';
    if (leading < lines.length) {
      let body: string;
      if (folded) {
        body = lines[leading] ?? '';
        let empties = 0;
        for (let k = leading + 1; k < lines.length; k++) {
          const l = lines[k] ?? '';
          if (l === '') empties++;
          else {
            body += empties === 0 ? ` ${l}` : '\n'.repeat(empties) + l;
            empties = 0;
          }
        }
      } else body = lines.slice(leading).join('\n');
      text = '\n'.repeat(leading) + body + (strip ? '' : '\n');
    }
    return this.asm.scalar(text, false, undefined, at, -1);
  }

  /** Parse the first document. */
  document(): YamlNode | null {
    const src = this.src;
    let indent = this.nextContentLine();
    if (this.docEnd && src.startsWith('---', this.pos)) {
      this.docEnd = false;
      this.pos += 3;
      this.endLine();
      indent = this.nextContentLine();
    }
    if (indent < 0) return null;
    if (src.charCodeAt(this.pos + indent) === 0x25) this.giveUp();
    this.pos += indent;
    let root: YamlNode;
    if (this.isSeqEntry(this.pos)) root = this.blockSeq(indent);
    else if (this.implicitKeyAt(this.pos)) root = this.blockMap(indent, true);
    else root = this.blockNode(-1);
    if (this.nextContentLine() >= 0) this.giveUp();
    return root;
  }
}

/**
 * Parse the first document of `text` if it only uses the constructs this front-end takes; undefined otherwise.
 * Throws `ConfigError` for semantic problems (duplicate keys, unknown anchors, ...) of a document it parsed.
 */
export function parseFast(text: string, file: string): YamlNode | null | undefined {
  // Tabs, CR line ends, a byte-order mark and control characters are left to the complete parser.
  // eslint-disable-next-line no-control-regex
  if (/[\t\r\ufeff\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(text)) return undefined;
  const parser = new FastParser(text, file);
  let root: YamlNode | null;
  try {
    root = parser.document();
  } catch (e) {
    if (e === GIVE_UP) return undefined;
    throw e;
  }
  return root === null ? null : parser.asm.finish(root);
}
