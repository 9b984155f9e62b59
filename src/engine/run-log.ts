/**
 * A run's log as lines: what the plain reporter prints about the run (`stream: 'kapps'`) and every line a step
 * printed, tagged with its kapp, phase, step and stream. The runs server keeps it per run, the release store per
 * release. Secrets are already redacted in the events this is built from.
 */
import type { Reporter, RunEvent } from '../report/events.js';
import { PlainReporter } from '../report/plain-reporter.js';
import { cutUnfinished } from '../log/line-cut.js';

import type { LogLine } from '../log/line.js';

export type { LogLine };

/**
 * Splits written text into whole lines; a line longer than `max` characters is passed on in pieces. Only the text
 * written now is searched for line ends: a long line written in many chunks (a step printing megabytes without a
 * newline) costs its length once, not once per chunk.
 */
class Lines {
  #partial = '';
  constructor(private readonly max = Infinity) {}
  push(text: string): string[] {
    const nl = text.indexOf('\n');
    let parts: string[];
    if (nl < 0) {
      this.#partial += text;
      parts = [];
    } else {
      // The line the partial one ends (a `\r\n` may straddle the two writes), then the lines of the rest.
      const first = this.#partial + text.slice(0, nl);
      parts = [first.endsWith('\r') ? first.slice(0, -1) : first, ...text.slice(nl + 1).split(/\r?\n/)];
      this.#partial = parts.pop() ?? '';
    }
    if (this.#partial.length > this.max) {
      const { pieces, rest } = cutUnfinished(this.#partial, this.max);
      parts.push(...pieces);
      this.#partial = rest;
    }
    return parts;
  }
  flush(): string[] {
    const rest = this.#partial;
    this.#partial = '';
    return rest === '' ? [] : [rest];
  }
}

/**
 * A reporter that turns the run's events into log lines. `close()` adds the summary lines, as the plain reporter
 * prints them.
 */
export function createRunLog(
  onLine: (line: LogLine) => void,
  options: { verbose?: boolean; command?: string; maxLineLength?: number } = {},
): Reporter {
  const kappsLines = new Lines();
  const now = (): string => new Date().toISOString();
  // The plain reporter only ever calls `write`: a stand-in stream that cuts what it writes into lines, at once.
  const sink = {
    write(chunk: string | Uint8Array): boolean {
      for (const text of kappsLines.push(chunk.toString())) onLine({ time: now(), stream: 'kapps', text });
      return true;
    },
  } as unknown as NodeJS.WritableStream;
  const plain = new PlainReporter({
    out: sink,
    verbose: options.verbose ?? false,
    color: false,
    ...(options.command ? { mode: { command: options.command } } : {}),
  });
  /** Step output per (kapp, phase, step, stream), cut into lines. */
  const steps = new Map<
    string,
    { lines: Lines; kapp: string; phase: string; step: string; stream: 'stdout' | 'stderr' }
  >();
  const flushSteps = (kapp?: string): void => {
    for (const [key, s] of steps) {
      if (kapp !== undefined && s.kapp !== kapp) continue;
      for (const text of s.lines.flush())
        onLine({ time: now(), stream: s.stream, kapp: s.kapp, phase: s.phase, step: s.step, text });
      steps.delete(key);
    }
  };
  return {
    onEvent(event: RunEvent): void {
      if (event.type === 'step-output') {
        const key = JSON.stringify([event.kapp, event.phase, event.step, event.stream]);
        let s = steps.get(key);
        if (!s) {
          s = {
            lines: new Lines(options.maxLineLength),
            kapp: event.kapp,
            phase: event.phase,
            step: event.step,
            stream: event.stream,
          };
          steps.set(key, s);
        }
        for (const text of s.lines.push(event.text))
          onLine({
            time: event.time,
            stream: event.stream,
            kapp: event.kapp,
            phase: event.phase,
            step: event.step,
            text,
          });
        return;
      }
      if (event.type === 'step-finished' || event.type === 'kapp-finished') flushSteps(event.kapp);
      if (event.type === 'run-finished') flushSteps();
      plain.onEvent(event);
    },
    async close(): Promise<void> {
      flushSteps();
      await plain.close();
      for (const text of kappsLines.flush()) onLine({ time: now(), stream: 'kapps', text });
    },
  };
}
