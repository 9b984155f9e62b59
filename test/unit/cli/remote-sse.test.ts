import { describe, expect, it } from 'vitest';
import { readSse, type SseMessage } from '../../../src/cli/remote/events.js';
import { networkReason, serverUrl } from '../../../src/cli/remote/http.js';

/** A body that delivers `chunks` one by one. */
function body(chunks: readonly string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(encoder.encode(chunks[i++]));
      else controller.close();
    },
  });
}

async function all(chunks: readonly string[]): Promise<SseMessage[]> {
  const out: SseMessage[] = [];
  for await (const m of readSse(body(chunks))) out.push(m);
  return out;
}

describe('reading an event stream', () => {
  it('splits messages on blank lines whatever the chunking, skips comments, joins data lines', async () => {
    const text =
      ': keep-alive\n\nid: 1\nevent: run-event\ndata: {"a":1}\n\nid: 2\r\nevent: log\r\ndata: line one\r\ndata: line two\r\n\r\n' +
      'id: 3\nevent: status\ndata:{"s":"é"}\n\n';
    const expected = [
      { id: '1', event: 'run-event', data: '{"a":1}' },
      { id: '2', event: 'log', data: 'line one\nline two' },
      { id: '3', event: 'status', data: '{"s":"é"}' },
    ];
    expect(await all([text])).toEqual(expected);
    // One byte at a time, the é split across chunks.
    const bytes = [...new TextEncoder().encode(text)];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const b of bytes) controller.enqueue(new Uint8Array([b]));
        controller.close();
      },
    });
    const out: SseMessage[] = [];
    for await (const m of readSse(stream)) out.push(m);
    expect(out).toEqual(expected);
  });

  it('drops a message cut off by the end of the stream', async () => {
    expect(await all(['id: 1\nevent: log\ndata: whole\n\n', 'id: 2\nevent: log\ndata: cut'])).toEqual([
      { id: '1', event: 'log', data: 'whole' },
    ]);
  });
});

describe('the server URL', () => {
  it('takes http(s) URLs and refuses others, and credentials in the URL, as usage errors', () => {
    expect(serverUrl('http://127.0.0.1:7070').href).toBe('http://127.0.0.1:7070/');
    expect(serverUrl('https://kapps.example/base').href).toBe('https://kapps.example/base/');
    expect(() => serverUrl(undefined)).toThrow('name the runs server with --server URL (or KAPPS_SERVER)');
    expect(() => serverUrl('ftp://127.0.0.1:7070')).toThrow('must be an http:// or https:// URL');
    expect(() => serverUrl('not a url')).toThrow('must be a URL such as http://127.0.0.1:7070');
    expect(() => serverUrl('http://ci:s3cret@host:7070')).toThrow('the token goes in KAPPS_TOKEN');
  });

  it('says why a connection failed in a few words', () => {
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
    });
    expect(networkReason(refused)).toBe('connection refused');
    expect(networkReason(new TypeError('fetch failed', { cause: new Error('bad port') }))).toBe('bad port');
    expect(networkReason(new DOMException('timed out', 'TimeoutError'))).toBe('no answer in time');
  });
});
