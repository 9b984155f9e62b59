/**
 * Picks and builds the reporter for a run: listr2 on a terminal, plain lines otherwise, or NDJSON when asked.
 * The CLI decides the inputs (the `--reporter` flag, whether stdout is a terminal, `NO_COLOR`, `--verbose`); this
 * module does not read the environment.
 */
import type { Reporter } from './events.js';

/** The reporters a user can ask for; `auto` is listr on a terminal and plain otherwise. */
export type ReporterKind = 'auto' | 'listr' | 'plain' | 'json';

/** What `createReporter` needs. */
export interface ReporterOptions {
  /** Which reporter; `auto` chooses from `isTTY`. */
  readonly kind: ReporterKind;
  /** The process's standard output (or a stand-in). */
  readonly stdout: NodeJS.WritableStream;
  /** The process's standard error (or a stand-in). */
  readonly stderr: NodeJS.WritableStream;
  /** Whether stdout is a terminal. */
  readonly isTTY: boolean;
  /** Show info-level log events (and, on a terminal, keep every output line of a kapp). */
  readonly verbose: boolean;
  /** Use colours in human text. JSON lines never have any. */
  readonly color: boolean;
  /** The command (`install`, `delete`, …) and whether it only plans (install/delete without `--yes`). */
  readonly mode?: { readonly planOnly?: boolean; readonly command: string };
}

/** The concrete kind `auto` resolves to for a given terminal state. */
export function resolveReporterKind(kind: ReporterKind, isTTY: boolean): Exclude<ReporterKind, 'auto'> {
  if (kind !== 'auto') return kind;
  return isTTY ? 'listr' : 'plain';
}

/**
 * Build the reporter for a run. Call `close()` once after `run-finished` (or on abort) to print the summary. Only
 * the chosen reporter's module is loaded (listr2 costs start-up time that plain and JSON runs do not need).
 */
export async function createReporter(options: ReporterOptions): Promise<Reporter> {
  const { stdout, stderr, isTTY, verbose, color, mode } = options;
  switch (resolveReporterKind(options.kind, isTTY)) {
    case 'listr': {
      const { ListrReporter } = await import('./listr-reporter.js');
      return new ListrReporter({ stdout, stderr, isTTY, verbose, color, mode });
    }
    case 'plain': {
      const { PlainReporter } = await import('./plain-reporter.js');
      return new PlainReporter({ out: stdout, verbose, color, mode });
    }
    case 'json': {
      const { JsonReporter } = await import('./json-reporter.js');
      return new JsonReporter({ stdout, stderr, verbose, color, mode });
    }
  }
}
