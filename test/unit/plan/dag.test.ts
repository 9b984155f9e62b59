import { describe, expect, it } from 'vitest';
import type { SourceLocation } from '../../../src/diagnostics/diagnostic.js';
import { ConfigError } from '../../../src/diagnostics/errors.js';
import { buildDag, type DagKappInput, type DagManifestInput, type KappDag } from '../../../src/plan/dag.js';
import { formatDiagnostics } from '../../../src/report/diagnostic-printer.js';
import { kapp, manifest, sugarkubeDag } from './fixtures.js';

function parentsOf(dag: KappDag): Record<string, string[]> {
  return Object.fromEntries(dag.ids.map((id) => [id, dag.parents(id)]));
}

function diagnosticsOf(fn: () => unknown, source?: Record<string, string>): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError)
      return formatDiagnostics(e.diagnostics, { cwd: '/s', readSource: (f) => source?.[f] });
    throw e;
  }
  throw new Error('expected a ConfigError');
}

const file = '/s/manifests/web.yaml';
function at(line: number, column: number, length = 1): SourceLocation {
  return { file, line, column, endLine: line, endColumn: column + length };
}

describe('buildDag: Sugarkube cases', () => {
  it('TestBuildDag: every node has exactly its declared dependencies as parents', () => {
    const dag = buildDag(sugarkubeDag());
    expect(parentsOf(dag)).toEqual({
      'm:independent': [],
      'm:cluster': [],
      'm:tiller': ['m:cluster'],
      'm:externalIngress': ['m:tiller'],
      'm:sharedRds': [],
      'm:wordpress1': ['m:sharedRds', 'm:externalIngress'],
      'm:wordpress2': ['m:sharedRds', 'm:externalIngress'],
      'm:varnish': ['m:wordpress2'],
    });
    expect(dag.children('m:externalIngress')).toEqual(['m:wordpress1', 'm:wordpress2']);
  });

  it('TestBuildDagLoops: a kapp depending on itself is an error', () => {
    expect(diagnosticsOf(() => buildDag([manifest('m', [kapp('a', ['a'])])]))).toBe(
      "error: kapp 'm:a' depends on itself",
    );
  });

  it('TestIsAcyclic: a cycle is an error', () => {
    const input = [manifest('m', [kapp('entry1', ['entry2']), kapp('entry2', ['entry1']), kapp('entry3')])];
    expect(diagnosticsOf(() => buildDag(input))).toBe(
      [
        'error: kapps depend on each other in a cycle: m:entry1 → m:entry2 → m:entry1',
        "  'm:entry1' depends on 'm:entry2'",
        "  'm:entry2' depends on 'm:entry1'",
      ].join('\n'),
    );
  });

  it('TestTraverse: the topological order starts with a root and ends with a leaf', () => {
    const order = buildDag(sugarkubeDag()).topologicalOrder();
    expect(order).toEqual([
      'm:independent',
      'm:cluster',
      'm:tiller',
      'm:externalIngress',
      'm:sharedRds',
      'm:wordpress1',
      'm:wordpress2',
      'm:varnish',
    ]);
  });

  it('TestFindDependencies: a sequential manifest chains its kapps; ids are qualified', () => {
    const dag = buildDag([
      manifest('manifest2', [kapp('kappC'), kapp('kappB', ['kappX']), kapp('kappD'), kapp('kappA')], true),
      manifest('manifest3', [kapp('kappX'), kapp('kappY')]),
    ]);
    expect(parentsOf(dag)).toEqual({
      'manifest2:kappC': [],
      'manifest2:kappB': ['manifest2:kappC'],
      'manifest2:kappD': ['manifest2:kappB'],
      'manifest2:kappA': ['manifest2:kappD'],
      'manifest3:kappX': [],
      'manifest3:kappY': [],
    });
    expect(dag.edge('manifest2:kappC', 'manifest2:kappB')?.sequential).toBe(true);
  });
});

