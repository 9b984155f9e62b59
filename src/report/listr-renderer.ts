/**
 * The listr2 pieces behind the terminal reporter: a renderer that listr2 uses whenever the reporter says it is on a
 * terminal (listr2 alone would look at `process.stdout`), that shows waiting kapps as waiting and limits how often it
 * redraws; a process output that writes to given streams and can strip colours; and icon colours from our palette.
 * No knowledge of runs or events here.
 */
import {
  DefaultRenderer,
  figures,
  ListrDefaultRendererLogLevels,
  ListrLogLevels,
  ProcessOutput,
  type ListrDefaultRendererOptions,
  type ListrDefaultRendererTask,
  type ListrEventManager,
} from 'listr2';
import { stripAnsi, type Palette } from './format.js';

/**
 * listr2 chooses its renderer from `process.stdout.isTTY`. Declaring the default renderer usable anywhere lets the
 * reporter decide from the `isTTY` it was given, which is what makes a fake terminal in tests possible.
 */
export class TerminalRenderer extends DefaultRenderer {
  static override nonTTY = true;
  // Redeclared only so that listr2's option types accept the extra options below.
  static override rendererOptions: TerminalRendererOptions = DefaultRenderer.rendererOptions;
  readonly #isWaiting?: (definition: object) => boolean;
  readonly #waitingIcon: string;
  readonly #frameMs: number;
  readonly #footer?: () => string | undefined;
  #frameTimer?: ReturnType<typeof setTimeout>;
  #nextFrameAt = 0;

  constructor(tasks: ListrDefaultRendererTask[], options: TerminalRendererOptions, events: ListrEventManager) {
    super(tasks, options, events);
    this.#isWaiting = options.isWaiting;
    this.#waitingIcon = options.waitingIcon ?? figures.squareSmallFilled;
    this.#frameMs = options.frameMs ?? 0;
    this.#footer = options.footer;
  }

  /** listr2's frame (the list, its bottom bar and prompt), then our footer when there is one. */
  override create(options?: Parameters<DefaultRenderer['create']>[0]): string {
    const frame = super.create(options);
    const footer = this.#footer?.();
    if (footer === undefined || footer === '') return frame;
    return frame === '' ? footer : `${frame}\n\n${footer}`;
  }

  /** Draw a frame now, whatever the frame rate (for news the user must see at once). */
  updateNow(): void {
    if (this.#frameTimer) clearTimeout(this.#frameTimer);
    this.#frameTimer = undefined;
    try {
      super.update();
    } catch {
      // Not drawing yet (listr2 loads its terminal writer first): the first frame will show it.
    }
  }

  /**
   * listr2 redraws the whole list on every change, and a frame costs about a third of a millisecond per line
   * (wrapping and erasing). Coalesce changes into at most one frame per `frameMs`, and leave at least four times
   * the cost of the last frame between frames, so a big run or a chatty step cannot take the CPU.
   */
  override update(): void {
    if (this.#frameMs <= 0) {
      super.update();
      return;
    }
    if (this.#frameTimer) return;
    this.#frameTimer = setTimeout(
      () => {
        this.#frameTimer = undefined;
        const start = Date.now();
        super.update();
        const cost = Date.now() - start;
        this.#nextFrameAt = Date.now() + Math.max(this.#frameMs, cost * 4);
      },
      Math.max(0, this.#nextFrameAt - Date.now()),
    );
    this.#frameTimer.unref();
  }

  override end(): void {
    if (this.#frameTimer) clearTimeout(this.#frameTimer);
    this.#frameTimer = undefined;
    super.end();
  }

  // Every task is "started" from listr2's point of view; a kapp still waiting must not look busy.
  protected override style(task: ListrDefaultRendererTask, output = false): string {
    if (!output && task.isStarted() && this.#isWaiting?.(task.task)) return this.#waitingIcon;
    return super.style(task, output);
  }
}

/** Renderer options of the terminal display: listr2's, plus how to tell a kapp that has not started. */
export interface TerminalRendererOptions extends ListrDefaultRendererOptions {
  /** Whether the task (given by its definition object) is a kapp that has not started yet. */
  readonly isWaiting?: (definition: object) => boolean;
  /** The icon of a waiting kapp. */
  readonly waitingIcon?: string;
  /** The shortest time between two frames, in ms; 0 draws on every change. */
  readonly frameMs?: number;
  /** Text drawn under the list (e.g. that the run is stopping), read at every frame. */
  readonly footer?: () => string | undefined;
}

/** A listr2 process output writing to the given streams, stripping colour codes when asked (`color: false`). */
export class StreamOutput extends ProcessOutput {
  readonly #strip: boolean;
  constructor(stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream, strip: boolean) {
    // listr2 types its streams as tty.WriteStream but only calls write() and reads the size fields.
    super(stdout as NodeJS.WriteStream, stderr as NodeJS.WriteStream);
    this.#strip = strip;
  }
  override toStdout(buffer: string, eol?: boolean): boolean {
    return super.toStdout(this.#strip ? stripAnsi(buffer) : buffer, eol);
  }
  override toStderr(buffer: string, eol?: boolean): boolean {
    return super.toStderr(this.#strip ? stripAnsi(buffer) : buffer, eol);
  }
}

/**
 * listr2's icon colours, taken from our palette instead of listr2's own colour detection, so `color: false` means
 * no colour codes whatever the environment says.
 */
export function terminalColors(c: Palette): Record<ListrDefaultRendererLogLevels, (s?: string) => string> {
  const L = ListrDefaultRendererLogLevels;
  return {
    [L.SKIPPED_WITH_COLLAPSE]: c.yellow,
    [L.SKIPPED_WITHOUT_COLLAPSE]: c.yellow,
    [L.OUTPUT]: c.dim,
    [L.OUTPUT_WITH_BOTTOMBAR]: c.dim,
    [L.PENDING]: c.yellow,
    [L.COMPLETED]: c.green,
    [L.COMPLETED_WITH_FAILED_SUBTASKS]: c.yellow,
    [L.COMPLETED_WITH_FAILED_SISTER_TASKS]: c.red,
    [L.RETRY]: c.yellow,
    [L.ROLLING_BACK]: c.red,
    [L.ROLLED_BACK]: c.red,
    [L.FAILED]: c.red,
    [L.FAILED_WITH_FAILED_SUBTASKS]: c.red,
    [L.WAITING]: c.dim,
    [L.PAUSED]: c.yellow,
  };
}

/** The same for the line-by-line fallback renderer. */
export function lineColors(c: Palette): Record<ListrLogLevels, (s?: string) => string> {
  const L = ListrLogLevels;
  return {
    [L.STARTED]: c.yellow,
    [L.COMPLETED]: c.green,
    [L.FAILED]: c.red,
    [L.SKIPPED]: c.yellow,
    [L.OUTPUT]: c.dim,
    [L.TITLE]: c.dim,
    [L.ROLLBACK]: c.red,
    [L.RETRY]: c.yellow,
    [L.PROMPT]: c.dim,
    [L.PAUSED]: c.yellow,
  };
}
