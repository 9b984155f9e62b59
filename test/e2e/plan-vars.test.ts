/**
 * Layering and variables, end to end through `kapps vars` and `kapps generate`: the order of descriptor layers,
 * the variable map (.stack, .sugarkube, .kapp, .outputs, provider and kapp vars files), rendering to a fixed point
 * and its errors. Includes Sugarkube's stack, vars and merge test cases.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  generate,
  kapps,
  project,
  removeProjects,
  stepLines,
  text,
  type GeneratedSpec,
} from '../fixtures/plan/project.js';

afterAll(removeProjects);

interface VarsReport {
  id: string;
  variables: Record<string, unknown> & { kapp: { vars: Record<string, unknown>; [k: string]: unknown } };
  config: Record<string, unknown>;
}

async function vars(dir: string, args: readonly string[]): Promise<VarsReport[]> {
  const r = await kapps(dir, ['vars', ...args, '-o', 'json']);
  if (r.code !== 0 || r.stderr !== '') throw new Error(`kapps vars failed (exit ${String(r.code)}):\n${r.stderr}`);
  return JSON.parse(r.stdout) as VarsReport[];
}

function only(reports: VarsReport[], id: string): VarsReport {
  const r = reports.find((x) => x.id === id);
  if (!r) throw new Error(`no kapp ${id} in the report`);
  return r;
}

describe('descriptor layers', () => {
  // Layer i sets the vars l<i> … l7 to its own name, so l<j> ends up with the name of the highest layer that sets it.
  const setFrom = (layer: number, name: string, indent: string): string =>
    [1, 2, 3, 4, 5, 6, 7]
      .filter((j) => j >= layer)
      .map((j) => `${indent}l${j}: ${name}`)
      .join('\n');

  it('stack overrides > stack defaults > versions > manifest entry > manifest defaults > sugarkube.yaml > programs (in requires order)', async () => {
    const lines = (...parts: string[]): string => `${parts.join('\n')}\n`;
    const dir = project({
      'sugarkube-conf.yaml': lines(
        'programs:',
        '  first:',
        '    vars:',
        setFrom(1, 'program-first', '      '),
        '    run_units:',
        '      shared:',
        '        working_dir: from/first',
        '        plan_install: [{name: p, command: first}]',
        '  second:',
        '    vars:',
        setFrom(2, 'program-second', '      '),
        '    run_units:',
        '      shared:',
        '        plan_install: [{name: p, command: second}]',
        'run_units:',
        '  clean: [{name: global-clean, command: find}]',
        '  output: [{name: global-output, command: cat}]',
      ),
      'stacks.yaml': lines(
        'dev:',
        '  provider: local',
        '  cluster: c1',
        '  defaults:',
        '    vars:',
        setFrom(6, 'stack-defaults', '      '),
        '  manifests:',
        '    - uri: m.yaml',
        '      versions:',
        '        k/src: v2',
        '      overrides:',
        '        k:',
        '          vars:',
        setFrom(7, 'stack-overrides', '            '),
      ),
      'm.yaml': lines(
        'defaults:',
        '  vars:',
        setFrom(4, 'manifest-defaults', '    '),
        'kapps:',
        '  - id: k',
        '    requires: [first, second]',
        '    sources:',
        '      - {id: src, uri: src, options: {branch: v1, other: kept}}',
        '    vars:',
        setFrom(5, 'manifest-entry', '      '),
      ),
      'src/sugarkube.yaml': lines(
        'vars:',
        setFrom(3, 'sugarkube-yaml', '  '),
        'run_units:',
        '  sugarkube_config_file:',
        '    output: [{name: own-output, command: cat}]',
      ),
    });
    const k = only(await vars(dir, ['stacks.yaml', 'dev']), 'm:k');
    expect(k.variables.kapp.vars).toMatchObject({
      l1: 'program-first',
      l2: 'program-second',
      l3: 'sugarkube-yaml',
      l4: 'manifest-defaults',
      l5: 'manifest-entry',
      l6: 'stack-defaults',
      l7: 'stack-overrides',
    });
    // versions sit above the manifest entry: the source's branch is v2, its other options stay.
    expect(k.config.sources).toEqual({ src: { uri: 'src', options: { branch: 'v2', other: 'kept' } } });
    // A later program's unit overrides an earlier one's phase lists and keeps the fields it does not set; the kapp's
    // sugarkube.yaml replaces the global unit's output list and keeps its clean list.
    const spec = await generate(dir, ['stacks.yaml', 'dev']);
    expect(stepLines(spec, 'm:k', 'plan_install')).toEqual(['p: second']);
    expect(spec.kapps[0]?.phases.plan_install?.[0]?.workingDir).toBe(
      path.join(dir, '.kapps-workspace/dev/m/k/from/first'),
    );
    expect(stepLines(spec, 'm:k', 'clean')).toEqual(['global-clean: find']);
    expect(stepLines(spec, 'm:k', 'output')).toEqual(['own-output: cat']);
  });

  it('ignore_global_defaults leaves out the programs and the global unit; lists replace and maps merge', async () => {
    const dir = project({
      'sugarkube-conf.yaml': text`
        programs:
          helm:
            vars: {helm: helm, flags: [a, b], nested: {p: 1, q: 2}}
            run_units:
              helm:
                apply_install: [{name: install, command: helm}]
        run_units:
          clean: [{name: tidy, command: find}]
      `,
      'stacks.yaml': 'dev:\n  provider: local\n  cluster: c1\n  manifests:\n    - uri: m.yaml\n',
      'm.yaml': text`
        kapps:
          - id: with
            requires: [helm]
            vars: {flags: [c], nested: {q: 3, r: 4}}
          - id: without
            requires: [helm]
            ignore_global_defaults: true
      `,
    });
    const reports = await vars(dir, ['stacks.yaml', 'dev']);
    expect(only(reports, 'm:with').variables.kapp.vars).toEqual({
      helm: 'helm',
      flags: ['c'],
      nested: { p: 1, q: 3, r: 4 },
    });
    expect(only(reports, 'm:without').variables.kapp.vars).toEqual({});
    const spec = await generate(dir, ['stacks.yaml', 'dev']);
    expect(stepLines(spec, 'm:with', 'apply_install')).toEqual(['install: helm']);
    expect(stepLines(spec, 'm:with', 'clean')).toEqual(['tidy: find']);
    expect(stepLines(spec, 'm:without', 'apply_install')).toEqual([]);
    expect(stepLines(spec, 'm:without', 'clean')).toEqual([]);
  });
});

describe('the variable map', () => {
  it('has .stack, .sugarkube (with action and dry-run while steps are planned), .kapp and provider vars', async () => {
    const dir = project({
      'stacks.yaml': text`
        dev:
          provider: local
          provisioner: minikube
          account: acc
          profile: prof
          cluster: c1
          provider_vars_dirs: [providers]
          vars:
            domain: example.org
          manifests:
            - uri: m.yaml
      `,
      'providers/values.yaml': 'kube_context: "{{ .stack.provisioner }}-ctx"\ndomain: provider.org\n',
      'm.yaml': text`
        kapps:
          - id: web
            templates:
              values:
                source: values.tpl.yaml
                dest: "{{ .kapp.id }}/_generated_values.yaml"
            run_units:
              main:
                working_dir: "{{ .kapp.cacheRoot }}"
                apply_install:
                  - name: show
                    command: echo
                    args: >-
                      {{ .stack.name }} {{ .stack.filePath }} {{ .kube_context }} {{ .domain }}
                      {{ .sugarkube.defaultVars | join "," }} {{ .sugarkube.action }} {{ index .sugarkube "dry-run" }}
                      {{ .kapp.id }} {{ .kapp.manifestId }} {{ .kapp.templates.values.rendered_path }}
                plan_install:
                  - {name: phase, command: echo, args: "{{ .sugarkube.action }}"}
      `,
    });
    const spec = await generate(dir, ['stacks.yaml', 'dev', 'ws']);
    const root = path.join(dir, 'ws/m/web');
    expect(stepLines(spec, 'm:web', 'apply_install')).toEqual([
      `show: echo dev ${path.join(dir, 'stacks.yaml')} minikube-ctx example.org local,minikube,acc,prof,c1, apply_install false web m ${root}/web/_generated_values.yaml`,
    ]);
    expect(stepLines(spec, 'm:web', 'plan_install')).toEqual(['phase: echo plan_install']);
    expect(spec.kapps[0]?.phases.apply_install?.[0]?.workingDir).toBe(root);
  });

  it('Sugarkube TestTemplatedVarsWithRegistry: the stack-wide part of the map', async () => {
    const dir = project({
      'stacks.yaml': text`
        s:
          account: testAccount
          region: testRegion
          cluster: c
          provider_vars_dirs: [pv]
          manifests: [{uri: m.yaml}]
      `,
      'pv/values.yaml': 'someKey1: valueA\nsomeKey2: valueB\nsomeKey3: valueC\n',
      'm.yaml': 'kapps:\n  - id: k\n',
    });
    const { kapp: _k, outputs: _o, ...stackWide } = only(await vars(dir, ['stacks.yaml', 's']), 'm:k').variables;
    expect(stackWide).toEqual({
      sugarkube: { defaultVars: ['', '', 'testAccount', '', 'c', 'testRegion'] },
      someKey1: 'valueA',
      someKey2: 'valueB',
      someKey3: 'valueC',
      kubeconfig: '',
      stack: {
        name: 's',
        filePath: path.join(dir, 'stacks.yaml'),
        provider: '',
        provisioner: '',
        account: 'testAccount',
        region: 'testRegion',
        profile: '',
        cluster: 'c',
      },
    });
  });

  it('has .outputs: this, the short id within a manifest, the fully-qualified id across manifests (empty maps when planning)', async () => {
    const dir = project({
      'stacks.yaml':
        'dev:\n  provider: local\n  cluster: c1\n  manifests:\n    - uri: infra.yaml\n    - uri: apps.yaml\n',
      'infra.yaml': text`
        kapps:
          - id: cert-manager
            outputs:
              - {id: cluster-issuer, path: issuer.yaml, format: yaml}
          - id: dns
            depends_on: [{id: cert-manager}]
      `,
      'apps.yaml': text`
        kapps:
          - id: web
            depends_on: [{id: "infra:dns"}]
            outputs:
              - {id: url, path: url.txt, format: text}
            run_units:
              main:
                apply_install:
                  - {name: keys, command: echo, args: "{{ keys .outputs | sortAlpha | join \",\" }} {{ .outputs.this.url }}"}
      `,
    });
    const spec = await generate(dir, ['stacks.yaml', 'dev']);
    expect(stepLines(spec, 'apps:web', 'apply_install')).toEqual([
      'keys: echo apps__web,infra__cert_manager,this,web map[]',
    ]);
    const dns = only(await vars(dir, ['stacks.yaml', 'dev']), 'infra:dns');
    expect(dns.variables.outputs).toEqual({
      cert_manager: { cluster_issuer: {} },
      infra__cert_manager: { cluster_issuer: {} },
    });
  });

  it('renders <no value> (with a warning) where a template fails on an output only a run produces', async () => {
    const dir = project({
      'stacks.yaml': 'dev:\n  provider: local\n  cluster: c1\n  manifests:\n    - uri: m.yaml\n',
      'm.yaml': text`
        kapps:
          - id: db
            outputs: [{id: token, path: token.txt, format: text}]
          - id: api
            depends_on: [{id: db}]
            vars:
              upper: "{{ .outputs.db.token | trim | upper }}"
            run_units:
              main:
                apply_install:
                  - {name: call, command: curl, args: "-H {{ .kapp.vars.upper }} {{ .outputs.db.token | trim }}"}
      `,
    });
    const r = await kapps(dir, ['generate', 'stacks.yaml', 'dev', '-o', 'json', '-i', 'm:api']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatchInlineSnapshot(`
      "m.yaml:11:47: warning: step 'call' of run unit 'main' (apply_install) in kapp 'm:api': its args render <no value>, so a variable it reads is not set
         |
      11 |           - {name: call, command: curl, args: "-H {{ .kapp.vars.upper }} {{ .outputs.db.token | trim }}"}
         |                                               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
        hint: \`kapps vars\` shows the variables that are set
      "
    `);
    const spec = JSON.parse(r.stdout) as GeneratedSpec;
    // The whole field is unknown until the run: it renders <no value>.
    expect(stepLines(spec, 'm:api', 'apply_install')).toEqual(['call: curl <no value>']);
  });

  it('fails generate and validate on a template that does not parse, even where it reads an output', async () => {
    const dir = project({
      'stacks.yaml': 'dev:\n  provider: local\n  cluster: c1\n  manifests:\n    - uri: m.yaml\n',
      'm.yaml': text`
        kapps:
          - id: db
            outputs: [{id: token, path: token.txt, format: text}]
          - id: api
            depends_on: [{id: db}]
            vars:
              upper: "{{ .outputs.db.token | trim | upper }"
            run_units:
              main:
                apply_install:
                  - {name: call, command: curl, args: "-H {{ .kapp.vars.upper }}"}
      `,
    });
    for (const command of ['generate', 'validate']) {
      const r = await kapps(dir, [command, 'stacks.yaml', 'dev']);
      expect(r.code, command).toBe(1);
      expect(r.stderr, command).toContain(
        'error: kapp \'m:api\': cannot render variable kapp.vars.upper: template: vars:1: unexpected "}" in operand',
      );
      expect(r.stderr, command).not.toContain('<no value>');
    }
  });

  it('renders to a fixed point, keeping types', async () => {
    const dir = project({
      'stacks.yaml':
        'dev:\n  provider: local\n  cluster: c1\n  provider_vars_dirs: [pv]\n  manifests:\n    - uri: m.yaml\n',
      'pv/values.yaml': 'a: "{{ .b }}"\nb: "{{ .c }}"\nc: hello\nport: 8080\n',
      'm.yaml':
        'kapps:\n  - id: k\n    vars:\n      url: "http://{{ .a }}:{{ .port }}/{{ .kapp.vars.path }}"\n      path: "{{ .kapp.id }}"\n      replicas: 3\n',
    });
    const k = only(await vars(dir, ['stacks.yaml', 'dev']), 'm:k');
    expect([k.variables.a, k.variables.b, k.variables.port]).toEqual(['hello', 'hello', 8080]);
    expect(k.variables.kapp.vars).toEqual({ url: 'http://hello:8080/k', path: 'k', replicas: 3 });
  });

  it('reports a variable that cannot be rendered where it is written: the stack file, provider and kapp vars files', async () => {
    const dir = project({
      'stacks.yaml': text`
        dev:
          provider: local
          cluster: c1
          provider_vars_dirs: [pv]
          kapp_vars_dirs: [kv]
          vars:
            region: eu
            broken: '{{ fail "boom" }}'
          manifests:
            - uri: m.yaml
      `,
      'pv/values.yaml': 'db:\n  hosts:\n    - a\n    - "{{ .region | upper }}"\n',
      'pv/more.yaml': 'zone: a\n',
      'kv/api.yaml': 'size: small\n',
      'm.yaml': text`
        kapps:
          - id: api
            vars:
              replicas: 2
            run_units:
              main:
                apply_install: [{name: s, command: echo, args: "{{ .kapp.vars.replicas }}"}]
      `,
    });
    const stack = await kapps(dir, ['generate', 'stacks.yaml', 'dev']);
    expect(stack.code).toBe(1);
    expect(stack.stderr).toContain(text`
      stacks.yaml:8:13: error: kapp 'm:api': cannot render variable broken: template: vars:1:3: executing "vars" at <fail "boom">: error calling fail: boom (at dev.vars.broken)
        |
      8 |     broken: '{{ fail "boom" }}'
        |             ^^^^^^^^^^^^^^^^^^^
        m.yaml:2:5: kapp 'm:api' is defined here
    `);

    // A vars file: its file and line (no field path: the file is the map itself), inside a map and at the top of
    // the files merged together.
    const fails = async (file: string, content: string, expected: RegExp): Promise<void> => {
      writeFileSync(path.join(dir, file), content);
      const r = await kapps(dir, ['generate', 'stacks.yaml', 'dev']);
      expect(r.code, file).toBe(1);
      expect(r.stderr, file).toMatch(expected);
    };
    writeFileSync(
      path.join(dir, 'stacks.yaml'),
      readFileSync(path.join(dir, 'stacks.yaml'), 'utf8').replace(/ {4}broken.*\n/, ''),
    );
    await fails(
      'pv/values.yaml',
      'db:\n  hosts:\n    - a\n    - "{{ .nosuch | upper }}"\n',
      /^pv\/values\.yaml:4:7: error: kapp 'm:api': cannot render variable db\.hosts\[1\]: /,
    );
    await fails(
      'pv/values.yaml',
      'zone: "{{ nosuchfunc }}"\n',
      /^pv\/values\.yaml:1:7: error: kapp 'm:api': cannot render variable zone: /,
    );
    writeFileSync(path.join(dir, 'pv', 'values.yaml'), 'db: {}\n');
    await fails(
      'kv/api.yaml',
      'size: small\nbad: "{{ nosuchfunc }}"\n',
      /^kv\/api\.yaml:2:6: error: kapp 'm:api': cannot render variable kapp\.vars\.bad: /,
    );
    // A later vars file that sets `bad` without replacing it (a map over a value that is not empty, then a null):
    // the value is still the first file's, and so is the line reported.
    writeFileSync(
      path.join(dir, 'stacks.yaml'),
      readFileSync(path.join(dir, 'stacks.yaml'), 'utf8').replace('kapp_vars_dirs: [kv]', 'kapp_vars_dirs: [kv, kv2]'),
    );
    mkdirSync(path.join(dir, 'kv2'));
    for (const later of ['bad:\n  a: 1\n', 'bad: null\n']) {
      writeFileSync(path.join(dir, 'kv2', 'api.yaml'), later);
      const r = await kapps(dir, ['generate', 'stacks.yaml', 'dev']);
      expect(r.code, later).toBe(1);
      expect(r.stderr, later).toMatch(
        /^kv\/api\.yaml:2:6: error: kapp 'm:api': cannot render variable kapp\.vars\.bad: /,
      );
    }
  });

  it("reports a variable of a kapp's sugarkube.yaml at its line, its other layers' variables merged in", async () => {
    const dir = project({
      'stacks.yaml': 'dev:\n  provider: local\n  cluster: c1\n  manifests:\n    - uri: m.yaml\n',
      'm.yaml': text`
        defaults:
          vars:
            region: eu
        kapps:
          - id: api
            sources:
              - {id: src, uri: ./api-src}
            vars:
              replicas: 2
            run_units:
              main:
                apply_install: [{name: s, command: echo, args: "{{ .kapp.vars.replicas }}"}]
      `,
      'api-src/sugarkube.yaml': 'vars:\n  size: small\n  bad: "{{ nosuchfunc }}"\n',
    });
    const r = await kapps(dir, ['generate', 'stacks.yaml', 'dev']);
    expect(r.code).toBe(1);
    // The error at the sugarkube.yaml's line, then the kapp's line in the manifest.
    const atKappFile = (kappLine: number): RegExp =>
      new RegExp(
        `^api-src/sugarkube\\.yaml:3:8: error: kapp 'm:api': cannot render variable kapp\\.vars\\.bad: .*\\n(?:.*\\n){3} {2}m\\.yaml:${kappLine}:5: kapp 'm:api' is defined here\\n`,
      );
    expect(r.stderr).toMatch(atKappFile(5));

    // Higher layers that set `bad` without replacing it (a null in the manifest's defaults, a map in the kapp's
    // entry over a value that is not empty): the value is still the sugarkube.yaml's, and so is the line reported.
    const manifest = readFileSync(path.join(dir, 'm.yaml'), 'utf8');
    writeFileSync(
      path.join(dir, 'm.yaml'),
      manifest
        .replace('region: eu', 'region: eu\n    bad: null')
        .replace('replicas: 2', 'replicas: 2\n      bad: {x: 1}'),
    );
    const kept = await kapps(dir, ['generate', 'stacks.yaml', 'dev']);
    expect(kept.code).toBe(1);
    expect(kept.stderr).toMatch(atKappFile(6));
  });

  it('reports variables that never stop changing, and template errors, naming the kapp and the variable', async () => {
    const dir = project({
      'stacks.yaml': 'dev:\n  provider: local\n  cluster: c1\n  manifests:\n    - uri: m.yaml\n',
      'm.yaml': text`
        kapps:
          - id: loop
            vars:
              a: "{{ .kapp.vars.b }}x"
              b: "{{ .kapp.vars.a }}y"
            run_units:
              main:
                apply_install: [{name: s, command: echo, args: "{{ .kapp.vars.a }}"}]
          - id: broken
            vars:
              bad: "{{ .kapp.vars.a | nosuchfunc }}"
            run_units:
              main:
                apply_install: [{name: s, command: echo, args: "{{ .kapp.vars.bad }}"}]
      `,
    });
    const r = await kapps(dir, ['generate', 'stacks.yaml', 'dev']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatchInlineSnapshot(`
      "m.yaml:4:10: error: kapp 'm:loop': variables kapp.vars.a and kapp.vars.b still change after 20 rendering passes: they refer to themselves, directly or through other variables (at kapps[0].vars.a)
        |
      4 |       a: "{{ .kapp.vars.b }}x"
        |          ^^^^^^^^^^^^^^^^^^^^^
        m.yaml:5:10: kapp.vars.b is written here
        m.yaml:2:5: kapp 'm:loop' is defined here

      m.yaml:11:12: error: kapp 'm:broken': cannot render variable kapp.vars.bad: template: vars:1: function "nosuchfunc" not defined (at kapps[1].vars.bad)
         |
      11 |       bad: "{{ .kapp.vars.a | nosuchfunc }}"
         |            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
        m.yaml:9:5: kapp 'm:broken' is defined here

      2 errors
      "
    `);
  });
});

describe('vars files', () => {
  it('Sugarkube TestPrecedenceWalk: provider vars merge files before directories, by name order, depth first, deeper wins', async () => {
    const dir = project({
      'stacks.yaml': text`
        dev:
          provider: aws
          provisioner: kops
          account: test-account
          profile: test-profile
          cluster: test-cluster
          region: region1
          provider_vars_dirs: [providers]
          manifests: [{uri: m.yaml}]
      `,
      'm.yaml': 'kapps:\n  - id: k\n',
      'providers/values.yaml': 'seen: [values]\nv1: root\n',
      'providers/region1.yaml': 'v2: region1-file\n',
      'providers/other.txt': 'v1: never\n',
      'providers/region1/values.yml': 'v1: yml-ignored\n',
      'providers/region1/values.yaml': 'v3: region1-dir\n',
      'providers/aws/accounts/test-account/values.yaml': 'v1: account\nnested: {a: 1, b: 2}\n',
      'providers/aws/accounts/test-account/region1.yaml': 'v1: account-region\nlist: [1, 2]\n',
      'providers/aws/accounts/test-account/profiles/test-profile/clusters/test-cluster/values.yaml':
        'v1: cluster\nnested: {b: 0}\nlist: [3]\n',
      'providers/unrelated/values.yaml': 'v1: never\n',
    });
    const k = only(await vars(dir, ['stacks.yaml', 'dev']), 'm:k');
    expect(k.variables).toMatchObject({
      seen: ['values'],
      v1: 'cluster',
      v2: 'region1-file',
      v3: 'region1-dir',
      nested: { a: 1, b: 0 },
      list: [3],
    });
  });

  it('Sugarkube TestGetKappVarsFromFiles: kapp vars files are the lowest layer of .kapp.vars', async () => {
    const dir = project({
      'stacks.yaml': text`
        large:
          provider: test-provider
          provisioner: test-provisioner
          account: test-account
          region: test-region1
          profile: test-profile
          cluster: test-cluster
          kapp_vars_dirs:
            - ./sample-kapp-vars
            - ./sample-kapp-vars/kapp-vars/
            - ./sample-kapp-vars/kapp-vars2/
          defaults:
            vars:
              stackDefault: xyz
              overriddenDefault: zzz
          manifests:
            - uri: manifests/manifest1.yaml
              overrides:
                kappA:
                  vars:
                    sizeVar: mediumOverridden
                    stackVar: setInOverrides
                    overriddenDefault: aaa
      `,
      'manifests/manifest1.yaml': text`
        defaults:
          vars:
            namespace: test-namespace
        kapps:
          - id: kappA
            vars:
              sizeVar: big
              colours: [red, black]
      `,
      'sample-kapp-vars/local/values.yaml': 'ignored: local\n',
      'sample-kapp-vars/kapp-vars/test-provider/test-provisioner/test-profile.yaml':
        'profile: test-profile-val\nkappOverride: profile-val\n',
      'sample-kapp-vars/kapp-vars/test-provider/test-provisioner/test-account/values.yaml':
        'globals:\n  account: test-account-val\nregionOverride: account-val\n',
      'sample-kapp-vars/kapp-vars/test-provider/test-provisioner/test-account/test-region1/kappA.yaml':
        'kapp: kappA-val\nkappOverride: kappA-val-override\n',
      'sample-kapp-vars/kapp-vars/test-provider/test-provisioner/test-account/test-region1/values.yaml':
        'region: test-region1-val\nregionOverride: region-val-override\n',
      'sample-kapp-vars/kapp-vars/test-provider/test-provisioner/test-account/test-region2/values.yaml':
        'ignored: region2\n',
      'sample-kapp-vars/kapp-vars/test-provider/test-provisioner2/values.yaml': 'ignored: provisioner2\n',
      'sample-kapp-vars/kapp-vars2/kappA.yaml': 'kappASisterDir: extra-val\n',
      'sample-kapp-vars/kapp-vars2/kappA.txt': 'ignored: txt\n',
      'sample-kapp-vars/kapp-vars2/kappB.yaml': 'ignored: kappB\n',
    });
    const kappA = only(await vars(dir, ['stacks.yaml', 'large']), 'manifest1:kappA');
    expect(kappA.variables.kapp).toEqual({
      cacheRoot: path.join(dir, '.kapps-workspace/large/manifest1/kappA'),
      id: 'kappA',
      manifestId: 'manifest1',
      templates: {},
      vars: {
        colours: ['red', 'black'],
        globals: { account: 'test-account-val' },
        kapp: 'kappA-val',
        kappASisterDir: 'extra-val',
        kappOverride: 'kappA-val-override',
        namespace: 'test-namespace',
        overriddenDefault: 'aaa',
        profile: 'test-profile-val',
        region: 'test-region1-val',
        regionOverride: 'region-val-override',
        sizeVar: 'mediumOverridden',
        stackDefault: 'xyz',
        stackVar: 'setInOverrides',
      },
    });
  });
});

describe('Sugarkube manifest_test cases', () => {
  it('TestManifestOverrides / TestManifestOverridesNil: overrides merge into one kapp, stack defaults reach every kapp', async () => {
    const dir = project({
      'stacks.yaml': text`
        large:
          provider: local
          provisioner: minikube
          profile: local
          cluster: large
          defaults:
            vars:
              stackDefault: xyz
              overriddenDefault: zzz
          manifests:
            - uri: manifests/manifest1.yaml
              overrides:
                kappA:
                  state: absent
                  vars:
                    sizeVar: mediumOverridden
                    stackVar: setInOverrides
                    overriddenDefault: aaa
                  sources:
                    pathA:
                      options:
                        branch: stable
            - uri: manifests/manifest2.yaml
              id: exampleManifest2
      `,
      'manifests/manifest1.yaml': text`
        defaults:
          vars:
            namespace: test-namespace
        kapps:
          - id: kappA
            vars:
              sizeVar: big
              colours: [red, black]
            sources:
              - uri: git@github.com:sugarkube/kapps-A.git//some/pathA#kappA-0.1.0
      `,
      'manifests/manifest2.yaml': text`
        options:
          sequential: true
        kapps:
          - id: kappC
            sources:
              - id: special
                uri: git@github.com:sugarkube/kapps-C.git//kappC/some/special#kappC-0.3.0
              - uri: git@github.com:sugarkube/kapps-C.git//kappC/some/pathZ#kappZ-0.3.0
      `,
      // The sources are in the workspace (without a sugarkube.yaml), so nothing is fetched.
      '.kapps-workspace/large/manifest1/kappA/pathA/README': 'fetched\n',
      '.kapps-workspace/large/exampleManifest2/kappC/special/README': 'fetched\n',
      '.kapps-workspace/large/exampleManifest2/kappC/pathZ/README': 'fetched\n',
    });
    const r = await kapps(dir, ['vars', 'stacks.yaml', 'large', '-o', 'json']);
    expect(r.code).toBe(0);
    // Sugarkube ignored the old `state` key silently; kapps says so.
    expect(r.stderr.replaceAll(dir, '<dir>')).toMatchInlineSnapshot(`
      "stacks.yaml:14:11: warning: unknown field \`state\` (at large.manifests[0].overrides.kappA.state)
         |
      14 |           state: absent
         |           ^^^^^
        hint: \`conditions\` replaced \`state\`: e.g. \`conditions: [false]\` switches a kapp off
      "
    `);
    const reports = JSON.parse(r.stdout) as VarsReport[];
    const kappA = only(reports, 'manifest1:kappA');
    expect(kappA.config.sources).toEqual({
      pathA: { uri: 'git@github.com:sugarkube/kapps-A.git//some/pathA#kappA-0.1.0', options: { branch: 'stable' } },
    });
    expect(kappA.variables.kapp.vars).toEqual({
      stackVar: 'setInOverrides',
      sizeVar: 'mediumOverridden',
      stackDefault: 'xyz',
      overriddenDefault: 'aaa',
      colours: ['red', 'black'],
      namespace: 'test-namespace',
    });
    const kappC = only(reports, 'exampleManifest2:kappC');
    expect(kappC.variables.kapp.vars).toEqual({ stackDefault: 'xyz', overriddenDefault: 'zzz' });
    expect(kappC.config.sources).toEqual({
      special: { uri: 'git@github.com:sugarkube/kapps-C.git//kappC/some/special#kappC-0.3.0' },
      pathZ: { uri: 'git@github.com:sugarkube/kapps-C.git//kappC/some/pathZ#kappZ-0.3.0' },
    });
  });
});

describe('kapps vars', () => {
  it('prints each kapp of the sub-graph between markers, with --suppress paths blanked', async () => {
    const dir = project({
      'stacks.yaml': 'dev:\n  provider: local\n  cluster: c1\n  manifests:\n    - uri: m.yaml\n',
      'm.yaml': text`
        kapps:
          - id: db
            conditions: ["false"]
            vars: {password: s3cret, user: admin}
          - id: app
            depends_on: [{id: db}]
            vars: {token: "t-{{ .kapp.id }}"}
            run_units:
              main:
                apply_install: [{name: run, command: app, args: "--token={{ .kapp.vars.token }}"}]
      `,
    });
    const r = await kapps(dir, [
      'vars',
      'stacks.yaml',
      'dev',
      '-i',
      'm:app',
      '-s',
      'kapp.vars.password',
      '-s',
      '.kapp.vars.token',
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.replaceAll(dir, '<dir>')).toMatchInlineSnapshot(`
      "***** Start variables for kapp 'm:db' *****
      kapp:
        cacheRoot: <dir>/.kapps-workspace/dev/m/db
        id: db
        manifestId: m
        templates: {}
        vars:
          password: ""
          token: ""
          user: admin
      kubeconfig: ""
      outputs: {}
      stack:
        account: ""
        cluster: c1
        filePath: <dir>/stacks.yaml
        name: dev
        profile: ""
        provider: local
        provisioner: ""
        region: ""
      sugarkube:
        defaultVars:
          - local
          - ""
          - ""
          - ""
          - c1
          - ""
      ***** End variables for kapp 'm:db' *****
      ***** Start config for kapp 'm:db' *****
      id: db
      conditions:
        - "false"
      vars:
        password: ""
        user: admin
        token: ""
      ***** End config for kapp 'm:db' *****
      ***** Start variables for kapp 'm:app' *****
      kapp:
        cacheRoot: <dir>/.kapps-workspace/dev/m/app
        id: app
        manifestId: m
        templates: {}
        vars:
          password: ""
          token: ""
      kubeconfig: ""
      outputs: {}
      stack:
        account: ""
        cluster: c1
        filePath: <dir>/stacks.yaml
        name: dev
        profile: ""
        provider: local
        provisioner: ""
        region: ""
      sugarkube:
        defaultVars:
          - local
          - ""
          - ""
          - ""
          - c1
          - ""
      ***** End variables for kapp 'm:app' *****
      ***** Start config for kapp 'm:app' *****
      id: app
      depends_on:
        - id: db
      run_units:
        main:
          apply_install:
            - name: run
              command: app
              args: --token=
      vars:
        token: ""
        password: ""
      ***** End config for kapp 'm:app' *****
      "
    `);
  });
});