describe('buildDag', () => {
  it("keeps a sequential manifest's first kapp's own dependencies", () => {
    const dag = buildDag([
      manifest('infra', [kapp('vpc')]),
      manifest('apps', [kapp('db', ['infra:vpc']), kapp('web', ['infra:vpc'])], true),
    ]);
    expect(dag.parents('apps:db')).toEqual(['infra:vpc']);
    expect(dag.parents('apps:web')).toEqual(['apps:db']);
  });

  it('ignores dependencies whose conditions are false, without checking they exist', () => {
    const dag = buildDag([
      manifest('m', [
        {
          kappId: 'a',
          conditionsOk: true,
          dependsOn: [
            { id: 'gone', conditionsOk: false },
            { id: 'b', conditionsOk: true },
          ],
        },
        kapp('b', [], false),
      ]),
    ]);
    expect(dag.parents('m:a')).toEqual(['m:b']);
    expect(dag.node('m:b')).toMatchObject({ conditionsOk: false, manifestId: 'm', kappId: 'b', index: 1 });
  });

  it('keeps one edge for a dependency written twice, and accepts fully-qualified ids', () => {
    const dag = buildDag([manifest('m', [kapp('a'), kapp('b', ['a', 'm:a'])])]);
    expect(dag.parents('m:b')).toEqual(['m:a']);
  });

  it('collects every error with its location, suggesting close ids', () => {
    const input: DagManifestInput[] = [
      {
        id: 'web',
        sequential: false,
        location: at(1, 1),
        kapps: [
          {
            kappId: 'nginx',
            conditionsOk: true,
            location: at(3, 9, 5),
            dependsOn: [{ id: 'postgress', conditionsOk: true, location: at(5, 11, 9) }],
          },
          { kappId: 'postgres', conditionsOk: true, location: at(6, 9, 8), dependsOn: [] },
          { kappId: 'nginx', conditionsOk: true, location: at(7, 9, 5), dependsOn: [] },
          { kappId: 'redis', conditionsOk: true, dependsOn: [{ id: 'data:cache', conditionsOk: true }] },
        ],
      },
      { id: 'web', sequential: false, location: at(9, 1), kapps: [] },
    ];
    const source = {
      [file]: [
        'id: web',
        'kapps:',
        '  - id: nginx',
        '    depends_on:',
        '      - id: postgress',
        '  - id: postgres',
        '  - id: nginx',
        '---',
        'id: web',
      ].join('\n'),
    };
    expect(diagnosticsOf(() => buildDag(input), source)).toBe(
      [
        "manifests/web.yaml:7:9: error: kapp 'web:nginx' is defined twice",
        '  |',
        '7 |   - id: nginx',
        '  |         ^^^^^',
        "  manifests/web.yaml:3:9: 'web:nginx' is first defined here",
        '',
        "manifests/web.yaml:9:1: error: manifest id 'web' is used twice in the stack",
        '  |',
        '9 | id: web',
        '  | ^',
        "  manifests/web.yaml:1:1: 'web' is first used here",
        '',
        "manifests/web.yaml:5:11: error: kapp 'web:nginx' depends on 'web:postgress', which does not exist",
        '  |',
        '5 |       - id: postgress',
        '  |           ^^^^^^^^^',
        "  hint: did you mean 'web:postgres'?",
        '',
        "error: kapp 'web:redis' depends on 'data:cache', which does not exist",
      ].join('\n'),
    );
  });

  it('reports each cycle once, from its smallest id, with every edge located', () => {
    const input: DagManifestInput[] = [
      {
        id: 'm',
        sequential: false,
        kapps: [
          { kappId: 'z', conditionsOk: true, dependsOn: [{ id: 'c', conditionsOk: true, location: at(2, 5) }] },
          { kappId: 'c', conditionsOk: true, dependsOn: [{ id: 'b', conditionsOk: true, location: at(4, 5) }] },
          {
            kappId: 'b',
            conditionsOk: true,
            dependsOn: [
              { id: 'z', conditionsOk: true, location: at(6, 5) },
              { id: 'c', conditionsOk: true, location: at(7, 5) },
            ],
          },
          { kappId: 'a', conditionsOk: true, dependsOn: [{ id: 'a2', conditionsOk: true, location: at(9, 5) }] },
          { kappId: 'a2', conditionsOk: true, dependsOn: [{ id: 'a', conditionsOk: true, location: at(11, 5) }] },
          { kappId: 'free', conditionsOk: true, dependsOn: [{ id: 'a', conditionsOk: true }] },
        ],
      },
    ];
    const text = diagnosticsOf(() => buildDag(input));
    expect(text).toBe(
      [
        'manifests/web.yaml:9:5: error: kapps depend on each other in a cycle: m:a → m:a2 → m:a',
        "  manifests/web.yaml:9:5: 'm:a' depends on 'm:a2'",
        "  manifests/web.yaml:11:5: 'm:a2' depends on 'm:a'",
        '',
        // m:z is part of the same group (z → c → b → z) but the shortest cycle through m:b is reported.
        'manifests/web.yaml:7:5: error: kapps depend on each other in a cycle: m:b → m:c → m:b',
        "  manifests/web.yaml:7:5: 'm:b' depends on 'm:c'",
        "  manifests/web.yaml:4:5: 'm:c' depends on 'm:b'",
      ].join('\n'),
    );
    // Same input, same text.
    expect(diagnosticsOf(() => buildDag(input))).toBe(text);
  });

  it('names a sequential edge in a cycle', () => {
    const input = [manifest('m', [kapp('a', ['b']), kapp('b')], true)];
    expect(diagnosticsOf(() => buildDag(input))).toBe(
      [
        'error: kapps depend on each other in a cycle: m:a → m:b → m:a',
        "  'm:a' depends on 'm:b'",
        "  'm:b' depends on 'm:a' (sequential manifest)",
      ].join('\n'),
    );
  });

  it('reads the locations of nodes and edges only when asked, from the inputs', () => {
    const at = (line: number): SourceLocation => ({ file: '/s/m.yaml', line, column: 5 });
    const reads: string[] = [];
    const located = <T extends object>(obj: T, name: string, line: number): T =>
      Object.defineProperty(obj, 'location', {
        get: () => {
          reads.push(name);
          return at(line);
        },
      });
    const b = located({ kappId: 'b', conditionsOk: true, dependsOn: [] }, 'b', 3);
    const dep = located({ id: 'b', conditionsOk: true }, 'a→b', 2);
    const a = located({ kappId: 'a', conditionsOk: true, dependsOn: [dep] }, 'a', 1);
    const c = located({ kappId: 'c', conditionsOk: true, dependsOn: [] }, 'c', 4);
    const dag = buildDag([manifest('m', [a, b]), manifest('s', [c, kapp('d')], true)]);
    expect(reads).toEqual([]);
    expect(dag.node('m:a')?.location).toEqual(at(1));
    expect(dag.edge('m:b', 'm:a')?.location).toEqual(at(2));
    // A sequential manifest's edge is where its dependant kapp is; `s:d` has no location.
    expect(dag.edge('s:c', 's:d')?.location).toBeUndefined();
    expect(reads).toEqual(['a', 'a→b']);
  });
});

