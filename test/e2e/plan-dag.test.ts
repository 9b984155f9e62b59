/**
 * The dependency graph and the selection, end to end through `kapps graph` and `kapps generate`: nodes, explicit,
 * conditional, default and sequential dependencies, the errors a graph can have, and `-i`/`-x`/`--parents`.
 * Includes Sugarkube's own DAG, manifest and selection test cases.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addFiles, generate, kapps, project, removeProjects, text } from '../fixtures/plan/project.js';

afterAll(removeProjects);

async function graph(dir: string, args: readonly string[]): Promise<string> {
  const r = await kapps(dir, ['graph', ...args]);
  if (r.code !== 0) throw new Error(`kapps graph failed (exit ${String(r.code)}):\n${r.stderr}`);
  expect(r.stderr).toBe('');
  return r.stdout;
}

/** A stack over the given manifests (file name → content). */
function stackOf(manifests: Record<string, string>, extra = ''): Record<string, string> {
  const uris = Object.keys(manifests)
    .map((f) => `    - uri: ${f}`)
    .join('\n');
  return {
    'stacks.yaml': `dev:\n  provider: local\n  provisioner: minikube\n  cluster: c1\n${extra}  manifests:\n${uris}\n`,
    ...manifests,
  };
}

describe('Sugarkube dag_test and manifests_test cases', () => {
  // dag_test's descriptors, in one manifest.
  const dagTest = stackOf({
    'example-manifest.yaml': text`
      kapps:
        - id: independent
        - id: cluster
          depends_on: []
        - id: tiller
          depends_on: [{id: cluster}]
        - id: externalIngress
          depends_on: [{id: tiller}]
        - id: sharedRds
        - id: wordpress1
          depends_on: [{id: sharedRds}, {id: externalIngress}]
        - id: wordpress2
          depends_on: [{id: sharedRds}, {id: externalIngress}]
        - id: varnish
          depends_on: [{id: wordpress2}]
    `,
  });

  it('TestBuildDag / TestTraverse: each kapp has exactly its declared dependencies, parents come first', async () => {
    const dir = project(dagTest);
    expect(await graph(dir, ['stacks.yaml', 'dev'])).toBe(text`
      Created the following DAG. Only nodes marked with a * will be processed:
        * example-manifest:independent - depends on: <nothing>
        * example-manifest:cluster - depends on: <nothing>
        * example-manifest:tiller - depends on: example-manifest:cluster
        * example-manifest:externalIngress - depends on: example-manifest:tiller
        * example-manifest:sharedRds - depends on: <nothing>
        * example-manifest:wordpress1 - depends on: example-manifest:externalIngress, example-manifest:sharedRds
        * example-manifest:wordpress2 - depends on: example-manifest:externalIngress, example-manifest:sharedRds
        * example-manifest:varnish - depends on: example-manifest:wordpress2
    `);
  });

  it('TestSubGraph: selecting wordpress1 and independent keeps their ancestors, unprocessed, and drops the rest', async () => {
    const dir = project(dagTest);
    const args = ['stacks.yaml', 'dev', '-i', 'example-manifest:wordpress1', '-i', 'example-manifest:independent'];
    expect(await graph(dir, args)).toBe(text`
      Created the following DAG. Only nodes marked with a * will be processed:
        * example-manifest:independent - depends on: <nothing>
          example-manifest:cluster - depends on: <nothing>
          example-manifest:tiller - depends on: example-manifest:cluster
          example-manifest:externalIngress - depends on: example-manifest:tiller
          example-manifest:sharedRds - depends on: <nothing>
        * example-manifest:wordpress1 - depends on: example-manifest:externalIngress, example-manifest:sharedRds
    `);
    // With --parents the ancestors are processed too.
    expect(await graph(dir, [...args, '--parents'])).toBe(text`
      Created the following DAG. Only nodes marked with a * will be processed:
        * example-manifest:independent - depends on: <nothing>
        * example-manifest:cluster - depends on: <nothing>
        * example-manifest:tiller - depends on: example-manifest:cluster
        * example-manifest:externalIngress - depends on: example-manifest:tiller
        * example-manifest:sharedRds - depends on: <nothing>
        * example-manifest:wordpress1 - depends on: example-manifest:externalIngress, example-manifest:sharedRds
    `);
  });

  it('TestBuildDagLoops / TestIsAcyclic: a self-dependency and a cycle are errors that show every edge', async () => {
    const dir = project(
      stackOf({
        'loops.yaml': text`
          kapps:
            - id: entry1
              depends_on:
                - id: entry2
            - id: entry2
              depends_on:
                - id: entry1
            - id: entry3
              depends_on:
                - id: entry3
        `,
      }),
    );
    const r = await kapps(dir, ['graph', 'stacks.yaml', 'dev']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatchInlineSnapshot(`
      "loops.yaml:10:9: error: kapp 'loops:entry3' depends on itself
         |
      10 |       - id: entry3
         |         ^^^^^^^^^^

      loops.yaml:4:9: error: kapps depend on each other in a cycle: loops:entry1 → loops:entry2 → loops:entry1
        |
      4 |       - id: entry2
        |         ^^^^^^^^^^
        loops.yaml:4:9: 'loops:entry1' depends on 'loops:entry2'
        loops.yaml:7:9: 'loops:entry2' depends on 'loops:entry1'

      2 errors
      "
    `);
  });

  it('TestFindDependencies: a sequential manifest chains its kapps in order; ids default to the file name', async () => {
    const dir = project(
      stackOf({
        'manifests/manifest2.yaml': text`
          options:
            sequential: true
          kapps:
            - id: kappC
            - id: kappB
            - id: kappD
            - id: kappA
        `,
        'manifests/manifest3.yaml': text`
          kapps:
            - id: kappX
            - id: kappY
        `,
      }),
    );
    expect(await graph(dir, ['stacks.yaml', 'dev'])).toBe(text`
      Created the following DAG. Only nodes marked with a * will be processed:
        * manifest2:kappC - depends on: <nothing>
        * manifest2:kappB - depends on: manifest2:kappC
        * manifest2:kappD - depends on: manifest2:kappB
        * manifest2:kappA - depends on: manifest2:kappD
        * manifest3:kappX - depends on: <nothing>
        * manifest3:kappY - depends on: <nothing>
    `);
  });

  it('TestSelectKapps / TestSelectKappsExclusions: the selection is in stack order, excludes apply after includes', async () => {
    const dir = project({
      'stacks.yaml': text`
        kops:
          provider: local
          cluster: dev1
          manifests:
            - uri: manifests/manifest1.yaml
            - uri: manifests/manifest2.yaml
              id: exampleManifest2
      `,
      'manifests/manifest1.yaml': 'kapps:\n  - id: kappA\n',
      'manifests/manifest2.yaml':
        'options:\n  sequential: true\nkapps:\n  - id: kappC\n  - id: kappB\n  - id: kappD\n  - id: kappA\n',
    });
    const ids = async (args: string[]): Promise<string[]> => {
      const spec = await generate(dir, ['stacks.yaml', 'kops', ...args, '--phase', 'clean']);
      return spec.kapps.filter((k) => k.selected).map((k) => k.id);
    };
    expect(
      await ids(['-i', 'exampleManifest2:kappA', '-i', 'manifest1:kappA', '-i', 'exampleManifest2:kappB']),
    ).toEqual(['manifest1:kappA', 'exampleManifest2:kappB', 'exampleManifest2:kappA']);
    expect(await ids(['-i', 'exampleManifest2:*', '-i', 'manifest1:kappA', '-x', 'exampleManifest2:kappA'])).toEqual([
      'manifest1:kappA',
      'exampleManifest2:kappC',
      'exampleManifest2:kappB',
      'exampleManifest2:kappD',
    ]);
  });
});

describe('dependencies', () => {
  const files = stackOf({
    'prelaunch.yaml': text`
      options:
        sequential: true
      kapps:
        - id: bucket
          conditions:
            - "{{ eq .stack.provider \"aws\" }}"
        - id: zone
          depends_on:
            - id: data:db   # ignored: a later kapp of a sequential manifest depends only on the one before
        - id: no-op
    `,
    'data.yaml': text`
      defaults:
        depends_on:
          - id: prelaunch:no-op
      kapps:
        - id: db
        - id: cache
          depends_on:
            - id: db
            - id: prelaunch:bucket
              conditions:
                - "{{ eq .stack.provider \"aws\" }}"
            - id: missing:kapp
              conditions:
                - "false"
    `,
  });

  it('come from depends_on (qualified with the own manifest), manifest defaults, sequential manifests and their conditions', async () => {
    const dir = project(files);
    expect(await graph(dir, ['stacks.yaml', 'dev'])).toBe(text`
      Created the following DAG. Only nodes marked with a * will be processed:
          prelaunch:bucket (conditions failed) - depends on: <nothing>
        * prelaunch:zone - depends on: prelaunch:bucket
        * prelaunch:no-op - depends on: prelaunch:zone
        * data:db - depends on: prelaunch:no-op
        * data:cache - depends on: data:db
    `);
    // A dependency's conditions are rendered with the stack's variables: on aws the conditional edge exists.
    expect(await graph(dir, ['stacks.yaml', 'dev', '--provider', 'aws'])).toBe(text`
      Created the following DAG. Only nodes marked with a * will be processed:
        * prelaunch:bucket - depends on: <nothing>
        * prelaunch:zone - depends on: prelaunch:bucket
        * prelaunch:no-op - depends on: prelaunch:zone
        * data:db - depends on: prelaunch:no-op
        * data:cache - depends on: data:db, prelaunch:bucket
    `);
  });

  it('keep a kapp whose conditions fail in the graph, unprocessed, and its dependants processed', async () => {
    const dir = project(files);
    const spec = await generate(dir, ['stacks.yaml', 'dev', '--phase', 'clean']);
    expect(spec.kapps.map((k) => [k.id, k.selected, k.conditionsOk, k.dependsOn.join(',')])).toEqual([
      ['prelaunch:bucket', true, false, ''],
      ['prelaunch:zone', true, true, 'prelaunch:bucket'],
      ['prelaunch:no-op', true, true, 'prelaunch:zone'],
      ['data:db', true, true, 'prelaunch:no-op'],
      ['data:cache', true, true, 'data:db'],
    ]);
  });

  it('must name existing kapps (with a suggestion) other than the kapp itself', async () => {
    const dir = project(
      stackOf({
        'web.yaml': text`
          kapps:
            - id: app
              depends_on:
                - id: dbb
                - id: app
                - id: ops:monitr
            - id: db
        `,
        'ops.yaml': 'kapps:\n  - id: monitor\n',
      }),
    );
    const r = await kapps(dir, ['graph', 'stacks.yaml', 'dev']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatchInlineSnapshot(`
      "web.yaml:4:9: error: kapp 'web:app' depends on 'web:dbb', which does not exist
        |
      4 |       - id: dbb
        |         ^^^^^^^
        hint: did you mean 'web:db'?

      web.yaml:5:9: error: kapp 'web:app' depends on itself
        |
      5 |       - id: app
        |         ^^^^^^^

      web.yaml:6:9: error: kapp 'web:app' depends on 'ops:monitr', which does not exist
        |
      6 |       - id: ops:monitr
        |         ^^^^^^^^^^^^^^
        hint: did you mean 'ops:monitor'?

      3 errors
      "
    `);
  });

  it('are checked for duplicate kapp and manifest ids first', async () => {
    const dir = project({
      'stacks.yaml': text`
        dev:
          provider: local
          cluster: c1
          manifests:
            - uri: web.yaml
            - uri: other/web.yaml
      `,
      'web.yaml': 'kapps:\n  - id: app\n  - id: db\n  - id: app\n',
      'other/web.yaml': 'kapps:\n  - id: x\n',
    });
    const r = await kapps(dir, ['graph', 'stacks.yaml', 'dev']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatchInlineSnapshot(`
      "stacks.yaml:6:12: error: duplicate manifest id \`web\` (at dev.manifests[1].id)
        |
      6 |     - uri: other/web.yaml
        |            ^^^^^^^^^^^^^^
        hint: give one of them an explicit \`id:\`
        stacks.yaml:5:12: \`web\` first used here
      "
    `);
    addFiles(dir, {
      'stacks.yaml': readFileSync(path.join(dir, 'stacks.yaml'), 'utf8').replace(
        'web.yaml\n',
        'web.yaml\n      id: other\n',
      ),
    });
    const again = await kapps(dir, ['graph', 'stacks.yaml', 'dev']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatchInlineSnapshot(`
      "web.yaml:4:9: error: duplicate kapp id \`app\` (at kapps[2].id)
        |
      4 |   - id: app
        |         ^^^
        web.yaml:2:9: \`app\` first defined here
      "
    `);
  });
});

describe('selectors', () => {
  const dir = project(
    stackOf({
      'web.yaml': text`
        kapps:
          - id: db
          - id: app
            depends_on: [{id: db}]
          - id: App
      `,
      'ops.yaml': 'kapps:\n  - id: monitor\n    depends_on: [{id: "web:app"}]\n',
    }),
  );

  it('select literally and case-sensitively: manifest:kapp and manifest:* only', async () => {
    expect(await graph(dir, ['stacks.yaml', 'dev', '-i', 'web:App'])).toBe(text`
      Created the following DAG. Only nodes marked with a * will be processed:
        * web:App - depends on: <nothing>
    `);
    expect(await graph(dir, ['stacks.yaml', 'dev', '-i', 'ops:*'])).toBe(text`
      Created the following DAG. Only nodes marked with a * will be processed:
          web:db - depends on: <nothing>
          web:app - depends on: web:db
        * ops:monitor - depends on: web:app
    `);
    expect(await graph(dir, ['stacks.yaml', 'dev', '-x', 'web:*'])).toBe(text`
      Created the following DAG. Only nodes marked with a * will be processed:
          web:db - depends on: <nothing>
          web:app - depends on: web:db
        * ops:monitor - depends on: web:app
    `);
  });

  it('warn about a selector that matches nothing when others do', async () => {
    const r = await kapps(dir, ['graph', 'stacks.yaml', 'dev', '-i', 'web:db', '-x', 'web:apq']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("warning: exclude selector 'web:apq' matches no kapp\n  hint: did you mean 'web:app'?\n");
  });

  it('fail with a usage error when nothing is selected, suggesting what was meant', async () => {
    for (const [args, message] of [
      [
        ['-i', 'web:ap'],
        "nothing was matched by including 'web:ap' and excluding nothing ('web:ap': did you mean 'web:app'?)",
      ],
      [
        ['-i', '*:*'],
        "nothing was matched by including '*:*' and excluding nothing ('*:*': '*' is a wildcard only as the whole kapp part, as in 'manifest-id:*')",
      ],
      [
        ['-i', 'web:a*'],
        "nothing was matched by including 'web:a*' and excluding nothing ('web:a*': '*' is a wildcard only as the whole kapp part, as in 'manifest-id:*')",
      ],
      [['-i', 'web:app', '-x', 'web:*'], "nothing was matched by including 'web:app' and excluding 'web:*'"],
      [['-x', 'web:*', '-x', 'ops:*'], "nothing was matched by including everything and excluding 'web:*', 'ops:*'"],
    ] as const) {
      const r = await kapps(dir, ['graph', 'stacks.yaml', 'dev', ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`kapps: ${message}\nRun \`kapps --help\` for usage.\n`);
    }
  });

  it('reject anything but manifest:kapp and manifest:*', async () => {
    for (const selector of ['web', 'web:app:x', ':app', 'web:']) {
      const r = await kapps(dir, ['graph', 'stacks.yaml', 'dev', '-i', selector]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        `kapps: invalid selector '${selector}': a selector is 'manifest-id:kapp-id' or 'manifest-id:*' (fully-qualified, no other wildcards)\nRun \`kapps --help\` for usage.\n`,
      );
    }
  });
});
