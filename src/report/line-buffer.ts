/**
 * Turns chunks of child output into whole lines, per kapp and stream. A chunk may end in the middle of a line; the
 * rest is kept until the next chunk, or until the step or kapp finishes (then it is flushed as a line of its own).
 */
import { cutUnfinished, DEFAULT_MAX_LINE_LENGTH } from '../log/line-cut.js';

/** One complete line of output for a kapp. */
export interface OutputLine {
  readonly kapp: string;
  readonly stream: 'stdout' | 'stderr';
  readonly text: string;
}

/** Partial-line buffers keyed by kapp and stream. */
export class LineBuffer {
  readonly #partial = new Map<string, { kapp: string; stream: 'stdout' | 'stderr'; text: string }>();

  /** `max`: the longest unfinished line held; past it, the line is passed on in pieces of that length. */
  constructor(private readonly max = DEFAULT_MAX_LINE_LENGTH) {}

  /** Add a chunk; returns the lines it completed (a trailing `\r` is dropped from each). */
  push(kapp: string, stream: 'stdout' | 'stderr', chunk: string): OutputLine[] {
    const key = `${kapp}\u0000${stream}`;
    const before = this.#partial.get(key)?.text ?? '';
    // Only the chunk is searched for line ends: a long line in many chunks costs its length once.
    const nl = chunk.indexOf('\n');
    let pieces: string[];
    let rest: string;
    if (nl < 0) {
      pieces = [];
      rest = before + chunk;
    } else {
      pieces = chunk.slice(nl + 1).split('\n');
      pieces.unshift(before + chunk.slice(0, nl));
      rest = pieces.pop() ?? '';
      pieces = pieces.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
    }
    // A line without its end that grows past the limit is passed on in pieces: memory stays bounded whatever a
    // step prints without a newline.
    if (rest.length > this.max) {
      const cut = cutUnfinished(rest, this.max);
      pieces.push(...cut.pieces);
      rest = cut.rest;
    }
    if (rest === '') this.#partial.delete(key);
    else this.#partial.set(key, { kapp, stream, text: rest });
    return pieces.map((text) => ({ kapp, stream, text }));
  }

  /** The unfinished lines of one kapp (both streams), removed from the buffer. */
  flush(kapp: string): OutputLine[] {
    const out: OutputLine[] = [];
    for (const [key, value] of this.#partial) {
      if (value.kapp !== kapp) continue;
      this.#partial.delete(key);
      out.push({ kapp, stream: value.stream, text: value.text });
    }
    return out;
  }

  /** Every unfinished line, removed from the buffer, in the order the kapps first wrote. */
  flushAll(): OutputLine[] {
    const out = [...this.#partial.values()].map((v) => ({ kapp: v.kapp, stream: v.stream, text: v.text }));
    this.#partial.clear();
    return out;
  }
}
