/**
 * The located YAML tree and its assembly with yaml.v2's semantics: anchors and aliases, `<<` merge keys applied in
 * order (a later merge overrides keys written before it; earlier maps of a merge list win), duplicate keys
 * rejected, and the alias-expansion guard. Both YAML front-ends (the fast one and the `yaml` package) feed this.
 */
import { error as errorDiag, type Diagnostic, type SourceLocation } from '../diagnostics/diagnostic.js';
import { ConfigError } from '../diagnostics/errors.js';
import type { GoValue } from '../go-value/value.js';
import { ScalarTagError, isMergeKey, resolvePlain, resolveScalar } from './scalar.js';

/** A scalar: its resolved yaml.v2 value and the text a string field receives (`yes` stays `"yes"`). */
export interface YamlScalarNode {
  readonly kind: 'scalar';
  readonly value: GoValue;
  readonly text: string;
  readonly loc: SourceLocation;
  /** Offsets in the document's text where the scalar starts and ends (-1: a point, no range). */
  readonly start: number;
  readonly end: number;
  /** The document's positions, which turn the offsets into a location. */
  readonly positions: YamlPositions;
  /** Set on the plain `<<` key (yaml.v2's merge key). */
  readonly merge?: boolean;
}

/** One key/value pair of a mapping, after merge keys have been applied. */
export interface YamlMapEntry {
  /** The key node (always a scalar; other keys are rejected). */
  readonly key: YamlScalarNode;
  readonly value: YamlNode;
  /** Whether the entry came from a `<<` merge rather than being written in this mapping. */
  readonly merged: boolean;
}

/** A mapping; entries in first-appearance order, each key once (the last assignment wins, as in yaml.v2). */
export interface YamlMapNode {
  readonly kind: 'map';
  readonly entries: readonly YamlMapEntry[];
  /** Where the mapping starts (its first key); `start` is its offset in the document's text. */
  readonly loc: SourceLocation;
  readonly start: number;
  readonly positions: YamlPositions;
}

/** A sequence. */
export interface YamlSeqNode {
  readonly kind: 'seq';
  readonly items: readonly YamlNode[];
  /** Where the sequence starts (its first `-` or its `[`); `start` is its offset in the document's text. */
  readonly loc: SourceLocation;
  readonly start: number;
  readonly positions: YamlPositions;
}

/** Any node of the located tree. Nodes reached through aliases are shared, so the tree must not be mutated. */
export type YamlNode = YamlScalarNode | YamlMapNode | YamlSeqNode;

/**
 * Where a document's nodes are: its file, and the line and column of an offset into its text, found when asked. A
 * node keeps only the offsets where it starts and ends (a stack's tree holds hundreds of thousands of nodes, and
 * diagnostics ask for a few locations), so a location object is made only for what is looked up.
 */
export class YamlPositions {
  /** Offset of the start of each line of the text, made on the first lookup (the text is dropped then). */
  #starts: Int32Array | undefined;
  #text: string | undefined;

  /** `linePos` (the `yaml` package's line counter) gives a 1-based line and column; else the text's lines are used. */
  constructor(
    readonly file: string,
    text: string,
    private readonly linePos?: (offset: number) => { line: number; col: number },
  ) {
    if (!linePos) this.#text = text;
  }

  #lineStarts(): Int32Array {
    if (this.#starts) return this.#starts;
    const text = this.#text ?? '';
    let n = 1;
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
    const starts = new Int32Array(n);
    n = 1;
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts[n++] = i + 1;
    this.#starts = starts;
    this.#text = undefined;
    return starts;
  }

  /** The 1-based line and column of an offset (lines end at `\n`). */
  #at(offset: number): { line: number; col: number } {
    if (this.linePos) return this.linePos(offset);
    const starts = this.#lineStarts();
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((starts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, col: offset - (starts[lo] as number) + 1 };
  }

  /** The location of `start` (a point), or of the range `start`–`end` when `end` is not negative. */
  location(start: number, end: number): SourceLocation {
    const s = this.#at(start);
    if (end < 0) return { file: this.file, line: s.line, column: s.col };
    const e = this.#at(end);
    return { file: this.file, line: s.line, column: s.col, endLine: e.line, endColumn: e.col };
  }
}

