import { describe, expect, it } from 'vitest';
import { fromJS, type GoMap } from '../../../src/go-value/value.js';
import { entriesForChild, outputsView, withPlaceholders } from '../../../src/vars/outputs.js';

const m = (v: unknown): GoMap => fromJS(v) as GoMap;

describe('outputsView', () => {
  const cert = outputsView(
    { manifestId: 'boot-strap', kappId: 'cert-manager', values: m({ issuer: { kind: 'CA' } }) },
    [],
  );

  it('gives a kapp its own outputs as this, its short id and its fully-qualified id (hyphens as underscores)', () => {
    expect(Object.keys(cert).sort()).toEqual(['boot_strap__cert_manager', 'cert_manager', 'this']);
    expect(cert.this).toEqual(m({ issuer: { kind: 'CA' } }));
  });

  it('passes short ids down within a manifest only, fully-qualified ids everywhere, this never', () => {
    const same = outputsView({ manifestId: 'boot-strap', kappId: 'nginx' }, [{ manifestId: 'boot-strap', view: cert }]);
    expect(Object.keys(same).sort()).toEqual(['boot_strap__cert_manager', 'cert_manager']);
    const other = outputsView({ manifestId: 'web', kappId: 'site' }, [{ manifestId: 'boot-strap', view: cert }]);
    expect(Object.keys(other)).toEqual(['boot_strap__cert_manager']);
  });

  it('adds nothing for a kapp without outputs, so views grow only with the kapps that have some', () => {
    expect(Object.keys(outputsView({ manifestId: 'm', kappId: 'k', values: m({}) }, []))).toEqual([]);
    expect(Object.keys(outputsView({ manifestId: 'm', kappId: 'k' }, []))).toEqual([]);
  });

  it('entriesForChild and withPlaceholders', () => {
    expect(Object.keys(entriesForChild(cert, 'boot-strap', 'x'))).toEqual(['boot_strap__cert_manager']);
    expect(withPlaceholders(m({ a_b: null, c: 1 }), ['a-b', 'd'])).toEqual(m({ a_b: {}, d: {}, c: 1 }));
  });
});
