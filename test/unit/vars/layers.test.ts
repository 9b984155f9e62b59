import { describe, expect, it } from 'vitest';
import type { KappDescriptor, ProjectConfig } from '../../../src/config/types.js';
import { layerKapp, mergeDescriptors } from '../../../src/vars/layers.js';
import { fromJS, type GoMap } from '../../../src/go-value/value.js';

const vars = (v: Record<string, unknown>): GoMap => fromJS(v) as GoMap;

function project(): ProjectConfig {
  return {
    num_workers: 5,
    programs: new Map<string, KappDescriptor>([
      [
        'progA',
        {
          vars: vars({
            kubeconfig: '{{ .kubeconfig }}',
            release: '{{ .kapp.vars.release | default .kapp.id }}',
            helm: '/path/to/helm',
          }),
          run_units: [
            {
              name: 'proga',
              working_dir: '/tmp',
              env_vars: { user: 'sk' },
              plan_install: [{ name: 'print-hi', command: 'echo', args: 'hi', merge_priority: 5 }],
              apply_install: [{ name: 'do-stuff-second', command: 'x', merge_priority: 30 }],
            },
          ],
        },
      ],
      [
        'prog2',
        {
          vars: vars({ kubeconfig: 'prog2-kubeconfig', region: '{{ .stack.region }}' }),
          run_units: [
            {
              name: 'prog2',
              binaries: ['cat'],
              plan_install: [{ name: 'last-one', command: 'x', merge_priority: 99 }],
              apply_install: [
                { name: 'do-stuff-first', command: 'x', merge_priority: 20, env_vars: { REGION: 'r', COLOUR: 'c' } },
                { name: 'x', command: 'x', merge_priority: 10 },
              ],
            },
          ],
        },
      ],
    ]),
    run_units: {
      name: 'ignored',
      clean: [
        { name: 'find1', command: 'find-stuff1' },
        { name: 'find2', command: 'find-stuff2' },
      ],
    },
  };
}

const kappFile: KappDescriptor = {
  requires: ['prog2', 'proga', 'script'],
  run_units: [
    {
      name: 'proga',
      env_vars: { FOOD: 'carrots' },
      plan_install: [{ name: 'print-yo', command: 'echo', args: '"yo"', merge_priority: 10 }],
    },
    { name: 'script', plan_install: [{ name: 'print-yes', command: 'echo', args: '"yes"', merge_priority: 20 }] },
  ],
};

describe('layering kapp descriptors (Sugarkube TestAddDescriptor)', () => {
  const merged = layerKapp(project(), { kappFile, manifestEntry: { id: 'sample-kapp' } });
  const unit = (name: string) => merged.run_units?.find((u) => u.name === name);

  it('pulls programs in requires order (case-insensitively) and the global unit', () => {
    expect(merged.id).toBe('sample-kapp');
    expect(merged.run_units?.map((u) => u.name)).toEqual(['prog2', 'proga', 'sugarkube_config_file', 'script']);
    expect(unit('sugarkube_config_file')?.clean?.map((s) => s.name)).toEqual(['find1', 'find2']);
  });

  it('merges vars with later programs winning', () => {
    expect(merged.vars?.kubeconfig).toBe('{{ .kubeconfig }}');
    expect(merged.vars?.region).toBe('{{ .stack.region }}');
    expect(merged.vars?.helm).toBe('/path/to/helm');
  });

  it("keeps a program unit's fields, merges env, replaces a phase list the kapp sets and inherits the others", () => {
    const proga = unit('proga');
    expect(proga?.working_dir).toBe('/tmp');
    expect(proga?.env_vars).toEqual({ user: 'sk', FOOD: 'carrots' });
    expect(proga?.plan_install?.map((s) => s.name)).toEqual(['print-yo']);
    expect(proga?.apply_install?.map((s) => s.name)).toEqual(['do-stuff-second']);
    expect(unit('prog2')?.binaries).toEqual(['cat']);
  });

  it('ignore_global_defaults drops programs and the global unit', () => {
    const own = layerKapp(project(), {
      kappFile: { ...kappFile, ignore_global_defaults: true },
      manifestEntry: { id: 'k' },
    });
    expect(own.run_units?.map((u) => u.name)).toEqual(['proga', 'script']);
    expect(own.vars).toBeUndefined();
  });
});

