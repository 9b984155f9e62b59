/**
 * The JSON reporter (`--reporter json`): every event, unchanged, as one line of JSON (NDJSON) on stdout, and
 * nothing else there, so a program can read stdout line by line. Human text (warnings, errors, the summary) goes to
 * stderr. It adds no colour to stdout and does not reorder, filter or re-time events.
 */
import type { Reporter, RunEvent } from './events.js';
import { logLine, showLog } from './event-lines.js';
import { palette, type Palette } from './format.js';
import { RunTally } from './run-tally.js';
import { formatSummary } from './summary.js';

/** Options of the JSON reporter. */
export interface JsonReporterOptions {
  /** Receives the NDJSON lines, and nothing else. */
  readonly stdout: NodeJS.WritableStream;
  /** Receives the human text: log lines and the summary. */
  readonly stderr: NodeJS.WritableStream;
  /** Show info-level log events on stderr too (they are always in the NDJSON). */
  readonly verbose: boolean;
  /** Colour the human text on stderr; never affects stdout. */
  readonly color: boolean;
  /** The command and whether it only planned (for the summary's notes). */
  readonly mode?: { readonly planOnly?: boolean; readonly command: string };
}

/** Writes each event as a JSON line on stdout; warnings and the summary on stderr. */
export class JsonReporter implements Reporter {
  readonly #options: JsonReporterOptions;
  readonly #colors: Palette;
  readonly #tally = new RunTally();
  #closed = false;

  constructor(options: JsonReporterOptions) {
    this.#options = options;
    this.#colors = palette(options.color);
  }

  /** Write the event as one NDJSON line (and a human line on stderr for warnings and errors). */
  onEvent(event: RunEvent): void {
    if (this.#closed) return;
    // Output the step's `print` hides is for a run's log only.
    if (event.type === 'step-output' && event.hidden) return;
    this.#tally.apply(event);
    this.#options.stdout.write(`${JSON.stringify(event)}\n`);
    if (event.type === 'log' && showLog(event, this.#options.verbose)) {
      this.#options.stderr.write(`${logLine(event, this.#colors)}\n`);
    }
  }

  /** Print the summary on stderr (once, and only if the run started). */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    if (this.#tally.started) {
      const summary = formatSummary(this.#tally, {
        colors: this.#colors,
        planOnly: this.#options.mode?.planOnly,
        command: this.#options.mode?.command,
      });
      this.#options.stderr.write(`${summary.join('\n')}\n`);
    }
    return Promise.resolve();
  }
}
