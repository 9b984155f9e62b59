/**
 * The release record writer: whatever JSON data it is given reads back equal with the `yaml` package, as YAML 1.2
 * and as YAML 1.1, and it lays records out the way the `yaml` package would (block style, literal blocks).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { data, tricky } from './record-arbitraries.js';
import { parse, stringify } from 'yaml';
import { recordYaml, recordYamlEntry } from '../../../src/release/record-yaml.js';

const read = (text: string, version: '1.1' | '1.2') => parse(text, { version, uniqueKeys: true }) as unknown;

/** JSON data as a record holds it: no -0 (JSON has none) and no `__proto__` keys (no reader keeps them as data). */
const normalise = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

describe('recordYaml', () => {
  it('writes data that reads back equal, as YAML 1.2 and as YAML 1.1', () => {
    fc.assert(
      fc.property(data, (value) => {
        const expected = normalise(value);
        const text = recordYaml(value);
        expect(read(text, '1.2')).toEqual(expected);
        expect(read(text, '1.1')).toEqual(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('reads back equal for every tricky string as a value, a key and a sequence item', () => {
    fc.assert(
      fc.property(tricky, (text) => {
        const value = { [text]: text, list: [text, { [text]: [text] }], nested: { deeper: text } };
        const written = recordYaml(value);
        expect(read(written, '1.2')).toEqual(normalise(value));
        expect(read(written, '1.1')).toEqual(normalise(value));
      }),
      { numRuns: 3000 },
    );
  });

  it('lays out a record as the yaml package does', () => {
    const record = {
      project: 'shop',
      revision: 3,
      ok: true,
      none: null,
      ratio: 0.25,
      command: ['/usr/bin/kapps', 'install', '-y', 'stacks.yaml', 'dev', '--workers', '8'],
      selectors: { include: [], exclude: ['web:api'] },
      state: {
        'web:db': {
          status: 'installed',
          outputs: {},
          steps: [{ phase: 'apply_install', name: 'run', exitCode: 0, timedOut: false }],
        },
      },
      matrix: [['a', 'b'], [], [{ x: 1 }]],
      notes: 'line one\nline two\n',
      tail: 'no newline\nat the end',
    };
    expect(recordYaml(record)).toBe(stringify(record, { lineWidth: 0 }));
  });

  it('quotes what would read as something else, and leaves plain what cannot', () => {
    expect(recordYaml({ a: 'yes', b: '1.2.3', c: '--workers', d: 'web:api', e: 'a: b', f: '~', g: 'on' })).toBe(
      'a: "yes"\nb: "1.2.3"\nc: --workers\nd: web:api\ne: "a: b"\nf: "~"\ng: "on"\n',
    );
    expect(recordYaml({ weird: 'a\u0085b\u2028c\u007f', lead: ' x\ny' })).toBe(
      'weird: "a\\u0085b\\u2028c\\u007f"\nlead: " x\\ny"\n',
    );
  });

  it('writes scalars and empty collections as one-line documents', () => {
    expect(recordYaml('multi\nline')).toBe('"multi\\nline"\n');
    expect(recordYaml(7)).toBe('7\n');
    expect(recordYaml({})).toBe('{}\n');
    expect(recordYaml([])).toBe('[]\n');
  });

  it('writes one entry indented as the entry written alone and then indented', () => {
    fc.assert(
      fc.property(fc.string(), data, (key, value) => {
        const alone = recordYaml({ [key]: value }).replace(/^(?=.)/gm, '    ');
        expect(recordYamlEntry(key, value, '    ')).toBe(alone);
      }),
      { numRuns: 2000 },
    );
    expect(recordYamlEntry('web:db', { notes: 'one\n\nthree\n', steps: [] }, '  ')).toBe(
      '  web:db:\n    notes: |\n      one\n\n      three\n    steps: []\n',
    );
  });
});
