/** Go's fmt for Go values; expected texts were produced by Go 1.19's fmt. */
import { describe, expect, it } from 'vitest';
import { formatFloat, formatValue, quoteGo, sprint, sprintf, sprintln } from '../../../src/template/fmt.js';
import type { GoValue } from '../../../src/go-value/value.js';
import { GoIfaceMap, GoOpaque, newGoMap, tagType } from '../../../src/go-value/value.js';

describe('formatValue (%v)', () => {
  it('prints scalars as Go does', () => {
    expect(formatValue('raw "text"')).toBe('raw "text"');
    expect(formatValue(9007199254740993n)).toBe('9007199254740993');
    expect(formatValue(true)).toBe('true');
    expect(formatValue(null)).toBe('<nil>');
  });

  it.each([
    [1.0, '1'],
    [-0, '-0'],
    [100000.5, '100000.5'],
    [1e6, '1e+06'],
    [1234567.5, '1.2345675e+06'],
    [1e21, '1e+21'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
    [NaN, 'NaN'],
  ])('prints float %s as %s', (f, want) => {
    expect(formatValue(f)).toBe(want);
  });

  it('prints lists and maps with sorted keys and <nil> inside', () => {
    const m = newGoMap([
      ['b', 2n],
      ['a', [1n, 'x', null, 2.5]],
      ['10', newGoMap()],
      ['9', null],
    ]);
    expect(formatValue(m)).toBe('map[10:map[] 9:<nil> a:[1 x <nil> 2.5] b:2]');
    expect(formatValue([])).toBe('[]');
  });

  it('sorts iface-map keys by type, then value (ints numerically)', () => {
    const m = new GoIfaceMap([
      [10n, 'ten'],
      [9n, 'nine'],
      ['a', 1n],
      [true, 't'],
      [false, 'f'],
    ]);
    expect(formatValue(m)).toBe('map[false:f true:t 9:nine 10:ten a:1]');
  });

  it('prints opaque values with their display text', () => {
    const v = new GoOpaque('*semver.Version', { Major: () => 1n }, () => '1.2.3');
    expect(formatValue([v])).toBe('[1.2.3]');
    expect(sprintf('%s|%v|%T|%q', [v, v, v, v])).toBe('1.2.3|1.2.3|*semver.Version|"1.2.3"');
  });
});

describe('sprintf', () => {
  const cases: [string, GoValue[], string][] = [
    ['%s|%10s|%-10s|%.2s', ['world', 'world', 'world', 'world'], 'world|     world|world     |wo'],
    [
      '%d|%05d|%+d|%x|%X|%o|%O|%b|%#x',
      [1n, -42n, 3n, 255n, 255n, 8n, 8n, 5n, 255n],
      '1|-0042|+3|ff|FF|10|0o10|101|0xff',
    ],
    ['%c|%q|%U|%#U', [65n, 10n, 9731n, 9731n], "A|'\\n'|U+2603|U+2603 '☃'"],
    [
      '%.2f|%8.3f|%.0f|%.0f|%e|%g|%G',
      [3.14159, -2.5, 2.5, 3.5, 123456.789, 1e21, 1e-7],
      '3.14|  -2.500|2|4|1.234568e+05|1e+21|1E-07',
    ],
    ['%q|%+q|%#q|%x|% X', ['héllo', 'héllo', 'a`b', 'hi', 'hi'], '"héllo"|"h\\u00e9llo"|"a`b"|6869|68 69'],
    [
      '%v|%+v|%#v',
      [[1n, 'a'], newGoMap([['k', 'v']]), [1n, 'a', null]],
      '[1 a]|map[k:v]|[]interface {}{1, "a", interface {}(nil)}',
    ],
    ['%T|%T|%T|%T|%T', ['s', 1n, 1.5, tagType(['a'], '[]string'), null], 'string|int|float64|[]string|<nil>'],
    ['%d|%s|%t', ['a', 1n, 'x'], '%!d(string=a)|%!s(int=1)|%!t(string=x)'],
    ['%s %s', ['a'], 'a %!s(MISSING)'],
    ['%s', ['a', 2n, null], 'a%!(EXTRA int=2, <nil>)'],
    ['%s|%v|%d', [null, null, null], '%!s(<nil>)|<nil>|%!d(<nil>)'],
    ['%[2]s %[1]s|%[3]s', ['a', 'b'], 'b a|%!s(BADINDEX)'],
    ['%*d|%-*d|%.*f', [5n, 1n, 4n, 2n, 1n, 3.14159], '    1|2   |3.1'],
    ['100%%|abc%', [], '100%|abc%!(NOVERB)'],
    ['%s', [[1n, 'a']], '[%!s(int=1) a]'],
  ];
  it.each(cases)('sprintf(%j, …)', (format, args, want) => {
    expect(sprintf(format, args)).toBe(want);
  });
});

describe('sprint and sprintln', () => {
  it('adds spaces only between operands that are not strings', () => {
    expect(sprint([1n, 2n, 'a', 3n, 'b', 'c', 4.5, true, null])).toBe('1 2a3bc4.5 true <nil>');
    expect(sprint([])).toBe('');
  });

  it('always separates operands and ends with a newline', () => {
    expect(sprintln([1n, 'a', 2n])).toBe('1 a 2\n');
    expect(sprintln([])).toBe('\n');
  });
});

describe('quoteGo and formatFloat', () => {
  it('quotes with Go escapes', () => {
    expect(quoteGo('a"b\\c\u00a0\x01\x7f\u2028日本\n')).toBe('"a\\"b\\\\c\\u00a0\\x01\\x7f\\u2028日本\\n"');
  });

  it.each([
    [2.5, 'f', 0, '2'],
    [0.125, 'f', 2, '0.12'],
    [1.005, 'f', 2, '1.00'],
    [1e21, 'f', -1, '1000000000000000000000'],
    [123456.789, 'e', 3, '1.235e+05'],
    [0, 'e', -1, '0e+00'],
    [1234567, 'g', -1, '1.234567e+06'],
    [0.000123, 'g', 2, '0.00012'],
    [100, 'g', 1, '1e+02'],
  ] as const)('FormatFloat(%s, %s, %s) = %s', (f, fmt, prec, want) => {
    expect(formatFloat(f, fmt, prec)).toBe(want);
  });
});
