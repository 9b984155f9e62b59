/** Lexer and parser: the tree shape (through Go's String() of nodes), trim markers and parse errors. */
import { describe, expect, it } from 'vitest';
import { Item, lex } from '../../../src/template/lexer.js';
import { nodeString } from '../../../src/template/nodes.js';
import { parseTrees, ParseFailure } from '../../../src/template/parser.js';
import { TemplateError } from '../../../src/template/errors.js';
import { parseTemplate } from '../../../src/template/index.js';

const funcs = new Set(['printf', 'len', 'index', 'eq', 'upper']);
const has = (n: string): boolean => funcs.has(n);

function tree(text: string): string {
  const root = parseTrees(text, 'gotpl', has).get('gotpl');
  if (!root) throw new Error('no tree');
  return nodeString(root);
}

describe('lexer', () => {
  it('trims spaces around trim markers and keeps other text', () => {
    const items = lex('a  {{- .x -}}\n\tb');
    expect(items.map((i) => [i.typ, i.val])).toEqual([
      [Item.Text, 'a'],
      [Item.LeftDelim, '{{'],
      [Item.Field, '.x'],
      [Item.RightDelim, '}}'],
      [Item.Text, 'b'],
      [Item.EOF, ''],
    ]);
  });

  it('treats {{-3}} as the number -3 (a trim marker needs a space)', () => {
    expect(lex('{{-3}}').map((i) => i.val)).toEqual(['{{', '-3', '}}', '']);
  });

  it('counts lines of items', () => {
    const items = lex('a\nb {{ .x\n| printf }}');
    expect(items.filter((i) => i.typ === Item.Identifier).map((i) => i.line)).toEqual([3]);
  });

  it('stops at the first lexical error', () => {
    const items = lex('{{ "abc }}');
    expect(items.at(-1)).toMatchObject({ typ: Item.Error, val: 'unterminated quoted string' });
  });
});

describe('parser', () => {
  it('builds pipelines, chains, variables and control structures', () => {
    expect(tree('{{ $x := .a.b | printf "%s" }}{{ (index . 0).c }}')).toBe(
      '{{$x := .a.b | printf "%s"}}{{(index . 0).c}}',
    );
    expect(tree('{{ if .a }}1{{ else if .b }}2{{ else }}3{{ end }}')).toBe(
      '{{if .a}}1{{else}}{{if .b}}2{{else}}3{{end}}{{end}}',
    );
    expect(tree('{{ range $i, $v := .l }}{{ break }}{{ continue }}{{ end }}')).toBe(
      '{{range $i, $v := .l}}{{break}}{{continue}}{{end}}',
    );
  });

  it('records define and block bodies as separate templates', () => {
    const trees = parseTrees('{{ define "a" }}A{{ end }}{{ block "b" . }}B{{ end }}', 'gotpl', has);
    expect([...trees.keys()].sort()).toEqual(['a', 'b', 'gotpl']);
    expect(nodeString(trees.get('gotpl') ?? { type: 'list', pos: 0, nodes: [] })).toBe('{{template "b" .}}');
  });

  it.each([
    ['{{ nope }}', 'function "nope" not defined', 1],
    ['{{ if false }}{{ nope }}{{ end }}', 'function "nope" not defined', 1],
    ['{{ $y }}', 'undefined variable "$y"', 1],
    ['{{ break }}', '{{break}} outside {{range}}', 1],
    ['{{ if 1 }}{{ else with 2 }}{{ end }}', 'unexpected <with> in else', 1],
    ['{{ .a-b }}', "bad character U+002D '-'", 1],
    ['{{ 99999999999999999999 }}', 'integer overflow: "99999999999999999999"', 1],
    ['{{ "\\q" }}', 'invalid syntax', 1],
    ['a\n{{ .x |\n 1 }}', 'non executable command in pipeline stage 2', 3],
    ['a\n\n{{ if .x }}', 'unexpected EOF', 3],
  ])('rejects %j with %j on line %i', (text, message, line) => {
    try {
      parseTrees(text, 'gotpl', has);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ParseFailure);
      expect((e as ParseFailure).message).toBe(message);
      expect((e as ParseFailure).line).toBe(line);
    }
  });

  it('turns parse failures into TemplateErrors with Go\u2019s prefix and a column', () => {
    try {
      parseTemplate('ok\n  {{ nope }}', { funcs: new Map() });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(TemplateError);
      const err = e as TemplateError;
      expect(err.message).toBe('template: gotpl:2: function "nope" not defined');
      expect([err.phase, err.templateName, err.line, err.column]).toEqual(['parse', 'gotpl', 2, 6]);
    }
  });

  it('uses the template name it is given', () => {
    expect(() => parseTemplate('{{ end }}', { name: 'values.yaml', funcs: new Map() })).toThrow(
      'template: values.yaml:1: unexpected {{end}}',
    );
  });
});
