import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseYamlTree, parseYamlValue, yamlToGoValue } from '../../../src/yaml/read.js';
import { locationOf } from '../../../src/config/locations.js';
import { linkedSites } from '../../../src/yaml/node-links.js';
import { ConfigError } from '../../../src/diagnostics/errors.js';
import { formatDiagnostics } from '../../../src/report/diagnostic-printer.js';
import { GoIfaceMap, type GoMap, type GoValue } from '../../../src/go-value/value.js';
import { goTV } from '../config/go-print.js';

interface OracleCase {
  yaml: string;
  go?: string;
  error?: string;
}
const oracle = JSON.parse(
  readFileSync(new URL('../../fixtures/config/yaml-oracle.json', import.meta.url), 'utf8'),
) as OracleCase[];

/** Cases the oracle decodes non-strictly (a later duplicate key wins); kapps rejects duplicate keys. */
const STRICT_DUPLICATES = new Set(['x: {y: 1, Y: 2}']);

/** The diagnostics of a ConfigError thrown by `fn`, printed as the CLI prints them. */
function printed(fn: () => unknown, text: string): string {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    return formatDiagnostics(e.diagnostics, { cwd: '/', readSource: () => text });
  }
  throw new Error('expected a ConfigError');
}

describe('parseYamlValue agrees with Go yaml.v2 2.4.0', () => {
  for (const c of oracle) {
    it(`decodes ${JSON.stringify(c.yaml)}`, () => {
      if (c.error !== undefined || STRICT_DUPLICATES.has(c.yaml)) {
        expect(() => parseYamlValue(c.yaml, { goMaps: true })).toThrow(ConfigError);
        return;
      }
      const x = (parseYamlValue(c.yaml, { goMaps: true }) as GoMap).x ?? null;
      expect(goTV(x)).toBe(c.go);
    });
  }
});

describe('map shapes', () => {
  it('keeps top-level key text and types nested keys with goMaps', () => {
    const v = parseYamlValue('y: 1\n1: a\nm: {y: 1, 2: b, 1.5: c, ~: d, 0x10: e}\n', { goMaps: true }) as GoMap;
    expect(Object.keys(v).sort()).toEqual(['1', 'm', 'y']);
    const m = v.m;
    expect(m).toBeInstanceOf(GoIfaceMap);
    expect([...(m as GoIfaceMap).keys()]).toEqual([true, 2n, 1.5, null, 16n]);
  });

  it('stringifies nested keys as %v prints them without goMaps', () => {
    const v = parseYamlValue('y: 1\nm: {y: 1, 2: b, 1.5: c, ~: d, 1e6: e, n: {off: f}}\n') as GoMap;
    expect(Object.getPrototypeOf(v)).toBeNull();
    expect(Object.keys(v).sort()).toEqual(['m', 'y']);
    const m = v.m as GoMap;
    expect(Object.getPrototypeOf(m)).toBeNull();
    expect(Object.keys(m).sort()).toEqual(['1.5', '1e+06', '2', '<nil>', 'false', 'true']);
    expect(m.false).toEqual({ false: 'f' });
  });

  it('decodes an empty document as an empty map', () => {
    expect(parseYamlValue('')).toEqual({});
    expect(parseYamlValue('# only a comment\n', { goMaps: true })).toEqual({});
    expect(parseYamlValue('~', { goMaps: true })).toEqual({});
  });

  it('returns any top-level value without goMaps', () => {
    expect(parseYamlValue('- 1\n- two\n')).toEqual([1n, 'two']);
    expect(parseYamlValue('0x10')).toBe(16n);
  });

  it('rejects a top-level list with goMaps', () => {
    const text = '- a\n';
    expect(printed(() => parseYamlValue(text, { goMaps: true, file: 'vars.yaml' }), text)).toBe(
      ['vars.yaml:1:1: error: expected a map at the top of the document, got a list', '  |', '1 | - a', '  | ^^^'].join(
        '\n',
      ),
    );
  });

  it('builds fresh objects for every alias', () => {
    const v = parseYamlValue('base: &b {list: [1]}\none: *b\ntwo: *b\n') as GoMap;
    const one = v.one as GoMap;
    const two = v.two as GoMap;
    expect(one).toEqual(two);
    expect(one).not.toBe(two);
    expect(one.list).not.toBe(two.list);
  });
});