/* The nodes: `kind` is on each class's prototype, and `loc` is made from the offsets when read. */

class ScalarNode implements YamlScalarNode {
  declare readonly kind: 'scalar';
  declare readonly merge?: boolean;
  constructor(
    readonly value: GoValue,
    readonly text: string,
    readonly positions: YamlPositions,
    readonly start: number,
    readonly end: number,
  ) {}
  get loc(): SourceLocation {
    return this.positions.location(this.start, this.end);
  }
}
Object.defineProperty(ScalarNode.prototype, 'kind', { value: 'scalar' });

/** The plain `<<` key. */
class MergeKeyNode extends ScalarNode {}
Object.defineProperty(MergeKeyNode.prototype, 'merge', { value: true });

class MapNode implements YamlMapNode {
  declare readonly kind: 'map';
  constructor(
    readonly entries: readonly YamlMapEntry[],
    readonly positions: YamlPositions,
    readonly start: number,
  ) {}
  get loc(): SourceLocation {
    return this.positions.location(this.start, -1);
  }
}
Object.defineProperty(MapNode.prototype, 'kind', { value: 'map' });

class SeqNode implements YamlSeqNode {
  declare readonly kind: 'seq';
  constructor(
    readonly items: readonly YamlNode[],
    readonly positions: YamlPositions,
    readonly start: number,
  ) {}
  get loc(): SourceLocation {
    return this.positions.location(this.start, -1);
  }
}
Object.defineProperty(SeqNode.prototype, 'kind', { value: 'seq' });

/** yaml.v2's guard against alias expansion bombs: the share of aliased content allowed for a document size. */
function allowedAliasRatio(decodeCount: number): number {
  if (decodeCount <= 400_000) return 0.99;
  if (decodeCount >= 4_000_000) return 0.1;
  return 0.99 - (0.89 * (decodeCount - 400_000)) / 3_600_000;
}

const IN_PROGRESS = Symbol('in progress');

/**
 * Whether two keys are the same key of a mapping: yaml.v2 decodes a top-level mapping into
 * map[string]interface{}, whose keys are the key text (`y` stays `"y"`), and nested mappings into
 * map[interface{}]interface{}, whose keys are the resolved values (`y` and `yes` are both `true`).
 */
function sameKey(a: YamlScalarNode, b: YamlScalarNode, top: boolean): boolean {
  if (top) return a.text === b.text;
  const x = a.value;
  const y = b.value;
  return x === y || (typeof x === 'number' && typeof y === 'number' && Number.isNaN(x) && Number.isNaN(y));
}

/** The identity of a key as a string (see `sameKey`), for hashing the keys of large mappings. */
function keyIdentity(key: YamlScalarNode, top: boolean): string {
  if (top) return `s:${key.text}`;
  const v = key.value;
  if (typeof v === 'string') return `s:${v}`;
  if (v === null) return 'n:';
  if (typeof v === 'bigint') return `i:${v}`;
  if (typeof v === 'number') return `f:${v}`;
  return v === true ? 'b:true' : 'b:false';
}

/** Assembles the tree of one document, collecting every problem instead of stopping at the first. */
/**
 * The deepest nesting of maps and lists kapps reads, counted with aliases expanded (real configurations use
 * fewer than 20 levels; deeper documents would exhaust the call stack of the readers).
 */
export const MAX_YAML_DEPTH = 256;

export function depthError(loc: SourceLocation): ConfigError {
  return new ConfigError([
    errorDiag(`YAML nesting deeper than ${MAX_YAML_DEPTH} levels of maps and lists`, loc, {
      hint: `kapps reads at most ${MAX_YAML_DEPTH} nested levels (aliases expanded)`,
    }),
  ]);
}

/** Texts up to this length are shared within a document, up to this many of them. */
const MAX_SHARED_TEXT = 40;
const MAX_SHARED_TEXTS = 8192;

export class TreeAssembler {
  readonly diagnostics: Diagnostic[] = [];
  /**
   * Height of each collection built (1 + its deepest child), aliases included. A plain map: it lives as long as the
   * document's parse, and weak entries cost the garbage collector more for every node of a big file.
   */
  readonly #heights = new Map<YamlNode, number>();
  /** Collections being parsed around the current position. */
  #open = 0;

