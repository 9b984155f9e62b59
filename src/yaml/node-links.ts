/**
 * Where each object read from YAML came from: the link `yamlToGoValue` and the configuration loaders record, and
 * `locationOf` (src/config/locations.ts) reads to say where an object or one of its fields came from. One link per
 * object is far cheaper than one location per field.
 *
 * A link keeps a `NodeSite`, not the node: where the node is and where each of its entries' values (or items) is,
 * as offsets into its document. Keeping the node would keep its whole subtree (every scalar's node, every entry)
 * for as long as the objects read from it live, which for a big stack is most of its memory and of the collector's
 * work; the offsets are all a location needs.
 */
import type { SourceLocation } from '../diagnostics/diagnostic.js';
import type { GoKey } from '../go-value/value.js';
import { formatGoKey } from './scalar.js';
import type { YamlNode, YamlPositions } from './tree.js';

/** What a link keeps of a node: its place in its document and its entries' (or items') places. */
export class NodeSite {
  constructor(
    readonly kind: YamlNode['kind'],
    readonly positions: YamlPositions,
    readonly start: number,
    /** Where a scalar ends; -1 for a mapping or a sequence (a point). */
    readonly end: number,
    /**
     * A mapping's entries, three items each (the key's text, where the value starts and where it ends), or a
     * sequence's items, two each (where the item starts and ends); undefined for a scalar. One list per node.
     */
    readonly fields: readonly (string | number)[] | undefined,
    /** The keys whose value is not a string (`1:`, `yes:`), by entry index: matched as Go's `%v` prints them. */
    readonly otherKeys: ReadonlyMap<number, GoKey> | undefined,
  ) {}

  /** Where the node is. */
  get loc(): SourceLocation {
    return this.positions.location(this.start, this.end);
  }

  /**
   * Where field `key` is: a sequence's item `key`, a mapping's entry `key` (by index), or the entry whose key text
   * is `key` (the last such; else the last whose key prints as `key`). Undefined when there is none.
   */
  field(key: string | number): SourceLocation | undefined {
    const fields = this.fields;
    if (fields === undefined) return undefined;
    const width = this.kind === 'map' ? 3 : 2;
    let at = -1;
    if (typeof key === 'number') at = key * width;
    else if (width === 3) {
      for (let i = fields.length - 3; i >= 0 && at < 0; i -= 3) if (fields[i] === key) at = i;
      if (at < 0 && this.otherKeys !== undefined) {
        for (const [i, k] of this.otherKeys) if (i * 3 > at && formatGoKey(k) === key) at = i * 3;
      }
    } else return undefined;
    if (at < 0 || at >= fields.length) return undefined;
    const w = width - 2;
    return this.positions.location(fields[at + w] as number, fields[at + w + 1] as number);
  }

  /** Whether both describe the same node (the same node is often linked more than once). */
  same(other: NodeSite): boolean {
    return (
      other === this ||
      (other.positions === this.positions &&
        other.start === this.start &&
        other.end === this.end &&
        other.kind === this.kind)
    );
  }
}

function siteOf(node: YamlNode): NodeSite {
  const positions = node.positions;
  if (node.kind === 'scalar') return new NodeSite('scalar', positions, node.start, node.end, undefined, undefined);
  if (node.kind === 'seq') {
    const items = node.items;
    const fields = new Array<number>(items.length * 2);
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as YamlNode;
      fields[2 * i] = item.start;
      fields[2 * i + 1] = item.kind === 'scalar' ? item.end : -1;
    }
    return new NodeSite('seq', positions, node.start, -1, fields, undefined);
  }
  const entries = node.entries;
  const fields = new Array<string | number>(entries.length * 3);
  let otherKeys: Map<number, GoKey> | undefined;
  for (let i = 0; i < entries.length; i++) {
    const { key, value } = entries[i] as (typeof entries)[number];
    fields[3 * i] = key.text;
    fields[3 * i + 1] = value.start;
    fields[3 * i + 2] = value.kind === 'scalar' ? value.end : -1;
    if (typeof key.value !== 'string') (otherKeys ??= new Map()).set(i, key.value);
  }
  return new NodeSite('map', positions, node.start, -1, fields, otherKeys);
}

/**
 * The site(s) each object was read from, in the order they were linked: kept on the object itself, under a symbol
 * no other module holds, as a property that is not enumerable (spread, `Object.keys`, JSON and structured clones
 * never see it). A weak map did the same at several times the cost: a big stack links hundreds of thousands of
 * objects, and every one was an ephemeron the collector had to trace.
 */
const SITES = Symbol('kapps.yaml.sites');

type Linked = { [SITES]?: NodeSite | NodeSite[] };

/** The object's own sites (never one it inherits from a prototype that was linked). */
function sitesOf(obj: object): NodeSite | NodeSite[] | undefined {
  return Object.prototype.hasOwnProperty.call(obj, SITES) ? (obj as Linked)[SITES] : undefined;
}

function setSites(obj: object, sites: NodeSite | NodeSite[]): void {
  if (Object.prototype.hasOwnProperty.call(obj, SITES)) (obj as Linked)[SITES] = sites;
  else Object.defineProperty(obj, SITES, { value: sites, writable: true, configurable: true, enumerable: false });
}

/**
 * Record that `obj` was read from `node`: the object is where the node is, a field `k` is where the node's entry
 * `k` is (matched by key text, or by the key's value as Go's `%v` prints it), and an index `i` is where the node's
 * item (or entry) `i` is. Explicit `setLocation` records (src/config/locations.ts) take precedence.
 */
export function setLocationNode(obj: object, node: YamlNode): void {
  linkSite(obj, siteOf(node));
}

/** Record that `obj` is where `site` is (a site another object was linked to). */
export function linkSite(obj: object, site: NodeSite): void {
  const cur = sitesOf(obj);
  if (cur === undefined) setSites(obj, site);
  else if (Array.isArray(cur)) {
    if (!cur.some((s) => s.same(site))) cur.push(site);
  } else if (!cur.same(site)) setSites(obj, [cur, site]);
}

/** The sites `obj` was linked to, in the order they were linked. */
export function linkedSites(obj: object): readonly NodeSite[] {
  const linked = sitesOf(obj);
  return linked === undefined ? [] : Array.isArray(linked) ? linked : [linked];
}

/** The site `obj` was linked to, or its sites (several); undefined when it has none. No list is built. */
export function linkedSiteOrSites(obj: object): NodeSite | readonly NodeSite[] | undefined {
  return sitesOf(obj);
}
