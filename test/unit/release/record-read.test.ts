/**
 * Reading a release record back without the `yaml` package (src/release/record-read.ts): whatever the record writer
 * writes reads back as the `yaml` package reads it; a text in any other form is left to the package.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { data, tricky } from './record-arbitraries.js';
import { parse, stringify } from 'yaml';
import { readRecordYaml } from '../../../src/release/record-read.js';
import { recordYaml } from '../../../src/release/record-yaml.js';

const read = (text: string) => parse(text, { uniqueKeys: true }) as unknown;

describe('readRecordYaml', () => {
  it('reads what the writer writes as the yaml package reads it', () => {
    fc.assert(
      fc.property(data, (value) => {
        const text = recordYaml(value);
        if (typeof value !== 'object' || value === null || Object.keys(value).length === 0) return;
        const got = readRecordYaml(text);
        // Left to the package: integers of 16 digits or more (its rounding), and `__proto__` keys.
        if (got === undefined) expect(text).toMatch(/[0-9]{16}|__proto__/);
        else expect(got).toEqual(read(text));
      }),
      { numRuns: 3000 },
    );
  });

  it('reads every tricky string as a value, a key and a sequence item', () => {
    fc.assert(
      fc.property(tricky, (text) => {
        // __proto__ is the one key the reader leaves to the package.
        if (text === '__proto__') return;
        const value = { [text]: text, list: [text, { [text]: [text] }, [[text, text]]], nested: { deeper: text } };
        const written = recordYaml(value);
        const got = readRecordYaml(written);
        expect(got).toBeDefined();
        expect(got).toEqual(read(written));
      }),
      { numRuns: 3000 },
    );
  });

  it("reads a record's shape", () => {
    const record = {
      project: 'shop',
      revision: 3,
      ratio: 0.25,
      big: 1e21,
      ok: true,
      none: null,
      empty: {},
      nothing: [],
      kapps: [
        { id: 'm:a', args: ['--set', 'a=b', 'yes'], env: { TOKEN: '1_000' }, script: 'line 1\n  two\n\nlast\n' },
        [['x', 'y'], []],
        'text: with colon',
      ],
    };
    const text = recordYaml(record);
    expect(readRecordYaml(text)).toEqual(record);
    // With the comment lines the store writes first.
    expect(readRecordYaml(`# A kapps release record.\n#\n${text}`)).toEqual(record);
  });

  it('leaves any other text to the yaml package', () => {
    for (const text of [
      '',
      'a: 1',
      'a: 1\n# a comment\n',
      'a: 1 # a comment\n',
      'a: &x 1\nb: *x\n',
      'a: {b: 1}\n',
      'a: [1, 2]\n',
      'a: 1\na: 2\n',
      '---\na: 1\n',
      'a: yes\n',
      'a: 0x1f\n',
      'a: 12345678901234567890\n',
      "a: 'quoted'\n",
      'a:\n- 1\n',
      'a:\n    b: 1\n',
      'a: 1\n\nb: 2\n',
      'a: >\n  folded\n',
      'a: |+\n  kept\n\n',
      'a: "\\x41"\n',
      '__proto__: 1\n',
      '<<: {a: 1}\n',
      'a: 1\r\n',
    ]) {
      expect(readRecordYaml(text), JSON.stringify(text)).toBeUndefined();
    }
  });

  it("reads the yaml package's own output as the package does, or leaves it", () => {
    fc.assert(
      fc.property(data, (value) => {
        const text = stringify(value);
        const got = readRecordYaml(text);
        if (got !== undefined) expect(got).toEqual(read(text));
      }),
      { numRuns: 2000 },
    );
  });
});
