import { describe, expect, it } from 'vitest';
import { SseParser, type SseMessage } from '../../../src/api/sse-parse.js';

/** Feed `chunks` to one parser; every message handed out, in order. */
function parse(chunks: readonly string[]): SseMessage[] {
  const parser = new SseParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
}

const STREAM =
  ': keep-alive\n\n' +
  'id: 1\nevent: run-event\ndata: {"a":1}\n\n' +
  'id: 2\r\nevent: log\r\ndata: line one\r\ndata: line two\r\n\r\n' +
  'id: 3\revent: status\rdata:{"s":"é"}\r\r' +
  ': a comment between fields\ndata: no id, no event\n\n';

const EXPECTED: SseMessage[] = [
  { id: '1', event: 'run-event', data: '{"a":1}' },
  { id: '2', event: 'log', data: 'line one\nline two' },
  { id: '3', event: 'status', data: '{"s":"é"}' },
  { id: '3', event: 'message', data: 'no id, no event' },
];

describe('the event stream parser', () => {
  it('reads ids, event names, multi-line data and comments, with LF, CRLF or CR line ends', () => {
    expect(parse([STREAM])).toEqual(EXPECTED);
  });

  it('gives the same messages however the text is cut: one character at a time, mid-line, inside a CRLF', () => {
    expect(parse([...STREAM])).toEqual(EXPECTED);
    for (let cut = 1; cut < STREAM.length; cut++) {
      expect({ cut, messages: parse([STREAM.slice(0, cut), STREAM.slice(cut)]) }).toEqual({ cut, messages: EXPECTED });
    }
  });

  it('hands out each message once, when the blank line that ends it arrives', () => {
    const parser = new SseParser();
    expect(parser.push('id: 7\nevent: log\ndata: first')).toEqual([]);
    expect(parser.push('\ndata: second\n')).toEqual([]);
    // A CR last may be half of a CRLF: the message ends only when what follows says so.
    expect(parser.push('\r')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ id: '7', event: 'log', data: 'first\nsecond' }]);
    expect(parser.push('')).toEqual([]);
  });

  it('drops a message without data and one cut off by the end of the stream; ignores an id holding NUL', () => {
    expect(parse(['event: log\n\n', 'id: 4\ndata: kept\n\n', 'id: 5\u0000\ndata: x\n\n', 'id: 6\ndata: cut'])).toEqual([
      { id: '4', event: 'message', data: 'kept' },
      { id: '4', event: 'message', data: 'x' },
    ]);
  });

  it('takes one space after the colon away, no more, a field without a colon as empty, and a leading BOM', () => {
    expect(parse(['\uFEFFdata:  two spaces\ndata\ndata:x\n\n'])).toEqual([
      { id: undefined, event: 'message', data: ' two spaces\n\nx' },
    ]);
  });
});
