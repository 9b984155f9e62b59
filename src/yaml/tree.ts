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
  /** Where the mapping starts (its first key). */
  readonly loc: SourceLocation;
}

/** A sequence. */
export interface YamlSeqNode {
  readonly kind: 'seq';
  readonly items: readonly YamlNode[];
  /** Where the sequence starts (its first `-` or its `[`). */
  readonly loc: SourceLocation;
}

/** Any node of the located tree. Nodes reached through aliases are shared, so the tree must not be mutated. */
export type YamlNode = YamlScalarNode | YamlMapNode | YamlSeqNode;

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

export class TreeAssembler {
  readonly diagnostics: Diagnostic[] = [];
  /**
   * Height of each collection built (1 + its deepest child), aliases included. A plain map: it lives as long as the
   * document's parse, and weak entries cost the garbage collector more for every node of a big file.
   */
  readonly #heights = new Map<YamlNode, number>();
  /** Collections being parsed around the current position. */
  #open = 0;

  /** A parser starts reading a collection at `loc`: refuses one nested too deeply, before recursing further. */
  enter(loc: SourceLocation): void {
    if (++this.#open > MAX_YAML_DEPTH) throw depthError(loc);
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
  /** The target of every alias used, for the expansion guard. */
  readonly #aliasTargets: YamlNode[] = [];

  constructor(readonly file: string) {}

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

  /** The node an alias refers to (a null scalar after reporting an unknown or self-containing anchor). */
  alias(name: string, loc: SourceLocation): YamlNode {
    const target = this.#anchors.get(name);
    if (target === undefined) {
      this.fail(`unknown anchor \`${name}\` referenced`, loc);
      return this.nullScalar(loc);
    }
    if (target === IN_PROGRESS) {
      this.fail(`anchor \`${name}\` value contains itself`, loc);
      return this.nullScalar(loc);
    }
    this.#aliasTargets.push(target);
    return target;
  }

  /** An empty value (`key:` with nothing after it). */
  nullScalar(loc: SourceLocation): YamlScalarNode {
    return { kind: 'scalar', value: null, text: '', loc };
  }

  /** A scalar with yaml.v2's resolution of its text (see `resolveScalar`). */
  scalar(raw: string, plain: boolean, tag: string | undefined, loc: SourceLocation): YamlScalarNode {
    if (tag === undefined) {
      if (!plain) return { kind: 'scalar', value: raw, text: raw, loc };
      const value = resolvePlain(raw);
      return isMergeKey(raw)
        ? { kind: 'scalar', value, text: raw, loc, merge: true }
        : { kind: 'scalar', value, text: raw, loc };
    }
    try {
      const r = resolveScalar(raw, plain, tag);
      return r.merge
        ? { kind: 'scalar', value: r.value, text: r.text, loc, merge: true }
        : { kind: 'scalar', value: r.value, text: r.text, loc };
    } catch (e) {
      if (!(e instanceof ScalarTagError)) throw e;
      this.fail(e.message, loc);
      return { kind: 'scalar', value: raw, text: raw, loc };
    }
  }

  seq(items: YamlNode[], loc: SourceLocation): YamlSeqNode {
    // A copy of exactly its length: a list built by `push` keeps room for more, and a stack's tree is kept.
    return this.#measure({ kind: 'seq', items: items.slice(), loc }, items);
  }

  /**
   * A mapping from its written keys and values (same length): applies `<<` merges and reports duplicate and
   * non-scalar keys. Small mappings are searched linearly, large ones (vars files) through a hash.
   */
  map(keys: readonly YamlNode[], values: readonly YamlNode[], loc: SourceLocation, top: boolean): YamlMapNode {
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
    return this.#measure({ kind: 'map', entries: entries.slice(), loc }, h);
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
