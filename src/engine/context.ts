/**
 * What the engine needs from whoever drives it — the CLI (one process, one run) or the runs server (many runs in
 * one process): where relative paths start, the environment it reads its settings from and starts steps with, the
 * command line a release records, and the view its events go to. Nothing in `src/engine/` reads `process.env`,
 * `process.cwd()`, `process.argv` or writes to `process.stdout`/`process.stderr` itself, and it formats no text.
 */
import type { LogLimits } from '../release/log-budget.js';
import type { Timings } from '../diagnostics/timings.js';
import type { BackendSpec } from '../release/store.js';
import type { ReleaseStore } from '../release/store-types.js';
import type { EngineView } from './view.js';

export interface EngineContext {
  /** The directory relative paths (stack file, config, workspace, backend) are resolved against. */
  readonly cwd: string;
  /**
   * The environment kapps' settings are read from (KAPPS_BACKEND, KAPPS_HOME, KAPPS_WORKERS, …) and git runs with;
   * templates and steps see it too unless `runEnv` is given.
   */
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * What the run's templates (`env`, `expandenv`) read and its steps start from, when it is not `env`: the runs
   * server gives a run only what its project's configuration passes, never the server's own variables.
   */
  readonly runEnv?: Readonly<Record<string, string | undefined>>;
  /**
   * The directories (absolute, links resolved) the template functions that read the file system (`exists`,
   * `findFiles`) may look in; unset: anywhere (the CLI). The runs server gives the project and its workspace.
   */
  readonly readRoots?: readonly string[];
  /** The command line recorded in a release (redacted before it is recorded). */
  readonly argv: readonly string[];
  /**
   * What the engine tells the driver (warnings, fetches, the preview before a plan, the release recorded), as typed
   * events. Unset: the text view, writing to `message` and `result`.
   */
  readonly view?: EngineView;
  /** The text view's messages about the run (a CLI prints them on stderr). Whole lines. */
  message(text: string): void;
  /** The text view's line saying where a run was recorded (a CLI prints it on stdout). Whole lines. */
  result(text: string): void;
  /** Who asked for the run when not the user running kapps (the runs server: the token's name); a release's owner. */
  readonly runBy?: string;
  /** Bounds of the release log (the runs server's `limits`); unlimited when absent (the CLI). */
  readonly logLimits?: LogLimits;
  /** Where the run's timings go (`KAPPS_TIMINGS`); unset: nothing is measured. */
  readonly timings?: Timings;
  /**
   * A release store the driver keeps open for the backend `spec` (the runs server's, shared by its runs), or undefined:
   * the run opens its own. Closing the store it gives must leave it open.
   */
  readonly releaseStore?: (spec: BackendSpec) => ReleaseStore | undefined;
}

/** The selection, overrides and source options of a command that opens a stack (the CLI's shared options). */
export interface StackParams {
  stackFile: string;
  stackName: string;
  workspaceDir?: string;
  include: string[];
  exclude: string[];
  parents: boolean;
  provider?: string;
  provisioner?: string;
  account?: string;
  region?: string;
  profile?: string;
  cluster?: string;
  config?: string;
  strictVars: boolean;
  /**
   * Git sources: unset, missing ones are fetched and present ones used as they are; `--fetch` (true), run commands
   * also bring present ones up to date; `--no-fetch` (false), nothing is fetched and a kapp that cannot be read is
   * an error.
   */
  fetch?: boolean;
  /** `--no-actions` (false): no warning about Sugarkube actions, which kapps never runs. */
  actions?: boolean;
  sourceSub?: string[];
  /** Git sources pinned to a commit (a rollback): kapp id → source id → full SHA. */
  sourcePins?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** Where releases are kept and under which project (`--project`, `--backend`). */
export interface TargetParams {
  stackFile: string;
  stackName: string;
  project?: string;
  backend?: string;
}
