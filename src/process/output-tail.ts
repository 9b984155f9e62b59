/**
 * Keeps the last lines of a step's output, stdout and stderr interleaved in the order they arrived, for
 * failure reports ("the last 20 lines before it failed"). It never holds more than `maxLines` lines plus one
 * partial line per stream, whatever the size of the output, so it costs the same for 1 KB and for 1 GB.
 *
 * Not its job: keeping the whole output (see `spawnStep`'s capture), colour handling, or deciding what to show.
 */

/** The longest line kept, in UTF-16 code units; longer lines are cut and end with `…`. */
export const MAX_TAIL_LINE_LENGTH = 2000;

/** Default number of lines kept. */
export const DEFAULT_TAIL_LINES = 20;

type Stream = 'stdout' | 'stderr';

/** A rolling window over the last complete lines of two interleaved streams. */
export class OutputTail {
  readonly #maxLines: number;
  readonly #lines: string[] = [];
  /** The unfinished last line of each stream, waiting for its newline. */
  readonly #pending: Record<Stream, string> = { stdout: '', stderr: '' };

  /** `maxLines`: how many lines to keep (at least 1). */
  constructor(maxLines: number = DEFAULT_TAIL_LINES) {
    this.#maxLines = Math.max(1, Math.floor(maxLines));
  }

  /** Adds a decoded chunk of `stream`'s output. */
  push(stream: Stream, text: string): void {
    if (text.length === 0) return;
    let end = text.lastIndexOf('\n');
    if (end === -1) {
      this.#pending[stream] = clip(this.#pending[stream] + text);
      return;
    }
    // Only the last `maxLines` complete lines of a chunk can survive, so find them from the end instead of
    // splitting a multi-megabyte chunk into all of its lines.
    const complete: string[] = [];
    const rest = text.slice(end + 1);
    let start = previousNewline(text, end);
    while (start !== -1 && complete.length < this.#maxLines) {
      complete.push(text.slice(start + 1, end));
      end = start;
      start = previousNewline(text, end);
    }
    if (complete.length < this.#maxLines) {
      // The chunk's first line finishes the line that earlier chunks started.
      complete.push(this.#pending[stream] + text.slice(0, end));
    }
    for (let i = complete.length - 1; i >= 0; i--) this.#add(complete[i] ?? '');
    this.#pending[stream] = clip(rest);
  }

  /** The kept lines, oldest first, with each stream's unfinished last line appended (stdout's first). */
  lines(): string[] {
    const all = [...this.#lines];
    for (const stream of ['stdout', 'stderr'] as const) {
      const pending = this.#pending[stream];
      if (pending.length > 0) all.push(display(pending));
    }
    return all.slice(-this.#maxLines);
  }

  #add(line: string): void {
    this.#lines.push(display(line));
    if (this.#lines.length > this.#maxLines) this.#lines.shift();
  }
}

/** The index of the last `\n` before index `end`, or -1. (`lastIndexOf` with a negative start still checks 0.) */
function previousNewline(text: string, end: number): number {
  return end === 0 ? -1 : text.lastIndexOf('\n', end - 1);
}

/** What a terminal would show for a line: `\r` rewinds (progress bars), so keep the text after the last one. */
function display(line: string): string {
  let text = line.endsWith('\r') ? line.slice(0, -1) : line;
  const cr = text.lastIndexOf('\r');
  if (cr !== -1) text = text.slice(cr + 1);
  return clip(text);
}

function clip(line: string): string {
  return line.length > MAX_TAIL_LINE_LENGTH ? line.slice(0, MAX_TAIL_LINE_LENGTH - 1) + '…' : line;
}
