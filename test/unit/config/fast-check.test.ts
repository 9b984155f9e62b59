/**
 * The quick check of a schema (src/config/fast-check.ts) says "valid" only where zod accepts the view validateTree
 * builds, and says it for the files kapps usually reads, so that their problems are still zod's to report.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type * as z from 'zod';
import { fastCheckOf } from '../../../src/config/fast-check.js';
import { kappDescriptor, manifestFile, projectConfigFile, stackFile } from '../../../src/config/schema.js';
import { zodProblems } from '../../../src/config/validate.js';
import { parseYamlTree } from '../../../src/yaml/read.js';

const schemas: Record<string, z.ZodType> = { manifestFile, stackFile, kappDescriptor, projectConfigFile };

/** Whether zod accepts the tree (validateTree reports nothing) and whether the quick check does. */
function verdicts(schema: z.ZodType, text: string): { zod: boolean; fast: boolean } {
  const root = parseYamlTree(text, { file: 'f.yaml' });
  const check = fastCheckOf(schema);
  expect(check).toBeDefined();
  const fast = root !== null && (check?.(root) ?? false);
  const zod = zodProblems(schema, root, { file: 'f.yaml', unknownKeys: 'error' }).length === 0;
  return { zod, fast };
}

const cases: [keyof typeof schemas, string, boolean][] = [
  [
    'manifestFile',
    'kapps:\n  - id: a\n    run_units:\n      u:\n        apply_install:\n          - command: echo\n',
    true,
  ],
  [
    'manifestFile',
    'kapps:\n  - id: a\n    vars: {x: [1, {y: null}], 1: 2}\n    conditions: [true, "{{ .x }}"]\n',
    true,
  ],
  ['manifestFile', 'kapps:\n  - id: 5\n    depends_on:\n      - id: m:b\n        conditions: [yes]\n', true],
  ['manifestFile', 'kapps:\n  - id: a\n    run_units: {u: {apply_install: [{timeout: "{{ .t }}"}]}}\n', true],
  ['manifestFile', 'kapps:\n  - id: a\n    run_units: {u: {apply_install: [{timeout: soon}]}}\n', false],
  ['manifestFile', 'kapps:\n  - id: a\n    run_units: {u: {apply_install: [{timeout: 1.5}]}}\n', false],
  ['manifestFile', 'kapps:\n  - id: a\n    run_units: {u: {apply_install: [{merge_priority: 256}]}}\n', false],
  ['manifestFile', 'kapps:\n  - id: a\n    run_units: {u: {apply_install: [{merge_priority: 255}]}}\n', true],
  ['manifestFile', 'kapps:\n  - id: a\n    run_units: {u: {apply_install: [{merge_priority: -1}]}}\n', false],
  ['manifestFile', 'kapps:\n  - id: a\n    run_units: {u: {apply_install: [{ignore_errors: maybe}]}}\n', false],
  ['manifestFile', 'kapps:\n  - id: a\n    run_units: {u: {apply_install: [{ignore_errors: "{{ .x }}"}]}}\n', true],
  ['manifestFile', 'kapps:\n  - id: a\n    run_units: {u: {apply_install: [{args: [a, b]}]}}\n', false],
  [
    'manifestFile',
    'kapps:\n  - id: a\n    run_units: {u: {apply_install: [{timeout: 99999999999999999999}]}}\n',
    false,
  ],
  ['manifestFile', 'kapps:\n  - id: a\n    state: present\n', false],
  ['manifestFile', 'kapps:\n  - run_units: {}\n', false],
  ['manifestFile', 'kapps:\n  - id: ~\n', false],
  ['manifestFile', 'kapps:\n  - id: a\n    conditions: [~]\n', false],
  ['manifestFile', 'kapps:\n  - id: a\n    conditions: ~\n', true],
  ['manifestFile', 'kapps:\n  - id: a\n    conditions: [.nan]\n', true],
  ['manifestFile', 'kapps:\n  - id: a\n    templates: [a]\n', false],
  ['manifestFile', 'kapps:\n  - id: a\n    post_install_actions: [{cluster_update: ~}, {x: {params: [1]}}]\n', true],
  ['manifestFile', 'kapps:\n  - id: a\n    post_install_actions: [{x: {params: 1}}]\n', false],
  ['manifestFile', 'kapps:\n  - id: a\n    sources: [{uri: x}, {id: b}]\n', false],
  ['manifestFile', 'kapps:\n  a: 1\n', false],
  ['manifestFile', 'options: {sequential: on}\nkapps: []\n', true],
  ['manifestFile', 'options: {sequential: 1}\n', false],
  ['manifestFile', '- a\n', false],
  ['manifestFile', 'a\n', false],
  ['manifestFile', '__proto__: {}\n', false],
  ['stackFile', 'dev:\n  provider: local\n  manifests:\n    - uri: m.yaml\n      versions: {a/b: v1}\n', true],
  ['stackFile', 'dev:\n  manifests:\n    - id: x\n', false],
  ['stackFile', 'dev:\n  manifests:\n    - uri: m.yaml\n      overrides: {a: {sources: {s: {uri: x}}}}\n', true],
  ['stackFile', 'dev:\n  manifests:\n    - uri: m.yaml\n      overrides: {a: {sources: [{uri: x}]}}\n', false],
  ['stackFile', 'dev: 3\n', false],
  ['kappDescriptor', 'outputs:\n  - id: o\n    sensitive: false\n', true],
  ['kappDescriptor', 'outputs:\n  - path: o.json\n', false],
  ['projectConfigFile', 'num_workers: 4\nsource_substitutions: [{prefix: a, replace: b}]\n', true],
  ['projectConfigFile', 'num_workers: 0\n', false],
  ['projectConfigFile', 'source_substitutions: [{prefix: a}]\n', false],
];

describe('the quick check of a schema', () => {
  it.each(cases)('%s: %j is valid: %s', (schema, text, valid) => {
    const { zod, fast } = verdicts(schemas[schema] as z.ZodType, text);
    expect(zod).toBe(valid);
    // Never a yes where zod says no; a yes for the valid files above.
    expect(fast).toBe(valid);
  });

  it('says yes to every file of the sample', () => {
    const demo = path.join(import.meta.dirname, '../../../samples/demo');
    const files: [z.ZodType, string][] = [
      [stackFile, path.join(demo, 'stacks.yaml')],
      [projectConfigFile, path.join(demo, 'sugarkube-conf.yaml')],
      ...readdirSync(path.join(demo, 'manifests')).map((f): [z.ZodType, string] => [
        manifestFile,
        path.join(demo, 'manifests', f),
      ]),
    ];
    for (const [schema, file] of files) {
      expect(verdicts(schema, readFileSync(file, 'utf8')), file).toEqual({ zod: true, fast: true });
    }
  });
});
