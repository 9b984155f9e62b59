import { describe, expect, it } from 'vitest';
import { buildDag } from '../../../src/plan/dag.js';
import { formatGraph, type GraphNodeView } from '../../../src/plan/graph-format.js';
import { selectKapps } from '../../../src/plan/select.js';
import { kapp, manifest, sugarkubeDag } from './fixtures.js';

/** A stack whose manifest order is not a topological order, with a failed condition and an unselected ancestor. */
function nodes(): readonly GraphNodeView[] {
  const dag = buildDag([
    manifest('apps', [kapp('web', ['db', 'infra:net']), kapp('db', ['infra:net']), kapp('cron', [], false)]),
    manifest('infra', [kapp('net')]),
  ]);
  return selectKapps(dag, { include: ['apps:*'] }).nodes;
}

describe('formatGraph', () => {
  it('text: header, then one line per node, parents first, dependencies sorted', () => {
    expect(formatGraph(nodes(), 'text')).toBe(
      [
        'Created the following DAG. Only nodes marked with a * will be processed:',
        '    apps:cron (conditions failed) - depends on: <nothing>',
        '    infra:net - depends on: <nothing>',
        '  * apps:db - depends on: infra:net',
        '  * apps:web - depends on: apps:db, infra:net',
      ].join('\n'),
    );
  });

  it("text: Sugarkube's sub-graph", () => {
    const selection = selectKapps(buildDag(sugarkubeDag()), { include: ['m:wordpress1', 'm:independent'] });
    expect(formatGraph(selection.nodes, 'text')).toBe(
      [
        'Created the following DAG. Only nodes marked with a * will be processed:',
        '  * m:independent - depends on: <nothing>',
        '    m:cluster - depends on: <nothing>',
        '    m:tiller - depends on: m:cluster',
        '    m:externalIngress - depends on: m:tiller',
        '    m:sharedRds - depends on: <nothing>',
        '  * m:wordpress1 - depends on: m:externalIngress, m:sharedRds',
      ].join('\n'),
    );
  });

  it('dot: unprocessed nodes in red and a legend', () => {
    expect(formatGraph(nodes(), 'dot', { stackName: 'local "web"' })).toBe(
      [
        'digraph {',
        'label = "Stack: local \\"web\\"";',
        'labelloc = "t";',
        'node [shape=box,style="rounded,bold"]',
        '"apps:cron" [fontcolor="#FF0000" color="#FF0000" label="apps:cron (conditions failed)"]',
        '"apps:cron";',
        '"infra:net" [fontcolor="#FF0000" color="#FF0000"]',
        '"infra:net";',
        '"infra:net" -> "apps:db";',
        '"apps:db" -> "apps:web";',
        '"infra:net" -> "apps:web";',
        '{',
        '  rank = sink;',
        '  notelabel [shape=plain, fontcolor="#FF0000", label="Nodes in red will not be processed"];',
        '}',
        '}',
      ].join('\n'),
    );
  });

  it('dot: no legend when every node is processed, no title without a stack name', () => {
    const all = selectKapps(buildDag([manifest('m', [kapp('a'), kapp('b', ['a'])])])).nodes;
    expect(formatGraph(all, 'dot')).toBe(
      ['digraph {', 'node [shape=box,style="rounded,bold"]', '"m:a";', '"m:a" -> "m:b";', '}'].join('\n'),
    );
  });

  it('mermaid: graph TD with a class for unprocessed nodes', () => {
    expect(formatGraph(nodes(), 'mermaid')).toBe(
      [
        'graph TD',
        '  n0["apps:cron (conditions failed)"]:::unprocessed',
        '  n1["infra:net"]:::unprocessed',
        '  n2["apps:db"]',
        '  n3["apps:web"]',
        '  n1 --> n2',
        '  n2 --> n3',
        '  n1 --> n3',
        '  classDef unprocessed color:#FF0000,stroke:#FF0000',
      ].join('\n'),
    );
  });

  it('json: nodes in the same order with their flags', () => {
    expect(JSON.parse(formatGraph(nodes(), 'json'))).toEqual({
      nodes: [
        { id: 'apps:cron', dependsOn: [], processed: false, selected: true, conditionsOk: false },
        { id: 'infra:net', dependsOn: [], processed: false, selected: false, conditionsOk: true },
        { id: 'apps:db', dependsOn: ['infra:net'], processed: true, selected: true, conditionsOk: true },
        { id: 'apps:web', dependsOn: ['apps:db', 'infra:net'], processed: true, selected: true, conditionsOk: true },
      ],
    });
  });

  it('prints the same text for the same input every time', () => {
    for (const format of ['text', 'dot', 'mermaid', 'json'] as const) {
      expect(formatGraph(nodes(), format)).toBe(formatGraph(nodes(), format));
    }
  });
});
