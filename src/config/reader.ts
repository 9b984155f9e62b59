/**
 * Typed reads from a located YAML tree that has already been validated, recording where every value came from.
 * Each read tolerates a node of the wrong kind (returning undefined): validation has already reported it, and the
 * loaders keep going to report every problem of a file at once.
 */
import { error as errorDiag, warning as warningDiag } from '../diagnostics/diagnostic.js';
import type { Diagnostic, SourceLocation } from '../diagnostics/diagnostic.js';
import type { GoMap, GoValue } from '../go-value/value.js';
import { setLocationNode } from './locations.js';
import { formatPath, type FieldPath } from './validate.js';
import { yamlToGoValue, type YamlMapEntry, type YamlNode } from '../yaml/read.js';

const NO_ENTRIES: readonly YamlMapEntry[] = [];

/** The path from `root` to `target` (a node or a key node), searched depth-first; undefined if absent. */
function findPath(root: YamlNode, target: YamlNode): FieldPath | undefined {
  if (root === target) return [];
  if (root.kind === 'map') {
    for (const e of root.entries) {
      if (e.key === target) return [e.key.text];
      const sub = findPath(e.value, target);
      if (sub) return [e.key.text, ...sub];
    }
  } else if (root.kind === 'seq') {
    for (let i = 0; i < root.items.length; i++) {
      const item = root.items[i];
      const sub = item && findPath(item, target);
      if (sub) return [i, ...sub];
    }
  }
  return undefined;
}

/** Collects the problems found while converting one file. */
export class ConfigReader {
  readonly diagnostics: Diagnostic[] = [];

  /**
   * @param root the tree being converted, to name the field path of a node in a diagnostic
   * @param base the path of `root` in its file (e.g. the stack name)
   */
  constructor(
    readonly file: string,
    readonly root?: YamlNode | null,
    readonly base: FieldPath = [],
  ) {}

  /**
   * The field path of `node` (`kapps[2].sources[0].uri`), plus `suffix`. Computed only when a diagnostic needs
   * it, by searching the tree, so converting a valid file builds no paths.
   */
  pathOf(node: YamlNode, ...suffix: (string | number)[]): string | undefined {
    const found = this.root ? findPath(this.root, node) : undefined;
    return found ? formatPath([...this.base, ...found, ...suffix]) : undefined;
  }

  error(message: string, loc: SourceLocation, extra: Partial<Diagnostic> = {}): void {
    this.diagnostics.push(errorDiag(message, loc, extra));
  }

  warn(message: string, loc: SourceLocation, extra: Partial<Diagnostic> = {}): void {
    this.diagnostics.push(warningDiag(message, loc, extra));
  }

  /** Whether any error (not warning) was recorded. */
  get failed(): boolean {
    return this.diagnostics.some((d) => d.severity === 'error');
  }
}

/** Whether a node is absent in yaml.v2's sense (missing or null). */
export function isNull(node: YamlNode | undefined): boolean {
  return !node || (node.kind === 'scalar' && node.value === null);
}

/** The entries of a map node (none for anything else). */
export function entriesOf(node: YamlNode | undefined): readonly YamlMapEntry[] {
  return node?.kind === 'map' ? node.entries : NO_ENTRIES;
}

/** The items of a list node (none for anything else). */
export function itemsOf(node: YamlNode | undefined): readonly YamlNode[] {
  return node?.kind === 'seq' ? node.items : [];
}

/** A string field: the scalar's text as written; undefined for null or a non-scalar. */
export function readText(node: YamlNode | undefined): string | undefined {
  return node?.kind === 'scalar' && node.value !== null ? node.text : undefined;
}

/** A list of strings (texts as written; a null item is the empty string), with each item's location. */
export function readTexts(node: YamlNode | undefined): string[] | undefined {
  if (node?.kind !== 'seq') return undefined;
  const out: string[] = [];
  for (const item of node.items) out.push(item.kind === 'scalar' && item.value !== null ? item.text : '');
  setLocationNode(out, node);
  return out;
}

/** A boolean field (YAML 1.1 words). */
export function readBool(node: YamlNode | undefined): boolean | undefined {
  return node?.kind === 'scalar' && typeof node.value === 'boolean' ? node.value : undefined;
}

/** A boolean, or the text of a template rendered later. */
export function readBoolOrTemplate(node: YamlNode | undefined): boolean | string | undefined {
  if (node?.kind !== 'scalar') return undefined;
  return typeof node.value === 'boolean' ? node.value : typeof node.value === 'string' ? node.text : undefined;
}

/** An integer field (a YAML int, or an integral float as yaml.v2 accepts). */
export function readInt(node: YamlNode | undefined): number | undefined {
  if (node?.kind !== 'scalar') return undefined;
  const v = node.value;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  return undefined;
}

/** An integer, or the text of a template rendered later. */
export function readIntOrTemplate(node: YamlNode | undefined): number | string | undefined {
  if (node?.kind === 'scalar' && typeof node.value === 'string') return node.text;
  return readInt(node);
}

/** A free map (vars, metadata, options): string keys as written, any YAML below, locations recorded. */
export function readMap(node: YamlNode | undefined): GoMap | undefined {
  if (node?.kind !== 'map') return undefined;
  return yamlToGoValue(node, { top: true, locations: true }) as GoMap;
}

/** Any YAML value converted to Go values, with locations. */
export function readValue(node: YamlNode): GoValue {
  return yamlToGoValue(node, { top: node.kind === 'map', locations: true });
}

/** A map of names to scalar texts (environment variables); null values are empty strings. */
export function readTextMap(node: YamlNode | undefined): Record<string, string> | undefined {
  if (node?.kind !== 'map') return undefined;
  const out = Object.create(null) as Record<string, string>;
  for (const e of node.entries) {
    if (e.value.kind !== 'scalar') continue;
    out[e.key.text] = e.value.value === null ? '' : e.value.text;
  }
  setLocationNode(out, node);
  return out;
}