describe('field rules', () => {
  it('lists replace; an explicit empty list clears; absent keeps', () => {
    expect(mergeDescriptors([{ conditions: ['a', 'b'] }, { conditions: ['c'] }]).conditions).toEqual(['c']);
    expect(mergeDescriptors([{ conditions: ['a'] }, { conditions: [] }]).conditions).toEqual([]);
    expect(mergeDescriptors([{ conditions: ['a'] }, {}]).conditions).toEqual(['a']);
  });

  it('an explicit false switches ignore_global_defaults off again', () => {
    expect(
      mergeDescriptors([{ ignore_global_defaults: true }, { ignore_global_defaults: false }]).ignore_global_defaults,
    ).toBe(false);
  });

  it('sources merge options key by key and keep the uri unless a layer sets one (TestManifestOverrides)', () => {
    const merged = layerKapp(
      { num_workers: 5, programs: new Map() },
      {
        manifestEntry: {
          id: 'kappA',
          sources: [
            { id: 'pathA', explicitId: false, uri: 'git@github.com:sugarkube/kapps-A.git//some/pathA#kappA-0.1.0' },
          ],
        },
        stackOverride: { sources: [{ id: 'pathA', explicitId: true, options: vars({ branch: 'stable' }) }] },
      },
    );
    expect(merged.sources).toEqual([
      {
        id: 'pathA',
        explicitId: true,
        uri: 'git@github.com:sugarkube/kapps-A.git//some/pathA#kappA-0.1.0',
        options: vars({ branch: 'stable' }),
      },
    ]);
  });

  it('versions set options.branch of the named source between the manifest entry and the stack defaults', () => {
    const merged = layerKapp(
      { num_workers: 5, programs: new Map() },
      {
        manifestEntry: { id: 'site1', sources: [{ id: 'wordpress', explicitId: false, uri: 'x.git//a/wordpress#v1' }] },
        versions: new Map([['wordpress', 'master']]),
      },
    );
    expect(merged.sources?.[0]?.options?.branch).toBe('master');
  });

  it('outputs keep sensitive unless a higher layer sets it; templates are replaced whole', () => {
    const merged = mergeDescriptors([
      {
        outputs: [{ id: 'o', path: 'a.json', format: 'json', sensitive: true }],
        templates: [{ id: 't', source: 's', dest: 'd', conditions: ['true'] }],
      },
      { outputs: [{ id: 'o', path: 'b.json' }], templates: [{ id: 't', source: 's2', dest: 'd2' }] },
    ]);
    expect(merged.outputs).toEqual([{ id: 'o', path: 'b.json', format: 'json', sensitive: true }]);
    expect(merged.templates).toEqual([{ id: 't', source: 's2', dest: 'd2' }]);
  });

  it('stack overrides beat stack defaults beat the manifest entry beat manifest defaults', () => {
    const merged = layerKapp(
      { num_workers: 5, programs: new Map() },
      {
        kappFile: { vars: vars({ a: 'kappfile', b: 'kappfile', c: 'kappfile', d: 'kappfile', e: 'kappfile' }) },
        manifestDefaults: { vars: vars({ b: 'mdefaults', c: 'mdefaults', d: 'mdefaults', e: 'mdefaults' }) },
        manifestEntry: { id: 'k', vars: vars({ c: 'entry', d: 'entry', e: 'entry' }) },
        stackDefaults: { vars: vars({ d: 'sdefaults', e: 'sdefaults' }) },
        stackOverride: { vars: vars({ e: 'override' }) },
      },
    );
    expect(merged.vars).toEqual(vars({ a: 'kappfile', b: 'mdefaults', c: 'entry', d: 'sdefaults', e: 'override' }));
  });
});

describe('matching and sharing', () => {
  it('matches run unit names case-insensitively across layers, keeping the lowest layer’s name', () => {
    const merged = mergeDescriptors([
      { run_units: [{ name: 'Helm', working_dir: '/w', plan_install: [{ name: 'lint', command: 'helm' }] }] },
      { run_units: [{ name: 'helm', apply_install: [{ name: 'install', command: 'helm' }] }] },
    ]);
    expect(merged.run_units).toEqual([
      {
        name: 'Helm',
        working_dir: '/w',
        plan_install: [{ name: 'lint', command: 'helm' }],
        apply_install: [{ name: 'install', command: 'helm' }],
      },
    ]);
  });

  it('returns the only layer that sets anything as it is', () => {
    const entry: KappDescriptor = { id: 'k', vars: vars({ a: 1 }) };
    expect(mergeDescriptors([{}, entry, undefined, {}])).toBe(entry);
    expect(
      layerKapp(
        { num_workers: 5, programs: new Map() },
        { manifestDefaults: {}, manifestEntry: entry, stackDefaults: {} },
      ),
    ).toBe(entry);
  });
});
