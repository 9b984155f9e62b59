/** A kapp's sugarkube.yaml: normalisation into descriptor shapes, scalar texts, locations and diagnostics. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadKappDescriptor } from '../../../src/config/kapp-descriptor.js';
import { locationOf } from '../../../src/config/locations.js';
import { fixture, lines, printedError } from './helpers.js';

function fromText(text: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'kapps-kapp-'));
  const file = path.join(dir, 'sugarkube.yaml');
  writeFileSync(file, text);
  return file;
}

describe('loadKappDescriptor', () => {
  const { descriptor, warnings } = loadKappDescriptor(fixture('sample-kapp/sugarkube.yaml'));

  it('normalises the sample kapp', () => {
    expect(warnings).toEqual([]);
    expect(descriptor.requires).toEqual(['prog2', 'proga', 'script']);
    expect(descriptor.run_units?.map((u) => u.name)).toEqual(['proga', 'script']);
    expect(descriptor.run_units?.[0]).toEqual({
      name: 'proga',
      env_vars: { FOOD: 'carrots' },
      plan_install: [
        {
          name: 'print-yo',
          command: 'echo',
          args: '"yo"',
          env_vars: { KUBECONFIG: '{{ .kubeconfig }}' },
          merge_priority: 10,
        },
      ],
    });
    expect(descriptor.depends_on).toEqual([
      { id: 'prelaunch:no-op' },
      { id: 'cert-manager', conditions: ['{{ eq .stack.provider "local" }}'] },
    ]);
    expect(descriptor.templates).toEqual([
      {
        id: 'values',
        source: 'values.tpl.yaml',
        dest: '_generated_values.yaml',
        conditions: ['{{ .kapp.vars.render }}'],
      },
    ]);
  });

  it('keeps the text of scalars in string fields and reads YAML 1.1 booleans and ints', () => {
    const step = descriptor.run_units?.[1]?.plan_install?.[0];
    expect(step).toEqual({
      name: 'print-yes',
      command: 'echo',
      args: 'yes',
      merge_priority: 20,
      print: 'true',
      timeout: '{{ .kapp.vars.timeout }}',
      ignore_errors: true,
      expected_exit_code: 1,
    });
    expect(descriptor.outputs).toEqual([
      { id: 'endpoint', path: '_generated_output.json', format: 'JSON', sensitive: true, conditions: ['yes'] },
    ]);
  });

  it('turns action lists into one action per key', () => {
    expect(descriptor.pre_install_actions).toEqual([{ id: 'none' }]);
    expect(descriptor.post_install_actions).toEqual([
      { id: 'cluster_update', params: [1n, 'two'] },
      { id: 'add_provider_vars_files', params: ['extra.yaml'] },
      { id: 'none' },
    ]);
  });

  it('records locations of steps, conditions, calls and dependencies', () => {
    const step = descriptor.run_units?.[1]?.plan_install?.[0];
    expect(locationOf(step)).toMatchObject({ line: 19, column: 9 });
    expect(locationOf(step, 'timeout')).toMatchObject({ line: 24, column: 18 });
    const dep = descriptor.depends_on?.[1];
    expect(locationOf(dep, 'id')).toMatchObject({ line: 44, column: 9 });
    expect(locationOf(dep?.conditions, 0)).toMatchObject({ line: 46, column: 9 });
    // An action points at its id.
    expect(locationOf(descriptor.post_install_actions?.[1])).toMatchObject({ line: 53, column: 5 });
    expect(locationOf(descriptor.post_install_actions?.[2])).toMatchObject({ line: 56, column: 5 });
  });

  it('allows map-valued vars (Sugarkube failed on them)', () => {
    const file = fromText('vars:\n  replicas: 2\n  db: {host: h, ports: [1, {x: 2}]}\n');
    expect(loadKappDescriptor(file).descriptor.vars).toEqual({
      replicas: 2n,
      db: { host: 'h', ports: [1n, { x: 2n }] },
    });
  });

  it('treats an empty file as an empty descriptor', () => {
    expect(loadKappDescriptor(fromText('# nothing\n')).descriptor).toEqual({});
  });

  it('reports every problem of an invalid descriptor at once', () => {
    expect(printedError(() => loadKappDescriptor(fixture('invalid/sugarkube.yaml')))).toBe(
      lines(
        'invalid/sugarkube.yaml:5:5: error: duplicate source id `chart` (at sources[1])',
        '  |',
        '5 |   - uri: git@github.com:org/kapps.git//charts/chart',
        '  |     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
        '  invalid/sugarkube.yaml:3:5: `chart` first defined here',
        '',
        "invalid/sugarkube.yaml:6:10: error: can't tell how to fetch source URI `ftp://example.com/chart` (at sources[2].uri)",
        '  |',
        '6 |   - uri: ftp://example.com/chart',
        '  |          ^^^^^^^^^^^^^^^^^^^^^^^',
        '  hint: use a git URI (containing `.git`) or a `file://` path',
        '',
        'invalid/sugarkube.yaml:10:13: error: unsupported output format `xml` (at outputs[0].format)',
        '   |',
        '10 |     format: xml',
        '   |             ^^^',
        '  hint: use json, yaml or text',
        '',
        'invalid/sugarkube.yaml:11:5: error: missing required field `id` (at outputs[1].id)',
        '   |',
        '11 |   - path: other.json',
        '   |     ^^^^^^^^^^^^^^^^',
        '',
        'invalid/sugarkube.yaml:19:13: error: expected a string, got a list (at run_units.helm.env_vars.LIST)',
        '   |',
        '19 |       LIST: [a, b]',
        '   |             ^^^^^^',
        '',
        "invalid/sugarkube.yaml:21:9: error: a run step can't have both `call` and `command` (at run_units.helm.apply_install[0])",
        '   |',
        '21 |       - name: install',
        '   |         ^^^^^^^^^^^^^',
        '  hint: `call` replaces the step by other steps; move the command to a step of its own',
        '',
        'invalid/sugarkube.yaml:24:24: error: expected a boolean (true or false) or a template, got "maybe" (at run_units.helm.apply_install[0].ignore_errors)',
        '   |',
        '24 |         ignore_errors: maybe',
        '   |                        ^^^^^',
        '',
        'invalid/sugarkube.yaml:25:29: error: expected an integer or a template, got "1" (at run_units.helm.apply_install[0].expected_exit_code)',
        '   |',
        "25 |         expected_exit_code: '1'",
        '   |                             ^^^',
        '',
        'invalid/sugarkube.yaml:26:25: error: expected a boolean (true or false), got "yes" (at ignore_global_defaults)',
        '   |',
        "26 | ignore_global_defaults: 'yes'",
        '   |                         ^^^^^',
        '',
        'invalid/sugarkube.yaml:29:7: error: unknown field `param` (at post_install_actions[0].cluster_update.param)',
        '   |',
        '29 |       param: [x]',
        '   |       ^^^^^',
        "  hint: did you mean 'params'?",
      ),
    );
  });

  it('explains a list of templates', () => {
    const text = 'templates:\n  - source: a\nkapps: x\n';
    const file = fromText(text);
    expect(
      printedError(
        () => loadKappDescriptor(file),
        () => text,
      ),
    ).toBe(
      lines(
        `${file}:2:3: error: expected a map of template ids to templates, got a list (at templates)`,
        '  |',
        '2 |   - source: a',
        '  |   ^^^^^^^^^^^',
        '  hint: templates is a map keyed by template id',
        '',
        `${file}:3:1: error: unknown field \`kapps\` (at kapps)`,
        '  |',
        '3 | kapps: x',
        '  | ^^^^^',
      ),
    );
  });

  it('rejects duplicate output ids and a merge priority that is not an integer', () => {
    const text =
      'outputs:\n  - id: a\n    format: json\n  - id: a\n    format: text\nrun_units:\n  u:\n    output:\n      - merge_priority: 1.5\n';
    const file = fromText(text);
    expect(
      printedError(
        () => loadKappDescriptor(file),
        () => text,
      ),
    ).toBe(
      lines(
        `${file}:4:5: error: duplicate output id \`a\` (at outputs[1])`,
        '  |',
        '4 |   - id: a',
        '  |     ^^^^^',
        `  ${file}:2:5: \`a\` first defined here`,
        '',
        `${file}:9:25: error: expected an integer from 0 to 255, got 1.5 (at run_units.u.output[0].merge_priority)`,
        '  |',
        '9 |       - merge_priority: 1.5',
        '  |                         ^^^',
      ),
    );
  });

  it('names a missing file', () => {
    expect(printedError(() => loadKappDescriptor('/nowhere/sugarkube.yaml'))).toBe(
      'error: kapp descriptor `/nowhere/sugarkube.yaml` does not exist',
    );
  });
});
