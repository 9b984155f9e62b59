/**
 * YAML as kapps reads it: Go's yaml.v2 (v2.4.0) semantics — YAML 1.1 scalars, anchors, aliases and `<<` merge
 * keys, duplicate keys rejected — with positions for every node.
 *
 * Two products:
 * - a located tree (`parseYamlTree`): every map, list and scalar with its `SourceLocation`, merges and aliases
 *   already expanded; the configuration loaders validate and convert it;
 * - plain Go values (`parseYamlValue`, `yamlToGoValue`) in the value model of `src/go-value/value.ts`.
 *
 * Parsing tries the fast front-end first and falls back to the `yaml` package for anything it does not take.
 */
import { error as errorDiag } from '../diagnostics/diagnostic.js';
import { ConfigError } from '../diagnostics/errors.js';
import { GoIfaceMap, newGoMap, type GoKey, type GoMap, type GoValue } from '../go-value/value.js';
import { parseFast } from './fast-parse.js';
import { parseWithYamlLib } from './lib-parse.js';
import { setLocationNode } from './node-links.js';
import { formatGoKey } from './scalar.js';
import { depthError, type YamlMapEntry, type YamlMapNode, type YamlNode } from './tree.js';

export type { YamlMapEntry, YamlMapNode, YamlNode } from './tree.js';

/** Options of the YAML readers. */
export interface YamlOptions {
  /** File name used in locations and diagnostics; default `<input>`. */
  readonly file?: string;
  /** `lib` parses with the `yaml` package only; `auto` (the default) tries the fast front-end first. */
  readonly parser?: 'auto' | 'lib';
}

/**
 * Parse YAML text into the located tree (first document only). Returns `null` for an empty document.
 * Throws `ConfigError` listing every syntax error, or every unknown alias, duplicate key and bad merge.
 */
export function parseYamlTree(text: string, options: YamlOptions = {}): YamlNode | null {
  const file = options.file ?? '<input>';
  try {
    return parseYamlTreeOf(text, file, options);
  } catch (e) {
    // The readers refuse nesting beyond MAX_YAML_DEPTH; should a stack still run out, it is the same problem.
    if (e instanceof RangeError) throw depthError({ file, line: 1, column: 1 });
    throw e;
  }
}

function parseYamlTreeOf(text: string, file: string, options: YamlOptions): YamlNode | null {
  if (options.parser !== 'lib') {
    const fast = parseFast(text, file);
    if (fast !== undefined) return fast;
  }
  return parseWithYamlLib(text, file);
}

/** Options of `yamlToGoValue`. */
export interface GoValueOptions {
  /** yaml.v2's own map types: nested maps become `GoIfaceMap` with typed keys. Default false. */
  readonly goMaps?: boolean;
  /** Record each map's and list's location and its fields' locations (`setLocation`). Default false. */
  readonly locations?: boolean;
  /** Whether the node is the top of a document (its keys are the key text, as in map[string]interface{}). */
  readonly top?: boolean;
}

/**
 * Convert a located node into Go values. Maps are string-keyed null-prototype objects; keys of nested maps are
 * the key's value as Go's `%v` prints it (`{1: a}` → `{"1": "a"}`, `{y: 1}` → `{"true": 1}`), keys of a top-level
 * map keep their text. With `goMaps`, nested maps are `GoIfaceMap`s with typed keys instead. Every call builds
 * fresh objects, also for aliased content.
 */
export function yamlToGoValue(node: YamlNode, options: GoValueOptions = {}): GoValue {
  return convert(node, options.goMaps ?? false, options.locations ?? false, options.top ?? false);
}

function convert(node: YamlNode, goMaps: boolean, record: boolean, top: boolean): GoValue {
  switch (node.kind) {
    case 'scalar':
      return node.value;
    case 'seq': {
      const out: GoValue[] = new Array<GoValue>(node.items.length);
      for (let i = 0; i < out.length; i++) out[i] = convert(node.items[i] as YamlNode, goMaps, record, false);
      if (record) setLocationNode(out, node);
      return out;
    }
    case 'map': {
      if (goMaps && !top) {
        const m = new GoIfaceMap();
        for (const e of node.entries) m.set(e.key.value as GoKey, convert(e.value, goMaps, record, false));
        if (record) setLocationNode(m, node);
        return m;
      }
      const m: GoMap = newGoMap();
      for (const e of node.entries) {
        m[top ? e.key.text : formatGoKey(e.key.value as GoKey)] = convert(e.value, goMaps, record, false);
      }
      if (record) setLocationNode(m, node);
      return m;
    }
  }
}

/** Decoding options of `parseYamlValue`. */
export interface ParseYamlValueOptions extends YamlOptions {
  /** Decode exactly as yaml.v2 into `map[string]interface{}`: nested maps are `GoIfaceMap`s with typed keys. */
  readonly goMaps?: boolean;
}

/**
 * Decode YAML text as Go's yaml.v2 (v2.4.0) decodes it into `interface{}` (YAML 1.1): see `yamlToGoValue` for the
 * map shapes. An empty document is an empty map. With `goMaps` the top level must be a map (or empty/null).
 * Throws `ConfigError` on syntax errors, unknown aliases, duplicate keys and bad merges, with file:line:col.
 */
export function parseYamlValue(text: string, options: ParseYamlValueOptions = {}): GoValue {
  const root = parseYamlTree(text, options);
  if (root === null) return newGoMap();
  if (options.goMaps) {
    if (root.kind === 'scalar' && root.value === null) return newGoMap();
    if (root.kind !== 'map') {
      throw new ConfigError([
        errorDiag(`expected a map at the top of the document, got ${nodeKindName(root)}`, root.loc),
      ]);
    }
  }
  return yamlToGoValue(root, { goMaps: options.goMaps ?? false, top: true });
}

/**
 * What a node is, for messages such as "expected a string, got a list": `a list`, `a map`, `nothing (null)`, a
 * string in quotes (`"soon"`), or another scalar as written (`300`, `true`).
 */
export function nodeKindName(node: YamlNode): string {
  if (node.kind === 'seq') return 'a list';
  if (node.kind === 'map') return 'a map';
  if (node.value === null) return 'nothing (null)';
  if (typeof node.value !== 'string') return node.text;
  const text = node.text.length > 40 ? `${node.text.slice(0, 37)}...` : node.text;
  return JSON.stringify(text);
}

/** The entry of `map` whose key text is `key` (the last one if merges repeated it), if any. */
export function mapEntry(map: YamlMapNode, key: string): YamlMapEntry | undefined {
  for (let i = map.entries.length - 1; i >= 0; i--) {
    const e = map.entries[i];
    if (e?.key.text === key) return e;
  }
  return undefined;
}
