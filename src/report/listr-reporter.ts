/**
 * The terminal reporter, drawn with listr2: one line per kapp, showing what it waits on, the step it runs and for
 * how long, then how it ended. listr2 only displays. Our executor schedules the kapps. Each kapp gets one task, and
 * all tasks run at once (`concurrent: true`, no cap). Each task waits on a promise that the reporter resolves when
 * `kapp-finished` arrives, so listr2 never decides what runs or how many run.
 *
 * - SIGINT has one owner, the CLI: `registerSignalListeners: false`.
 * - A failed kapp does not end the display: `exitOnError: false`.
 * - On a terminal (the `isTTY` option) listr2's default renderer redraws the list in place on stdout. Otherwise its
 *   fallback renderer prints lines, all of them on stderr (through a `ListrLogger` with every level in
 *   `toStderr`), so stdout only gets the summary.
 * - Log events go to stderr. While the list is drawn, listr2 holds back other writes and prints them when it ends.
 */
import {
  figures,
  Listr,
  ListrLogger,
  ListrLogLevels,
  type ListrTask,
  type ListrTaskWrapper,
  type SimpleRenderer,
} from 'listr2';
import type { Reporter, RunEvent } from './events.js';
import { kappStartedLine, logLine, showLog, stepFinishedLine, stepStartedLine } from './event-lines.js';
import {
  describeStepOutcome,
  formatCommandLine,
  formatDuration,
  formatElapsed,
  palette,
  stepLabel,
  type Palette,
} from './format.js';
import { lineColors, StreamOutput, TerminalRenderer, terminalColors } from './listr-renderer.js';
import { LineBuffer, type OutputLine } from './line-buffer.js';
import { RunTally, type KappRecord } from './run-tally.js';
import { formatSummary } from './summary.js';

/** Options of the listr reporter. */
export interface ListrReporterOptions {
  /** Receives the live display on a terminal, and the summary. */
  readonly stdout: NodeJS.WritableStream;
  /** Receives log lines, and the whole display when not on a terminal. */
  readonly stderr: NodeJS.WritableStream;
  /** stdout is a terminal: redraw in place. Otherwise print the fallback lines on stderr. */
  readonly isTTY: boolean;
  /** Show info-level log events, and keep every output line of a kapp (not only the last few) after it ends. */
  readonly verbose: boolean;
  /** Use colours. */
  readonly color: boolean;
  /** The command and whether it only planned (for the summary's notes). */
  readonly mode?: { readonly planOnly?: boolean; readonly command: string };
  /** The clock for elapsed times, in ms since the epoch (default `Date.now`). */
  readonly now?: () => number;
  /** How often running kapps' elapsed times are redrawn, in ms; 0 turns it off (default 1000). */
  readonly tickMs?: number;
  /** Animate a spinner on running kapps (default true); off, the display only changes when events arrive. */
  readonly animate?: boolean;
  /** The shortest time between two redraws of the terminal display, in ms; 0 redraws on every change (default 100). */
  readonly frameMs?: number;
}

/**
 * What a terminal shows of a line written with carriage returns (a progress bar: `10%\r50%\r100%`): each part
 * overwrites the start of the one before. The live list shows that, not the carriage returns, which would move its
 * cursor and mangle the display.
 */
export function lastState(text: string): string {
  if (!text.includes('\r')) return text;
  let shown = '';
  for (const part of text.split('\r')) shown = part + shown.slice(part.length);
  return shown;
}

/** How many of a running kapp's output lines the terminal display keeps under it (unless verbose). */
const OUTPUT_LINES = 5;

type Wrapper = ListrTaskWrapper<object, typeof TerminalRenderer, typeof SimpleRenderer>;

/** What the reporter keeps per kapp on display. */
interface KappView {
  readonly record: KappRecord;
  /** The listr2 task wrapper, once listr2 started the kapp's task. */
  wrapper?: Wrapper;
  /** Output lines that arrived before the wrapper. */
  readonly queued: string[];
  /** The last title set, to avoid redraws for nothing. */
  title?: string;
  readonly done: Promise<void>;
  resolve: () => void;
}

/** Draws the run with listr2 and prints the summary on `close()`. */
export class ListrReporter implements Reporter {
  readonly #options: ListrReporterOptions;
  readonly #colors: Palette;
  readonly #now: () => number;
  readonly #tally = new RunTally();
  readonly #lines = new LineBuffer();
  readonly #views = new Map<string, KappView>();
  #listr?: Listr<object, typeof TerminalRenderer, 'simple'>;
  #running?: Promise<void>;
  #ticker?: ReturnType<typeof setInterval>;
  #attached = 0;
  #onDisplayed?: () => void;
  readonly #displayed: Promise<void>;
  #closing?: Promise<void>;
  #notice?: string;

  constructor(options: ListrReporterOptions) {
    this.#options = options;
    this.#colors = palette(options.color);
    this.#now = options.now ?? Date.now;
    this.#displayed = new Promise((resolve) => (this.#onDisplayed = resolve));
  }

