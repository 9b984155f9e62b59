/** Manifest loading: Sugarkube's manifest tests (TestParseManifestYaml, TestValidateManifest) restated. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadManifest } from '../../../src/config/manifest.js';
import { loadStack } from '../../../src/config/stack.js';
import { locationOf } from '../../../src/config/locations.js';
import type { ManifestRefConfig } from '../../../src/config/types.js';
import { fixture, lines, printedError } from './helpers.js';

function ref(file: string, id = 'm'): ManifestRefConfig {
  return { uri: fixture(file), id, overrides: new Map(), versions: new Map() };
}

describe('loadManifest: Sugarkube manifest tests', () => {
  it('parses the manifest of TestParseManifestYaml', () => {
    const { manifest, warnings } = loadManifest(ref('manifests/parse-manifest.yaml'));
    expect(warnings).toEqual([]);
    const [example1, example2, example3] = manifest.kapps;
    expect(example1).toEqual({
      id: 'example1',
      templates: [{ id: 'template1', source: 'example/template1.tpl', dest: 'example/dest.txt' }],
      sources: [
        { id: 'pathASpecial', explicitId: true, uri: 'git@github.com:exampleA/repoA.git//example/pathA#branchA' },
        { id: 'sampleNameB', explicitId: true, uri: 'git@github.com:exampleB/repoB.git//example/pathB#branchB' },
      ],
    });
    expect(example2).toEqual({
      id: 'example2',
      sources: [
        {
          id: 'pathA',
          explicitId: false,
          uri: 'git@github.com:exampleA/repoA.git//example/pathA#branchA',
          options: { branch: 'new-branch' },
        },
      ],
      vars: { someVarA: 'valueA', someList: ['val1', 'val2'] },
    });
    expect(example3).toEqual({
      id: 'example3',
      sources: [{ id: 'pathA', explicitId: false, uri: 'git@github.com:exampleA/repoA.git//example/pathA#branchA' }],
      post_install_actions: [{ id: 'cluster_update' }],
    });
  });

  it('rejects the old `state` key with a hint', () => {
    expect(printedError(() => loadManifest(ref('manifests/with-state.yaml')))).toBe(
      lines(
        'manifests/with-state.yaml:4:5: error: unknown field `state` (at kapps[0].state)',
        '  |',
        '4 |     state: present',
        '  |     ^^^^^',
        '  hint: `conditions` replaced `state`: e.g. `conditions: [false]` switches a kapp off',
      ),
    );
  });

  it('accepts distinct kapp ids', () => {
    const { manifest } = loadManifest(ref('manifests/manifest1.yaml'));
    expect(manifest.kapps.map((k) => k.id)).toEqual(['kappA']);
  });

  it('rejects duplicate kapp ids (Sugarkube never detected them)', () => {
    expect(printedError(() => loadManifest(ref('manifests/duplicates.yaml')))).toBe(
      lines(
        'manifests/duplicates.yaml:5:9: error: duplicate kapp id `example1` (at kapps[2].id)',
        '  |',
        '5 |   - id: example1',
        '  |         ^^^^^^^^',
        '  manifests/duplicates.yaml:3:9: `example1` first defined here',
      ),
    );
  });

  it('loads the manifests of stack `large` (TestLoadStackConfig)', () => {
    const { stack } = loadStack(fixture('stacks.yaml'), 'large');
    const [m1, m2] = stack.manifests.map((r) => loadManifest(r).manifest);
    expect(m1).toEqual({
      id: 'manifest1',
      file: fixture('manifests/manifest1.yaml'),
      sequential: false,
      defaults: { vars: { namespace: 'test-namespace' } },
      kapps: [
        {
          id: 'kappA',
          vars: { sizeVar: 'big', colours: ['red', 'black'] },
          sources: [
            {
              id: 'pathA',
              explicitId: false,
              uri: 'git@github.com:sugarkube/kapps-A.git//some/pathA#kappA-0.1.0',
            },
          ],
        },
      ],
    });
    expect(m2?.id).toBe('exampleManifest2');
    expect(m2?.sequential).toBe(true);
    expect(m2?.kapps.map((k) => k.id)).toEqual(['kappC', 'kappB', 'kappD', 'kappA']);
    expect(m2?.kapps[0]?.sources?.map((s) => [s.id, s.explicitId])).toEqual([
      ['special', true],
      ['pathZ', false],
      ['pathX', false],
      ['pathY', false],
    ]);
    expect(m2?.kapps[2]?.sources?.[0]?.options).toEqual({ branch: 'kappDBranch' });
  });
});

describe('loadManifest', () => {
  it('names the stack line when the manifest file is missing', () => {
    const { stack } = loadStack(fixture('stacks.yaml'), 'web');
    const r = stack.manifests[0];
    if (!r) throw new Error('no manifest');
    expect(printedError(() => loadManifest(r))).toBe(
      lines(
        'stacks.yaml:60:12: error: manifest `/abs/manifests/sites.yaml` does not exist',
        '   |',
        '60 |     - uri: /abs/manifests/sites.yaml',
        '   |            ^^^^^^^^^^^^^^^^^^^^^^^^^',
      ),
    );
  });

  it('records the location of kapps and their fields', () => {
    const { manifest } = loadManifest(ref('manifests/manifest2.yaml'));
    const kappD = manifest.kapps[2];
    expect(locationOf(kappD)).toMatchObject({ line: 17, column: 5 });
    expect(locationOf(kappD, 'id')).toMatchObject({ line: 17, column: 9, endColumn: 14 });
    expect(locationOf(kappD?.sources?.[0], 'options')).toMatchObject({ line: 21, column: 11 });
    expect(locationOf(manifest, 'sequential')).toMatchObject({ line: 2, column: 15 });
  });

  it('explains kapps written as a map, and an empty id', () => {
    const text = 'kapps:\n  web:\n    vars: {}\n';
    const dir = mkdtempSync(path.join(tmpdir(), 'kapps-manifest-'));
    writeFileSync(path.join(dir, 'm.yaml'), text);
    const uri = path.join(dir, 'm.yaml');
    expect(
      printedError(
        () => loadManifest({ uri, id: 'm', overrides: new Map(), versions: new Map() }),
        () => text,
      ),
    ).toBe(
      lines(
        `${uri}:2:3: error: expected a list of kapps, got a map (at kapps)`,
        '  |',
        '2 |   web:',
        '  |   ^^^^',
        '  hint: kapps is a list: start each kapp with `- id: <kapp id>`',
      ),
    );
    const empty = 'kapps:\n  - id:\n';
    writeFileSync(uri, empty);
    expect(
      printedError(
        () => loadManifest({ uri, id: 'm', overrides: new Map(), versions: new Map() }),
        () => empty,
      ),
    ).toBe(
      lines(
        `${uri}:2:8: error: expected a string, got nothing (null) (at kapps[0].id)`,
        '  |',
        '2 |   - id:',
        '  |        ^',
      ),
    );
  });

  it('reports every problem of an invalid manifest at once', () => {
    expect(printedError(() => loadManifest(ref('invalid/manifest-errors.yaml')))).toBe(
      lines(
        'invalid/manifest-errors.yaml:1:1: error: unknown field `state` (at state)',
        '  |',
        '1 | state: present',
        '  | ^^^^^',
        '  hint: `conditions` replaced `state`: e.g. `conditions: [false]` switches a kapp off',
        '',
        'invalid/manifest-errors.yaml:3:9: error: kapp id `web.app` contains a reserved character (at kapps[0].id)',
        '  |',
        '3 |   - id: web.app',
        '  |         ^^^^^^^',
        '  hint: kapp ids must not contain `.`, `:` or `*`',
        '',
        'invalid/manifest-errors.yaml:5:14: error: git source URI `https://github.com/org/repo.git` has no `//` between the repository and the path inside it (at kapps[0].sources[0].uri)',
        '  |',
        '5 |       - uri: https://github.com/org/repo.git',
        '  |              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
        '  hint: write `<repository>//<path>#<ref>`, e.g. `git@github.com:org/kapps.git//incubator/tiller#master`',
        '',
        'invalid/manifest-errors.yaml:10:13: error: unknown field `comand` (at kapps[0].run_units.helm.apply_install[0].comand)',
        '   |',
        '10 |             comand: helm',
        '   |             ^^^^^^',
        "  hint: did you mean 'command'?",
        '',
        'invalid/manifest-errors.yaml:11:19: error: expected a string, got a list (at kapps[0].run_units.helm.apply_install[0].args)',
        '   |',
        '11 |             args: [upgrade, x]',
        '   |                   ^^^^^^^^^^^^',
        '  hint: args is a single command line, e.g. `args: upgrade --install x`',
        '',
        'invalid/manifest-errors.yaml:12:22: error: expected an integer or a template, got "soon" (at kapps[0].run_units.helm.apply_install[0].timeout)',
        '   |',
        '12 |             timeout: soon',
        '   |                      ^^^^',
        '',
        'invalid/manifest-errors.yaml:13:29: error: expected an integer from 0 to 255, got 300 (at kapps[0].run_units.helm.apply_install[0].merge_priority)',
        '   |',
        '13 |             merge_priority: 300',
        '   |                             ^^^',
        '',
        'invalid/manifest-errors.yaml:15:7: error: expected a map of template ids to templates, got a list (at kapps[0].templates)',
        '   |',
        '15 |       - source: a.tpl',
        '   |       ^^^^^^^^^^^^^^^',
        '  hint: templates is a map keyed by template id',
        '',
        'invalid/manifest-errors.yaml:18:9: error: expected a map, got "other" (at kapps[1].depends_on[0])',
        '   |',
        '18 |       - other',
        '   |         ^^^^^',
        '  hint: write each dependency as `- id: <kapp id>`',
        '',
        'invalid/manifest-errors.yaml:19:5: error: missing required field `id` (at kapps[2].id)',
        '   |',
        '19 |   - vars: {}',
        '   |     ^^^^^^^^',
        '',
        'invalid/manifest-errors.yaml:20:9: error: duplicate kapp id `db` (at kapps[3].id)',
        '   |',
        '20 |   - id: db',
        '   |         ^^',
        '  invalid/manifest-errors.yaml:16:9: `db` first defined here',
      ),
    );
  });
});
