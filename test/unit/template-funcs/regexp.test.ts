/**
 * Go regular expressions on JavaScript's engine: any pattern either compiles or fails with Go's
 * `error parsing regexp: ...` text (never a JavaScript SyntaxError), and matching never throws.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRegexp, GoRegexp, quoteMeta } from '../../../src/template/funcs/regexp.js';
import { RegexpSyntaxError } from '../../../src/template/funcs/regexp-syntax.js';

const PATTERN_CHARS = [...'ab.|()[]{}*+?^$\\-:,=!<>0129dDwWsSpPLQEzAbBxiUms_P{}é✓\n '];
const TEXT_CHARS = [...'abAB01 _\n\r-é✓😀K'];

const pattern = fc.array(fc.constantFrom(...PATTERN_CHARS), { maxLength: 14 }).map((cs) => cs.join(''));
const text = fc.array(fc.constantFrom(...TEXT_CHARS), { maxLength: 12 }).map((cs) => cs.join(''));

describe('Go regular expressions', () => {
  it('compile or fail with a Go syntax error, and never throw while matching', () => {
    fc.assert(
      fc.property(pattern, text, (p, t) => {
        let re: GoRegexp;
        try {
          re = new GoRegexp(p);
        } catch (e) {
          expect(e).toBeInstanceOf(RegexpSyntaxError);
          expect((e as Error).message).toMatch(/^error parsing regexp: [a-z ]+.*: `/s);
          return;
        }
        re.matchString(t);
        re.findString(t);
        re.findAllString(t, -1);
        re.replaceAllString(t, '<$1${0}$$>');
        re.replaceAllLiteralString(t, '$1');
        for (const n of [-1, 0, 1, 2]) re.split(t, n);
      }),
      { seed: 20240611, numRuns: 4000 },
    );
  });

  it('quoteMeta makes any text match itself literally', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), (s) => {
        expect(compileRegexp(`^${quoteMeta(s)}$`).matchString(s)).toBe(true);
      }),
      { seed: 7, numRuns: 500 },
    );
  });

  it('keeps Go semantics where JavaScript differs', () => {
    expect(compileRegexp('a.b').matchString('a\rb')).toBe(true); // JS `.` excludes \r
    expect(compileRegexp('a$').matchString('a\n')).toBe(false); // only (?m) matches before \n
    expect(compileRegexp('(?m)^b').matchString('a\rb')).toBe(false); // only \n starts a line
    expect(compileRegexp('\\s').matchString('\u00a0')).toBe(false); // \s is ASCII
    expect(compileRegexp('(?i)k').matchString('\u212a')).toBe(true); // Kelvin sign folds to k
    expect(compileRegexp('^*a').findString('a')).toBe('a'); // a repeated assertion is valid in Go
    expect(compileRegexp('a*').findAllString('baaab', -1)).toEqual(['', 'aaa', '']);
    expect(compileRegexp('(a)').replaceAllString('a', '$1x|${1}x')).toBe('|ax');
  });

  it('reports unsupported Perl syntax as Go does', () => {
    expect(() => compileRegexp('(?=a)')).toThrow('error parsing regexp: invalid or unsupported Perl syntax: `(?=`');
    expect(() => compileRegexp('(a)\\1')).toThrow('error parsing regexp: invalid escape sequence: `\\1`');
    expect(() => compileRegexp('(?<n>a)')).toThrow('error parsing regexp: invalid or unsupported Perl syntax: `(?<`');
  });
});
