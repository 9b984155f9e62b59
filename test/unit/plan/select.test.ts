import { describe, expect, it } from 'vitest';
import { ConfigError, UsageError } from '../../../src/diagnostics/errors.js';
import { buildDag, type DagManifestInput } from '../../../src/plan/dag.js';
import { parseSelector, selectKapps, type Selection } from '../../../src/plan/select.js';
import { formatDiagnostics } from '../../../src/report/diagnostic-printer.js';
import { kapp, manifest, sugarkubeDag } from './fixtures.js';

/** The kapps of stack `kops` in Sugarkube's manifest tests (§10.7). */
function kopsStack(): DagManifestInput[] {
  return [
    manifest('manifest1', [kapp('kappA'), kapp('kappB')]),
    manifest('exampleManifest2', [kapp('kappC'), kapp('kappB'), kapp('kappD'), kapp('kappA')]),
  ];
}

function flags(selection: Selection): Record<string, [boolean, boolean, boolean]> {
  return Object.fromEntries(selection.nodes.map((n) => [n.id, [n.selected, n.processed, n.conditionsOk]]));
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected an error');
}

describe('parseSelector', () => {
  it('accepts manifest:kapp and manifest:*', () => {
    expect(parseSelector('web:nginx')).toEqual({ text: 'web:nginx', manifestId: 'web', kappId: 'nginx' });
    expect(parseSelector('web:*')).toEqual({ text: 'web:*', manifestId: 'web', kappId: '*' });
  });

  it.each(['web', 'a:b:c', ':x', 'x:', '', ':'])('rejects %j as a usage error quoting it', (text) => {
    const e = thrown(() => parseSelector(text));
    expect(e).toBeInstanceOf(UsageError);
    expect((e as Error).message).toBe(
      `invalid selector '${text}': a selector is 'manifest-id:kapp-id' or 'manifest-id:*' (fully-qualified, no other wildcards)`,
    );
  });
});

describe('selectKapps: Sugarkube cases', () => {
  it('TestSelectKapps: the result is in manifest order, not selector order', () => {
    const selection = selectKapps(buildDag(kopsStack()), {
      include: ['exampleManifest2:kappA', 'manifest1:kappA', 'exampleManifest2:kappB'],
    });
    expect(selection.selected).toEqual(['manifest1:kappA', 'exampleManifest2:kappB', 'exampleManifest2:kappA']);
  });

  it('TestSelectKappsExclusions: manifest:* with an exclusion', () => {
    const selection = selectKapps(buildDag(kopsStack()), {
      include: ['exampleManifest2:*', 'manifest1:kappA'],
      exclude: ['exampleManifest2:kappA'],
    });
    expect(selection.selected).toEqual([
      'manifest1:kappA',
      'exampleManifest2:kappC',
      'exampleManifest2:kappB',
      'exampleManifest2:kappD',
    ]);
    expect(selection.warnings).toEqual([]);
  });

  it('TestSubGraph: selected kapps are processed; all ancestors are present, unprocessed; others absent', () => {
    const selection = selectKapps(buildDag(sugarkubeDag()), { include: ['m:wordpress1', 'm:independent'] });
    expect(flags(selection)).toEqual({
      'm:independent': [true, true, true],
      'm:cluster': [false, false, true],
      'm:tiller': [false, false, true],
      'm:externalIngress': [false, false, true],
      'm:sharedRds': [false, false, true],
      'm:wordpress1': [true, true, true],
    });
    expect(selection.nodes.find((n) => n.id === 'm:wordpress1')?.dependsOn).toEqual([
      'm:sharedRds',
      'm:externalIngress',
    ]);
    expect(selection.nodes.find((n) => n.id === 'm:tiller')?.dependsOn).toEqual(['m:cluster']);
  });
});

