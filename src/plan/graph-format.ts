/**
 * Printing the sub-graph of a command: `text` (the layout every kapps command prints first), `dot` (Graphviz),
 * `mermaid` and `json`. Nodes appear in a deterministic topological order: parents first, ties in the order
 * given (stack order). The result has no trailing newline.
 */
import type { PlanNode } from './select.js';
import { topologicalOrder } from './topo-order.js';

/** The supported output formats. */
export const GRAPH_FORMATS = ['text', 'dot', 'mermaid', 'json'] as const;
export type GraphFormat = (typeof GRAPH_FORMATS)[number];

/** What a format needs of a node. */
export type GraphNodeView = Pick<PlanNode, 'id' | 'dependsOn' | 'selected' | 'processed' | 'conditionsOk'>;

/** Options of `formatGraph`. */
export interface GraphFormatOptions {
  /** The stack's name, shown as the Graphviz title. */
  readonly stackName?: string;
}

/** The header line of the `text` format. */
export const TEXT_HEADER = 'Created the following DAG. Only nodes marked with a * will be processed:';

const RED = '#FF0000';

function ordered(nodes: readonly GraphNodeView[]): GraphNodeView[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  return topologicalOrder(
    nodes.map((n) => n.id),
    (id) => byId.get(id)?.dependsOn ?? [],
  ).flatMap((id) => {
    const node = byId.get(id);
    return node ? [node] : [];
  });
}

function failedSuffix(node: GraphNodeView): string {
  return node.conditionsOk ? '' : ' (conditions failed)';
}

function text(nodes: readonly GraphNodeView[]): string {
  const lines = nodes.map((n) => {
    const deps = [...n.dependsOn].sort();
    const on = deps.length > 0 ? deps.join(', ') : '<nothing>';
    return `  ${n.processed ? '* ' : '  '}${n.id}${failedSuffix(n)} - depends on: ${on}`;
  });
  return [TEXT_HEADER, ...lines].join('\n');
}

function dotString(s: string): string {
  return `"${s.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`;
}

function dot(nodes: readonly GraphNodeView[], options: GraphFormatOptions): string {
  const lines = ['digraph {'];
  if (options.stackName !== undefined)
    lines.push(`label = ${dotString(`Stack: ${options.stackName}`)};`, 'labelloc = "t";');
  lines.push('node [shape=box,style="rounded,bold"]');
  for (const n of nodes) {
    if (!n.processed) {
      const label = n.conditionsOk ? '' : ` label=${dotString(`${n.id}${failedSuffix(n)}`)}`;
      lines.push(`${dotString(n.id)} [fontcolor="${RED}" color="${RED}"${label}]`);
    }
    if (n.dependsOn.length === 0) lines.push(`${dotString(n.id)};`);
    for (const parent of n.dependsOn) lines.push(`${dotString(parent)} -> ${dotString(n.id)};`);
  }
  if (nodes.some((n) => !n.processed)) {
    lines.push(
      '{',
      '  rank = sink;',
      `  notelabel [shape=plain, fontcolor="${RED}", label="Nodes in red will not be processed"];`,
      '}',
    );
  }
  lines.push('}');
  return lines.join('\n');
}

function mermaidLabel(s: string): string {
  return `"${s.replaceAll('"', '#quot;')}"`;
}

function mermaid(nodes: readonly GraphNodeView[]): string {
  const key = new Map(nodes.map((n, i) => [n.id, `n${i}`]));
  const lines = ['graph TD'];
  for (const n of nodes) {
    lines.push(
      `  ${key.get(n.id) ?? ''}[${mermaidLabel(`${n.id}${failedSuffix(n)}`)}]${n.processed ? '' : ':::unprocessed'}`,
    );
  }
  for (const n of nodes) {
    for (const parent of n.dependsOn) {
      const from = key.get(parent);
      if (from !== undefined) lines.push(`  ${from} --> ${key.get(n.id) ?? ''}`);
    }
  }
  if (nodes.some((n) => !n.processed)) lines.push(`  classDef unprocessed color:${RED},stroke:${RED}`);
  return lines.join('\n');
}

function json(nodes: readonly GraphNodeView[]): string {
  const data = {
    nodes: nodes.map((n) => ({
      id: n.id,
      dependsOn: [...n.dependsOn],
      processed: n.processed,
      selected: n.selected,
      conditionsOk: n.conditionsOk,
    })),
  };
  return JSON.stringify(data, null, 2);
}

/** Render `nodes` (a selection's sub-graph) in `format`. */
export function formatGraph(
  nodes: readonly GraphNodeView[],
  format: GraphFormat,
  options: GraphFormatOptions = {},
): string {
  const inOrder = ordered(nodes);
  switch (format) {
    case 'text':
      return text(inOrder);
    case 'dot':
      return dot(inOrder, options);
    case 'mermaid':
      return mermaid(inOrder);
    case 'json':
      return json(inOrder);
  }
}
