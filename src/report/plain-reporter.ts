/**
 * The plain reporter, for logs and CI: one stable, greppable line per event worth a line, written as the events
 * arrive, then the summary. It never moves the cursor and never rewrites a line. It does not decide which child
 * output is shown (the executor did) or where the text goes (the caller passes the stream).
 */
import type { Reporter, RunEvent } from './events.js';
import {
  kappFinishedLine,
  kappStartedLine,
  logLine,
  runStartedLine,
  showLog,
  stepFinishedLine,
  stepStartedLine,
} from './event-lines.js';
import { palette, type Palette } from './format.js';
import { LineBuffer, type OutputLine } from './line-buffer.js';
import { RunTally } from './run-tally.js';
import { formatSummary } from './summary.js';

/** Options of the plain reporter. */
export interface PlainReporterOptions {
  /** Where every line goes (stdout normally). */
  readonly out: NodeJS.WritableStream;
  /** Show info-level log events too. */
  readonly verbose: boolean;
  /** Colour status words and the summary. */
  readonly color: boolean;
  /** The command and whether it only planned (for the summary's notes). */
  readonly mode?: { readonly planOnly?: boolean; readonly command: string };
}

/** Writes one line per event to a stream, and the summary on `close()`. */
export class PlainReporter implements Reporter {
  readonly #options: PlainReporterOptions;
  readonly #colors: Palette;
  readonly #tally = new RunTally();
  readonly #lines = new LineBuffer();
  #closed = false;

  constructor(options: PlainReporterOptions) {
    this.#options = options;
    this.#colors = palette(options.color);
  }

  /** Print the line(s) for one event. */
  onEvent(event: RunEvent): void {
    if (this.#closed) return;
    this.#tally.apply(event);
    const c = this.#colors;
    const dryRun = this.#tally.dryRun;
    switch (event.type) {
      case 'run-started':
        this.#write(runStartedLine(event));
        return;
      case 'kapp-started':
        this.#write(kappStartedLine(event));
        return;
      case 'step-started':
        this.#write(stepStartedLine(event, dryRun));
        return;
      case 'step-output':
        if (event.hidden) return;
        this.#writeOutput(this.#lines.push(event.kapp, event.stream, event.text));
        return;
      case 'step-finished': {
        this.#writeOutput(this.#lines.flush(event.kapp));
        const line = stepFinishedLine(event, dryRun, c);
        if (line !== undefined) this.#write(line);
        return;
      }
      case 'kapp-finished':
        this.#writeOutput(this.#lines.flush(event.kapp));
        this.#write(kappFinishedLine(event, dryRun, c));
        return;
      case 'log':
        if (showLog(event, this.#options.verbose)) this.#write(logLine(event, c));
        return;
      case 'run-finished':
        this.#writeOutput(this.#lines.flushAll());
        return;
    }
  }

  /** Flush unfinished output lines and print the summary (once, and only if the run started). */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#writeOutput(this.#lines.flushAll());
    if (this.#tally.started) {
      const summary = formatSummary(this.#tally, {
        colors: this.#colors,
        planOnly: this.#options.mode?.planOnly,
        command: this.#options.mode?.command,
      });
      this.#options.out.write(`\n${summary.join('\n')}\n`);
    }
    return Promise.resolve();
  }

  #write(line: string): void {
    this.#options.out.write(`${line}\n`);
  }

  #writeOutput(lines: readonly OutputLine[]): void {
    for (const line of lines) this.#write(line.text === '' ? `[${line.kapp}]` : `[${line.kapp}] ${line.text}`);
  }
}
