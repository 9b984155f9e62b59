import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { quote } from 'shell-quote';
import { tokeniseArgs } from '../../../src/plan/args.js';
import { tokeniseArgsBefore } from './args-before.js';

function args(text: string): string[] {
  const result = tokeniseArgs(text);
  if (!result.ok) throw new Error(`unexpected failure: ${result.message}`);
  return result.args;
}

function failure(text: string): string {
  const result = tokeniseArgs(text);
  if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.args)}`);
  return result.message;
}

describe('tokeniseArgs', () => {
  it.each<[string, string[]]>([
    ['', []],
    ['   \n\t ', []],
    ['lint --kube-context=ctx  .\n  -f=a.yaml', ['lint', '--kube-context=ctx', '.', '-f=a.yaml']],
    ["/tmp -name x -exec rm -rf {} ';'", ['/tmp', '-name', 'x', '-exec', 'rm', '-rf', '{}', ';']],
    ['-f \'a b\' "c d"', ['-f', 'a b', 'c d']],
    ['\'\' a "" b', ['a', 'b']],
    ["x=''", ['x=']],
    ["a''b", ['ab']],
    ["'it'\\''s'", ["it's"]],
    ["'a\\b'", ['a\\b']],
    ['a\\ b c', ['a b', 'c']],
    ['"a\\"b" "c\\\\d" "e\\$f" "g\\h"', ['a"b', 'c\\d', 'e$f', 'gh']],
    ['a\\\nb c', ['ab', 'c']],
    ['one\r\ntwo\tthree', ['one', 'two', 'three']],
    ['--x=$HOME', ['--x=$HOME']],
    ['${HOME}/bin "$HOME" \'$HOME\'', ['${HOME}/bin', '$HOME', '$HOME']],
    ['$(echo a b) x', ['$(echo a b)', 'x']],
    ['$(a $(b c)) d', ['$(a $(b c))', 'd']],
    ['`date +%s` x', ['`date +%s`', 'x']],
    ["$'a b'", ['$a b']],
    ['*.ts src/**/*.js a?c', ['*.ts', 'src/**/*.js', 'a?c']],
    ["'*.ts' \\*", ['*.ts', '*']],
    ['--color=#fff # not a comment', ['--color=#fff', '#', 'not', 'a', 'comment']],
    ['~/x !y {a,b}', ['~/x', '!y', '{a,b}']],
    ['a\u00a0b c', ['a\u00a0b', 'c']],
    ['--set "a=1,b=2" --set=\'c d\'', ['--set', 'a=1,b=2', '--set=c d']],
    ["';' '|' '&&' \"2>&1\" \\>", [';', '|', '&&', '2>&1', '>']],
  ])('%j → %j', (text, expected) => {
    expect(args(text)).toEqual(expected);
  });

  it.each<[string, string]>([
    ['a | grep b', '|'],
    ['a || b', '||'],
    ['a ; b', ';'],
    ['a;b', ';'],
    ['a & b', '&'],
    ['a && b', '&&'],
    ['a > out', '>'],
    ['a >> out', '>>'],
    ['a < in', '<'],
    ['a 2>&1', '2>&1'],
    ['a 2> err', '2>'],
    ['a >&2', '>&2'],
    ['a2>x', '>'],
    ['( a )', '('],
    ['a )', ')'],
    ['echo <(x)', '<('],
  ])('%j is an unquoted operator %j', (text, op) => {
    expect(failure(text)).toBe(
      `args contain the unquoted shell operator '${op}'; steps run without a shell, so it would not act as one`,
    );
  });

  it('reports unterminated quoting', () => {
    expect(failure("a 'b")).toBe('args have an unterminated single quote');
    expect(failure('a "b')).toBe('args have an unterminated double quote');
    expect(failure('a "b\\"')).toBe('args have an unterminated double quote');
    expect(failure('a `b')).toBe('args have an unterminated backtick');
    expect(failure('a $(b')).toBe("args have a '$(' without its closing ')'");
    expect(failure('a \\')).toBe('args end with a backslash that escapes nothing');
  });

  it('gives a hint on how to pass an operator literally', () => {
    const result = tokeniseArgs('a | b');
    expect(result).toMatchObject({ ok: false, hint: expect.stringContaining("quote it (e.g. '|'") as unknown });
  });

  it('round-trips any argument vector quoted by shell-quote', () => {
    // An empty argument cannot round-trip: a word that is only '' is dropped.
    const argv = fc.array(fc.string({ unit: 'binary', minLength: 1 }), { maxLength: 8 });
    fc.assert(
      fc.property(argv, (xs) => {
        expect(args(quote(xs))).toEqual(xs);
      }),
      { numRuns: 2000 },
    );
  });

  it('round-trips printable text too (more quoting corner cases per run)', () => {
    const chars = fc.constantFrom(...' \t\n\'"\\$`*?#;&|<>()!~{}[]=,:a1'.split(''));
    const argv = fc.array(fc.string({ unit: chars, minLength: 1, maxLength: 6 }), { maxLength: 6 });
    fc.assert(
      fc.property(argv, (xs) => {
        expect(args(quote(xs))).toEqual(xs);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('missing variables in args', () => {
  it('keeps <no value> as one literal word instead of reading < and > as operators', () => {
    expect(tokeniseArgs('deploy --url <no value> x')).toEqual({
      ok: true,
      args: ['deploy', '--url', '<no value>', 'x'],
    });
    expect(tokeniseArgs('--url=<no value>/a')).toEqual({ ok: true, args: ['--url=<no value>/a'] });
  });
});

describe('tokeniseArgs against the tokeniser it replaced (re-quoting for shell-quote)', () => {
  // Fragments chosen so that generated text hits every branch: quotes, escapes, line continuations, `$(…)`,
  // backticks, operators with file-descriptor numbers, `<no value>`, globs, `#`, and spaces shell-quote reads
  // differently from go-shellwords (no-break space, vertical tab, form feed).
  const fragments = [
    ' ',
    '  ',
    '\t',
    '\n',
    '\r',
    '\r\n',
    "'",
    '"',
    '\\',
    '\\\n',
    '\\\r\n',
    '$',
    '$(',
    ')',
    '(',
    '`',
    '#',
    ';',
    '&',
    '&&',
    '|',
    '||',
    '<',
    '>',
    '>>',
    '2>',
    '2>&1',
    '>&2',
    '<(',
    '<no value>',
    '<no',
    '*',
    '?',
    '~',
    '!',
    '{',
    '}',
    '[',
    ']',
    '=',
    ',',
    '-',
    'a',
    'b1',
    '--x=',
    '$HOME',
    '${V}',
    "$'",
    '\u00a0',
    '\v',
    '\f',
    '\u2028',
    '\uFEFF',
    '\u00e9',
    '\ud83d\ude00',
  ];
  const text = fc.array(fc.constantFrom(...fragments), { maxLength: 14 }).map((xs) => xs.join(''));

  it('gives the same words, or the same error and hint, on generated text', () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(tokeniseArgs(t)).toEqual(tokeniseArgsBefore(t));
      }),
      { numRuns: 10000 },
    );
  });

  it('agrees on well-formed text with quoted and escaped operators (mostly successes)', () => {
    const word = fc.array(
      fc.oneof(
        fc.constantFrom('a', 'b', '*', '?', '$', '#', '~', '=', '\u00a0', '\v'),
        fc.string({ unit: 'binary', maxLength: 4 }).map((s) => `'${s.replaceAll("'", '')}'`),
        fc.string({ unit: 'binary', maxLength: 4 }).map((s) => `"${s.replaceAll(/["\\]/g, '')}"`),
        fc.constantFrom('\\;', '\\|', '\\>', '\\ ', '\\"', "\\'", '\\\\', '$(a (b) c)', '`x y`', '<no value>'),
      ),
      { minLength: 1, maxLength: 5 },
    );
    const line = fc
      .array(fc.tuple(word, fc.constantFrom(' ', '\t', '\n', '\r\n', '  ')), { maxLength: 6 })
      .map((ws) => ws.map(([w, sep]) => w.join('') + sep).join(''));
    fc.assert(
      fc.property(line, (t) => {
        const now = tokeniseArgs(t);
        expect(now).toEqual(tokeniseArgsBefore(t));
      }),
      { numRuns: 10000 },
    );
  });

  it('agrees on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 24 }), (t) => {
        expect(tokeniseArgs(t)).toEqual(tokeniseArgsBefore(t));
      }),
      { numRuns: 5000 },
    );
  });
});
