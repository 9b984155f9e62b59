/**
 * The YAML node(s) each object was read from: the link `yamlToGoValue` and the configuration loaders record, and
 * `locationOf` (src/config/locations.ts) reads to say where an object or one of its fields came from. One link per
 * object is far cheaper than one location per field.
 */
import type { YamlNode } from './tree.js';

/** The YAML node(s) an object was read from, in the order they were linked. */
const nodeTable = new WeakMap<object, YamlNode | YamlNode[]>();

/**
 * Record that `obj` was read from `node`: the object is where the node is, a field `k` is where the node's entry
 * `k` is (matched by key text, or by the key's value as Go's `%v` prints it), and an index `i` is where the node's
 * item (or entry) `i` is. Explicit `setLocation` records (src/config/locations.ts) take precedence.
 */
export function setLocationNode(obj: object, node: YamlNode): void {
  const cur = nodeTable.get(obj);
  if (cur === undefined) nodeTable.set(obj, node);
  else if (Array.isArray(cur)) {
    if (!cur.includes(node)) cur.push(node);
  } else if (cur !== node) nodeTable.set(obj, [cur, node]);
}

/** The nodes `obj` was linked to, in the order they were linked. */
export function linkedNodes(obj: object): readonly YamlNode[] {
  const linked = nodeTable.get(obj);
  return linked === undefined ? [] : Array.isArray(linked) ? linked : [linked];
}

/** The node `obj` was linked to, or its nodes (several); undefined when it has none. No list is built. */
export function linkedNodeOrNodes(obj: object): YamlNode | readonly YamlNode[] | undefined {
  return nodeTable.get(obj);
}