describe('merge keys', () => {
  it('lets keys written after `<<` override merged ones', () => {
    const text = 'defaults: &d\n  provider: local\n  region: r1\nstack:\n  <<: *d\n  region: r2\n';
    expect(parseYamlValue(text)).toEqual({
      defaults: { provider: 'local', region: 'r1' },
      stack: { provider: 'local', region: 'r2' },
    });
  });

  it('lets a later merge override keys written before it, as yaml.v2 does', () => {
    expect(parseYamlValue('m: {a: 1, <<: {a: 2}}')).toEqual({ m: { a: 2n } });
  });

  it('gives earlier maps of a merge list precedence', () => {
    expect(parseYamlValue('a: &a {x: 1}\nb: &b {x: 2, z: 2}\nm:\n  <<: [*a, *b]\n')).toEqual({
      a: { x: 1n },
      b: { x: 2n, z: 2n },
      m: { x: 1n, z: 2n },
    });
  });

  it('keeps entry order of first appearance', () => {
    const tree = parseYamlTree('d: &d {a: 1, b: 2}\nm:\n  c: 0\n  <<: *d\n  a: 3\n');
    const m = tree?.kind === 'map' ? tree.entries[1]?.value : undefined;
    expect(m?.kind === 'map' ? m.entries.map((e) => [e.key.text, e.merged]) : []).toEqual([
      ['c', false],
      ['a', false],
      ['b', true],
    ]);
  });

  it('rejects a merge of a scalar', () => {
    const text = 'm:\n  <<: 5\n';
    expect(printed(() => parseYamlValue(text, { file: 'x.yaml' }), text)).toBe(
      [
        'x.yaml:2:7: error: a `<<` merge key needs a map or a list of maps as its value',
        '  |',
        '2 |   <<: 5',
        '  |       ^',
      ].join('\n'),
    );
  });
});

describe('errors', () => {
  it('reports duplicate keys with both locations', () => {
    const text = 'a: 1\nb:\n  c: 1\n  c: 2\na: 3\n';
    expect(printed(() => parseYamlValue(text, { file: '/p/s.yaml' }), text)).toBe(
      [
        'p/s.yaml:4:3: error: duplicate key `c`',
        '  |',
        '4 |   c: 2',
        '  |   ^',
        '  p/s.yaml:3:3: first defined here',
        '',
        'p/s.yaml:5:1: error: duplicate key `a`',
        '  |',
        '5 | a: 3',
        '  | ^',
        '  p/s.yaml:1:1: first defined here',
      ].join('\n'),
    );
  });

  it('treats nested keys that resolve to the same value as duplicates', () => {
    const text = 'm:\n  y: 1\n  yes: 2\n';
    expect(printed(() => parseYamlValue(text, { file: 'f.yaml' }), text)).toContain(
      'f.yaml:3:3: error: duplicate key `yes`',
    );
    expect(parseYamlValue('y: 1\nyes: 2\n')).toEqual({ y: 1n, yes: 2n });
  });

  it('reports syntax errors at their position', () => {
    const text = 'a: 1\nb: c: d\n';
    expect(printed(() => parseYamlValue(text, { file: 'bad.yaml' }), text)).toBe(
      [
        'bad.yaml:2:4: error: invalid YAML: Nested mappings are not allowed in compact mappings',
        '  |',
        '2 | b: c: d',
        '  |    ^',
      ].join('\n'),
    );
  });

  it('reports unknown and self-referencing anchors', () => {
    const text = 'a: *nope\nb: &x [*x]\n';
    expect(printed(() => parseYamlValue(text, { file: 'f.yaml' }), text)).toBe(
      [
        'f.yaml:1:4: error: unknown anchor `nope` referenced',
        '  |',
        '1 | a: *nope',
        '  |    ^^^^^',
        '',
        'f.yaml:2:8: error: anchor `x` value contains itself',
        '  |',
        '2 | b: &x [*x]',
        '  |        ^^',
      ].join('\n'),
    );
  });

  it('explains unquoted templates that YAML reads as maps', () => {
    const text = 'a: {{ .kapp.id }}\n';
    expect(printed(() => parseYamlValue(text, { file: 'f.yaml' }), text)).toBe(
      [
        'f.yaml:1:5: error: a map key must be a scalar',
        '  |',
        '1 | a: {{ .kapp.id }}',
        '  |     ^^^^^^^^^^^^^',
        '  hint: a value starting with `{` or `[` is a map or list; quote it, e.g. "{{ .kapp.id }}"',
      ].join('\n'),
    );
  });

  it('rejects explicit tags that do not fit', () => {
    const text = 'a: !!int abc\n';
    expect(printed(() => parseYamlValue(text, { file: 'f.yaml' }), text)).toBe(
      ['f.yaml:1:10: error: cannot decode !!str `abc` as a !!int', '  |', '1 | a: !!int abc', '  |          ^^^'].join(
        '\n',
      ),
    );
  });

  it('rejects alias expansion bombs', () => {
    let text = 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n';
    for (let i = 1; i < 8; i++) {
      const prev = `*a${i - 1}`;
      text += `a${i}: &a${i} [${Array.from({ length: 10 }, () => prev).join(', ')}]\n`;
    }
    expect(() => parseYamlValue(text)).toThrow(/excessive aliasing/);
  });

  it('reads only the first document of a stream', () => {
    expect(parseYamlValue('a: 1\n---\nb: [\n')).toEqual({ a: 1n });
  });
});

