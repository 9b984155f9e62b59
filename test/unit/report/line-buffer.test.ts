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

    // 2,000 chunks of 100 characters without a line end: what is searched is what was written, not all of it each time.
    const searched = charactersSplit(() => {
      for (let i = 0; i < 2000; i++) buffer.push('a', 'stdout', 'x'.repeat(100));
    });
    expect(searched).toBeLessThanOrEqual(2000 * 100);
    expect(texts(buffer.push('a', 'stdout', 'y\n'))).toEqual([`${'x'.repeat(200_000)}y`]);
    expect(texts(buffer.flushAll())).toEqual(['other']);
  });
});
