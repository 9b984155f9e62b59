/**
 * Rendering limits (src/template/limits.ts): every function that builds a value proportional to an argument
 * refuses a result beyond the limit before building it, with the template's location and the function's name;
 * a render's output and its total work are bounded; regular expressions match in linear time.
 */
import { describe, expect, it } from 'vitest';
import { defaultFuncs } from '../../../src/template/funcs/index.js';
import { renderTemplate } from '../../../src/template/index.js';
import { MAX_LIST_ITEMS, MAX_OUTPUT_LENGTH, MAX_STRING_LENGTH, MAX_WORK } from '../../../src/template/limits.js';

const render = (template: string, data: Record<string, unknown> = {}): string =>
  renderTemplate(template, data as never, {
    name: 'values.tpl',
    funcs: defaultFuncs(),
    ctx: { getEnv: () => undefined },
  });

const tooLong = `exceeds kapps' limit of ${MAX_STRING_LENGTH} characters for one value`;
const tooMany = `exceeds kapps' limit of ${MAX_LIST_ITEMS} items for one list`;
const big = MAX_STRING_LENGTH + 1;

describe('function results', () => {
  it.each([
    ['repeat', `{{ repeat ${big} "x" }}`],
    ['repeat', '{{ repeat 1000000000000 "ab" }}'],
    ['randAlphaNum', `{{ randAlphaNum ${big} }}`],
    ['randAlpha', `{{ randAlpha ${big} }}`],
    ['randNumeric', `{{ randNumeric ${big} }}`],
    ['randAscii', `{{ randAscii ${big} }}`],
    ['indent', `{{ indent ${big} "a" }}`],
    ['indent', '{{ indent 1000000 .lines }}'],
    ['nindent', `{{ nindent ${big} "a" }}`],
    ['replace', '{{ replace "" .chunk .chunk }}'],
    ['replace', '{{ replace "a" .chunk .chunk }}'],
    ['join', '{{ join .half (list .half .half) }}'],
    ['regexReplaceAll', '{{ regexReplaceAll "" .chunk .chunk }}'],
    ['wrapWith', '{{ wrapWith 1 .chunk .chunk }}'],
    ['printf', '{{ printf (repeat 20 "%999999d") 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 }}'],
    ['cat', '{{ cat .half .half .half }}'],
  ])('%s: %s', (fn, template) => {
    const data = { chunk: 'a'.repeat(5000), lines: '\n'.repeat(100), half: 'h'.repeat(MAX_STRING_LENGTH / 2) };
    expect(() => render(template, data)).toThrow(
      new RegExp(
        `^template: values\\.tpl:1:\\d+: executing "values\\.tpl" at <${fn}\\b.*error calling ${fn}: .*${tooLong}`,
      ),
    );
  });

  it.each([
    ['until', '{{ until 100000000 }}'],
    ['untilStep', '{{ untilStep 0 100000000 1 }}'],
    ['untilStep', '{{ untilStep 0 -9000000000000000000 -3 }}'],
    ['seq', '{{ seq 100000000 }}'],
  ])('%s: %s', (fn, template) => {
    expect(() => render(template)).toThrow(new RegExp(`error calling ${fn}: result of \\d+ items ${tooMany}`));
  });

  it('results within the limits are built', () => {
    expect(
      render('{{ repeat 3 "ab" }}|{{ len (randAlphaNum 1000) }}|{{ indent 2 "a\\nb" }}|{{ len (until 1000) }}'),
    ).toBe('ababab|1000|  a\n  b|1000');
    expect(render('{{ len (repeat 1000000 "x") }} {{ seq 3 }}')).toBe('1000000 1 2 3');
  });
});

describe('a render', () => {
  it('refuses output beyond the limit', () => {
    const half = 'h'.repeat(MAX_OUTPUT_LENGTH / 2);
    expect(() => render('{{ .h }}{{ .h }}{{ .h }}', { h: half })).toThrow(
      `output exceeds kapps' limit of ${MAX_OUTPUT_LENGTH} characters for one render`,
    );
    expect(render('{{ .h }}{{ .h }}', { h: half })).toHaveLength(MAX_OUTPUT_LENGTH);
  });

  it('stops once it has done too much work (nested loops)', () => {
    expect(() => render('{{ range until 1000000 }}{{ range until 1000000 }}{{ end }}{{ end }}')).toThrow(
      new RegExp(`^template: values\\.tpl:1:\\d+: .*render exceeds kapps' limit of ${MAX_WORK} steps`),
    );
  });
});

describe('regular expressions', () => {
  it('match in linear time: nested quantifiers on a long non-matching input', () => {
    const s = 'a'.repeat(100_000) + '!';
    expect(
      render('{{ regexMatch "^(a+)+$" .s }}|{{ regexFind "(a|aa)+b" .s }}|{{ regexMatch "(a*)*b" .s }}', { s }),
    ).toBe('false||false');
  });

  it('the semver functions read hostile constraints in linear time (their patterns are Go regexps)', () => {
    const c = `>= 1.2.3 ${' '.repeat(20_000)}-`;
    expect(() => render('{{ semverCompare .c "1.2.3" }}', { c })).toThrow(
      /error calling semverCompare: improper constraint/,
    );
  });
});
