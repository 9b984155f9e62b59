/**
 * What the DAG is built from: every kapp of every manifest with its own conditions and those of its `depends_on`
 * entries rendered (stack, provider and kapp variables, no outputs) and evaluated.
 */
import { locationOf } from '../config/locations.js';
import type { DependsOnConfig, ManifestConfig } from '../config/types.js';
import type { Diagnostic, SourceLocation } from '../diagnostics/diagnostic.js';
import { ConfigError } from '../diagnostics/errors.js';
import type { DagDependencyInput, DagKappInput, DagManifestInput } from '../plan/dag.js';
import { evaluateConditions } from '../plan/go-bool.js';
import { newGoMap, type GoMap, type GoValue } from '../go-value/value.js';
import { containsTemplate } from '../vars/render.js';
import type { KappModel } from './kapp-model.js';

/** What building the DAG inputs needs from the stack. */
export interface DagInputSource {
  kapp(id: string): KappModel;
  variables(kapp: KappModel): GoMap;
  render<T>(kapp: KappModel, value: T, vars: GoValue, what: string): T;
}

const EMPTY = newGoMap();

function at(location: SourceLocation | undefined): { location?: SourceLocation } {
  return location ? { location } : {};
}

/**
 * A kapp or one of its dependencies as the DAG takes them, its location looked up only when a diagnostic reads it: a
 * big stack has tens of thousands of dependencies, and a run reads none of their locations.
 */
abstract class LocatedInput {
  readonly #from: object;
  constructor(from: object) {
    this.#from = from;
  }
  get location(): SourceLocation | undefined {
    return locationOf(this.#from);
  }
}

class DependencyInput extends LocatedInput implements DagDependencyInput {
  constructor(
    readonly id: string,
    readonly conditionsOk: boolean,
    entry: DependsOnConfig,
  ) {
    super(entry);
  }
}

class KappInput extends LocatedInput implements DagKappInput {
  constructor(
    readonly kappId: string,
    readonly conditionsOk: boolean,
    readonly dependsOn: readonly DagDependencyInput[],
    entry: object,
  ) {
    super(entry);
  }
}

function kappInput(source: DagInputSource, kapp: KappModel, problems: Diagnostic[]): DagKappInput {
  const rawConds = kapp.descriptor.conditions ?? [];
  const rawDeps = kapp.descriptor.depends_on ?? [];
  let conditionsOk = true;
  let dependsOn: DagDependencyInput[] = [];
  try {
    // Variables are rendered only when the conditions or dependencies read them.
    const templated =
      (rawConds.length > 0 && containsTemplate(rawConds)) || (rawDeps.length > 0 && containsTemplate(rawDeps));
    const vars = templated ? source.variables(kapp) : EMPTY;
    const conds = templated ? source.render(kapp, rawConds, vars, 'conditions') : rawConds;
    conditionsOk =
      conds.length === 0 ||
      evaluateConditions(conds, {
        kapp: kapp.id,
        conditionLocations: conds.map((_, i) => locationOf(conds, i)),
        ...at(locationOf(kapp.descriptor.conditions ?? kapp.entry)),
      });
    const deps: readonly DependsOnConfig[] = templated ? source.render(kapp, rawDeps, vars, 'depends_on') : rawDeps;
    dependsOn = deps.map((d) => {
      const conds2 = d.conditions ?? [];
      const ok =
        conds2.length === 0 ||
        evaluateConditions(conds2, {
          kapp: kapp.id,
          owner: `dependency '${d.id}'`,
          conditionLocations: conds2.map((_, i) => locationOf(conds2, i)),
          ...at(locationOf(d)),
        });
      return new DependencyInput(d.id, ok, d);
    });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    problems.push(...e.diagnostics);
  }
  return new KappInput(kapp.kappId, conditionsOk, dependsOn, kapp.entry);
}

/** The DAG inputs of `manifests` (stack order). Throws a `ConfigError` with every condition that is not a boolean. */
export function dagInputs(source: DagInputSource, manifests: readonly ManifestConfig[]): DagManifestInput[] {
  const problems: Diagnostic[] = [];
  const inputs = manifests.map((manifest) => ({
    id: manifest.id,
    sequential: manifest.sequential,
    ...at(locationOf(manifest)),
    kapps: manifest.kapps.map((entry) => kappInput(source, source.kapp(`${manifest.id}:${entry.id}`), problems)),
  }));
  if (problems.length) throw new ConfigError(problems);
  return inputs;
}
