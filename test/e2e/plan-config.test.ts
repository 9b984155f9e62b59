/**
 * Loading a stack, end to end: where the project configuration is found, stack files with anchors, the command
 * line's stack overrides, kapps' own sugarkube.yaml from their sources, and the exact diagnostics for bad input.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addFiles, generate, kapps, project, removeProjects, stepLines, text } from '../fixtures/plan/project.js';

afterAll(removeProjects);

/** A program `which` whose var `from` names the config file it was defined in, and a kapp that prints it. */
const conf = (from: string): string => text`
  programs:
    which:
      vars:
        from: ${from}
`;

const sayFrom = {
  'stacks/stacks.yaml': text`
    dev:
      provider: local
      provisioner: none
      cluster: c1
      manifests:
        - uri: ../manifests/m.yaml
  `,
  'manifests/m.yaml': text`
    kapps:
      - id: say
        requires: [which]
        run_units:
          main:
            apply_install:
              - name: say
                command: echo
                args: "from={{ .kapp.vars.from | default \"none\" }}"
  `,
};

async function configUsed(dir: string, cwd: string, extra: string[] = []): Promise<string[]> {
  const spec = await generate(path.join(dir, cwd), [path.join(dir, 'stacks/stacks.yaml'), 'dev', ...extra], {
    HOME: path.join(dir, 'home'),
  });
  return stepLines(spec, 'm:say', 'apply_install');
}

describe('the project configuration', () => {
  it('is optional: without sugarkube-conf.yaml kapps plans with no programs', async () => {
    const dir = project(sayFrom);
    mkdirSync(path.join(dir, 'elsewhere'));
    expect(await configUsed(dir, 'elsewhere')).toEqual(['say: echo from=none']);
  });

  it('is searched in ~/.sugarkube, then the parents of the stack file, its folder and the working directory (nearest wins)', async () => {
    const dir = project({ ...sayFrom, 'home/.sugarkube/sugarkube-conf.yaml': conf('home') });
    mkdirSync(path.join(dir, 'elsewhere'));
    expect(await configUsed(dir, 'elsewhere')).toEqual(['say: echo from=home']);
    addFiles(dir, { 'sugarkube-conf.yaml': conf('stack-parent') });
    expect(await configUsed(dir, 'elsewhere')).toEqual(['say: echo from=stack-parent']);
    addFiles(dir, { 'stacks/sugarkube-conf.yaml': conf('stack-dir') });
    expect(await configUsed(dir, 'elsewhere')).toEqual(['say: echo from=stack-dir']);
    addFiles(dir, { 'elsewhere/sugarkube-conf.yaml': conf('cwd') });
    expect(await configUsed(dir, 'elsewhere')).toEqual(['say: echo from=cwd']);
  });

  it('is the file --config names, relative to the working directory, whatever else exists', async () => {
    const dir = project({
      ...sayFrom,
      'sugarkube-conf.yaml': conf('stack-parent'),
      'configs/mine.yaml': conf('explicit'),
    });
    expect(await configUsed(dir, '.', ['--config', 'configs/mine.yaml'])).toEqual(['say: echo from=explicit']);
  });

  it('must exist when --config names it', async () => {
    const dir = project(sayFrom);
    const r = await kapps(dir, ['generate', 'stacks/stacks.yaml', 'dev', '--config', 'nope.yaml']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error: configuration file \`${path.join(dir, 'nope.yaml')}\` does not exist\n`);
  });
});

