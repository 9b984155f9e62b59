/**
 * `--server URL` on generate, preview, install and delete: run on a runs server instead of here (see
 * src/client/remote-run.ts). Declared once so every command's `--help` says the same.
 */
import type { Argv } from 'yargs';
import { UsageError } from '../diagnostics/errors.js';
import type { RunType } from '../api/index.js';
import type { RemoteRunArgs } from './remote/remote-run.js';

export interface ServerOptionArgs {
  server?: string;
  ref?: string;
}

/**
 * `--no-wait` (yargs reads it as `wait: false`) and `--break-glass`: the options of the commands that apply on a
 * server (install, delete, rollback).
 */
export interface ApplyOnServerArgs {
  wait?: boolean;
  breakGlass?: boolean;
}

/** Add `--server` and `--ref`. */
export function serverOption<T>(y: Argv<T>): Argv<T & ServerOptionArgs> {
  return y
    .option('ref', {
      type: 'string',
      requiresArg: true,
      group: 'Runs server:',
      describe:
        'With --server, for a project the server takes from git: the branch, tag or commit to run at (default: the ' +
        "project's branch), resolved to a commit when the run is submitted",
    })
    .option('server', {
      type: 'string',
      requiresArg: true,
      group: 'Runs server:',
      describe:
        'Run it on this runs server (`kapps serve`, token in env KAPPS_TOKEN) and show its progress here: the stack ' +
        'is <stack-name> of --project (required) as the server registers it; <stack-file> and [workspace-dir] are not ' +
        'read. Exit 0, 1, or 130 when cancelled; Ctrl-C cancels the run on the server',
    });
}

/**
 * Add `--no-wait` and `--break-glass` (with --server, on install -y, delete -y and release rollback -y), and say in
 * `--help` how a run that needs approval is waited for.
 */
export function applyOnServerOptions<T>(y: Argv<T>): Argv<T & ApplyOnServerArgs> {
  return y
    .option('wait', {
      type: 'boolean',
      group: 'Runs server:',
      describe:
        'With --server: follow the run until it ends (the default). A run the server holds for approval prints ' +
        '"waiting for approval: run ID (kapps runs approve ID)" and is waited for; Ctrl-C then leaves it waiting on ' +
        'the server (exit 130). --no-wait: return once the run is submitted, printing it and how to follow it',
    })
    .option('break-glass', {
      type: 'boolean',
      group: 'Runs server:',
      describe:
        "With --server: skip the approvals the stack requires — only a token of a role the project's " +
        'approvals.break_glass names may; the use is recorded in the run and its release, and notified',
    });
}

/**
 * The arguments of a local run without `--no-wait` and `--break-glass` (as yargs spells them both ways): a local run's
 * parameters have a `breakGlass` of their own, the record of a server's exception, never taken from a command line.
 */
export function localArgs<T extends ApplyOnServerArgs>(args: T): T {
  const copy: T = { ...args };
  for (const key of ['wait', 'breakGlass', 'break-glass']) Reflect.deleteProperty(copy, key);
  return copy;
}

/** `--no-wait` and `--break-glass` have a meaning only on a server run. */
export function refuseApplyOnServerOptions(args: ApplyOnServerArgs & ServerOptionArgs): void {
  if (args.server !== undefined) return;
  if (args.wait === false) throw new UsageError('--no-wait needs --server: a local run is the command itself');
  if (args.breakGlass) {
    throw new UsageError('--break-glass needs --server: approvals are required by a runs server, not by a local run');
  }
}

/** Flags that have no meaning on a server run, refused rather than silently dropped. */
interface LocalOnly {
  yes?: boolean;
  oneShot?: boolean;
  dryRun?: boolean;
  backend?: string;
  ignoreErrors?: boolean;
}

/**
 * With `--server`, run `type` on the server and return true; without, return false (the caller runs locally).
 * `install`/`delete` run remotely only with --yes (a plan alone does not run on a server).
 */
export async function runRemotely(
  type: RunType,
  args: RemoteRunArgs & LocalOnly & ServerOptionArgs & ApplyOnServerArgs,
): Promise<boolean> {
  refuseApplyOnServerOptions(args);
  if (args.server === undefined) {
    if (args.ref !== undefined) throw new UsageError('--ref needs --server: a local run reads the stack file as it is');
    return false;
  }
  if (type === 'apply' || type === 'destroy') {
    const verb = type === 'apply' ? 'install' : 'delete';
    if (args.oneShot) throw new UsageError(`--one-shot does not run on a server: use ${verb} -y --server`);
    if (args.dryRun) throw new UsageError(`--dry-run does not run on a server: use kapps generate --server`);
    if (!args.yes) {
      throw new UsageError(
        `${verb} --server needs --yes: a plan does not run on a server (kapps preview --server shows what would change)`,
      );
    }
    if (args.ignoreErrors) throw new UsageError('--ignore-errors is not available on a server run');
  }
  if (args.backend !== undefined) {
    throw new UsageError('--backend does not apply with --server: the server records releases in its own backend');
  }
  const { remoteRun } = await import('./remote/remote-run.js');
  await remoteRun(type, { ...args, noWait: args.wait === false });
  return true;
}
