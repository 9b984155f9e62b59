import { describe, expect, it } from 'vitest';
import { LineBuffer } from '../../../src/report/line-buffer.js';
import { charactersSplit } from '../../support/split-count.js';

describe('the line buffer of shown output', () => {
  it('completes lines across chunks per kapp and stream, and searches a long line written in pieces once', () => {
    const buffer = new LineBuffer();
    const texts = (lines: readonly { text: string }[]): string[] => lines.map((l) => l.text);
    expect(texts(buffer.push('a', 'stdout', 'one\r'))).toEqual([]);
    expect(texts(buffer.push('b', 'stdout', 'other'))).toEqual([]);
    expect(texts(buffer.push('a', 'stdout', '\ntwo\nthr'))).toEqual(['one', 'two']);
    expect(texts(buffer.push('a', 'stderr', 'err\n'))).toEqual(['err']);
    expect(texts(buffer.flush('a'))).toEqual(['thr']);

    // 2,000 chunks of 100 characters without a line end: what is searched is what was written, not all of it each
    // time; the line is passed on in pieces of 16,384 characters as it grows.
    const shown: string[] = [];
    const searched = charactersSplit(() => {
      for (let i = 0; i < 2000; i++) shown.push(...texts(buffer.push('a', 'stdout', 'x'.repeat(100))));
    });
    expect(searched).toBeLessThanOrEqual(2000 * 100);
    shown.push(...texts(buffer.push('a', 'stdout', 'y\n')));
    expect(shown.join('')).toBe(`${'x'.repeat(200_000)}y`);
    expect(shown.map((t) => t.length)).toEqual([...Array<number>(12).fill(16_384), 200_001 - 12 * 16_384]);
    expect(texts(buffer.flushAll())).toEqual(['other']);
  });

  it('holds at most `max` characters of a line without its end: the rest is passed on in pieces', () => {
    const buffer = new LineBuffer(10);
    const texts = (lines: readonly { text: string }[]): string[] => lines.map((l) => l.text);
    expect(texts(buffer.push('a', 'stdout', 'x'.repeat(25)))).toEqual(['x'.repeat(10), 'x'.repeat(10)]);
    expect(texts(buffer.push('a', 'stdout', 'yyyyyyy'))).toEqual(['xxxxxyyyyy']);
    expect(texts(buffer.push('a', 'stdout', 'z\nshort\n'))).toEqual(['yyz', 'short']);
    expect(texts(buffer.flush('a'))).toEqual([]);
    // A character written as a surrogate pair is never cut in two.
    expect(texts(buffer.push('a', 'stdout', `${'x'.repeat(9)}\u{1F600}y`))).toEqual(['x'.repeat(9)]);
    expect(texts(buffer.flush('a'))).toEqual(['\u{1F600}y']);
  });
});