describe('stack files', () => {
  it('merge YAML anchors with <<, and the command line overrides provider, provisioner, account, region, profile and cluster', async () => {
    const dir = project({
      'stacks.yaml': text`
        common: &common
          provider: local
          provisioner: minikube
          account: acc
          region: reg
          profile: prof
          manifests:
            - uri: m.yaml
        dev:
          <<: *common
          cluster: c1
          region: eu-1
      `,
      'm.yaml': text`
        kapps:
          - id: show
            run_units:
              main:
                apply_install:
                  - name: show
                    command: echo
                    args: >-
                      {{ .stack.name }} {{ .stack.provider }} {{ .stack.provisioner }} {{ .stack.account }}
                      {{ .stack.region }} {{ .stack.profile }} {{ .stack.cluster }}
                      {{ .sugarkube.defaultVars | join "," }}
      `,
    });
    const plain = await generate(dir, ['stacks.yaml', 'dev']);
    expect(stepLines(plain, 'm:show', 'apply_install')).toEqual([
      'show: echo dev local minikube acc eu-1 prof c1 local,minikube,acc,prof,c1,eu-1',
    ]);
    const overridden = await generate(dir, [
      'stacks.yaml',
      'dev',
      '--provider=aws',
      '--provisioner=eks',
      '-a',
      'a2',
      '-r',
      'r2',
      '--profile=p2',
      '-c',
      'c2',
    ]);
    expect(stepLines(overridden, 'm:show', 'apply_install')).toEqual([
      'show: echo dev aws eks a2 r2 p2 c2 aws,eks,a2,p2,c2,r2',
    ]);
    // An empty value on the command line does not blank the stack's.
    const empty = await generate(dir, ['stacks.yaml', 'dev', '--region=', '--cluster=']);
    expect(stepLines(empty, 'm:show', 'apply_install')).toEqual(stepLines(plain, 'm:show', 'apply_install'));
  });

  it('name the valid stacks when the one asked for does not exist', async () => {
    const dir = project({
      'stacks.yaml': text`
        defaults: &d
          provider: local
        dev:
          <<: *d
          cluster: a
          manifests: []
        prod:
          <<: *d
          cluster: b
          manifests: []
      `,
    });
    const r = await kapps(dir, ['graph', 'stacks.yaml', 'dve']);
    expect(r.code).toBe(1);
    // `defaults` holds no manifests: an anchor of shared settings, not a stack.
    expect(r.stderr).toBe(
      'error: no stack called `dve` in stack file `stacks.yaml`; valid stack names are: dev, prod\n' +
        "  hint: did you mean 'dev'?\n",
    );
  });

  it('say that a top-level key without manifests is not a stack, naming the stacks', async () => {
    const dir = project({
      'stacks.yaml': text`
        defaults: &d
          provider: local
        dev:
          <<: *d
          manifests: []
      `,
    });
    const r = await kapps(dir, ['generate', 'stacks.yaml', 'defaults']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      [
        'stacks.yaml:1:1: error: `defaults` has no `manifests`, so it is not a stack (at defaults.manifests)',
        '  |',
        '1 | defaults: &d',
        '  | ^^^^^^^^',
        '  hint: the stacks of `stacks.yaml` are: dev',
        '',
      ].join('\n'),
    );
  });

  it('print the warnings of a misspelled stack key before the error they explain, with "did you mean"', async () => {
    const dir = project({
      'stacks.yaml': text`
        dev:
          provider: local
          provider_var_dirs: [./providers]
          manifets:
            - uri: m.yaml
      `,
    });
    const r = await kapps(dir, ['generate', 'stacks.yaml', 'dev']);
    expect(r.code).toBe(1);
    const warning1 = r.stderr.indexOf('warning: unknown field `provider_var_dirs`');
    const warning2 = r.stderr.indexOf('warning: unknown field `manifets`');
    const error = r.stderr.indexOf('error: `dev` has no `manifests`, so it is not a stack');
    expect([warning1 >= 0, warning2 >= 0, error >= 0]).toEqual([true, true, true]);
    expect(warning1).toBeLessThan(warning2);
    expect(warning2).toBeLessThan(error);
    expect(r.stderr).toContain("hint: did you mean 'provider_vars_dirs'?");
    expect(r.stderr).toContain("hint: did you mean 'manifests'?");
    expect(r.stderr).not.toContain('nothing was matched');
  });
});

