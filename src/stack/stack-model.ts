/**
 * The model of an opened stack: its configuration, every kapp with its layered descriptor, the DAG and the
 * selection. The DAG is built with the kapps' variables (their conditions are rendered), which the model is given.
 */
import type { ManifestConfig, ProjectConfig, StackConfig } from '../config/types.js';
import type { Diagnostic } from '../diagnostics/diagnostic.js';
import { InternalError } from '../diagnostics/errors.js';
import { buildDag, type KappDag } from '../plan/dag.js';
import { selectKapps, type PlanNode, type Selection } from '../plan/select.js';
import { dagInputs, type DagInputSource } from './dag-inputs.js';
import type { KappModel } from './kapp-model.js';
import type { StackVariables } from './stack-variables.js';

/** What the model is made of (what `openStack` loaded) and the selection's selectors. */
export interface StackModelInit {
  readonly project: ProjectConfig;
  readonly stack: StackConfig;
  readonly manifests: readonly ManifestConfig[];
  readonly workspace: string;
  readonly kapps: readonly KappModel[];
  readonly warnings: Diagnostic[];
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  readonly parents: boolean;
  /** Kapps whose git sources are not in the workspace (their sugarkube.yaml was not read), in stack order. */
  readonly unfetched?: readonly string[];
}

/** The model of an opened stack: see the module comment. */
export class StackModel {
  readonly project: ProjectConfig;
  readonly config: StackConfig;
  readonly manifests: readonly ManifestConfig[];
  /** Absolute workspace directory. */
  readonly workspace: string;
  /** Every kapp of every manifest, in stack order. */
  readonly kapps: readonly KappModel[];
  /** Warnings found so far (loading, selection, planning); printed by the commands. */
  readonly warnings: Diagnostic[];
  readonly dag: KappDag;
  readonly selection: Selection;
  /** Kapps whose git sources are not in the workspace: their sugarkube.yaml was not read. */
  readonly unfetched: readonly string[];
  readonly #byId = new Map<string, KappModel>();
  readonly #planNodes = new Map<string, PlanNode>();

  constructor(init: StackModelInit, vars: StackVariables) {
    this.project = init.project;
    this.config = init.stack;
    this.manifests = init.manifests;
    this.workspace = init.workspace;
    this.kapps = init.kapps;
    this.warnings = init.warnings;
    this.unfetched = init.unfetched ?? [];
    for (const k of init.kapps) this.#byId.set(k.id, k);
    const source: DagInputSource = {
      kapp: (id) => this.kapp(id),
      variables: (kapp) => vars.variables(kapp),
      render: vars.render.bind(vars),
    };
    this.dag = buildDag(dagInputs(source, this.manifests));
    this.selection = selectKapps(this.dag, { include: init.include, exclude: init.exclude, parents: init.parents });
    this.warnings.push(...this.selection.warnings);
    for (const n of this.selection.nodes) this.#planNodes.set(n.id, n);
  }

  /** The kapp with this `manifest:kapp` id (it must exist). */
  kapp(id: string): KappModel {
    const k = this.#byId.get(id);
    if (!k) throw new InternalError(`no kapp ${id} in stack ${this.config.name}`);
    return k;
  }

  /** The node of the selection's sub-graph (selected kapps and their ancestors). */
  planNode(id: string): PlanNode | undefined {
    return this.#planNodes.get(id);
  }
}
