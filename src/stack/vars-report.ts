/**
 * What `kapps vars` shows: per kapp of the sub-graph (whatever its conditions), the variable map its steps are
 * planned with and its descriptor rendered against it, with `--suppress` paths blanked in both.
 */
import type { ActionConfig, KappDescriptor } from '../config/types.js';
import { newGoMap, type GoMap, type GoValue } from '../go-value/value.js';
import { deepCopy, setPath } from '../vars/merge.js';
import type { Stack } from './stack.js';

/** One kapp of the report. */
export interface KappVarsReport {
  /** `manifest:kapp`. */
  readonly id: string;
  /** The rendered variable map. */
  readonly variables: GoMap;
  /** The rendered descriptor, in the shape users write it (run units, sources, outputs, templates as maps). */
  readonly config: GoValue;
}

/** A plain copy of configuration data (numbers kept, bigints as numbers, no undefined fields). */
function plain(v: unknown): GoValue {
  return JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x))) as GoValue;
}

function byKey<T extends object>(items: readonly T[], key: (t: T) => string, body: (t: T) => object): GoMap {
  const m = newGoMap();
  for (const item of items) m[key(item)] = plain(body(item));
  return m;
}

function actions(list: readonly ActionConfig[]): GoValue {
  return list.map((a) => newGoMap([[a.id, a.params ? newGoMap([['params', plain(a.params)]]) : null]]));
}

/** The order fields are shown in, whichever layer set them. */
const FIELD_ORDER: readonly (keyof KappDescriptor)[] = [
  'id',
  'requires',
  'conditions',
  'depends_on',
  'sources',
  'outputs',
  'templates',
  'run_units',
  'pre_install_actions',
  'post_install_actions',
  'pre_delete_actions',
  'post_delete_actions',
  'ignore_global_defaults',
  'metadata',
  'vars',
];

/** A descriptor as users write it: run units, sources, outputs and templates keyed by name/id. */
export function descriptorData(d: KappDescriptor): GoMap {
  const out = newGoMap();
  for (const k of FIELD_ORDER) {
    const v: unknown = d[k];
    if (v === undefined) continue;
    switch (k) {
      case 'run_units':
        out[k] = byKey(
          d.run_units ?? [],
          (u) => u.name,
          ({ name: _n, ...rest }) => rest,
        );
        break;
      case 'sources':
        out[k] = byKey(
          d.sources ?? [],
          (s) => s.id,
          (s) => ({ uri: s.uri, ...(s.options ? { options: s.options } : {}) }),
        );
        break;
      case 'outputs':
        out[k] = byKey(
          d.outputs ?? [],
          (o) => o.id,
          ({ id: _i, ...rest }) => rest,
        );
        break;
      case 'templates':
        out[k] = byKey(
          d.templates ?? [],
          (t) => t.id,
          ({ id: _i, ...rest }) => rest,
        );
        break;
      case 'pre_install_actions':
      case 'post_install_actions':
      case 'pre_delete_actions':
      case 'post_delete_actions':
        out[k] = actions(v as ActionConfig[]);
        break;
      case 'vars':
      case 'metadata':
        out[k] = v as GoMap;
        break;
      default:
        out[k] = plain(v);
    }
  }
  return out;
}

/** The report for every kapp of the stack's sub-graph, with `suppress` paths (dotted, leading `.` ignored) blanked. */
export function kappVarsReport(stack: Stack, suppress: readonly string[]): KappVarsReport[] {
  const views = stack.placeholderViews();
  const paths = suppress.map((p) => p.replace(/^\./, '').split('.').filter(Boolean)).filter((p) => p.length > 0);
  return stack.selection.nodes.map((node) => {
    const kapp = stack.kapp(node.id);
    const runtime = { outputs: views.get(node.id) ?? newGoMap(), planOnly: true };
    const variables = deepCopy(stack.planningVariables(kapp, runtime)) as GoMap;
    for (const p of paths) setPath(variables, p, '');
    return { id: node.id, variables, config: descriptorData(stack.renderDescriptor(kapp, variables, true)) };
  });
}
