/**
 * `kapps release rollback <stack-file> <stack-name> --to N [-y] [--prune] [--force]`: apply again the desired state
 * revision N applied (its project commit, its kapps' source commits, its variables), recorded as a new revision with
 * `rollbackOf: N`. Without `-y` it shows the preview and changes nothing; with `--server` the server runs it.
 */
import type { Argv, CommandModule } from 'yargs';
import { UsageError } from '../../diagnostics/errors.js';
import { runOptions, type RunArgs } from '../run-args.js';
import {
  applyOnServerOptions,
  localArgs,
  refuseApplyOnServerOptions,
  serverOption,
  type ApplyOnServerArgs,
  type ServerOptionArgs,
} from '../server-option.js';

interface RollbackArgs extends RunArgs, ServerOptionArgs, ApplyOnServerArgs {
  to: number;
  yes: boolean;
  prune: boolean;
  force: boolean;
  project?: string;
  backend?: string;
  allowNoValue?: boolean;
}

/** `--to`: a revision (1, 2, …) or -1, the one before the latest. */
function toRevision(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(String(value).trim());
  if (String(value).trim() === '' || !Number.isSafeInteger(n) || (n < 1 && n !== -1)) {
    throw new UsageError(
      `--to must be a revision number (1, 2, …) or -1 (the one before the latest), got ${String(value)}`,
    );
  }
  return n;
}

function builder(y: Argv): Argv<RollbackArgs> {
  return (
    applyOnServerOptions(serverOption(runOptions(y)))
      .option('to', {
        requiresArg: true,
        demandOption: 'name the revision to roll back to: --to N (or --to -1, the one before the latest)',
        coerce: toRevision,
        describe: 'The revision whose desired state to apply again; -1: the one before the latest',
      })
      .option('yes', {
        alias: 'y',
        type: 'boolean',
        default: false,
        describe: 'Apply the rollback (without it, only its preview is shown and nothing is changed)',
      })
      .option('prune', {
        type: 'boolean',
        default: false,
        describe: 'Also delete (in reverse order) the kapps installed now that the revision did not have',
      })
      .option('force', {
        type: 'boolean',
        default: false,
        describe:
          "Go on where the revision's commit cannot be checked out (its checkout had local changes, the commit is " +
          "gone) or its specs cannot be reproduced exactly: the recorded sources on top of today's checkout",
      })
      .option('project', {
        type: 'string',
        describe: 'Project of the releases (default: as install records it; see docs/releases.md)',
      })
      .option('backend', {
        type: 'string',
        describe: 'Release store: a directory or a postgres:// URL (env KAPPS_BACKEND; default $KAPPS_HOME, ~/.kapps)',
      })
      .option('allow-no-value', {
        type: 'boolean',
        default: false,
        describe: 'Run steps whose command, args, env or conditions render <no value>, as install --allow-no-value',
      })
      // Taken by the other run commands, refused here: not listed.
      .hide('include')
      .hide('exclude')
      .hide('parents')
      .hide('dry-run')
      .hide('ref')
      .example('$0 release rollback stacks.yaml dev --to 3', 'Preview the rollback to revision 3; nothing is changed')
      .example('$0 release rollback stacks.yaml dev --to -1 -y', 'Roll back to the revision before the latest')
      .epilogue(
        'Only a revision that succeeded can be a target. The stack is read at the project commit the revision ' +
          'recorded, its git sources at the commits it recorded; a revision whose checkout had local changes, or whose ' +
          'commit is gone, is refused (--force). Exit codes: 0 success (or preview shown), 1 refused or failed, 2 usage.',
      )
  );
}

/** The command as the user would type it again, with -y. */
function applyCommandLine(args: RollbackArgs): string {
  const parts = ['kapps', 'release', 'rollback', args.stackFile, args.stackName, '--to', String(args.to)];
  if (args.prune) parts.push('--prune');
  if (args.force) parts.push('--force');
  if (args.project !== undefined) parts.push('--project', args.project);
  if (args.server !== undefined) parts.push('--server', args.server);
  parts.push('-y');
  return parts.map((p) => (/^[\w@%+=:,./-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`)).join(' ');
}

async function handler(args: RollbackArgs): Promise<void> {
  if (args.include.length || args.exclude.length || args.parents)
    throw new UsageError('a rollback applies the whole stack as the revision had it: -i/-x/--parents are not taken');
  if (args.dryRun) throw new UsageError('--dry-run is not taken by a rollback: without -y it only shows its preview');
  if (args.ref !== undefined)
    throw new UsageError('--ref is not taken by a rollback: it runs at the project commit the revision recorded');
  refuseApplyOnServerOptions(args);
  if (args.server !== undefined) return remote(args);
  const local: Omit<RollbackArgs, 'breakGlass' | 'wait'> = localArgs(args);
  const params = { toRevision: args.to, prune: args.prune, force: args.force };
  if (!args.yes) {
    const { previewRollback } = await import('../../engine/rollback.js');
    const { cliContext } = await import('../context.js');
    const { viewOf } = await import('../../engine/view.js');
    const preview = await previewRollback(
      { ...local, killGraceMs: 0, ...params },
      cliContext,
      new AbortController().signal,
    );
    const view = viewOf(cliContext);
    view.rollbackPlanned({ ...preview, prune: args.prune });
    view.previewShown({ revision: preview.latest, rows: preview.rows, document: preview.document });
    process.stderr.write(`Nothing was changed. To apply this rollback:\n  ${applyCommandLine(args)}\n`);
    return;
  }
  const { runCommand } = await import('../run-command.js');
  const { rollbackStack } = await import('../../engine/rollback.js');
  await runCommand('install', local, (p, hooks) => rollbackStack({ ...p, ...params }, hooks));
}

/** `--server`: the preview of the rollback (a preview run with `toRevision`), then with -y the rollback run naming it. */
async function remote(args: RollbackArgs): Promise<void> {
  if (args.backend !== undefined)
    throw new UsageError('--backend does not apply with --server: the server records releases in its own backend');
  if (!args.yes && (args.breakGlass || args.wait === false))
    throw new UsageError(
      `${args.breakGlass ? '--break-glass' : '--no-wait'} applies to the rollback run: add -y (without it only its preview runs)`,
    );
  const { remoteRun } = await import('../remote/remote-run.js');
  const preview = await remoteRun('preview', {
    ...args,
    toRevision: args.to,
    output: 'table',
    noWait: false,
    breakGlass: false,
  });
  if (!args.yes) {
    process.stderr.write(`Nothing was changed. To apply this rollback:\n  ${applyCommandLine(args)}\n`);
    return;
  }
  // The rollback takes its target, --prune and --force from the preview it names.
  await remoteRun('rollback', {
    ...args,
    prune: false,
    force: false,
    previewRunId: preview.id,
    noWait: args.wait === false,
  });
}

export const rollbackCommand: CommandModule<object, RollbackArgs> = {
  command: 'rollback <stack-file> <stack-name> [workspace-dir]',
  describe: 'Apply again the desired state of a recorded revision (preview only unless --yes)',
  builder: builder,
  handler,
};
