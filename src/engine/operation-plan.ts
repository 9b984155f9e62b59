/**
 * What a run command does, computed from the command and its options before anything runs: whether it reads the
 * release history, takes the release lock and records the run, fills the workspace, shows a preview, and how
 * `--changed-only` picks its kapps. `runOperation` follows the plan step by step; nothing there asks again.
 */
import { KappsError } from '../diagnostics/errors.js';
import type { RunCommand, RunMode } from '../execute/types.js';

/** The options of a run command the plan depends on. */
export interface PlanParams {
  readonly dryRun: boolean;
  readonly yes?: boolean;
  readonly oneShot?: boolean;
  readonly validate: boolean;
  readonly changedOnly?: boolean;
  readonly refresh?: boolean;
  readonly allowNoValue?: boolean;
  readonly allOutput?: boolean;
}

/**
 * How `--changed-only` picks the kapps to process: not at all; against the state the run's own release began with
 * (`lock`), with the live outputs read first (`lock-refresh`); or, when the run takes no lock (a dry run), against
 * the latest release.
 */
export type ChangedSelection = 'all' | 'lock' | 'lock-refresh' | 'latest';

export interface OperationPlan {
  readonly command: RunCommand;
  readonly mode: RunMode;
  /** install and delete: the release history is read (preview, `--changed-only`) and, when applied, written. */
  readonly operation?: 'install' | 'delete';
  /** The release lock is taken before anything is touched, and the run is recorded as a release. */
  readonly takesLock: boolean;
  /** A dry run reads every kapp it reports on: missing git sources are fetched (or `--no-fetch` fails). */
  readonly planning: boolean;
  /** The workspace is filled before the kapps run (not in a dry run). */
  readonly fillsWorkspace: boolean;
  /** `<no value>` in a step is an error: checked before the lock, and again once the workspace is filled. */
  readonly applyNoValue: boolean;
  /** Every command is checked to exist before anything runs. */
  readonly checksCommands: boolean;
  /** Every line the steps print is kept (a recorded run keeps them in the release's log, what `print` hides too). */
  readonly allOutput: boolean;
  /** The preview against the latest release is shown before the plan. */
  readonly showsPreview: boolean;
  readonly changed: ChangedSelection;
}

export function runMode(params: Pick<PlanParams, 'oneShot' | 'yes'>): RunMode {
  if (params.oneShot) return 'one-shot';
  return params.yes ? 'apply' : 'plan';
}

/** The plan of `command` with `params`; throws for options that do not go together. */
export function operationPlan(command: RunCommand, params: PlanParams): OperationPlan {
  const mode = runMode(params);
  if (params.changedOnly && mode === 'plan') throw new KappsError('--changed-only needs --yes or --one-shot');
  const operation = command === 'install' || command === 'delete' ? command : undefined;
  const applies = operation !== undefined && mode !== 'plan' && !params.dryRun;
  let changed: ChangedSelection = 'all';
  if (operation !== undefined && params.changedOnly) {
    changed = !applies ? 'latest' : params.refresh ? 'lock-refresh' : 'lock';
  }
  return {
    command,
    mode,
    ...(operation !== undefined ? { operation } : {}),
    takesLock: applies,
    planning: params.dryRun,
    fillsWorkspace: !params.dryRun,
    applyNoValue: applies && !params.allowNoValue,
    checksCommands: params.validate,
    allOutput: (params.allOutput ?? false) || applies,
    showsPreview: command === 'install' && mode === 'plan' && !params.dryRun,
    changed,
  };
}