describe('selectKapps', () => {
  it('selects everything without selectors', () => {
    const selection = selectKapps(buildDag(sugarkubeDag()));
    expect(selection.selected).toHaveLength(8);
    expect(selection.nodes.every((n) => n.processed)).toBe(true);
  });

  it('processes ancestors with --parents, unless their conditions fail', () => {
    const dag = buildDag([manifest('m', [kapp('root'), kapp('mid', ['root'], false), kapp('leaf', ['mid'])])]);
    expect(flags(selectKapps(dag, { include: ['m:leaf'], parents: true }))).toEqual({
      'm:root': [false, true, true],
      'm:mid': [false, false, false],
      'm:leaf': [true, true, true],
    });
    expect(flags(selectKapps(dag, { include: ['m:mid'] }))).toEqual({
      'm:root': [false, false, true],
      'm:mid': [true, false, false],
    });
  });

  it('processes a selected root first reached as an ancestor of an earlier selected kapp', () => {
    const dag = buildDag([
      manifest('apps', [kapp('web', ['infra:db']), kapp('child', ['parent']), kapp('parent')]),
      manifest('infra', [kapp('db')]),
    ]);
    const selection = selectKapps(dag, { include: ['apps:web', 'apps:child', 'apps:parent', 'infra:db'] });
    expect(selection.nodes.map((n) => [n.id, n.processed])).toEqual([
      ['apps:web', true],
      ['apps:child', true],
      ['apps:parent', true],
      ['infra:db', true],
    ]);
  });

  it('compares selectors literally: no wildcards but a whole-manifest *', () => {
    const dag = buildDag(kopsStack());
    const wildcard = "'*' is a wildcard only as the whole kapp part, as in 'manifest-id:*'";
    for (const include of ['*:*', 'manifest*:kappA', 'manifest1:kapp*']) {
      const e = thrown(() => selectKapps(dag, { include: [include] }));
      expect((e as Error).message).toBe(
        `nothing was matched by including '${include}' and excluding nothing ('${include}': ${wildcard})`,
      );
    }
    const e = thrown(() => selectKapps(dag, { include: ['Manifest1:kappA'] }));
    expect((e as Error).message).toBe(
      "nothing was matched by including 'Manifest1:kappA' and excluding nothing ('Manifest1:kappA': did you mean 'manifest1:kappA'?)",
    );
  });

  it('fails when nothing is matched, naming the selectors', () => {
    const dag = buildDag(kopsStack());
    const e = thrown(() =>
      selectKapps(dag, { include: ['manifest1:kappA', 'manifest1:kappB'], exclude: ['manifest1:*'] }),
    );
    expect(e).toBeInstanceOf(UsageError);
    expect((e as Error).message).toBe(
      "nothing was matched by including 'manifest1:kappA', 'manifest1:kappB' and excluding 'manifest1:*'",
    );
    const everything = thrown(() => selectKapps(dag, { exclude: ['manifest1:*', 'exampleManifest2:*'] }));
    expect((everything as Error).message).toBe(
      "nothing was matched by including everything and excluding 'manifest1:*', 'exampleManifest2:*'",
    );
    const empty = thrown(() => selectKapps(buildDag([])));
    expect(empty).toBeInstanceOf(ConfigError);
    expect((empty as Error).message).toBe('the stack has no kapps: it lists no manifest with kapps');
  });

  it('warns about selectors that match no kapp, suggesting close ids', () => {
    const selection = selectKapps(buildDag(kopsStack()), {
      include: ['manifest1:kappA', 'manifest1:kapA', 'exampleManifest:*', 'other:x'],
      exclude: ['manifest1:kappB', 'nothing:here'],
    });
    expect(selection.selected).toEqual(['manifest1:kappA']);
    expect(formatDiagnostics(selection.warnings)).toBe(
      [
        "warning: include selector 'manifest1:kapA' matches no kapp",
        "  hint: did you mean 'manifest1:kappA'?",
        '',
        "warning: include selector 'exampleManifest:*' matches no kapp",
        "  hint: did you mean 'exampleManifest2:*'?",
        '',
        "warning: include selector 'other:x' matches no kapp",
        '',
        "warning: exclude selector 'nothing:here' matches no kapp",
      ].join('\n'),
    );
  });

  it('selects and builds the sub-graph of 10,000 kapps correctly', () => {
    // Kapp k of a manifest depends on kapp k-1; the first kapp of manifest m on the last of manifest m-1; and
    // kapps with k divisible by 7 on kapp k/7 of the previous manifest.
    const input = Array.from({ length: 100 }, (_, m) =>
      manifest(
        `m${m}`,
        Array.from({ length: 100 }, (_, k) => {
          const deps: string[] = [];
          if (k > 0) deps.push(`k${k - 1}`);
          if (m > 0 && k === 0) deps.push(`m${m - 1}:k99`);
          if (m > 0 && k % 7 === 0) deps.push(`m${m - 1}:k${k / 7}`);
          return kapp(`k${k}`, deps, !(m === 50 && k === 3));
        }),
      ),
    );
    const dag = buildDag(input);
    const selection = selectKapps(dag, { include: ['m2:k5', 'm1:*'], exclude: ['m1:k99'] });
    expect(selection.selected).toEqual([...Array.from({ length: 99 }, (_, k) => `m1:k${k}`), 'm2:k5']);
    const expected = new Set<string>();
    const visit = (id: string): void => {
      if (expected.has(id)) return;
      expected.add(id);
      for (const p of dag.parents(id)) visit(p);
    };
    for (const id of selection.selected) visit(id);
    expect(new Set(selection.nodes.map((n) => n.id))).toEqual(expected);
    expect(selection.nodes.filter((n) => n.processed).map((n) => n.id)).toEqual(selection.selected);

    const all = selectKapps(dag, { parents: true, include: ['m99:k99'] });
    expect(all.nodes).toHaveLength(10_000);
    expect(all.nodes.filter((n) => !n.processed).map((n) => n.id)).toEqual(['m50:k3']);
    expect(selectKapps(dag, { parents: true, include: ['m99:k99'] })).toEqual(all);
  });
});
