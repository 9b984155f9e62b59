import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { kappVarNames, providerVarNames, VarFileWalker } from '../../../src/vars/var-files.js';

const fixtures = fileURLToPath(new URL('../../fixtures/vars/', import.meta.url));
const rel = (files: string[]): string[] => files.map((f) => path.relative(fixtures, f));

describe('precedence walk (Sugarkube TestPrecedenceWalk)', () => {
  const names = [
    'values',
    'aws',
    'test-account',
    'test-profile',
    'test-cluster',
    'region1',
    'accounts',
    'profiles',
    'clusters',
  ];

  it('visits files before directories, in name order, depth first, .yaml only', () => {
    expect(rel(new VarFileWalker().walk(path.join(fixtures, 'providers'), names))).toEqual([
      'providers/values.yaml',
      'providers/region1.yaml',
      'providers/aws/accounts/test-account/values.yaml',
      'providers/aws/accounts/test-account/region1.yaml',
      'providers/aws/accounts/test-account/profiles/test-profile/clusters/test-cluster/values.yaml',
      'providers/aws/accounts/test-account/profiles/test-profile/clusters/test-cluster/region1/values.yaml',
      'providers/test-account/region1.yaml',
      'providers/test-account/test-cluster/values.yaml',
      'providers/region1/values.yaml',
      'providers/region1/test-cluster.yaml',
    ]);
  });

  it('gives the same result when names repeat (TestPrecedenceWalkDedupe)', () => {
    const repeated = [...names.slice(0, 4), 'test-profile', 'test-profile', ...names.slice(4)];
    expect(new VarFileWalker().walk(path.join(fixtures, 'providers'), repeated)).toEqual(
      new VarFileWalker().walk(path.join(fixtures, 'providers'), names),
    );
  });

  it('finds kapp vars files in the order of the kapp-vars names (TestGetKappVarsFromFiles)', () => {
    const stack = {
      name: 'large',
      provider: 'test-provider',
      provisioner: 'test-provisioner',
      account: 'test-account',
      region: 'test-region1',
      profile: 'test-profile',
      cluster: 'test-cluster',
    };
    const names = kappVarNames('kappA', stack, []);
    const walker = new VarFileWalker();
    const dirs = ['sample-kapp-vars', 'sample-kapp-vars/kapp-vars', 'sample-kapp-vars/kapp-vars2'];
    const files = dirs.flatMap((d) => walker.walk(path.join(fixtures, d), names));
    expect(rel(files)).toEqual([
      'sample-kapp-vars/kapp-vars/test-provider/test-provisioner/test-profile.yaml',
      'sample-kapp-vars/kapp-vars/test-provider/test-provisioner/test-account/values.yaml',
      'sample-kapp-vars/kapp-vars/test-provider/test-provisioner/test-account/test-region1/kappA.yaml',
      'sample-kapp-vars/kapp-vars/test-provider/test-provisioner/test-account/test-region1/values.yaml',
      'sample-kapp-vars/kapp-vars2/kappA.yaml',
    ]);
  });

  it('builds provider names with accounts only for aws', () => {
    const base = { provisioner: 'p', account: 'a', profile: 'pr', cluster: 'c', region: 'r' };
    expect(providerVarNames({ ...base, provider: 'aws' })).toContain('accounts');
    expect(providerVarNames({ ...base, provider: 'local' })).not.toContain('accounts');
  });
});
