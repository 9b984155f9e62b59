/** `kapps preview`: what an install would do to each selected kapp, against the last release. */
import type { CommandModule } from 'yargs';
import { openStackFromArgs, stackOptions, type StackArgs } from '../stack-args.js';

interface PreviewArgs extends StackArgs {
  output: 'table' | 'json';
  project?: string;
  backend?: string;
}

export const previewCommand: CommandModule<object, PreviewArgs> = {
  command: 'preview <stack-file> <stack-name> [workspace-dir]',
  describe: 'Compare the selected kapps with the last release: Create, Update, UnChanged, Delete',
  builder: (y) =>
    stackOptions(y)
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
      .epilogue(
        'Update means the kapp’s rendered spec (its steps, commands, arguments, environment) differs from the one ' +
          'last installed. JSON: {"stack", "project", "basedOnRevision", "kapps": [{"id", "action"}]}.',
      ),
  handler: async (args) => {
    const { previewRows } = await import('../release-run.js');
    const { formatPreviewTable, previewDocument } = await import('../../release/index.js');
    const stack = await openStackFromArgs(args, { planning: true });
    const { rows, revision, project } = await previewRows(stack, args);
    if (args.output === 'json') {
      process.stdout.write(`${JSON.stringify(previewDocument(stack.config.name, project, revision, rows), null, 2)}\n`);
    } else {
      process.stdout.write(`Preview against ${revision === null ? 'no previous release' : `release ${revision}`}:\n`);
      process.stdout.write(formatPreviewTable(rows));
    }
  },
};
