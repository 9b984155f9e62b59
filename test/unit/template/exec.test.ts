/** Executor behaviour through the public API (answers checked against Go 1.19 text/template). */
import { describe, expect, it } from 'vitest';
import { isTemplate, parseTemplate, renderTemplate, TemplateError } from '../../../src/template/index.js';
import { parseLosslessJson } from '../../../src/template/lossless-json.js';
import type { FuncMap } from '../../../src/template/types.js';
import { FuncError } from '../../../src/template/types.js';
import type { GoValue } from '../../../src/go-value/value.js';
import { GoIfaceMap, GoOpaque, newGoMap } from '../../../src/go-value/value.js';

const data = parseLosslessJson(
  '{"name":"world","one":1,"pi":3.14,"nil":null,"list":["a","b","c"],"map":{"b":2,"a":1},"big":9007199254740993}',
);

const funcs: FuncMap = new Map([
  ['upper', { params: ['string'], fn: (a: GoValue[]) => (a[0] as string).toUpperCase() }],
  [
    'fail',
    {
      params: ['string'],
      fn: (a: GoValue[]): GoValue => {
        throw new FuncError(a[0] as string);
      },
    },
  ],
  [
    'boom',
    {
      params: [],
      fn: (): GoValue => {
        throw new TypeError('x is undefined');
      },
    },
  ],
  ['half', { params: ['float64'], fn: (a: GoValue[]) => (a[0] as number) / 2 }],
  ['ver', { params: [], fn: () => new GoOpaque('*semver.Version', { Major: () => 1n }, () => '1.2.3') }],
  ['slice', { params: ['interface {}'], variadic: 'interface {}', fn: () => 'sprig slice' }],
]);

function render(text: string, d: GoValue = data, strict = false): string {
  return renderTemplate(text, d, { funcs, strict });
}

function error(text: string, d: GoValue = data, strict = false): string {
  try {
    render(text, d, strict);
  } catch (e) {
    if (e instanceof TemplateError) return e.message;
    throw e;
  }
  throw new Error('no error');
}

describe('executor', () => {
  it('renders fields, pipelines and variables', () => {
    expect(render('{{ .name | upper }} {{ $x := .one }}{{ $x }} {{ .big }} {{ .map }}')).toBe(
      'WORLD 1 9007199254740993 map[a:1 b:2]',
    );
  });

  it('prints <no value> for missing keys and nil, and errors in strict mode', () => {
    expect(render('{{ .nope }}|{{ .nil }}|{{ .map.zz }}')).toBe('<no value>|<no value>|<no value>');
    expect(error('{{ .nope }}', data, true)).toBe(
      'template: gotpl:1:3: executing "gotpl" at <.nope>: map has no entry for key "nope"',
    );
    expect(render('{{ .nil }}', data, true)).toBe('<no value>');
  });

  it('converts untyped constants to the parameter type', () => {
    expect(render('{{ half 3 }}')).toBe('1.5');
    expect(error('{{ upper 1 }}')).toBe('template: gotpl:1:9: executing "gotpl" at <1>: expected string; found 1');
    expect(error('{{ upper .one }}')).toBe(
      'template: gotpl:1:9: executing "gotpl" at <.one>: wrong type for value; expected string; got int',
    );
    expect(error('{{ upper .nope }}')).toBe(
      'template: gotpl:1:9: executing "gotpl" at <.nope>: invalid value; expected string',
    );
  });

  it('reports function errors and converts internal exceptions', () => {
    expect(error('{{ fail "no" }}')).toBe(
      'template: gotpl:1:3: executing "gotpl" at <fail "no">: error calling fail: no',
    );
    expect(error('x{{ boom }}')).toBe(
      'template: gotpl:1:4: executing "gotpl" at <boom>: error calling boom: x is undefined',
    );
  });

  it('lets a FuncMap entry override a builtin', () => {
    expect(render('{{ slice .list 1 }}')).toBe('sprig slice');
  });

  it('reads members of opaque values', () => {
    expect(render('{{ ver }} {{ ver.Major }} {{ (ver).Major }}')).toBe('1.2.3 1 1');
    expect(error('{{ (ver).Minor }}')).toBe(
      // Like Go, the error points at the last node evaluated (the call inside the parentheses).
      'template: gotpl:1:4: executing "gotpl" at <ver>: can\'t evaluate field Minor in type *semver.Version',
    );
  });

  it('ranges over iface maps in key order and reads their fields', () => {
    const yamlLike = newGoMap([
      [
        'm',
        new GoIfaceMap([
          [10n, 'ten'],
          [9n, 'nine'],
          ['a', 'x'],
        ]),
      ],
    ]);
    expect(render('{{ range $k, $v := .m }}{{ $k }}={{ $v }};{{ end }}{{ .m.a }}', yamlLike)).toBe(
      '9=nine;10=ten;a=x;x',
    );
  });

  it('discards partial output on an exec error', () => {
    expect(error('partial {{ .name.x }}')).toBe(
      'template: gotpl:1:16: executing "gotpl" at <.name.x>: can\'t evaluate field x in type interface {}',
    );
  });

  it('executes a parsed template many times with per-call options', () => {
    const t = parseTemplate('{{ .a }}', { funcs });
    expect(t.execute(newGoMap([['a', 1n]]))).toBe('1');
    expect(t.execute(newGoMap())).toBe('<no value>');
    expect(() => t.execute(newGoMap(), { strict: true })).toThrow(TemplateError);
  });

  it('caches parses per text, name and function map', () => {
    const a = parseTemplate('{{ .x }}', { funcs });
    const b = parseTemplate('{{ .x }}', { funcs });
    expect(a.execute(newGoMap([['x', 's']]))).toBe(b.execute(newGoMap([['x', 's']])));
    expect(() => parseTemplate('{{ upper .x }}', { funcs: new Map() })).toThrow('function "upper" not defined');
  });

  it('limits template recursion with Go\u2019s message', () => {
    expect(error('{{ define "a" }}{{ template "a" }}{{ end }}{{ template "a" }}')).toBe(
      'template: gotpl:1:28: executing "a" at <{{template "a"}}>: exceeded maximum template depth (100000)',
    );
  });

  it('recognises template text', () => {
    expect(isTemplate('plain')).toBe(false);
    expect(isTemplate('a {{ .b }}')).toBe(true);
  });
});
