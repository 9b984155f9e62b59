/**
 * The one parser of the runs server's event streams (`text/event-stream`), for both clients (`kapps … --server`
 * and the web page). Incremental and pure: feed it text as it arrives, in chunks cut anywhere (mid-line, between
 * the CR and LF of a CRLF), and it hands back the messages each chunk completed.
 *
 * As the HTML standard reads a stream: lines end with CRLF, LF or CR; a blank line ends a message; `data:` lines
 * are joined with newlines; `event:` names the message (`message` when absent); `id:` is kept for the following
 * messages until another one (an id holding NUL is ignored); lines starting with `:` are comments (`: keep-alive`);
 * one space after the colon is dropped; a message without data, or cut off by the end of the stream, is not
 * handed out.
 */

/** One message of an event stream. */
export interface SseMessage {
  /** The last `id:` seen so far (undefined before any). */
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
}

export class SseParser {
  #buffer = '';
  #started = false;
  #id: string | undefined;
  #event = '';
  #data: string[] = [];

  /** Take the next chunk of the stream's text; returns the messages it completed, in order. */
  push(chunk: string): SseMessage[] {
    this.#buffer += chunk;
    if (!this.#started && this.#buffer.length > 0) {
      this.#started = true;
      if (this.#buffer.startsWith('\uFEFF')) this.#buffer = this.#buffer.slice(1);
    }
    const out: SseMessage[] = [];
    for (let nl = this.#buffer.search(/[\r\n]/); nl >= 0; nl = this.#buffer.search(/[\r\n]/)) {
      // A CR last in the buffer may be the first half of a CRLF: wait for the next chunk.
      if (nl === this.#buffer.length - 1 && this.#buffer[nl] === '\r') break;
      const line = this.#buffer.slice(0, nl);
      this.#buffer = this.#buffer.slice(this.#buffer.startsWith('\r\n', nl) ? nl + 2 : nl + 1);
      const message = this.#line(line);
      if (message) out.push(message);
    }
    return out;
  }

  #line(line: string): SseMessage | undefined {
    if (line === '') {
      const message =
        this.#data.length > 0
          ? { id: this.#id, event: this.#event || 'message', data: this.#data.join('\n') }
          : undefined;
      this.#event = '';
      this.#data = [];
      return message;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
    else if (field === 'id' && !value.includes('\u0000')) this.#id = value;
    return undefined;
  }
}
