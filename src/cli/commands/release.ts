/**
 * `kapps release list|show|diff|unlock <stack-file> <stack-name>`: the history of a stack's releases, and the way
 * out of a lock left by a run that died. The stack name is only the release key here: manifests are not loaded.
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { UsageError } from '../../diagnostics/errors.js';
import { numberArg } from '../number-args.js';
import type { ReleaseStore } from '../../release/store-types.js';
import { rollbackCommand } from './rollback.js';

interface SharedArgs {
  stackFile: string;
  stackName: string;
  project?: string;
  backend?: string;
  config?: string;
}

interface ListArgs extends SharedArgs {
  output: 'table' | 'json';
}

interface ShowArgs extends SharedArgs {
  revision?: number;
  output: 'yaml' | 'json';
}

interface DiffArgs extends SharedArgs {
  from: number;
  to: number;
  output: 'text' | 'json';
}

interface LogsArgs extends SharedArgs {
  revision?: number;
  kapp?: string;
  follow: boolean;
}

interface UnlockArgs extends SharedArgs {
  yes: boolean;
}

/**
 * The stack positionals; `[workspace-dir]` is accepted (and not used) so that any stack command line works with the
 * release verbs by changing only the verb.
 */
const STACK = '<stack-file> <stack-name> [workspace-dir]';

function shared<T>(y: Argv<T>): Argv<T & SharedArgs> {
  return y
    .positional('stack-file', { type: 'string', describe: 'The stack file', demandOption: true })
    .positional('stack-name', { type: 'string', describe: 'The stack (the release key)', demandOption: true })
    .positional('workspace-dir', {
      type: 'string',
      describe: 'Accepted like the other stack commands; releases do not depend on the workspace',
    })
    .option('project', {
      type: 'string',
      describe:
        'Project of the releases (default: `project:` in sugarkube-conf.yaml, else the folder of that file, else the ' +
        'git repository, else the stack file’s folder; see docs/releases.md)',
    })
    .option('backend', {
      type: 'string',
      describe: 'Release store: a directory or a postgres:// URL (env KAPPS_BACKEND; default $KAPPS_HOME)',
    })
    .option('config', { type: 'string', describe: 'The sugarkube-conf.yaml to use' }) as unknown as Argv<
    T & SharedArgs
  >;
}

const listCommand: CommandModule<object, ListArgs> = {
  command: `list ${STACK}`,
  describe: 'List the releases of a stack, newest first',
  builder: (y) =>
    shared(y).option('output', {
      alias: 'o',
      choices: ['table', 'json'] as const,
      default: 'table' as const,
      describe: 'Output format',
    }),
  handler: (argv) =>
    withStore(argv, async (store, project, source) => {
      const { formatReleaseTable, releaseListEntries } = await import('../../release/history.js');
      const summaries = await store.list(project, argv.stackName);
      if (argv.output === 'json') {
        process.stdout.write(`${JSON.stringify(releaseListEntries(summaries), null, 2)}\n`);
      } else if (summaries.length === 0) {
        process.stdout.write(`No releases of ${project}/${argv.stackName} in ${store.description}.\n`);
      } else {
        // On stderr: stdout stays the table.
        process.stderr.write(
          `Releases of ${project}/${argv.stackName} (project from ${source}) in ${store.description}\n`,
        );
        process.stdout.write(formatReleaseTable(summaries));
      }
    }),
};

const showCommand: CommandModule<object, ShowArgs> = {
  command: `show ${STACK}`,
  describe: 'Print one release (default: the latest)',
  builder: (y) =>
    shared(y)
      .option('revision', {
        requiresArg: true,
        coerce: numberArg('revision', { integer: true, min: 1 }),
        describe: 'The revision to show',
      })
      .option('output', {
        alias: 'o',
        choices: ['yaml', 'json'] as const,
        default: 'yaml' as const,
        describe: 'Output format',
      }),
  handler: (argv) =>
    withStore(argv, async (store, project) => {
      const { stringify } = await import('../../yaml/stringify.js');
      const { orderRelease } = await import('../../release/record-order.js');
      const revision = argv.revision === undefined ? undefined : revisionArg(argv.revision, '--revision');
      const release = await findRelease(store, project, argv.stackName, revision);
      const { redactArgv } = await import('../../diagnostics/redact.js');
      const { redactStackSpec, showMasks } = await import('../../release/spec-diff.js');
      // Records written before credentials were masked in every form are masked when shown; secrets are recorded as
      // keyed masks, shown as `(sensitive)`; values named as secrets in older records are masked as in a preview.
      const ordered = orderRelease({
        ...release,
        command: redactArgv(release.command),
        spec: redactStackSpec(showMasks(release.spec, null)),
      });
      // On stderr: stdout stays the record.
      const about = [
        ...(release.rollbackOf !== undefined ? [`rollback of ${release.rollbackOf}`] : []),
        ...(release.source
          ? [
              `commit ${release.source.commit.slice(0, 12)} of ${release.source.repo}` +
                (release.source.dirty === true ? ' (the checkout had local changes)' : '') +
                (release.source.dirty === false ? ' (clean)' : ''),
            ]
          : []),
      ];
      const { formatReleaseApprovals } = await import('../../release/history.js');
      const approvals = formatReleaseApprovals(release);
      if (about.length || approvals.length) {
        const title = `Release ${release.revision} of ${project}/${argv.stackName}`;
        process.stderr.write(
          `${title}${about.length ? `: ${about.join('; ')}` : ':'}\n${approvals.map((line) => `  ${line}\n`).join('')}`,
        );
      }
      process.stdout.write(
        argv.output === 'json' ? `${JSON.stringify(ordered, null, 2)}\n` : stringify(ordered, { lineWidth: 0 }),
      );
    }),
};