describe('located tree', () => {
  it('records 1-based start and end positions of every node', () => {
    const tree = parseYamlTree('kapps:\n  - id: web\n    vars: {size: 3}\n', { file: 'm.yaml' });
    expect(tree?.kind).toBe('map');
    if (tree?.kind !== 'map') throw new Error(`expected a map, got ${tree?.kind}`);
    const kapps = tree.entries[0]?.value;
    expect(kapps?.loc).toMatchObject({ file: 'm.yaml', line: 2, column: 3 });
    expect(kapps?.kind).toBe('seq');
    if (kapps?.kind !== 'seq') throw new Error(`expected a sequence, got ${kapps?.kind}`);
    const kapp = kapps.items[0];
    if (kapp?.kind !== 'map') throw new Error('expected a map');
    const id = kapp.entries[0];
    expect(id?.key.loc).toEqual({ file: 'm.yaml', line: 2, column: 5, endLine: 2, endColumn: 7 });
    expect(id?.value.loc).toEqual({ file: 'm.yaml', line: 2, column: 9, endLine: 2, endColumn: 12 });
    const size = kapp.entries[1]?.value;
    expect(size?.kind === 'map' ? size.entries[0]?.value.loc : undefined).toEqual({
      file: 'm.yaml',
      line: 3,
      column: 18,
      endLine: 3,
      endColumn: 19,
    });
  });

  it('keeps the source text of scalars next to their value', () => {
    const tree = parseYamlTree('a: [yes, 0x10, 1.50, "q", ~]\n');
    const list = tree?.kind === 'map' ? tree.entries[0]?.value : undefined;
    expect(list?.kind === 'seq' ? list.items.map((n) => (n.kind === 'scalar' ? [n.text, n.value] : [])) : []).toEqual([
      ['yes', true],
      ['0x10', 16n],
      ['1.50', 1.5],
      ['q', 'q'],
      ['~', null],
    ]);
  });

  it('records locations of converted maps and lists on request', () => {
    const tree = parseYamlTree('vars:\n  a: [1, 2]\n  b: x\n', { file: 'v.yaml' });
    if (!tree) throw new Error('empty');
    const v = yamlToGoValue(tree, { top: true, locations: true }) as GoMap;
    const vars = v.vars as GoMap;
    expect(locationOf(vars, 'b')).toMatchObject({ line: 3, column: 6 });
    expect(locationOf(vars.a as GoValue[], 1)).toMatchObject({ line: 2, column: 10 });
    expect(locationOf(vars)).toMatchObject({ line: 2, column: 3 });
  });

  it('finds each field of a converted map by key text, by the printed key, by index and after a merge', () => {
    const text =
      'base: &b {port: 80}\nm:\n  <<: *b\n  1: one\n  yes: two\n  name: "a\n    b"\n  port: 81\n  list: [x, y]\n';
    const tree = parseYamlTree(text, { file: 'm.yaml' });
    if (!tree) throw new Error('empty');
    const m = (yamlToGoValue(tree, { top: true, locations: true }) as GoMap).m as GoMap;
    // The entry written in `m` wins over the merged one; a scalar's location is its whole range.
    expect(locationOf(m, 'port')).toEqual({ file: 'm.yaml', line: 8, column: 9, endLine: 8, endColumn: 11 });
    expect(locationOf(m, 'name')).toEqual({ file: 'm.yaml', line: 6, column: 9, endLine: 7, endColumn: 7 });
    // Keys that are not strings are found as Go prints them.
    expect(locationOf(m, '1')).toMatchObject({ line: 4, column: 6 });
    expect(locationOf(m, 'true')).toMatchObject({ line: 5, column: 8 });
    // A mapping or a sequence is a point: where it starts.
    expect(locationOf(m, 'list')).toEqual({ file: 'm.yaml', line: 9, column: 9 });
    expect(locationOf(m.list as GoValue[], 1)).toMatchObject({ line: 9, column: 13 });
    // Nothing there: the object's own location.
    expect(locationOf(m, 'missing')).toEqual(locationOf(m));
    expect(locationOf(m.list as GoValue[], 5)).toEqual({ file: 'm.yaml', line: 9, column: 9 });
  });

  it('keeps offsets for a link, not the node: the tree is not held by what was read from it', () => {
    const tree = parseYamlTree('m:\n  a: {b: [1, 2]}\n  c: [x]\n', { file: 'm.yaml' });
    if (!tree) throw new Error('empty');
    const m = (yamlToGoValue(tree, { top: true, locations: true }) as GoMap).m as GoMap;
    const isNode = (v: unknown): boolean =>
      typeof v === 'object' && v !== null && !Array.isArray(v) && ('kind' in v || 'items' in v || 'value' in v);
    for (const obj of [m, m.a as GoMap, (m.a as GoMap).b as GoValue[], m.c as GoValue[]]) {
      const sites = linkedSites(obj);
      expect(sites).toHaveLength(1);
      for (const site of sites) {
        for (const v of Object.values(site)) {
          expect(isNode(v)).toBe(false);
          if (Array.isArray(v)) expect(v.every((x) => typeof x === 'string' || typeof x === 'number')).toBe(true);
        }
      }
    }
  });
});
