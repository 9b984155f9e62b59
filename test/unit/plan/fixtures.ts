/** Shared inputs of the planning tests. */
import type { DagKappInput, DagManifestInput } from '../../../src/plan/dag.js';

/** A kapp whose conditions (and its dependencies' conditions) are as given. */
export function kapp(kappId: string, deps: string[] = [], conditionsOk = true): DagKappInput {
  return { kappId, conditionsOk, dependsOn: deps.map((id) => ({ id, conditionsOk: true })) };
}

/** A manifest of the stack. */
export function manifest(id: string, kapps: DagKappInput[], sequential = false): DagManifestInput {
  return { id, sequential, kapps };
}

/** Sugarkube's dag_test descriptors (§10.2), as one manifest. */
export function sugarkubeDag(): DagManifestInput[] {
  return [
    manifest('m', [
      kapp('independent'),
      kapp('cluster', []),
      kapp('tiller', ['cluster']),
      kapp('externalIngress', ['tiller']),
      kapp('sharedRds'),
      kapp('wordpress1', ['sharedRds', 'externalIngress']),
      kapp('wordpress2', ['sharedRds', 'externalIngress']),
      kapp('varnish', ['wordpress2']),
    ]),
  ];
}
