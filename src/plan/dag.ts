/**
 * The kapp dependency graph of a stack: one node per kapp of every manifest (`manifest:kapp`), an edge from each
 * dependency to its dependant. Built from already-evaluated conditions; every problem is collected into one
 * `ConfigError`. Linear in kapps plus dependencies.
 */
import { error, type Diagnostic, type RelatedInformation, type SourceLocation } from '../diagnostics/diagnostic.js';
import { ConfigError } from '../diagnostics/errors.js';
import { findCycles } from './cycles.js';
import { didYouMean } from '../diagnostics/did-you-mean.js';
import { topologicalOrder } from './topo-order.js';

/** One `depends_on` entry as written, with its rendered conditions already evaluated. */
export interface DagDependencyInput {
  /** `kapp` (same manifest as the dependant) or `manifest:kapp`. */
  readonly id: string;
  /** False: the entry creates no edge and is not checked for existence. */
  readonly conditionsOk: boolean;
  /** May be a getter: read only for a diagnostic (a big stack has tens of thousands of dependencies). */
  readonly location?: SourceLocation | undefined;
}

/** A kapp of a manifest, with its own conditions already evaluated. */
export interface DagKappInput {
  readonly kappId: string;
  readonly conditionsOk: boolean;
  readonly dependsOn: readonly DagDependencyInput[];
  /** May be a getter, as a dependency's. */
  readonly location?: SourceLocation | undefined;
}

/** A manifest of the stack, in stack order. */
export interface DagManifestInput {
  readonly id: string;
  /** Each kapp after the first depends only on the one before it (its own `depends_on` is ignored). */
  readonly sequential: boolean;
  readonly kapps: readonly DagKappInput[];
  readonly location?: SourceLocation;
}

/** A node of the graph. */
export interface DagNode {
  /** `manifest:kapp`. */
  readonly id: string;
  readonly manifestId: string;
  readonly kappId: string;
  /** The kapp's own conditions all hold; false keeps the node in the graph but it is never processed. */
  readonly conditionsOk: boolean;
  /** Position in stack order (manifests in stack order, kapps in manifest order). */
  readonly index: number;
  /** The kapp's input's location, read when asked. */
  readonly location: SourceLocation | undefined;
}

/** An edge, from a dependency to its dependant. */
export interface DagEdge {
  /** Where the dependency was declared (for a sequential manifest: the dependant kapp); read when asked. */
  readonly location: SourceLocation | undefined;
  /** Implied by a sequential manifest rather than written in `depends_on`. */
  readonly sequential: boolean;
}

/** A node whose location is its kapp input's, read only when a diagnostic asks (see `DagDependencyInput`). */
class GraphNode implements DagNode {
  readonly kappId: string;
  readonly conditionsOk: boolean;
  readonly #kapp: DagKappInput;
  constructor(
    readonly id: string,
    readonly manifestId: string,
    readonly index: number,
    kapp: DagKappInput,
  ) {
    this.kappId = kapp.kappId;
    this.conditionsOk = kapp.conditionsOk;
    this.#kapp = kapp;
  }
  get location(): SourceLocation | undefined {
    return this.#kapp.location;
  }
}

/** An edge whose location is its dependency's (or, for none, its dependant kapp's), read when asked. */
class GraphEdge implements DagEdge {
  readonly #dependency: DagDependencyInput | undefined;
  readonly #kapp: DagKappInput;
  constructor(
    readonly sequential: boolean,
    dependency: DagDependencyInput | undefined,
    kapp: DagKappInput,
  ) {
    this.#dependency = dependency;
    this.#kapp = kapp;
  }
  get location(): SourceLocation | undefined {
    return this.#dependency?.location ?? this.#kapp.location;
  }
}

/**
 * The dependency graph of a stack. Adjacency is kept in plain maps (adding an edge is a few array pushes).
 */
export class KappDag {
  /** Every node id in stack order. */
  readonly ids: readonly string[];
  readonly #nodes: ReadonlyMap<string, DagNode>;
  readonly #parents: ReadonlyMap<string, readonly string[]>;
  readonly #children: ReadonlyMap<string, readonly string[]>;
  /** Per kapp, the edge of each of its parents, in the order of `#parents`. */
  readonly #edges: ReadonlyMap<string, readonly DagEdge[]>;

  /** Use `buildDag`. */
  constructor(
    ids: readonly string[],
    nodes: ReadonlyMap<string, DagNode>,
    parents: ReadonlyMap<string, readonly string[]>,
    children: ReadonlyMap<string, readonly string[]>,
    edges: ReadonlyMap<string, readonly DagEdge[]>,
  ) {
    this.ids = ids;
    this.#nodes = nodes;
    this.#parents = parents;
    this.#children = children;
    this.#edges = edges;
  }

  /** The node, or undefined when no kapp has this id. */
  node(id: string): DagNode | undefined {
    return this.#nodes.get(id);
  }

  /** Ids the kapp depends on, in the order declared. */
  parents(id: string): string[] {
    return [...this.parentsOf(id)];
  }

  /** As `parents`, without copying: do not modify the result. */
  parentsOf(id: string): readonly string[] {
    return this.#parents.get(id) ?? [];
  }

