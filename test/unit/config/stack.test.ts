/** Stack loading: Sugarkube's stack config tests (TestLoadStackConfig*, TestDir) restated, plus diagnostics. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultManifestId, loadStack } from '../../../src/config/stack.js';
import { locationOf } from '../../../src/config/locations.js';
import { ConfigError } from '../../../src/diagnostics/errors.js';
import { FIXTURES, fixture, lines, print, printedError } from './helpers.js';

describe('loadStack: Sugarkube stack tests', () => {
  it('fails for a garbage path', () => {
    expect(printedError(() => loadStack('/bananas/zzz.yaml', 'large'))).toBe(
      'error: stack file `/bananas/zzz.yaml` does not exist',
    );
  });

  it('fails for a path that is a directory', () => {
    expect(printedError(() => loadStack(FIXTURES, 'large'))).toBe(
      `error: stack file \`${FIXTURES}\` is a directory, not a file`,
    );
  });

  it('fails for a missing stack name, listing the valid names', () => {
    expect(printedError(() => loadStack(fixture('stacks.yaml'), 'lrge'))).toBe(
      lines(
        `error: no stack called \`lrge\` in stack file \`${fixture('stacks.yaml')}\`; valid stack names are: large, kops, web`,
        "  hint: did you mean 'large'?",
      ),
    );
  });

  it('loads stack `large`', () => {
    const { stack, warnings } = loadStack(fixture('stacks.yaml'), 'large');
    expect(stack).toMatchObject({
      name: 'large',
      file: fixture('stacks.yaml'),
      dir: FIXTURES,
      provider: 'local',
      provisioner: 'minikube',
      profile: 'local',
      cluster: 'large',
      account: '',
      region: '',
      provider_vars_dirs: [fixture('stacks')],
      template_dirs: [fixture('templates1'), fixture('templates2')],
      kapp_vars_dirs: [fixture('sample-kapp-vars')],
      defaults: { vars: { stackDefault: 'xyz', overriddenDefault: 'zzz' } },
    });
    expect(stack.manifests.map((m) => [m.uri, m.id])).toEqual([
      [fixture('manifests/manifest1.yaml'), 'manifest1'],
      [fixture('manifests/manifest2.yaml'), 'exampleManifest2'],
    ]);
    // The `state: absent` key of the override is dropped with a warning.
    expect(stack.manifests[0]?.overrides.get('kappA')).toEqual({
      vars: { sizeVar: 'mediumOverridden', stackVar: 'setInOverrides', overriddenDefault: 'aaa' },
      sources: [{ id: 'pathA', explicitId: false, options: { branch: 'stable' } }],
    });
    expect(print(warnings)).toBe(
      lines(
        'stacks.yaml:25:11: warning: unknown field `state` (at large.manifests[0].overrides.kappA.state)',
        '   |',
        '25 |           state: absent',
        '   |           ^^^^^',
        '  hint: `conditions` replaced `state`: e.g. `conditions: [false]` switches a kapp off',
      ),
    );
  });

  it('resolves the stack directory of a relative stack path (TestDir)', () => {
    const rel = path.relative(process.cwd(), fixture('stacks.yaml'));
    const { stack } = loadStack(rel, 'large');
    expect(stack.dir).toBe(FIXTURES);
    expect(stack.file).toBe(fixture('stacks.yaml'));
  });

  it('defaults a manifest id to the file name without extension (TestSetManifestDefaults)', () => {
    expect(defaultManifestId('example/manifest.yaml')).toBe('manifest');
    expect(defaultManifestId('manifests/web/wordpress-sites.yaml')).toBe('wordpress-sites');
    expect(defaultManifestId('a.b.yaml')).toBe('a.b');
  });
});

describe('loadStack', () => {
  it('applies merge keys, stack vars and `name:`', () => {
    const { stack } = loadStack(fixture('stacks.yaml'), 'web');
    expect(stack.name).toBe('local-web');
    expect(stack.vars).toEqual({ domain: 'localhost', ports: { http: 80n, https: 443n } });
    expect(stack.manifests[0]?.uri).toBe('/abs/manifests/sites.yaml');
    expect(stack.manifests[0]?.overrides.get('site2')).toEqual({ conditions: ['false'] });
  });

  it('keeps version texts as written and keys them by kapp/source', () => {
    const { stack } = loadStack(fixture('stacks.yaml'), 'kops');
    expect([...(stack.manifests[1]?.versions ?? [])]).toEqual([
      ['kappC/special', '1.10'],
      ['kappD/pathD', '1.10'],
    ]);
  });

  it('applies only non-empty command-line overrides', () => {
    const { stack } = loadStack(fixture('stacks.yaml'), 'kops', { region: 'us-east-1', cluster: '', profile: 'p2' });
    expect(stack).toMatchObject({ region: 'us-east-1', cluster: 'dev1', profile: 'p2', account: 'dev' });
  });

  it('records locations of the stack, its manifests and overrides', () => {
    const { stack } = loadStack(fixture('stacks.yaml'), 'large');
    expect(locationOf(stack, 'cluster')).toMatchObject({ line: 9, column: 12 });
    // A value merged from an anchor points at the anchor's text.
    expect(locationOf(stack, 'provider')).toMatchObject({ line: 3, column: 13 });
    const ref = stack.manifests[0];
    expect(locationOf(ref, 'uri')).toMatchObject({ line: 22, column: 12 });
    expect(locationOf(ref?.overrides.get('kappA'), 'vars')).toMatchObject({ line: 27, column: 13 });
  });

  it('reports every problem of an invalid stack at once', () => {
    expect(printedError(() => loadStack(fixture('invalid/stacks.yaml'), 'dev'))).toBe(
      lines(
        'invalid/stacks.yaml:3:3: warning: unknown field `provisoner` (at dev.provisoner)',
        '  |',
        '3 |   provisoner: none',
        '  |   ^^^^^^^^^^',
        "  hint: did you mean 'provisioner'?",
        '',
        'invalid/stacks.yaml:4:3: warning: unknown field `state` (at dev.state)',
        '  |',
        '4 |   state: absent',
        '  |   ^^^^^',
        '  hint: `conditions` replaced `state`: e.g. `conditions: [false]` switches a kapp off',
        '',
        'invalid/stacks.yaml:5:19: error: expected a list of strings, got "vars/" (at dev.kapp_vars_dirs)',
        '  |',
        '5 |   kapp_vars_dirs: vars/',
        '  |                   ^^^^^',
        '',
        'invalid/stacks.yaml:9:9: error: versions key `kappA` must be `<kapp id>/<source id>` (at dev.manifests[0].versions.kappA)',
        '  |',
        '9 |         kappA: 1.0',
        '  |         ^^^^^',
        '',
        'invalid/stacks.yaml:13:11: warning: unknown field `state` (at dev.manifests[0].overrides.kappA.state)',
        '   |',
        '13 |           state: absent',
        '   |           ^^^^^',
        '  hint: `conditions` replaced `state`: e.g. `conditions: [false]` switches a kapp off',
        '',
        'invalid/stacks.yaml:16:19: error: source id `other` differs from its key `chart` (at dev.manifests[0].overrides.kappA.sources.chart.id)',
        '   |',
        '16 |               id: other',
        '   |                   ^^^^^',
        '',
        'invalid/stacks.yaml:17:11: error: duplicate manifest id `a` (at dev.manifests[1].id)',
        '   |',
        '17 |     - id: a',
        '   |           ^',
        '  hint: give one of them an explicit `id:`',
        '  invalid/stacks.yaml:7:12: `a` first used here',
        '',
        'invalid/stacks.yaml:19:3: warning: `filepath` is not supported and is ignored (at dev.filepath)',
        '   |',
        '19 |   filepath: x',
        '   |   ^^^^^^^^',
      ),
    );
  });

  it('returns warnings when a stack only has unknown keys', () => {
    const { stack, warnings } = loadStack(fixture('invalid/stacks.yaml'), 'warned');
    expect(stack.provider).toBe('local');
    expect(stack.provisioner).toBe('');
    expect(warnings.map((w) => `${w.severity} ${w.path ?? ''}`)).toEqual([
      'warning warned.provisoner',
      'warning warned.manifests[0].overrides.kappA.state',
    ]);
  });

  it('rejects a stack file whose top level is not a map', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kapps-stack-'));
    const file = path.join(dir, 'stacks.yaml');
    writeFileSync(file, '- a\n- b\n');
    const text = '- a\n- b\n';
    expect(
      printedError(
        () => loadStack(file, 'a'),
        () => text,
      ),
    ).toBe(
      lines(`${file}:1:1: error: a stack file must map stack names to stacks, got a list`, '  |', '1 | - a', '  | ^^^'),
    );
  });

  it('reports YAML syntax errors of the stack file with their position', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kapps-stack-'));
    const file = path.join(dir, 'stacks.yaml');
    const text = 'dev:\n  provider: local\n  manifests: [a\n';
    writeFileSync(file, text);
    expect(() => loadStack(file, 'dev')).toThrow(ConfigError);
    expect(
      printedError(
        () => loadStack(file, 'dev'),
        () => text,
      ),
    ).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: error: invalid YAML: `));
  });
});