  /** A parser starts reading a collection at offset `start`: refuses one nested too deeply, before recursing further. */
  enter(start: number): void {
    if (++this.#open > MAX_YAML_DEPTH) throw depthError(this.positions.location(start, -1));
  }

  /** The collection opened by the last `enter` is read. */
  leave(): void {
    this.#open--;
  }

  /** Record a collection's height from its children; refuses one that nests too deeply (aliases expanded). */
  #measure<T extends YamlNode>(node: T, children: readonly YamlNode[] | number): T {
    let h = 0;
    if (typeof children === 'number') h = children;
    else for (const c of children) if (c.kind !== 'scalar') h = Math.max(h, this.#heights.get(c) ?? 1);
    if (h + 1 > MAX_YAML_DEPTH) throw depthError(node.loc);
    this.#heights.set(node, h + 1);
    return node;
  }
  readonly #anchors = new Map<string, YamlNode | typeof IN_PROGRESS>();
  /**
   * One string for each short text met again (keys, and values such as `true`, are written once per item of a
   * list), so that the tree a stack keeps holds each once; and the plain resolution of each.
   */
  readonly #texts = new Map<string, string>();
  readonly #resolved = new Map<string, GoValue>();

  #shared(text: string): string {
    const known = this.#texts.get(text);
    if (known !== undefined) return known;
    if (this.#texts.size < MAX_SHARED_TEXTS) this.#texts.set(text, text);
    return text;
  }
  /** The target of every alias used, for the expansion guard. */
  readonly #aliasTargets: YamlNode[] = [];

  constructor(readonly positions: YamlPositions) {}

  /** The location of `start`, or of `start`–`end` (see `YamlPositions.location`). */
  location(start: number, end = -1): SourceLocation {
    return this.positions.location(start, end);
  }

  fail(message: string, loc: SourceLocation, extra: Partial<Diagnostic> = {}): void {
    this.diagnostics.push(errorDiag(message, loc, extra));
  }

  /** Mark an anchor as being defined (an alias to it inside its own value is an error). */
  beginAnchor(name: string): void {
    this.#anchors.set(name, IN_PROGRESS);
  }

  /** Complete an anchor's definition. */
  endAnchor(name: string, node: YamlNode): void {
    this.#anchors.set(name, node);
  }

  /** The node an alias at `start`–`end` refers to (a null scalar after reporting an unknown or self-containing anchor). */
  alias(name: string, start: number, end: number): YamlNode {
    const target = this.#anchors.get(name);
    if (target === undefined) {
      this.fail(`unknown anchor \`${name}\` referenced`, this.location(start, end));
      return this.nullScalar(start, end);
    }
    if (target === IN_PROGRESS) {
      this.fail(`anchor \`${name}\` value contains itself`, this.location(start, end));
      return this.nullScalar(start, end);
    }
    this.#aliasTargets.push(target);
    return target;
  }

  /** An empty value (`key:` with nothing after it) at `start` (a range when `end` is not negative). */
  nullScalar(start: number, end = -1): YamlScalarNode {
    return new ScalarNode(null, '', this.positions, start, end);
  }

  /**
   * A scalar with yaml.v2's resolution of its text (see `resolveScalar`), at `start`–`end` (a point when `end` is
   * negative).
   */
  scalar(text: string, plain: boolean, tag: string | undefined, start: number, end: number): YamlScalarNode {
    const at = this.positions;
    const raw = text.length <= MAX_SHARED_TEXT ? this.#shared(text) : text;
    if (tag === undefined) {
      if (!plain) return new ScalarNode(raw, raw, at, start, end);
      let value = this.#resolved.get(raw);
      if (value === undefined) {
        value = resolvePlain(raw);
        if (this.#resolved.size < MAX_SHARED_TEXTS) this.#resolved.set(raw, value);
      }
      return isMergeKey(raw)
        ? new MergeKeyNode(value, raw, at, start, end)
        : new ScalarNode(value, raw, at, start, end);
    }
    try {
      const r = resolveScalar(raw, plain, tag);
      return r.merge
        ? new MergeKeyNode(r.value, r.text, at, start, end)
        : new ScalarNode(r.value, r.text, at, start, end);
    } catch (e) {
      if (!(e instanceof ScalarTagError)) throw e;
      this.fail(e.message, this.location(start, end));
      return new ScalarNode(raw, raw, at, start, end);
    }
  }

  /** A sequence starting at offset `start`. */
  seq(items: YamlNode[], start: number): YamlSeqNode {
    // A copy of exactly its length: a list built by `push` keeps room for more, and a stack's tree is kept.
    return this.#measure(new SeqNode(items.slice(), this.positions, start), items);
  }

  /**
   * A mapping from its written keys and values (same length): applies `<<` merges and reports duplicate and
   * non-scalar keys. Small mappings are searched linearly, large ones (vars files) through a hash.
   */
  map(keys: readonly YamlNode[], values: readonly YamlNode[], start: number, top: boolean): YamlMapNode {
    const entries: YamlMapEntry[] = [];
    const hashed = keys.length > 16;
    const index = hashed ? new Map<string, number>() : undefined;
    const written = hashed ? new Map<string, YamlScalarNode>() : undefined;
    let mergedAny = false;
    const find = (key: YamlScalarNode): number => {
      if (index) return index.get(keyIdentity(key, top)) ?? -1;
      for (let i = 0; i < entries.length; i++) if (sameKey((entries[i] as YamlMapEntry).key, key, top)) return i;
      return -1;
    };
    const put = (entry: YamlMapEntry): void => {
      const at = find(entry.key);
      if (at >= 0) {
        entries[at] = entry;
        return;
      }
      index?.set(keyIdentity(entry.key, top), entries.length);
      entries.push(entry);
    };
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as YamlNode;
      const value = values[i] as YamlNode;
      if (key.kind !== 'scalar') {
        this.fail('a map key must be a scalar', key.loc, {
          hint: 'a value starting with `{` or `[` is a map or list; quote it, e.g. "{{ .kapp.id }}"',
        });
        continue;
      }
      if (key.merge) {
        mergedAny = true;
        // A list merges its maps last to first, so that earlier maps win.
        const sources = value.kind === 'seq' ? [...value.items].reverse() : [value];
        for (const src of sources) {
          if (src.kind !== 'map') {
            this.fail('a `<<` merge key needs a map or a list of maps as its value', value.loc);
            break;
          }
          for (const e of src.entries) put({ key: e.key, value: e.value, merged: true });
        }
        continue;
      }
      // Duplicates are keys written twice in this mapping; keys from merges may be overridden.
      let first: YamlScalarNode | undefined;
      if (written) {
        const id = keyIdentity(key, top);
        first = written.get(id);
        if (!first) written.set(id, key);
      } else {
        for (let j = 0; j < i && !first; j++) {
          const other = keys[j] as YamlNode;
          if (other.kind === 'scalar' && !other.merge && sameKey(other, key, top)) first = other;
        }
      }
      if (first) {
        this.fail(`duplicate key \`${key.text}\``, key.loc, {
          related: [{ message: 'first defined here', location: first.loc }],
        });
        continue;
      }
      if (mergedAny || index) put({ key, value, merged: false });
      else entries.push({ key, value, merged: false });
    }
    let h = 0;
    for (const e of entries) if (e.value.kind !== 'scalar') h = Math.max(h, this.#heights.get(e.value) ?? 1);
    return this.#measure(new MapNode(entries.slice(), this.positions, start), h);
  }

  /** Check the whole document and throw `ConfigError` with every problem found. */
  finish(root: YamlNode): YamlNode {
    if (this.#aliasTargets.length > 0) {
      // yaml.v2's guard against alias expansion bombs, on the expanded size of the document.
      const weights = new Map<YamlNode, number>();
      const weight = (n: YamlNode): number => {
        if (n.kind === 'scalar') return 1;
        let w = weights.get(n);
        if (w !== undefined) return w;
        w = 1;
        if (n.kind === 'seq') for (const i of n.items) w += weight(i);
        else for (const e of n.entries) w += 1 + weight(e.value);
        weights.set(n, w);
        return w;
      };
      const total = weight(root);
      const aliased = this.#aliasTargets.reduce((sum, t) => sum + weight(t), 0);
      if (total > 1000 && aliased / total > allowedAliasRatio(total)) {
        this.fail('the document contains excessive aliasing', root.loc);
      }
    }
    if (this.diagnostics.length > 0) throw new ConfigError(this.diagnostics);
    return root;
  }
}