describe("a kapp's own sugarkube.yaml", () => {
  const files = {
    'stacks.yaml': text`
      dev:
        provider: local
        provisioner: none
        cluster: c1
        manifests:
          - uri: manifests/apps.yaml
    `,
    'manifests/apps.yaml': text`
      kapps:
        - id: local-app
          sources:
            - uri: ../kapps/app
        - id: remote-app
          sources:
            - uri: git@github.com:example/kapps.git//charts/web#v1.0.0
    `,
    'kapps/app/sugarkube.yaml': text`
      run_units:
        main:
          apply_install:
            - name: from-source
              command: ./install.sh
              args: "{{ .kapp.id }}"
    `,
  };

  it('is read in place from a file source, and from the workspace for a git source', async () => {
    const dir = project({
      ...files,
      'ws/apps/remote-app/web/sugarkube.yaml': text`
        run_units:
          main:
            apply_install:
              - name: from-checkout
                command: helm
                args: install {{ .kapp.id }}
      `,
    });
    const spec = await generate(dir, ['stacks.yaml', 'dev', 'ws']);
    expect(stepLines(spec, 'apps:local-app', 'apply_install')).toEqual(['from-source: ./install.sh local-app']);
    expect(stepLines(spec, 'apps:remote-app', 'apply_install')).toEqual(['from-checkout: helm install remote-app']);
    // Paths are those of the workspace, where the kapp runs.
    const local = spec.kapps.find((k) => k.id === 'apps:local-app');
    expect(local?.phases.apply_install?.[0]?.workingDir).toBe(path.join(dir, 'ws/apps/local-app'));
  });

  it('is not read from a git source that is not fetched, with --no-fetch: the command fails listing the kapp', async () => {
    const dir = project(files);
    const r = await kapps(dir, ['generate', 'stacks.yaml', 'dev', 'ws', '-o', 'json', '--no-fetch']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `kapps: 1 kapp(s) not read: their git sources are not in the workspace ${path.join(dir, 'ws')} (--no-fetch)\n` +
        '  apps:remote-app\n' +
        'fetch them with: kapps workspace create --no-update stacks.yaml dev ws\n' +
        '(or run without --no-fetch, which fetches missing sources first)\n',
    );
  });
});