  /** Ids that depend on the kapp, in stack order of declaration. */
  children(id: string): string[] {
    return [...(this.#children.get(id) ?? [])];
  }

  /** The edge through which `child` depends on `parent`, if any. */
  edge(parent: string, child: string): DagEdge | undefined {
    const i = this.parentsOf(child).indexOf(parent);
    return i < 0 ? undefined : this.#edges.get(child)?.[i];
  }

  /** All ids, parents before children, ties in stack order. */
  topologicalOrder(): string[] {
    return topologicalOrder(this.ids, (id) => this.#parents.get(id) ?? []);
  }
}

function related(message: string, location: SourceLocation | undefined): RelatedInformation {
  return location ? { message, location } : { message };
}

interface PendingEdge {
  readonly child: string;
  readonly kapp: DagKappInput;
  /** Undefined for a sequential manifest's edge. */
  readonly dependency: DagDependencyInput | undefined;
  readonly parent: string;
  readonly sequential: boolean;
}

function cycleDiagnostic(cycle: readonly string[], dag: KappDag): Diagnostic {
  const steps = cycle.map((id, i) => [id, cycle[(i + 1) % cycle.length] ?? id] as const);
  const info = steps.map(([child, parent]) => {
    const edge = dag.edge(parent, child);
    return related(
      `'${child}' depends on '${parent}'${edge?.sequential ? ' (sequential manifest)' : ''}`,
      edge?.location,
    );
  });
  const first = steps[0];
  const location = first ? dag.edge(first[1], first[0])?.location : undefined;
  return error(`kapps depend on each other in a cycle: ${[...cycle, cycle[0]].join(' → ')}`, location, {
    related: info,
  });
}

/** Whether every node can be ordered after its parents (Kahn's algorithm over positions). */
function isAcyclic(
  ids: readonly string[],
  parents: ReadonlyMap<string, readonly string[]>,
  children: ReadonlyMap<string, readonly string[]>,
): boolean {
  const pending = new Map<string, number>();
  const ready: string[] = [];
  for (const id of ids) {
    const n = parents.get(id)?.length ?? 0;
    pending.set(id, n);
    if (n === 0) ready.push(id);
  }
  let seen = 0;
  while (ready.length > 0) {
    const id = ready.pop() as string;
    seen++;
    for (const child of children.get(id) ?? []) {
      const left = (pending.get(child) ?? 0) - 1;
      pending.set(child, left);
      if (left === 0) ready.push(child);
    }
  }
  return seen === ids.length;
}

/**
 * The dependency graph of `manifests` (in stack order). Errors, all collected into one `ConfigError`: duplicate
 * manifest ids, duplicate kapp ids, unknown dependencies (with a suggestion), self-dependencies and cycles (each
 * listed in order from its smallest id, with every edge's location).
 */
export function buildDag(manifests: readonly DagManifestInput[]): KappDag {
  const problems: Diagnostic[] = [];
  const nodes = new Map<string, DagNode>();
  const parents = new Map<string, string[]>();
  const children = new Map<string, string[]>();
  const edges = new Map<string, DagEdge[]>();
  const manyParents = new Map<string, Set<string>>();
  const ids: string[] = [];
  const manifestsSeen = new Map<string, DagManifestInput>();
  const pending: PendingEdge[] = [];

  for (const manifest of manifests) {
    const firstManifest = manifestsSeen.get(manifest.id);
    if (firstManifest) {
      problems.push(
        error(`manifest id '${manifest.id}' is used twice in the stack`, manifest.location, {
          related: [related(`'${manifest.id}' is first used here`, firstManifest.location)],
        }),
      );
    } else {
      manifestsSeen.set(manifest.id, manifest);
    }
    let previous: string | undefined;
    for (const kapp of manifest.kapps) {
      const id = `${manifest.id}:${kapp.kappId}`;
      const before = previous;
      previous = id;
      const existing = nodes.get(id);
      if (existing) {
        problems.push(
          error(`kapp '${id}' is defined twice`, kapp.location, {
            related: [related(`'${id}' is first defined here`, existing.location)],
          }),
        );
        continue;
      }
      const node: DagNode = new GraphNode(id, manifest.id, ids.length, kapp);
      nodes.set(id, node);
      parents.set(id, []);
      children.set(id, []);
      edges.set(id, []);
      ids.push(id);
      if (manifest.sequential && before !== undefined) {
        // Where a sequential edge is declared: the dependant kapp (the edge's location falls back to it).
        pending.push({ child: id, kapp, dependency: undefined, parent: before, sequential: true });
        continue;
      }
      for (const dependency of kapp.dependsOn) {
        if (!dependency.conditionsOk) continue;
        const parent = dependency.id.includes(':') ? dependency.id : `${manifest.id}:${dependency.id}`;
        pending.push({ child: id, kapp, dependency, parent, sequential: false });
      }
    }
  }

  for (const { child, kapp, dependency, parent, sequential } of pending) {
    if (parent === child) {
      problems.push(error(`kapp '${child}' depends on itself`, dependency?.location ?? kapp.location));
    } else if (!nodes.has(parent)) {
      const hint = didYouMean(parent, ids);
      problems.push(
        error(
          `kapp '${child}' depends on '${parent}', which does not exist`,
          dependency?.location ?? kapp.location,
          hint ? { hint } : {},
        ),
      );
    } else {
      const ofChild = parents.get(child) ?? [];
      // A dependency written twice is one edge. Kapps have few dependencies, so a scan is cheapest; a set takes
      // over for the rare kapp with very many.
      let known = ofChild.length > 32 ? manyParents.get(child) : undefined;
      if (ofChild.length > 32 && !known) {
        known = new Set(ofChild);
        manyParents.set(child, known);
      }
      if (!(known ? known.has(parent) : ofChild.includes(parent))) {
        known?.add(parent);
        ofChild.push(parent);
        edges.get(child)?.push(new GraphEdge(sequential, dependency, kapp));
        children.get(parent)?.push(child);
      }
    }
  }

  const dag = new KappDag(ids, nodes, parents, children, edges);
  // Looking for cycles costs more than ordering; only look when ordering shows there is one.
  if (!isAcyclic(ids, parents, children)) {
    for (const cycle of findCycles(ids, (id) => parents.get(id) ?? [])) problems.push(cycleDiagnostic(cycle, dag));
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return dag;
}
