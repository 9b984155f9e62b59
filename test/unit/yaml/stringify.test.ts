/**
 * `stringifyData` writes plain data itself where it can: its text must be, byte for byte, what the `yaml` package
 * writes with `lineWidth: 0` (what `kapps generate` printed before), for any data, the kinds it writes directly and
 * the kinds it leaves to the package alike.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { stringifyData } from '../../../src/yaml/stringify.js';

const library = (value: unknown): string => stringify(value, { lineWidth: 0 });

/** Texts near every rule of a plain scalar: indicators, `: `, ` #`, numbers, booleans, nulls, quotes, markers. */
const TRICKY = [
  '',
  ' ',
  'a',
  'a b',
  '-',
  '-x',
  '- x',
  '?',
  '?x',
  ':',
  ':x',
  'x:',
  'a: b',
  'a:b',
  'a#b',
  'a #b',
  '#a',
  '1',
  '-1',
  '+1',
  '0o7',
  '0x1F',
  '1.5',
  '.5',
  '1e3',
  '.inf',
  '-.Inf',
  '.nan',
  'true',
  'True',
  'FALSE',
  'yes',
  'no',
  'on',
  'null',
  'Null',
  '~',
  'y',
  "a'b",
  'say "hi"',
  `it's "x"`,
  'back\\slash',
  '---',
  '--- a',
  '...',
  '%x',
  '@x',
  '`x',
  '[a]',
  '{a}',
  'a,b',
  '*a',
  '&a',
  '!a',
  '|',
  '>',
  'a\tb',
  'a\nb',
  'a\n',
  'é',
  'x '.repeat(3),
  'k'.repeat(101),
  '/work/dir/sub',
  'terraform init -input=false',
  'infra:site-config',
];

const text = fc.oneof(
  fc.constantFrom(...TRICKY),
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'grapheme', maxLength: 4 }),
);
const scalar = fc.oneof(
  text,
  fc.integer(),
  fc.constantFrom(0, -0, 1.5, Number.MAX_SAFE_INTEGER + 2, Number.NaN, Infinity),
  fc.boolean(),
  fc.constant(null),
);
const { data } = fc.letrec((tie) => ({
  data: fc.oneof({ depthSize: 'small' }, scalar, tie('list'), tie('map')),
  list: fc.array(tie('data'), { maxLength: 4 }),
  map: fc.dictionary(text, tie('data'), { maxKeys: 4 }),
}));

describe('stringifyData', () => {
  it('writes what the yaml package writes, for any data', () => {
    fc.assert(
      fc.property(data, (value) => {
        expect(stringifyData(value)).toBe(library(value));
      }),
      { numRuns: 3000 },
    );
  });

  it.each(TRICKY.map((t) => [JSON.stringify(t), t]))('writes the text %s as the package does', (_name, t) => {
    for (const value of [{ [t]: t }, [t], { k: [t, { [t]: [t] }] }]) expect(stringifyData(value)).toBe(library(value));
  });

  it('writes lists in lists, maps in lists, empty collections and nulls as the package does', () => {
    const values: unknown[] = [
      [],
      {},
      { a: [], b: {} },
      [[1, 2], [3], []],
      [[{ a: 1, b: 2 }]],
      { k: [{ a: [{ b: 1 }], c: null }] },
      { stack: 'local', kapps: [{ id: 'web:site', dependsOn: ['infra:site-config'], selected: true }] },
      Object.assign(Object.create(null) as object, { a: 1 }),
    ];
    for (const v of values) expect(stringifyData(v)).toBe(library(v));
  });

  it('leaves to the package what it would write another way: an object met twice, a date, undefined', () => {
    const shared = { a: 1 };
    const values: unknown[] = [
      { x: shared, y: shared },
      [shared, shared],
      { when: new Date(0) },
      { a: undefined, b: 1 },
      [undefined],
      { n: 10n },
      'just a text',
      42,
    ];
    for (const v of values) expect(stringifyData(v)).toBe(library(v));
    expect(stringifyData({ x: shared, y: shared })).toContain('&a1');
  });
});
