/**
 * Turns chunks of child output into whole lines, per kapp and stream. A chunk may end in the middle of a line; the
 * rest is kept until the next chunk, or until the step or kapp finishes (then it is flushed as a line of its own).
 */

/** One complete line of output for a kapp. */
export interface OutputLine {
  readonly kapp: string;
  readonly stream: 'stdout' | 'stderr';
  readonly text: string;
}

/** Partial-line buffers keyed by kapp and stream. */
export class LineBuffer {
  readonly #partial = new Map<string, { kapp: string; stream: 'stdout' | 'stderr'; text: string }>();

  /** Add a chunk; returns the lines it completed (a trailing `\r` is dropped from each). */
  push(kapp: string, stream: 'stdout' | 'stderr', chunk: string): OutputLine[] {
    const key = `${kapp}\u0000${stream}`;
    const before = this.#partial.get(key)?.text ?? '';
    // Only the chunk is searched for line ends: a long line in many chunks costs its length once.
    const nl = chunk.indexOf('\n');
    if (nl < 0) {
      if (chunk !== '') this.#partial.set(key, { kapp, stream, text: before + chunk });
      return [];
    }
    const pieces = chunk.slice(nl + 1).split('\n');
    pieces.unshift(before + chunk.slice(0, nl));
    const rest = pieces.pop() ?? '';
    if (rest === '') this.#partial.delete(key);
    else this.#partial.set(key, { kapp, stream, text: rest });
    return pieces.map((line) => ({ kapp, stream, text: line.endsWith('\r') ? line.slice(0, -1) : line }));
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