describe('diagnostics for bad input', () => {
  const stack = text`
    dev:
      provider: local
      provisioner: none
      cluster: c1
      manifests:
        - uri: manifests/web.yaml
        - uri: manifests/data.yaml
  `;

  it('report every problem of every file at once, with file:line:col, the field path and a suggestion', async () => {
    const dir = project({
      'stacks.yaml': stack,
      'manifests/web.yaml': text`
        options:
          sequental: true
        kapps:
          - id: web
            depend_on:
              - id: data:db
            run_units:
              main:
                apply_instal:
                  - name: run
                    command: echo
      `,
      'manifests/data.yaml': text`
        kapps:
          - id: db
            merge_priority: 3
            vars: [a, b]
      `,
    });
    const r = await kapps(dir, ['generate', 'stacks.yaml', 'dev']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(text`
      manifests/web.yaml:2:3: error: unknown field \`sequental\` (at options.sequental)
        |
      2 |   sequental: true
        |   ^^^^^^^^^
        hint: did you mean 'sequential'?

      manifests/web.yaml:5:5: error: unknown field \`depend_on\` (at kapps[0].depend_on)
        |
      5 |     depend_on:
        |     ^^^^^^^^^
        hint: did you mean 'depends_on'?

      manifests/web.yaml:9:9: error: unknown field \`apply_instal\` (at kapps[0].run_units.main.apply_instal)
        |
      9 |         apply_instal:
        |         ^^^^^^^^^^^^
        hint: did you mean 'apply_install'?

      manifests/data.yaml:3:5: error: unknown field \`merge_priority\` (at kapps[0].merge_priority)
        |
      3 |     merge_priority: 3
        |     ^^^^^^^^^^^^^^

      manifests/data.yaml:4:11: error: expected a map, got a list (at kapps[0].vars)
        |
      4 |     vars: [a, b]
        |           ^^^^^^

      5 errors
    `);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('point at YAML syntax errors, missing files and missing directories', async () => {
    const dir = project({
      'stacks.yaml': text`
        dev:
          provider: local
          cluster: c1
          provider_vars_dirs: [providers, missing-dir]
          manifests:
            - uri: manifests/web.yaml
            - uri: manifests/gone.yaml
      `,
      'providers/values.yaml': 'a: 1\n',
      'manifests/web.yaml': text`
        kapps:
          - id: web
            vars: {a: 1
      `,
    });
    const r = await kapps(dir, ['graph', 'stacks.yaml', 'dev']);
    expect(r.code).toBe(1);
    expect(r.stderr.replaceAll(dir, '<dir>')).toMatchInlineSnapshot(`
      "stacks.yaml:4:35: error: provider_vars_dirs: <dir>/missing-dir does not exist (at dev.provider_vars_dirs[1])
        |
      4 |   provider_vars_dirs: [providers, missing-dir]
        |                                   ^^^^^^^^^^^

      stacks.yaml:7:12: error: manifest \`<dir>/manifests/gone.yaml\` does not exist
        |
      7 |     - uri: manifests/gone.yaml
        |            ^^^^^^^^^^^^^^^^^^^

      manifests/web.yaml:4:1: error: invalid YAML: Flow map in block collection must be sufficiently indented and end with a }
        |
      4 | 
        | ^

      3 errors
      "
    `);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('name the file of a broken sugarkube.yaml inside a source', async () => {
    const dir = project({
      'stacks.yaml': stack.replace('  - uri: manifests/data.yaml\n', ''),
      'manifests/web.yaml': text`
        kapps:
          - id: web
            sources:
              - uri: ../kapps/web
      `,
      'kapps/web/sugarkube.yaml': text`
        run_units:
          main:
            apply_install:
              - name: a
                call: output
                command: echo
        ouputs: []
      `,
    });
    const r = await kapps(dir, ['vars', 'stacks.yaml', 'dev']);
    expect(r.code).toBe(1);
    expect(r.stderr.replaceAll(dir, '<dir>')).toMatchInlineSnapshot(`
      "kapps/web/sugarkube.yaml:4:9: error: a run step can't have both \`call\` and \`command\` (at run_units.main.apply_install[0])
        |
      4 |       - name: a
        |         ^^^^^^^
        hint: \`call\` replaces the step by other steps; move the command to a step of its own

      kapps/web/sugarkube.yaml:7:1: error: unknown field \`ouputs\` (at ouputs)
        |
      7 | ouputs: []
        | ^^^^^^
        hint: did you mean 'outputs'?

      2 errors
      "
    `);
  });

  it('collect the problems of the project config, a manifest, a kapp’s sugarkube.yaml and a vars file in one report', async () => {
    const dir = project({
      'stacks.yaml': text`
        dev:
          provider: local
          provisioner: none
          cluster: c1
          kapp_vars_dirs: [vars]
          manifests:
            - uri: manifests/web.yaml
            - uri: manifests/data.yaml
      `,
      'sugarkube-conf.yaml': 'programs: [1\n',
      'manifests/web.yaml': text`
        kapps:
          - id: web
            sources:
              - uri: ../kapps/web
      `,
      'manifests/data.yaml': text`
        kapps:
          - id: db
            depend_on: []
      `,
      'kapps/web/sugarkube.yaml': text`
        ouputs: []
      `,
      'vars/values.yaml': 'a: [1\n',
      'vars/web.yaml': 'b: [1\n',
      'vars/web/values.yaml': 'c: [1\n',
    });
    const r = await kapps(dir, ['generate', 'stacks.yaml', 'dev']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.replaceAll(dir, '<dir>')).toMatchInlineSnapshot(`
      "sugarkube-conf.yaml:2:1: error: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]
        |
      2 | 
        | ^

      manifests/data.yaml:3:5: error: unknown field \`depend_on\` (at kapps[0].depend_on)
        |
      3 |     depend_on: []
        |     ^^^^^^^^^
        hint: did you mean 'depends_on'?

      kapps/web/sugarkube.yaml:1:1: error: unknown field \`ouputs\` (at ouputs)
        |
      1 | ouputs: []
        | ^^^^^^
        hint: did you mean 'outputs'?

      vars/web.yaml:2:1: error: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]
        |
      2 | 
        | ^

      vars/values.yaml:2:1: error: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]
        |
      2 | 
        | ^

      vars/web/values.yaml:2:1: error: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]
        |
      2 | 
        | ^

      6 errors
      "
    `);
  });

  it('give a usage error (exit 2) for a malformed selector before reading anything', async () => {
    const dir = project({ 'stacks.yaml': 'not: [valid\n' });
    const r = await kapps(dir, ['generate', 'stacks.yaml', 'dev', '-i', 'web']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "kapps: invalid selector 'web': a selector is 'manifest-id:kapp-id' or 'manifest-id:*' (fully-qualified, no other wildcards)\n" +
        'Run `kapps --help` for usage.\n',
    );
  });

  it('keep their file, line and column deep in big manifests, read by the fast reader and (CRLF) by the yaml package', async () => {
    /** `n` kapps of seven lines each, then `tail`; with `eol` between lines. */
    const manifest = (n: number, prefix: string, tail: string[], eol: string): string => {
      const lines = ['kapps:'];
      for (let i = 0; i < n; i++) {
        lines.push(`  - id: ${prefix}${String(i)}`, '    run_units:', '      main:', '        apply_install:');
        lines.push('          - name: run', '            command: echo', `            args: "${String(i)}"`);
      }
      return [...lines, ...tail].join(eol) + eol;
    };
    /** The 1-based line of the first line of `file` that is `line` (CR dropped). */
    const lineOf = (file: string, line: string): number =>
      file.split('\n').findIndex((l) => l.replace(/\r$/, '') === line) + 1;
    const write = (big: string[], crlf: string[]): { big: string; crlf: string } => {
      const files = { big: manifest(3000, 'k', big, '\n'), crlf: manifest(2000, 'c', crlf, '\r\n') };
      addFiles(dir, { 'manifests/big.yaml': files.big, 'manifests/crlf.yaml': files.crlf });
      return files;
    };
    const dir = project({
      'stacks.yaml': text`
        dev:
          provider: local
          provisioner: none
          cluster: c1
          manifests:
            - uri: manifests/big.yaml
            - uri: manifests/crlf.yaml
      `,
    });
    const last = [
      '  - id: last',
      '    run_units:',
      '      main:',
      '        apply_install:',
      '          - name: run',
      '            command: echo',
      '            args: "--x={{ .kapp.vars.nope }}"',
    ];

    // Problems of the YAML itself: a key written twice (fast reader), a tag that does not fit (the yaml package).
    let f = write(
      [...last, '  - id: bad', '    vars:', '      long: a plain text', '        over two lines', '      long: again'],
      ['  - id: tagged', '    vars:', '      n: !!int "x1"'],
    );
    let r = await kapps(dir, ['generate', 'stacks.yaml', 'dev', '-o', 'json']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    let dup = lineOf(f.big, '      long: again');
    let tag = lineOf(f.crlf, '      n: !!int "x1"');
    expect([dup, tag]).toEqual([21013, 14004]);
    expect(r.stderr).toBe(
      [
        `manifests/big.yaml:${String(dup)}:7: error: duplicate key \`long\``,
        '      |',
        `${String(dup)} |       long: again`,
        '      |       ^^^^',
        `  manifests/big.yaml:${String(dup - 2)}:7: first defined here`,
        '',
        `manifests/crlf.yaml:${String(tag)}:16: error: cannot decode !!str \`x1\` as a !!int`,
        '      |',
        `${String(tag)} |       n: !!int "x1"`,
        '      |                ^^^^',
        '',
        '2 errors',
        '',
      ].join('\n'),
    );

    // Problems of the configuration, found by validation on the trees.
    f = write([...last, '  - id: bad', '    run_unit: {}'], ['  - id: tagged', '    bogus: 1']);
    r = await kapps(dir, ['validate', 'stacks.yaml', 'dev']);
    expect(r.code).toBe(1);
    dup = lineOf(f.big, '    run_unit: {}');
    tag = lineOf(f.crlf, '    bogus: 1');
    expect(r.stderr).toBe(
      [
        `manifests/big.yaml:${String(dup)}:5: error: unknown field \`run_unit\` (at kapps[3001].run_unit)`,
        '      |',
        `${String(dup)} |     run_unit: {}`,
        '      |     ^^^^^^^^',
        "  hint: did you mean 'run_units'?",
        '',
        `manifests/crlf.yaml:${String(tag)}:5: error: unknown field \`bogus\` (at kapps[2000].bogus)`,
        '      |',
        `${String(tag)} |     bogus: 1`,
        '      |     ^^^^^',
        '',
        '2 errors',
        '',
      ].join('\n'),
    );

    // Found while planning: a step's arguments that read a variable not set, located at the step's \`args\`.
    f = write(last, []);
    r = await kapps(dir, ['generate', 'stacks.yaml', 'dev', '-o', 'json']);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { kapps: unknown[] }).kapps).toHaveLength(5001);
    const args = lineOf(f.big, '            args: "--x={{ .kapp.vars.nope }}"');
    expect(r.stderr).toBe(
      [
        `manifests/big.yaml:${String(args)}:19: warning: step 'run' of run unit 'main' (apply_install) in kapp 'big:last': its args render <no value>, so a variable it reads is not set`,
        '      |',
        `${String(args)} |             args: "--x={{ .kapp.vars.nope }}"`,
        '      |                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^',
        '  hint: `kapps vars` shows the variables that are set',
        '',
      ].join('\n'),
    );
  });

  it('say plainly that the stack file does not exist or is a directory', async () => {
    const dir = project({ 'stacks/x.yaml': 'a: 1\n' });
    const r = await kapps(dir, ['validate', 'stacks.yaml', 'dev']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: stack file \`${path.join(dir, 'stacks.yaml')}\` does not exist\n`);
    const d = await kapps(dir, ['graph', 'stacks', 'dev']);
    expect(d.code).toBe(1);
    expect(d.stderr).toBe(`error: stack file \`${path.join(dir, 'stacks')}\` is a directory, not a file\n`);
  });
});