const diffCommand: CommandModule<object, DiffArgs> = {
  command: 'diff <stack-file> <stack-name> <from> <to>',
  describe: 'Show the kapps added, removed and changed between two releases: field-level spec changes, outputs, status',
  builder: (y) =>
    shared(y)
      .positional('from', { type: 'number', describe: 'The older revision', demandOption: true })
      .positional('to', { type: 'number', describe: 'The newer revision', demandOption: true })
      .option('output', {
        alias: 'o',
        choices: ['text', 'json'] as const,
        default: 'text' as const,
        describe: 'Output format',
      }),
  handler: (argv) =>
    withStore(argv, async (store, project) => {
      const { diffReleases, formatReleaseDiff } = await import('../../release/history.js');
      const from = await findRelease(store, project, argv.stackName, revisionArg(argv.from, '<from>'));
      const to = await findRelease(store, project, argv.stackName, revisionArg(argv.to, '<to>'));
      const { recordedSpecs } = await import('../../engine/preview.js');
      const ids = [...new Set([...Object.keys(from.state), ...Object.keys(to.state)])];
      const diff = diffReleases(from, to, {
        from: await recordedSpecs(store, from, ids),
        to: await recordedSpecs(store, to, ids),
      });
      process.stdout.write(argv.output === 'json' ? `${JSON.stringify(diff, null, 2)}\n` : formatReleaseDiff(diff));
    }),
};

const logsCommand: CommandModule<object, LogsArgs> = {
  command: `logs ${STACK}`,
  describe: 'Print the log of a release (default: the latest), whether the CLI or a server ran it',
  builder: (y) =>
    shared(y)
      .option('revision', {
        requiresArg: true,
        coerce: numberArg('revision', { integer: true, min: 1 }),
        describe: 'The revision whose log to print',
      })
      .option('kapp', { type: 'string', requiresArg: true, describe: 'Only the lines of this kapp (manifest:kapp)' })
      .option('follow', {
        alias: 'f',
        type: 'boolean',
        default: false,
        describe: 'Keep printing while the release is applying or deleting; stop when it ends',
      })
      .epilogue(
        'Step lines print as `[kapp phase/step] text`, kapps’ own lines as they are; control characters are shown ' +
          'escaped. Secrets were redacted when the log was written.',
      ),
  handler: (argv) =>
    withStore(argv, async (store, project) => {
      const { printReleaseLog } = await import('../release-logs.js');
      await printReleaseLog(store, {
        project,
        stack: argv.stackName,
        revision: argv.revision === undefined ? undefined : revisionArg(argv.revision, '--revision'),
        kapp: argv.kapp,
        follow: argv.follow,
        out: process.stdout,
        err: process.stderr,
      });
    }),
};

