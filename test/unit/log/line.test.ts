import { describe, expect, expectTypeOf, it } from 'vitest';
import { logLineSchema, type LogLine as ApiLogLine } from '../../../src/api/index.js';
import { checkLogLine, parseLogLine, type LogLine } from '../../../src/log/line.js';

describe('the one log line', () => {
  it('is the shape the public API describes', () => {
    expectTypeOf<Readonly<ApiLogLine>>().toEqualTypeOf<LogLine>();
    const line: LogLine = { time: '2026-11-25T10:00:00.000Z', stream: 'stderr', kapp: 'web:db', text: 'oops' };
    expect(logLineSchema.parse(line)).toEqual(line);
    expect(parseLogLine(JSON.stringify(line))).toEqual(line);
  });

  it('says what is wrong with a stored line that is not one', () => {
    expect(() => parseLogLine('{')).toThrow('a log line that is not JSON');
    expect(() => parseLogLine('[1]')).toThrow('a log line that is not a JSON object');
    expect(() => checkLogLine({ time: 't', stream: 'other', text: 'x' })).toThrow(
      'a log line without its time, stream and text',
    );
    expect(() => checkLogLine({ time: 't', stream: 'kapps', text: 'x', kapp: 1 })).toThrow(
      'a log line whose kapp is not a string',
    );
  });
});
