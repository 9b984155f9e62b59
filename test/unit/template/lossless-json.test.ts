import { describe, expect, it } from 'vitest';
import { formatValue, sprintf } from '../../../src/template/fmt.js';
import { JsonSyntaxError, parseLosslessJson } from '../../../src/template/lossless-json.js';
import type { GoValue } from '../../../src/go-value/value.js';

describe('parseLosslessJson', () => {
  it('keeps int and float typing of number literals', () => {
    const v = parseLosslessJson(
      '{"i": 1, "f": 1.0, "e": 1e3, "neg": -7, "big": 9007199254740993, "u": 18446744073709551615, "huge": 18446744073709551616}',
    );
    expect(
      sprintf(
        '%T %T %T %T %T %T %T',
        ['i', 'f', 'e', 'neg', 'big', 'u', 'huge'].map((k) => (v as Record<string, GoValue>)[k] ?? null),
      ),
    ).toBe('int float64 float64 int int uint64 float64');
    expect(formatValue(v)).toBe(
      'map[big:9007199254740993 e:1000 f:1 huge:1.8446744073709552e+19 i:1 neg:-7 u:18446744073709551615]',
    );
  });

  it('reads strings with escapes, nested lists and maps, null and booleans', () => {
    const v = parseLosslessJson('[ "a\\"b\\u00e9\\n", [true, false, null], {"k": {"z": []}} ]');
    expect(formatValue(v)).toBe('[a"bé\n [true false <nil>] map[k:map[z:[]]]]');
  });

  it('builds maps without a prototype', () => {
    const v = parseLosslessJson('{"__proto__": 1, "constructor": 2}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBeNull();
    expect(Object.keys(v)).toEqual(['__proto__', 'constructor']);
  });

  it.each(['{', '[1,]', '{"a" 1}', '01', '"\\x"', '1 2', ''])('rejects %j', (text) => {
    expect(() => parseLosslessJson(text)).toThrow(JsonSyntaxError);
  });
});