/** A deterministic pseudo-random sequence (LCG), so the big graph is the same on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

describe('buildDag at scale', () => {
  it('builds 10,000 kapps across 100 manifests correctly', () => {
    const next = random(42);
    const input: DagManifestInput[] = [];
    const declared = new Map<string, string[]>();
    const all: string[] = [];
    for (let m = 0; m < 100; m++) {
      const sequential = m % 10 === 3;
      const kapps: DagKappInput[] = [];
      for (let k = 0; k < 100; k++) {
        const id = `m${m}:k${k}`;
        const deps: string[] = [];
        if (sequential && k > 0) deps.push(`m${m}:k${k - 1}`);
        const count = Math.floor(next() * 4);
        const own: string[] = [];
        for (let d = 0; d < count && all.length > 0; d++) {
          const target = all[Math.floor(next() * all.length)] ?? '';
          own.push(target.startsWith(`m${m}:`) ? target.slice(target.indexOf(':') + 1) : target);
        }
        if (!sequential || k === 0) deps.push(...own.map((t) => (t.includes(':') ? t : `m${m}:${t}`)));
        declared.set(id, [...new Set(deps)]);
        kapps.push(kapp(`k${k}`, own));
        all.push(id);
      }
      input.push(manifest(`m${m}`, kapps, sequential));
    }
    const dag = buildDag(input);
    expect(dag.ids).toEqual(all);
    for (const id of all) expect(dag.parents(id)).toEqual(declared.get(id));
    const order = dag.topologicalOrder();
    const position = new Map(order.map((id, i) => [id, i]));
    expect(order).toHaveLength(10_000);
    for (const id of all) {
      for (const parent of dag.parents(id)) expect(position.get(parent) ?? -1).toBeLessThan(position.get(id) ?? -1);
    }
  });

  it('handles a 10,000-kapp chain and reports a 10,000-kapp cycle', () => {
    const chain = (closed: boolean): DagManifestInput[] =>
      Array.from({ length: 100 }, (_, m) =>
        manifest(
          `m${m}`,
          Array.from({ length: 100 }, (_, k) =>
            kapp(`k${k}`, k === 0 && (m > 0 || closed) ? [`m${(m + 99) % 100}:k99`] : []),
          ),
          true,
        ),
      );
    const dag = buildDag(chain(false));
    expect(dag.topologicalOrder()).toEqual(dag.ids);
    try {
      buildDag(chain(true));
      throw new Error('expected a cycle');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const [d, ...rest] = (e as ConfigError).diagnostics;
      expect(rest).toHaveLength(0);
      expect(d?.message.startsWith('kapps depend on each other in a cycle: m0:k0 → m99:k99 → m99:k98 → ')).toBe(true);
      expect(d?.related).toHaveLength(10_000);
    }
  });
});

describe('KappDag', () => {
  it('keeps children as the exact inverse of parents, with an edge and a node for each', () => {
    const dag = buildDag(sugarkubeDag());
    expect(new Set(dag.ids).size).toBe(dag.ids.length);
    for (const id of dag.ids) {
      expect(dag.node(id)?.id).toBe(id);
      expect(dag.children(id)).toEqual(dag.ids.filter((child) => dag.parents(child).includes(id)));
      for (const parent of dag.parents(id)) {
        expect(dag.ids).toContain(parent);
        expect(dag.edge(parent, id)).toBeDefined();
      }
    }
    expect(dag.ids.some((id) => dag.children(id).length > 0)).toBe(true);
  });

  it('keeps one edge per dependency written many times, also for a kapp with very many', () => {
    const deps = Array.from({ length: 40 }, (_, i) => ({ id: `d${i}`, conditionsOk: true }));
    const dag = buildDag([
      manifest('m', [
        ...deps.map((d) => kapp(d.id)),
        { kappId: 'many', conditionsOk: true, dependsOn: [...deps, ...deps] },
      ]),
    ]);
    expect(dag.parents('m:many')).toEqual(deps.map((d) => `m:${d.id}`));
    expect(dag.parentsOf('m:many')).toHaveLength(40);
    expect(dag.children('m:d39')).toEqual(['m:many']);
    expect(dag.edge('m:d39', 'm:many')).toEqual({ sequential: false });
    expect(dag.edge('m:many', 'm:d39')).toBeUndefined();
  });
});
