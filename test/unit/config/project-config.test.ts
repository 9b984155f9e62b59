/** sugarkube-conf.yaml: Sugarkube's TestLoadConfig restated (without lower-casing), the search path, diagnostics. */
import { describe, expect, it } from 'vitest';
import {
  findProjectConfig,
  loadProjectConfig,
  parseProjectConfig,
  projectConfigSearchPath,
} from '../../../src/config/project-config.js';
import { locationOf } from '../../../src/config/locations.js';
import { FIXTURES, fixture, lines, print, printedError } from './helpers.js';

const home = fixture('search/home');
const emptyHome = fixture('search/cwd');

describe('loadProjectConfig: TestLoadConfig', () => {
  const { config, warnings } = loadProjectConfig({ cwd: FIXTURES, configFile: 'test-sugarkube-conf.yaml' });

  it('reads the settings, with defaults for the rest', () => {
    expect(warnings).toEqual([]);
    expect(config.file).toBe(fixture('test-sugarkube-conf.yaml'));
    expect(config.log_level).toBe('warn');
    expect(config.json_logs).toBeUndefined();
    expect(config.num_workers).toBe(5);
  });

  it('reads the global run unit as `sugarkube_config_file`', () => {
    expect(config.run_units).toEqual({
      name: 'sugarkube_config_file',
      clean: [
        { name: 'find1', command: 'find-stuff1' },
        { name: 'find2', command: 'find-stuff2' },
      ],
    });
  });

  it('keeps the case of program names, unit names and env var names', () => {
    expect([...config.programs.keys()]).toEqual(['progA', 'prog2']);
    const progA = config.programs.get('progA');
    expect(progA?.vars).toEqual({
      kubeconfig: '{{ .kubeconfig }}',
      release: '{{ .kapp.vars.release | default .kapp.id }}',
      helm: '/path/to/helm',
    });
    expect(progA?.run_units).toEqual([
      {
        name: 'progA',
        working_dir: '/tmp',
        env_vars: { USER: 'sk' },
        plan_install: [{ name: 'print-hi', command: 'echo', args: 'hi', merge_priority: 5 }],
        apply_install: [{ name: 'do-stuff-second', command: 'echo', args: 'second', merge_priority: 30 }],
      },
    ]);
    const prog2 = config.programs.get('prog2');
    expect(prog2?.run_units?.[0]?.binaries).toEqual(['cat']);
    expect(prog2?.run_units?.[0]?.apply_install?.map((s) => [s.name, s.merge_priority, s.env_vars])).toEqual([
      ['do-stuff-first', 20, { REGION: '{{ .stack.region }}', COLOUR: 'blue' }],
      ['x', 10, { KUBECONFIG: '/tmp/kubeconfig' }],
    ]);
  });

  it('records where programs and steps were written', () => {
    expect(locationOf(config.programs, 'prog2')).toMatchObject({ line: 27, column: 5 });
    const step = config.programs.get('progA')?.run_units?.[0]?.plan_install?.[0];
    expect(locationOf(step, 'merge_priority')).toMatchObject({ line: 19, column: 29 });
  });
});

describe('finding sugarkube-conf.yaml', () => {
  it('uses --config relative to the working directory, which must exist', () => {
    expect(findProjectConfig({ cwd: FIXTURES, configFile: 'test-sugarkube-conf.yaml' })).toBe(
      fixture('test-sugarkube-conf.yaml'),
    );
    expect(printedError(() => loadProjectConfig({ cwd: FIXTURES, configFile: 'nope.yaml' }))).toBe(
      `error: configuration file \`${fixture('nope.yaml')}\` does not exist`,
    );
  });

  it('searches the working directory, the stack file directory and its ancestors, ~/.sugarkube, /etc/sugarkube', () => {
    const dirs = projectConfigSearchPath({ cwd: '/w', stackFile: 'a/b/stacks.yaml', homeDir: '/h' });
    expect(dirs).toEqual(['/w', '/w/a/b', '/w/a', '/', '/h/.sugarkube', '/etc/sugarkube']);
  });

  it("finds the file in an ancestor of the stack file's directory", () => {
    const { config } = loadProjectConfig({
      cwd: fixture('search/cwd'),
      stackFile: fixture('search/proj/stacks/deep/stacks.yaml'),
      homeDir: home,
    });
    expect(config).toMatchObject({ file: fixture('search/proj/sugarkube-conf.yaml'), num_workers: 7 });
  });

  it('falls back to ~/.sugarkube', () => {
    const { config } = loadProjectConfig({ cwd: fixture('search/cwd'), homeDir: home });
    expect(config).toMatchObject({ file: fixture('search/home/.sugarkube/sugarkube-conf.yaml'), project: 'from-home' });
  });

  it('uses defaults when there is no file', () => {
    const { config, warnings } = loadProjectConfig({ cwd: fixture('search/cwd'), homeDir: emptyHome });
    expect(config).toEqual({ num_workers: 5, programs: new Map() });
    expect(warnings).toEqual([]);
  });
});

