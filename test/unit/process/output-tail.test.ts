import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_TAIL_LINE_LENGTH, OutputTail } from '../../../src/process/output-tail.js';

describe('OutputTail', () => {
  it('keeps the last lines of one stream', () => {
    const tail = new OutputTail(3);
    tail.push('stdout', 'a\nb\nc\nd\ne\n');
    expect(tail.lines()).toEqual(['c', 'd', 'e']);
  });

  it('joins a line split across chunks', () => {
    const tail = new OutputTail(5);
    tail.push('stdout', 'hel');
    tail.push('stdout', 'lo wor');
    tail.push('stdout', 'ld\nnext');
    expect(tail.lines()).toEqual(['hello world', 'next']);
  });

  it('interleaves complete lines of both streams in arrival order, each stream keeping its own partial line', () => {
    const tail = new OutputTail(10);
    tail.push('stdout', 'out-1\nout-2 part');
    tail.push('stderr', 'err-1\n');
    tail.push('stdout', 'ial\n');
    tail.push('stderr', 'err-2');
    expect(tail.lines()).toEqual(['out-1', 'err-1', 'out-2 partial', 'err-2']);
  });

  it('keeps empty lines', () => {
    const tail = new OutputTail(5);
    tail.push('stdout', '\n\nx\n\n');
    expect(tail.lines()).toEqual(['', '', 'x', '']);
  });

  it('shows what a terminal would for carriage returns (progress bars) and CRLF line ends', () => {
    const tail = new OutputTail(5);
    tail.push('stdout', '10%\r50%\r100%\ndone\r\n');
    expect(tail.lines()).toEqual(['100%', 'done']);
  });

  it('cuts very long lines', () => {
    const tail = new OutputTail(2);
    tail.push('stdout', 'x'.repeat(MAX_TAIL_LINE_LENGTH * 3));
    tail.push('stdout', 'y'.repeat(10) + '\n');
    const [line] = tail.lines();
    expect(line).toHaveLength(MAX_TAIL_LINE_LENGTH);
    expect(line?.endsWith('…')).toBe(true);
  });

  it('equals the last lines of the whole text however it is chunked', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', '\n', 'cd', '\n\n'), { maxLength: 60 }),
        fc.array(fc.nat(20), { maxLength: 10 }),
        fc.integer({ min: 1, max: 6 }),
        (pieces, cuts, max) => {
          const text = pieces.join('');
          const tail = new OutputTail(max);
          let at = 0;
          for (const cut of cuts) {
            tail.push('stdout', text.slice(at, at + cut));
            at += cut;
          }
          tail.push('stdout', text.slice(at));
          const lines = text.split('\n');
          if (lines.at(-1) === '') lines.pop();
          expect(tail.lines()).toEqual(lines.slice(-max));
        },
      ),
    );
  });
});
