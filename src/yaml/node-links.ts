/**
 * The YAML node(s) each object was read from: the link `yamlToGoValue` and the configuration loaders record, and
 * `locationOf` (src/config/locations.ts) reads to say where an object or one of its fields came from. One link per
 * object is far cheaper than one location per field.
 *
 * The link is a non-enumerable symbol-keyed property of the object: what enumerates, copies, compares or serialises
 * the object's own data (`Object.keys`, `for…in`, spread, `JSON.stringify`, deep equality) does not see it, and a
 * loaded stack does not keep a weak table of hundreds of thousands of entries for the garbage collector to sweep.
 */
import type { YamlNode } from './tree.js';

/** The property holding an object's node, or its nodes in the order they were linked. */
const NODES = Symbol('kapps.yamlNodes');

type Linked = { [NODES]?: YamlNode | YamlNode[] };

/**
 * Record that `obj` was read from `node`: the object is where the node is, a field `k` is where the node's entry
 * `k` is (matched by key text, or by the key's value as Go's `%v` prints it), and an index `i` is where the node's
 * item (or entry) `i` is. Explicit `setLocation` records (src/config/locations.ts) take precedence.
 */
export function setLocationNode(obj: object, node: YamlNode): void {
  const o = obj as Linked;
  const cur = o[NODES];
  if (cur === undefined) {
    if (!Object.isExtensible(obj)) return;
    Object.defineProperty(obj, NODES, { value: node, writable: true, configurable: true, enumerable: false });
  } else if (Array.isArray(cur)) {
    if (!cur.includes(node)) cur.push(node);
  } else if (cur !== node) o[NODES] = [cur, node];
}

const NONE: readonly YamlNode[] = [];

/** The nodes `obj` was linked to, in the order they were linked. */
export function linkedNodes(obj: object): readonly YamlNode[] {
  const linked = (obj as Linked)[NODES];
  return linked === undefined ? NONE : Array.isArray(linked) ? linked : [linked];
}

/** The node `obj` was linked to, or its nodes (several); undefined when it has none. No list is built. */
export function linkedNodeOrNodes(obj: object): YamlNode | readonly YamlNode[] | undefined {
  return (obj as Linked)[NODES];
}
