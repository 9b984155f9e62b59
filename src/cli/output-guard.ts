/**
 * What kapps does when its own stdout or stderr goes away: a reader that closed early (`kapps … | head -3`), a
 * terminal that was closed, a full disk behind a redirection. Writing there fails (EPIPE, EIO, ENOSPC…), either at
 * once (files) or a moment later as an 'error' event (pipes, terminals). Either way kapps stops writing to that
 * stream and goes on: a run is never ended half-way because nobody is reading its output, so its steps finish (or
 * are stopped) and its release is closed as usual. The exit status is the command's own.
 */

/** The streams whose writes failed, by name. */
const closed = new Set<'stdout' | 'stderr'>();

function mute(name: 'stdout' | 'stderr', stream: NodeJS.WriteStream, error: unknown): void {
  if (closed.has(name)) return;
  closed.add(name);
  stream.write = (...args: unknown[]) => {
    const callback = args.find((a): a is () => void => typeof a === 'function');
    if (callback) queueMicrotask(callback);
    return true;
  };
  const other = name === 'stdout' ? 'stderr' : 'stdout';
  if (!closed.has(other)) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code ?? 'an error';
    process.stderr.write(`kapps: ${name} was closed (${code}); nothing more is written there, the command goes on\n`);
  }
}

/** Install the guard on `process.stdout` and `process.stderr` (once, before anything is written). */
export function guardOutputStreams(): void {
  for (const name of ['stdout', 'stderr'] as const) {
    const stream = process[name];
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = (...args: unknown[]) => {
      try {
        return write(...args);
      } catch (error) {
        // A file (a redirection) is written synchronously: its errors are thrown here.
        mute(name, stream, error);
        return true;
      }
    };
    // Pipes and terminals report a failed write as an 'error' event.
    stream.on('error', (error: unknown) => mute(name, stream, error));
  }
}
