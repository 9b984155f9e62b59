/**
 * Robustness: random and mutated templates either render or fail with a TemplateError that has a position —
 * never another exception.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TemplateError } from '../../../src/template/errors.js';
import { defaultFuncs } from '../../../src/template/funcs/index.js';
import { renderTemplate } from '../../../src/template/index.js';
import { parseLosslessJson } from '../../../src/template/lossless-json.js';
import type { FuncMap } from '../../../src/template/types.js';
import type { GoValue } from '../../../src/go-value/value.js';
import { newGoMap } from '../../../src/go-value/value.js';

const corpusText = readFileSync(new URL('../../fixtures/go-template/shared/corpus.json', import.meta.url), 'utf8');
const corpus = (parseLosslessJson(corpusText) as unknown as { cases: { template: string; data?: GoValue }[] }).cases;
const templates = corpus.map((c) => c.template);
const data = corpus[0]?.data ?? null;

// Functions whose cost grows with an argument (a mutation can turn `repeat 3` into `repeat 3333333333`) or that touch
// the file system or environment are left out: they are not what this property is about.
const excluded =
  /^(repeat|until|untilStep|seq|rand.*|shuffle|uuidv4|exists|findFiles|env|expandenv|indent|nindent|wrap|wrapWith|abbrev.*|trunc|substr|chunk|mustChunk|genPrivateKey|bcrypt|htpasswd|derivePassword|.*Cert.*|genCA.*)$/;
const funcs: FuncMap = new Map([...defaultFuncs()].filter(([name]) => !excluded.test(name)));

const alphabet = [...'{}{}()|.$:=-"\'`/* \n\t,_aZ09é\\'];

function check(text: string): void {
  try {
    renderTemplate(text, data, { funcs, ctx: { getEnv: () => undefined } });
  } catch (e) {
    if (!(e instanceof TemplateError)) {
      throw new Error(`non-TemplateError for ${JSON.stringify(text)}: ${String(e)}`, { cause: e });
    }
    if (!(e.line >= 1 && e.column >= 1)) {
      throw new Error(`bad position ${e.line}:${e.column} for ${JSON.stringify(text)}: ${e.message}`, { cause: e });
    }
    if (!e.message.startsWith('template: gotpl:')) throw new Error(`unexpected message ${e.message}`, { cause: e });
  }
}

type Mutation =
  | { kind: 'insert'; at: number; ch: string }
  | { kind: 'delete'; at: number; len: number }
  | { kind: 'duplicate'; at: number; len: number }
  | { kind: 'splice'; at: number; from: number; start: number; len: number };

function applyMutation(text: string, m: Mutation): string {
  const at = text.length === 0 ? 0 : m.at % (text.length + 1);
  switch (m.kind) {
    case 'insert':
      return text.slice(0, at) + m.ch + text.slice(at);
    case 'delete':
      return text.slice(0, at) + text.slice(at + m.len);
    case 'duplicate':
      return text.slice(0, at) + text.slice(at, at + m.len) + text.slice(at);
    case 'splice': {
      const other = templates[m.from % templates.length] ?? '';
      const start = other.length === 0 ? 0 : m.start % other.length;
      return text.slice(0, at) + other.slice(start, start + m.len) + text.slice(at);
    }
  }
}

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), ch: fc.constantFrom(...alphabet) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat(), len: fc.integer({ min: 1, max: 12 }) }),
  fc.record({
    kind: fc.constant('splice' as const),
    at: fc.nat(),
    from: fc.nat(),
    start: fc.nat(),
    len: fc.integer({ min: 1, max: 30 }),
  }),
);

describe('template engine robustness', () => {
  it('mutated corpus templates only ever fail with a positioned TemplateError', () => {
    fc.assert(
      fc.property(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 4 }), (pick, muts) => {
        let text = templates[pick % templates.length] ?? '';
        for (const m of muts) text = applyMutation(text, m);
        check(text);
      }),
      { seed: 20240611, numRuns: 3000 },
    );
  });

  it('random token soups only ever fail with a positioned TemplateError', () => {
    const token = fc.constantFrom(
      '{{',
      '}}',
      '{{- ',
      ' -}}',
      '{{/*',
      '*/}}',
      ' ',
      '\n',
      '.name',
      '.list',
      '.map.c',
      '$',
      '$x',
      ' := ',
      ' = ',
      '|',
      '(',
      ')',
      'if',
      'else',
      'end',
      'range',
      'with',
      'break',
      'continue',
      'define',
      'template',
      'block',
      '"x"',
      '`r`',
      "'c'",
      '1',
      '-2',
      '3.5',
      '0x1F',
      'nil',
      'true',
      'len',
      'index',
      'printf',
      '"%d %s"',
      'eq',
      'lt',
      'and',
      'or',
      'not',
      'slice',
      'print',
      ',',
      'text',
      'é',
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 24 }), (tokens) => check(tokens.join(''))),
      { seed: 7, numRuns: 3000 },
    );
  });

  it('reports a column for errors on later lines and after multi-byte text', () => {
    try {
      renderTemplate('é✓\n  ✓ {{ .name.x }}', newGoMap([['name', 'w']]), { funcs });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(TemplateError);
      const err = e as TemplateError;
      expect(err.message).toBe(
        'template: gotpl:2:14: executing "gotpl" at <.name.x>: can\'t evaluate field x in type interface {}',
      );
      expect([err.line, err.column, err.phase]).toEqual([2, 15, 'exec']);
    }
  });
});
