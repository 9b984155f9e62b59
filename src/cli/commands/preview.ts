/** `kapps preview`: what an install would do to each selected kapp, against the last release. */
import type { Argv, CommandModule } from 'yargs';
import { stackOptions, type StackArgs } from '../stack-args.js';
import { runRemotely, serverOption, type ServerOptionArgs } from '../server-option.js';

interface PreviewArgs extends StackArgs, ServerOptionArgs {
  output: 'table' | 'json';
  project?: string;
  backend?: string;
  refresh: boolean;
  detailedExitcode: boolean;
  diff: boolean;
  workers?: number;
}

export const previewCommand: CommandModule<object, PreviewArgs> = {
  command: 'preview <stack-file> <stack-name> [workspace-dir]',
  describe: 'Compare the selected kapps with the last release: Create, Update, UnChanged, Delete (Drifted, Unknown)',
  builder: (y) =>
    serverOption(stackOptions(y))
      .option('output', {
        alias: 'o',
        choices: ['table', 'json'] as const,
        default: 'table' as const,
        describe: 'Output format',
      })
      .option('project', {
        type: 'string',
        describe: 'Project of the releases (default: from sugarkube-conf.yaml or the folder)',
      })
      .option('backend', { type: 'string', describe: 'Release store: a directory or a postgres:// URL' })
      .option('refresh', {
        type: 'boolean',
        default: false,
        describe:
          'Read the live state: run the output phase of the unchanged installed kapps that declare outputs and ' +
          'compare their outputs with the recorded ones (Drifted, or Unknown when it fails); changes nothing',
      })
      .option('workers', { alias: 'w', type: 'number', describe: 'With --refresh: kapps read at once' })
      .option('diff', {
        type: 'boolean',
        default: false,
        describe: 'Show the changed lines of each changed template (sensitive templates only say they changed)',
      })
      .option('detailed-exitcode', {
        type: 'boolean',
        default: false,
        describe: 'Exit 0 when nothing would change, 2 when something would, 1 on error (for CI)',
      })
      .epilogue(
        'Update means the kapp’s spec (its steps, dependencies, sources and the commits they resolve to, rendered ' +
          'templates and variables) differs from the one last installed, or that it reads the outputs of a kapp ' +
          'that changes; the changed fields are listed under the table, sensitive values masked. ' +
          'JSON: {"stack", "project", "basedOnRevision", "kapps": [{"id", "action", "from", "to", "changes", ' +
          '"drift", "reason", "specDigest", "notRecorded"}], "refreshed", "hasChanges"}; its JSON Schema is ' +
          '`kapps schema preview`.',
      ) as unknown as Argv<PreviewArgs>,
  handler: async (args) => {
    try {
      if (await runRemotely('preview', args)) return;
      const { openStackFromArgs } = await import('../stack-open.js');
      const { computePreviewFor } = await import('../../engine/preview.js');
      const { refreshLine } = await import('../../report/engine-text.js');
      const { formatNotRecorded, formatPreviewDetails, formatPreviewTable } = await import('../../release/preview.js');
      const stack = await openStackFromArgs(args, { planning: true });
      // Ctrl-C (or SIGTERM) stops the output steps of a refresh cleanly, then the command ends as interrupted (130).
      const controller = new AbortController();
      const stop = (): void => controller.abort();
      if (args.refresh) {
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      }
      const { cliContext } = await import('../context.js');
      const { rows, revision, document } = await computePreviewFor(stack, args, cliContext, controller.signal).finally(
        () => {
          process.removeListener('SIGINT', stop);
          process.removeListener('SIGTERM', stop);
        },
      );
      if (document.refreshed) process.stderr.write(refreshLine(document.refreshed));
      if (args.output === 'json') {
        process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
      } else if (!document.hasChanges) {
        const against = revision === null ? 'no previous release' : `release ${revision}`;
        process.stdout.write(
          rows.length === 0
            ? `No changes: no kapps to preview (against ${against}).\n`
            : `No changes: the ${rows.length} kapp(s) match ${against}.\n`,
        );
        process.stdout.write(formatNotRecorded(document));
      } else {
        process.stdout.write(`Preview against ${revision === null ? 'no previous release' : `release ${revision}`}:\n`);
        process.stdout.write(formatPreviewTable(rows));
        const details = formatPreviewDetails(document, { diff: args.diff });
        if (details) process.stdout.write(`\n${details}`);
        const note = formatNotRecorded(document);
        if (note) process.stdout.write(`\n${note}`);
      }
      if (args.detailedExitcode) process.exitCode = document.hasChanges ? 2 : 0;
    } catch (error) {
      if (!args.detailedExitcode) throw error;
      // 2 means "changes" here: an error that would exit 2 (a usage error) exits 1; an interruption stays 130.
      const { reportError } = await import('../errors.js');
      const code = reportError(error);
      process.exitCode = code === 2 ? 1 : code;
    }
  },
};