describe('project configuration diagnostics', () => {
  it('warns about unknown keys and descriptor fields a program ignores', () => {
    const { config, warnings } = loadProjectConfig({ cwd: FIXTURES, configFile: 'invalid/warn-conf.yaml' });
    expect(config.num_workers).toBe(3);
    expect(config.programs.get('helm')).toEqual({ vars: { helm: '/usr/bin/helm' } });
    expect(print(warnings)).toBe(
      lines(
        'invalid/warn-conf.yaml:2:1: warning: unknown field `log_levle` (at log_levle)',
        '  |',
        '2 | log_levle: debug',
        '  | ^^^^^^^^^',
        "  hint: did you mean 'log_level'?",
        '',
        'invalid/warn-conf.yaml:5:5: warning: `pre_install_actions` is ignored in a program (at programs.helm.pre_install_actions)',
        '  |',
        '5 |     pre_install_actions:',
        '  |     ^^^^^^^^^^^^^^^^^^^',
        '  hint: a program can set vars, run_units, templates, conditions, requires and metadata',
      ),
    );
  });

  it('reports every error (and warning) of an invalid file at once', () => {
    expect(printedError(() => loadProjectConfig({ cwd: FIXTURES, configFile: 'invalid/sugarkube-conf.yaml' }))).toBe(
      lines(
        'invalid/sugarkube-conf.yaml:1:14: error: expected a positive integer, got 0 (at num_workers)',
        '  |',
        '1 | num_workers: 0',
        '  |              ^',
        '',
        'invalid/sugarkube-conf.yaml:2:1: warning: unknown field `log_levle` (at log_levle)',
        '  |',
        '2 | log_levle: debug',
        '  | ^^^^^^^^^',
        "  hint: did you mean 'log_level'?",
        '',
        'invalid/sugarkube-conf.yaml:5:5: warning: `depends_on` is ignored in a program (at programs.helm.depends_on)',
        '  |',
        '5 |     depends_on:',
        '  |     ^^^^^^^^^^',
        '  hint: a program can set vars, run_units, templates, conditions, requires and metadata',
        '',
        'invalid/sugarkube-conf.yaml:14:29: error: expected an integer from 0 to 255, got -1 (at programs.helm.run_units.helm.plan_install[0].merge_priority)',
        '   |',
        '14 |             merge_priority: -1',
        '   |                             ^^',
        '',
        'invalid/sugarkube-conf.yaml:15:12: error: expected a boolean (true or false), got "maybe" (at json_logs)',
        '   |',
        '15 | json_logs: maybe',
        '   |            ^^^^^',
      ),
    );
  });

  it('reads kapps settings and YAML 1.1 booleans', () => {
    const text = 'project: shop\nbackend: postgres://db/kapps\nverbose: yes\nno_color: off\njson_logs: true\n';
    const { config } = parseProjectConfig(text, '/p/sugarkube-conf.yaml');
    expect(config).toEqual({
      file: '/p/sugarkube-conf.yaml',
      num_workers: 5,
      programs: new Map(),
      project: 'shop',
      backend: 'postgres://db/kapps',
      verbose: true,
      no_color: false,
      json_logs: true,
    });
  });

  it('accepts an empty file', () => {
    expect(parseProjectConfig('', '/p/c.yaml').config).toEqual({
      file: '/p/c.yaml',
      num_workers: 5,
      programs: new Map(),
    });
  });

  it('rejects a file whose top level is not a map', () => {
    const text = '- a\n';
    expect(
      printedError(
        () => parseProjectConfig(text, '/p/c.yaml'),
        () => text,
      ),
    ).toBe(lines('/p/c.yaml:1:1: error: expected a map, got a list', '  |', '1 | - a', '  | ^^^'));
  });
});
