import { describe, expect, it } from 'vitest';
import { mergeAll, mergeMaps } from '../../../src/vars/merge.js';
import { fromJS, type GoMap } from '../../../src/go-value/value.js';

const m = (v: unknown): GoMap => fromJS(v) as GoMap;

// Sugarkube's internal/pkg/vars/merge_test.go, restated.
const top = m({
  topString: 'hello',
  topBool: true,
  topInt: 999,
  topFloat: 3.14,
  topIntOvr: 5,
  sub1: {
    subString: 'subhello1',
    subBool: true,
    subInt: 777,
    subFloat: 6.22,
    subStringOvr: 'subhello2',
    subBoolOvr: true,
    subIntOvr: 777,
    subFloatOvr: 6.22,
  },
});
const sub1 = m({
  topIntOvr: 0,
  subString: 'subStr',
  subBool: false,
  subInt: 11,
  subFloat: 1.11,
  sub1: { subStringOvr: 'subgoodbye', subBoolOvr: false, subIntOvr: 444, subFloatOvr: 3.33 },
});
const sub2 = m({ topIntOvr: 8, sub1: { subBool: false }, sub2Int: 10 });

describe('mergeMaps (Sugarkube merge rules)', () => {
  it('no_merge: a single map is itself', () => {
    expect(mergeAll([top])).toEqual(top);
  });

  it('check_overriding: zero values override, sub-maps merge key by key', () => {
    const r = mergeAll([top, sub1]);
    expect(r.topIntOvr).toBe(0n);
    expect(r.subString).toBe('subStr');
    expect(r.subBool).toBe(false);
    expect(r.sub1).toEqual(
      m({
        subString: 'subhello1',
        subBool: true,
        subInt: 777,
        subFloat: 6.22,
        subStringOvr: 'subgoodbye',
        subBoolOvr: false,
        subIntOvr: 444,
        subFloatOvr: 3.33,
      }),
    );
  });

  it('check_overriding_two: a third layer wins again', () => {
    const r = mergeAll([top, sub1, sub2]);
    expect(r.topIntOvr).toBe(8n);
    expect((r.sub1 as GoMap).subBool).toBe(false);
    expect(r.sub2Int).toBe(10n);
    expect((r.sub1 as GoMap).subStringOvr).toBe('subgoodbye');
  });

  it('lists replace rather than append', () => {
    expect(mergeMaps(m({ list1: [10, 20, 30], animal: 'cat' }), m({ list1: [60, 40] }))).toEqual(
      m({ list1: [60, 40], animal: 'cat' }),
    );
  });

  it('a null in the higher map keeps the lower value; a map below a non-empty scalar is ignored', () => {
    expect(mergeMaps(m({ a: 1, b: 'x', c: '' }), m({ a: null, b: { k: 1 }, c: { k: 2 } }))).toEqual(
      m({ a: 1, b: 'x', c: { k: 2 } }),
    );
  });

  it('does not modify its inputs', () => {
    const lower = m({ a: { b: 1 } });
    mergeMaps(lower, m({ a: { c: 2 } }));
    expect(lower).toEqual(m({ a: { b: 1 } }));
  });
});