const unlockCommandModule: CommandModule<object, UnlockArgs> = {
  command: `unlock ${STACK}`,
  describe: 'Mark a release left running by a dead run as failed, so the next run can begin',
  builder: (y) =>
    shared(y).option('yes', {
      alias: 'y',
      type: 'boolean',
      default: false,
      describe: 'Do not ask for confirmation (required when stdin is not a terminal)',
    }),
  handler: (argv) =>
    withStore(argv, async (store, project) => {
      const { currentOwner, describeHolder, isRunningPhase, unlockRelease } = await import('../../release/index.js');
      const latest = await store.latest(project, argv.stackName);
      if (!latest || !isRunningPhase(latest.phase)) {
        const what = latest
          ? `the latest release of ${project}/${argv.stackName}, revision ${latest.revision}, is ${latest.phase}`
          : `${project}/${argv.stackName} has no releases`;
        process.stdout.write(`Nothing to unlock: ${what}.\n`);
        return;
      }
      const holder = describeHolder(latest, new Date());
      if (!argv.yes) {
        if (!process.stdin.isTTY) {
          throw new UsageError(
            `refusing to unlock ${project}/${argv.stackName} without confirmation: stdin is not a terminal. ` +
              `It is locked by ${holder.text}. Pass -y to unlock it.`,
          );
        }
        const question =
          `${project}/${argv.stackName} is locked by ${holder.text}.\n` +
          (holder.looksDead ? '' : 'Unlocking while its run still works may corrupt the record of that run.\n') +
          `Mark release ${latest.revision} as failed? [y/N] `;
        if (!(await confirm(question))) {
          process.stdout.write('Not unlocked.\n');
          return;
        }
      }
      const owner = currentOwner();
      const result = await unlockRelease({ store, project, stack: argv.stackName, by: `${owner.user}@${owner.host}` });
      if (!result.unlocked) {
        process.stdout.write(`${capitalise(result.message)}.\n`);
        return;
      }
      if (!result.holder.looksDead) {
        process.stderr.write(`kapps: warning: the owner of release ${result.release.revision} looked alive.\n`);
      }
      process.stdout.write(
        `Unlocked ${project}/${argv.stackName}: release ${result.release.revision} (was ${result.previousPhase}) ` +
          `is now failed; the next run can begin.\n`,
      );
    }),
};

/** The `release` command group. */
export const releaseCommand: CommandModule<object, object> = {
  command: 'release',
  describe: 'List, show, diff, unlock and roll back the releases of a stack, and print their logs',
  builder: (y) =>
    y
      .command(listCommand)
      .command(showCommand)
      .command(diffCommand)
      .command(logsCommand)
      .command(unlockCommandModule)
      .command(rollbackCommand)
      .demandCommand(1, 'Name a release command: list, show, diff, logs, unlock or rollback.'),
  handler: () => undefined,
};

/** Resolve project and backend, open the store, run `action`, close the store. */
async function withStore(
  argv: SharedArgs,
  action: (store: ReleaseStore, project: string, source: string) => Promise<void>,
): Promise<void> {
  if (!existsSync(argv.stackFile)) throw new UsageError(`stack file ${argv.stackFile} not found`);
  const [{ loadProjectConfig }, { formatDiagnostics }, release] = await Promise.all([
    import('../../config/index.js'),
    import('../../report/diagnostic-printer.js'),
    import('../../release/index.js'),
  ]);
  const cwd = process.cwd();
  const { config, warnings } = loadProjectConfig({
    cwd,
    stackFile: argv.stackFile,
    ...(argv.config !== undefined ? { configFile: argv.config } : {}),
  });
  if (warnings.length > 0) process.stderr.write(`${formatDiagnostics(warnings)}\n`);
  const resolved = release.resolveProject({
    flag: argv.project,
    config: config.project,
    configFile: config.file,
    stackFile: argv.stackFile,
    cwd,
  });
  const project = resolved.project;
  const { spec } = release.resolveBackend({
    flag: argv.backend,
    env: process.env.KAPPS_BACKEND,
    config: config.backend,
    configDir: config.file !== undefined ? dirname(config.file) : undefined,
    cwd,
    kappsHome: release.kappsHome(process.env.KAPPS_HOME),
  });
  const store = await release.openReleaseStore(spec);
  try {
    const hint = await release.legacyHistoryHint(store, resolved, argv.stackName);
    if (hint) process.stderr.write(`warning: ${hint}\n`);
    await action(store, project, release.describeProjectSource(resolved.source));
  } finally {
    await store.close();
  }
}

async function findRelease(store: ReleaseStore, project: string, stack: string, revision: number | undefined) {
  const { ReleaseNotFoundError } = await import('../../release/errors.js');
  const latest = await store.latest(project, stack);
  if (!latest) throw new ReleaseNotFoundError(`${project}/${stack} has no releases in ${store.description}`);
  if (revision === undefined || revision === latest.revision) return latest;
  const release = await store.get(project, stack, revision);
  if (!release) {
    throw new ReleaseNotFoundError(
      `release ${revision} of ${project}/${stack} not found (revisions are 1 to ${latest.revision})`,
    );
  }
  return release;
}

function revisionArg(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new UsageError(`${name} must be a revision number (1, 2, …), got ${String(value)}`);
  }
  return value;
}

async function confirm(question: string): Promise<boolean> {
  // Loaded here, not with the module: every command line loads this module (for `kapps release --help`).
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(question);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
