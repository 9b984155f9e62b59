/** What `kapps vars` shows: per kapp of the sub-graph, the variable map and the rendered descriptor. */
import { newGoMap, type GoMap, type GoValue } from '../template/value.js';
import { deepCopy, setPath } from '../vars/merge.js';
import type { Stack } from './stack.js';

export interface KappVarsReport {
  readonly id: string;
  readonly variables: GoMap;
  readonly config: GoValue;
}

/** Plain data of a descriptor (arrays of named entries shown as maps, as users write them). */
function descriptorData(d: object): GoValue {
  const out = newGoMap();
  for (const [k, v] of Object.entries(d)) {
    if (v === undefined) continue;
    if ((k === 'run_units' || k === 'templates' || k === 'sources' || k === 'outputs') && Array.isArray(v)) {
      const m = newGoMap();
      for (const item of v as { name?: string; id?: string }[]) {
        const { name, id, ...rest } = item as Record<string, unknown> & { name?: string; id?: string };
        m[(k === 'run_units' ? name : id) ?? ''] = JSON.parse(JSON.stringify(rest, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x))) as GoValue;
      }
      out[k] = m;
    } else {
      out[k] = v as GoValue;
    }
  }
  return out;
}

/** The report for every kapp of the stack's sub-graph, with `suppress` paths (dotted, leading `.` ignored) blanked. */
export function kappVarsReport(stack: Stack, suppress: readonly string[]): KappVarsReport[] {
  const views = stack.placeholderViews();
  return stack.selection.nodes.map((node) => {
    const kapp = stack.kapp(node.id);
    const runtime = { outputs: views.get(node.id) ?? newGoMap() };
    const variables = deepCopy(stack.variables(kapp, runtime)) as GoMap;
    for (const p of suppress) {
      const parts = p.replace(/^\./, '').split('.').filter(Boolean);
      if (parts.length) setPath(variables, parts, '');
    }
    return { id: node.id, variables, config: descriptorData(stack.renderDescriptor(kapp, variables)) };
  });
}
