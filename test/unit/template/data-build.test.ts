import { describe, expect, it } from 'vitest';
import { mergeGoData, setGoPath } from '../../../src/template/data-build.js';
import { formatValue, sprintf } from '../../../src/template/fmt.js';
import { GoIfaceMap, newGoMap } from '../../../src/go-value/value.js';

describe('mergeGoData', () => {
  it('merges maps deeply, later values win and lists replace', () => {
    const base = newGoMap([
      [
        'stack',
        new GoIfaceMap([
          ['name', 'dev'],
          ['region', 'eu'],
        ]),
      ],
      ['list', [1n, 2n]],
      ['keep', true],
    ]);
    const over = newGoMap([
      ['stack', new GoIfaceMap([['name', 'prod']])],
      ['list', [9n]],
    ]);
    expect(formatValue(mergeGoData(base, over))).toBe('map[keep:true list:[9] stack:map[name:prod region:eu]]');
  });

  it('replaces a scalar by a map and a map by a scalar', () => {
    const merged = mergeGoData(
      newGoMap([
        ['a', 1n],
        ['b', newGoMap([['x', 1n]])],
      ]),
      newGoMap([
        ['a', newGoMap([['y', 2n]])],
        ['b', 'flat'],
      ]),
    );
    expect(formatValue(merged)).toBe('map[a:map[y:2] b:flat]');
  });
});

describe('setGoPath', () => {
  it('creates nested iface maps along a dotted path and overwrites scalars on the way', () => {
    const data = newGoMap([['kapp', 'scalar']]);
    setGoPath(data, ['kapp', 'vars', 'replicas'], 3n);
    setGoPath(data, ['kapp', 'vars', 'name'], 'web');
    setGoPath(data, ['top'], true);
    expect(formatValue(data)).toBe('map[kapp:map[vars:map[name:web replicas:3]] top:true]');
    expect(sprintf('%T', [data.kapp ?? null])).toBe('map[interface {}]interface {}');
  });
});