  /** Resolves once listr2 shows every kapp of the run (or the reporter closed). Lets callers wait for a frame. */
  displayed(): Promise<void> {
    return this.#displayed;
  }

  /** Update the display for one event. */
  onEvent(event: RunEvent): void {
    if (this.#closing) return;
    const record = this.#tally.apply(event);
    switch (event.type) {
      case 'run-started':
        this.#start();
        return;
      case 'log':
        if (showLog(event, this.#options.verbose)) this.#options.stderr.write(`${logLine(event, this.#colors)}\n`);
        return;
      case 'run-finished':
        return;
      default:
        break;
    }
    const view = record && this.#views.get(record.id);
    if (!view) return;
    const fallback = !this.#options.isTTY;
    const dryRun = this.#tally.dryRun;
    switch (event.type) {
      case 'kapp-started':
        if (fallback) this.#output(view, kappStartedLine(event));
        break;
      case 'step-started':
        if (fallback) this.#output(view, stepStartedLine(event, dryRun));
        else if (dryRun) {
          this.#output(
            view,
            `${stepLabel(event.phase, event.step)} would run: ${formatCommandLine(event.command, event.args)}`,
          );
        }
        break;
      case 'step-output':
        if (event.hidden) break;
        this.#outputLines(view, this.#lines.push(event.kapp, event.stream, event.text));
        break;
      case 'step-finished': {
        this.#outputLines(view, this.#lines.flush(event.kapp));
        const line = stepFinishedLine(event, dryRun, this.#colors);
        if (fallback && line !== undefined) this.#output(view, line);
        break;
      }
      case 'kapp-finished':
        this.#outputLines(view, this.#lines.flush(event.kapp));
        view.resolve();
        break;
    }
    this.#refresh(view);
  }

  /**
   * On a terminal, show `text` under the list at once (and in the list's last frame); elsewhere leave it to the
   * caller (the fallback lines go to stderr, where the caller prints it).
   */
  notice(text: string): boolean {
    if (!this.#options.isTTY || !this.#listr || this.#closing) return false;
    this.#notice = text;
    const renderer = (this.#listr as unknown as { renderer?: unknown }).renderer;
    if (renderer instanceof TerminalRenderer) renderer.updateNow();
    return true;
  }

  /** End the display (kapps still on it are shown as interrupted), then print the summary on stdout. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    if (this.#ticker) clearInterval(this.#ticker);
    for (const view of this.#views.values()) view.resolve();
    this.#onDisplayed?.();
    if (this.#running) await this.#running;
    if (this.#tally.started) {
      const summary = formatSummary(this.#tally, {
        colors: this.#colors,
        planOnly: this.#options.mode?.planOnly,
        command: this.#options.mode?.command,
      });
      this.#options.stdout.write(`\n${summary.join('\n')}\n`);
    }
  }

  #start(): void {
    if (this.#listr) return;
    const { stdout, stderr, color, verbose } = this.#options;
    const keepOutput = verbose || this.#tally.dryRun;
    const tasks: ListrTask<object, typeof TerminalRenderer, typeof SimpleRenderer>[] = [];
    const viewOf = new WeakMap<object, KappView>();
    for (const record of this.#tally.records()) {
      let resolve = (): void => undefined;
      const done = new Promise<void>((r) => (resolve = r));
      const view: KappView = { record, queued: [], done, resolve };
      this.#views.set(record.id, view);
      view.title = this.#title(view);
      const definition: ListrTask<object, typeof TerminalRenderer, typeof SimpleRenderer> = {
        title: view.title,
        task: (_ctx, wrapper) => this.#runTask(view, wrapper),
        rendererOptions: { outputBar: keepOutput ? Infinity : OUTPUT_LINES, persistentOutput: keepOutput },
      };
      viewOf.set(definition, view);
      tasks.push(definition);
    }
    if (tasks.length === 0) this.#onDisplayed?.();
    this.#listr = new Listr<object, typeof TerminalRenderer, 'simple'>(tasks, {
      concurrent: true,
      exitOnError: false,
      registerSignalListeners: false,
      collectErrors: false,
      renderer: TerminalRenderer,
      rendererOptions: {
        logger: new ListrLogger({ processOutput: new StreamOutput(stdout, stderr, !color) }),
        lazy: this.#options.animate === false,
        frameMs: this.#options.frameMs ?? 100,
        // Truncating is cheaper than wrapping, and the summary repeats whatever a long line loses.
        formatOutput: 'truncate',
        isWaiting: (definition) => viewOf.get(definition)?.record.state === 'pending',
        footer: () => this.#notice,
        waitingIcon: this.#colors.dim(figures.squareSmallFilled),
        color: terminalColors(this.#colors),
      },
      fallbackRenderer: 'simple',
      fallbackRendererCondition: !this.#options.isTTY,
      fallbackRendererOptions: {
        logger: new ListrLogger({
          processOutput: new StreamOutput(stdout, stderr, !color),
          toStderr: Object.values(ListrLogLevels),
        }),
        color: lineColors(this.#colors),
      },
    });
    this.#running = this.#listr.run().then(
      () => undefined,
      (error: unknown) => {
        stderr.write(`error: the progress display failed: ${error instanceof Error ? error.message : String(error)}\n`);
      },
    );
    const tickMs = this.#options.tickMs ?? 1000;
    if (this.#options.isTTY && tickMs > 0) {
      this.#ticker = setInterval(() => {
        for (const view of this.#views.values()) if (view.record.state === 'running') this.#refresh(view);
      }, tickMs);
      this.#ticker.unref();
    }
  }

  async #runTask(view: KappView, wrapper: Wrapper): Promise<void> {
    view.wrapper = wrapper;
    for (const line of view.queued.splice(0)) wrapper.output = line;
    this.#refresh(view);
    this.#attached += 1;
    if (this.#attached === this.#views.size) this.#onDisplayed?.();
    await view.done;
    this.#finish(view, wrapper);
  }

  /** Give a kapp's task its final look: listr2's completed, skipped or failed state with our text. */
  #finish(view: KappView, wrapper: Wrapper): void {
    const { record } = view;
    const id = record.id;
    const fallback = !this.#options.isTTY;
    const finished = record.finished;
    if (!finished) {
      // close() before kapp-finished: the run was aborted.
      if (record.state === 'pending') {
        wrapper.skip(fallback ? 'not started' : `${id} not started`);
        return;
      }
      throw new Error(fallback ? 'did not finish' : `${id} did not finish`);
    }
    const took = formatDuration(finished.durationMs);
    switch (finished.status) {
      case 'succeeded':
        wrapper.title = this.#tally.dryRun ? `${id} succeeded (dry run)` : `${id} succeeded in ${took}`;
        return;
      case 'skipped': {
        const reason = finished.reason ?? 'skipped';
        if (fallback) wrapper.title = id;
        wrapper.skip(fallback ? reason : `${id} skipped: ${reason}`);
        return;
      }
      case 'failed': {
        const step = record.failedStep;
        const why = step
          ? `${stepLabel(step.phase, step.step)}: ${describeStepOutcome(step)}`
          : (finished.reason ?? 'failed');
        if (fallback) wrapper.title = id;
        throw new Error(fallback ? `failed in ${took}: ${why}` : `${id} failed in ${took}: ${why}`);
      }
      case 'cancelled': {
        const why = finished.reason !== undefined ? `: ${finished.reason}` : '';
        if (fallback) wrapper.title = id;
        throw new Error(fallback ? `cancelled after ${took}${why}` : `${id} cancelled after ${took}${why}`);
      }
    }
  }

  /** The title of a kapp that has not finished. */
  #title(view: KappView): string {
    const { record } = view;
    if (record.state === 'pending') {
      if (this.#tally.started?.dependsOn === undefined) return `${record.id} waiting`;
      const waiting = this.#tally.waitingOn(record);
      if (waiting.length > 0) return `${record.id} waiting on ${waiting.join(', ')}`;
      const blocked = this.#tally.blockedBy(record);
      if (blocked.length > 0)
        return `${record.id} blocked: ${blocked.map((id) => `${id} ${this.#tally.get(id)?.state}`).join(', ')}`;
      return `${record.id} queued`;
    }
    const elapsed = record.startedAtMs === undefined ? undefined : formatElapsed(this.#now() - record.startedAtMs);
    const suffix = elapsed === undefined ? '' : ` (${elapsed})`;
    const step = record.currentStep;
    return step ? `${record.id} ${stepLabel(step.phase, step.step)}${suffix}` : `${record.id} running${suffix}`;
  }

  /** Redraw a kapp's title, and those of kapps waiting on it (a finished dependency changes their text). */
  #refresh(view: KappView): void {
    this.#setTitle(view);
    if (view.record.state !== 'running' && view.record.state !== 'pending') {
      for (const other of this.#views.values()) {
        if (other.record.state === 'pending' && other.record.deps.includes(view.record.id)) this.#setTitle(other);
      }
    }
  }

  #setTitle(view: KappView): void {
    if (!view.wrapper || view.record.finished) return;
    const title = this.#title(view);
    if (title === view.title && view.wrapper.title === title) return;
    view.title = title;
    view.wrapper.title = title;
  }

  #outputLines(view: KappView, lines: readonly OutputLine[]): void {
    const fallback = !this.#options.isTTY;
    for (const line of lines) {
      const text = lastState(line.text);
      if (text === '') continue;
      this.#output(view, fallback ? `[${line.kapp}] ${text}` : text);
    }
  }

  #output(view: KappView, text: string): void {
    if (view.wrapper) view.wrapper.output = text;
    else view.queued.push(text);
  }
}
