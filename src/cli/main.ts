#!/usr/bin/env node
/**
 * The kapps command line: the only composition root. It parses argv (yargs), lazily loads the module of the
 * command that runs, and maps errors to exit codes and printed messages. Nothing else reads argv or sets the
 * exit code.
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { commands } from './commands/index.js';
import { reportError } from './errors.js';
import { UsageError } from '../diagnostics/errors.js';
import { kappsVersion } from './version.js';
import { guardOutputStreams } from './output-guard.js';

export async function main(argv: string[]): Promise<void> {
  let parser = yargs(argv)
    .scriptName('kapps')
    .usage(
      "kapps: install, delete and inspect kapps along a stack's dependency DAG, recording each install and delete as a release.\n\nUsage: $0 <command> [options]",
    )
    .version(kappsVersion())
    .alias('version', 'V')
    .help()
    .alias('help', 'h')
    .strict()
    .demandCommand(1, 'Name a command; see the list above.')
    .recommendCommands()
    .wrap(Math.min(120, process.stdout.columns || 120))
    .epilogue(
      'Stack commands take <stack-file> <stack-name> [workspace-dir]; the workspace defaults to ' +
        '.kapps-workspace/<stack-name> next to the stack file. Run `kapps <command> --help` for its options.',
    )
    .fail((message, error) => {
      if (error) throw error;
      throw new UsageError(message ?? 'invalid command line');
    });
  for (const command of commands) parser = parser.command(command);
  await parser.parseAsync();
}

// Output piped into `head`, a closed terminal: stop writing there, and let the command go on to its end.
guardOutputStreams();

main(hideBin(process.argv)).catch((error: unknown) => {
  process.exitCode = reportError(error);
});
