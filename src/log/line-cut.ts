/**
 * Cutting a log line that is too long, in one place for every log and view of a step's output (a release's log, a
 * server run's log, the run log, the output a reporter shows): pieces of at most `max` characters, never a surrogate
 * pair cut in two.
 */

/**
 * Characters per line of a log when nothing else is configured (a server's `max_line_length`, a CLI run's release
 * log, the output a reporter shows): a longer line is cut into pieces of this length, so a step printing megabytes
 * without a newline (a binary, a minified file, a progress meter that only returns the carriage) is never held whole.
 */
export const DEFAULT_MAX_LINE_LENGTH = 16_384;

/**
 * Where a piece of `text` that starts at `at` and holds at most `max` characters ends: never inside a surrogate pair
 * (a piece holds at least one whole character, so `max` below 2 counts as 2).
 */
function pieceEnd(text: string, at: number, max: number): number {
  let end = Math.min(at + Math.max(2, max), text.length);
  const last = text.charCodeAt(end - 1);
  if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
  return end;
}

/**
 * The text of a line still being written, cut while it is longer than `max`: the whole pieces to pass on now and the
 * rest to keep (never a surrogate pair cut in two).
 */
export function cutUnfinished(text: string, max: number): { pieces: string[]; rest: string } {
  const pieces: string[] = [];
  let at = 0;
  while (text.length - at > max) {
    const end = pieceEnd(text, at, max);
    pieces.push(text.slice(at, end));
    at = end;
  }
  return { pieces, rest: at === 0 ? text : text.slice(at) };
}

/** `line` cut into pieces of at most `max` characters (one piece when it is short enough). */
export function splitLongLine<T extends { readonly text: string }>(line: T, max: number): T[] {
  if (line.text.length <= max) return [line];
  const pieces: T[] = [];
  for (let at = 0; at < line.text.length;) {
    const end = pieceEnd(line.text, at, max);
    pieces.push({ ...line, text: line.text.slice(at, end) });
    at = end;
  }
  return pieces;
}
