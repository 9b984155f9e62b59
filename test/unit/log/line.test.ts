import { describe, expect, expectTypeOf, it } from 'vitest';
import { logLineSchema, type LogLine as ApiLogLine } from '../../../src/api/index.js';
import {
  checkLogLine,
  logLineJson,
  parseLogLine,
  storableJson,
  storableText,
  type LogLine,
} from '../../../src/log/line.js';

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

  it('is stored as the same JSON whether written field by field or by JSON.stringify, every text made storable', () => {
    const texts = [
      'plain',
      '',
      'say "hi"',
      'back\\slash',
      'tab\tand\u0001bell',
      'é ü 字 😀',
      'lone \ud800 high',
      'lone \udc00 low',
      'nul \0 here',
      '\u2028 and \u007f',
    ];
    for (const text of texts) {
      const full: LogLine = {
        time: '2026-11-25T10:00:00.000Z',
        stream: 'stdout',
        kapp: `web:${text}`,
        phase: 'apply_install',
        step: text,
        text,
      };
      const own: LogLine = { time: '2026-11-25T10:00:00.000Z', stream: 'kapps', text };
      for (const line of [full, own]) {
        const json = logLineJson(line);
        expect(json).toBe(storableJson(line));
        const back = parseLogLine(json);
        expect(back.text).toBe(storableText(text));
        expect(back.text.isWellFormed() && !back.text.includes('\0')).toBe(true);
      }
    }
    expect(storableText('a\ud800b\u0000c\udc00')).toBe('a\ufffdb\ufffdc\ufffd');
    expect(storableText('pair \ud83d\ude00 kept')).toBe('pair \ud83d\ude00 kept');
  });

  it('makes keys storable too, and leaves what is not plain data to JSON', () => {
    expect(storableJson({ ['k\ud800']: ['v\u0000', 1, null, true], ok: { n: 2 } })).toBe(
      '{"k\ufffd":["v\ufffd",1,null,true],"ok":{"n":2}}',
    );
    const at = new Date('2026-11-25T10:00:00.000Z');
    expect(storableJson({ at, skipped: undefined })).toBe('{"at":"2026-11-25T10:00:00.000Z"}');
  });
});
