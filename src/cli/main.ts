#!/usr/bin/env node
/**
 * The kapps command line: the only composition root. It parses argv (yargs), lazily loads the module of the
 * command that runs, and maps errors to exit codes and printed messages. Nothing else reads argv or sets the
 * exit code.
 */
import yargs, { type Argv } from 'yargs';
import { closestMatch, suggest } from '../diagnostics/did-you-mean.js';
import { hideBin } from 'yargs/helpers';
import { commands } from './commands/index.js';
import { reportError } from './errors.js';
import { UsageError } from '../diagnostics/errors.js';
import { kappsVersion } from '../engine/version.js';
import { guardOutputStreams } from './output-guard.js';
import { endAtExit } from './exit-fast.js';

/** `Unknown argument(s): yse, foo` as kapps says it, with the closest known option when one is near. */
function unknownOptions(list: string, y: Argv, argv: readonly string[]): string {
  const options = (y as unknown as { getOptions(): unknown }).getOptions() as {
    key: Record<string, unknown>;
    alias: Record<string, string[]>;
  };
  const known = new Set<string>();
  for (const name of [...Object.keys(options.key), ...Object.values(options.alias).flat()]) {
    if (!/[A-Z]/.test(name)) known.add(name);
  }
  const dash = (name: string): string => (name.length === 1 ? `-${name}` : `--${name}`);
  // yargs lists `ignore-erors` and its camel-case twin `ignoreErors`: keep the form the user wrote.
  const written = list.split(', ');
  const camel = (name: string): string => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  const names = written.filter((n) => !written.some((o) => o !== n && o.includes('-') && camel(o) === n));
  list = names.join(', ');
  const isFlag = (name: string): boolean =>
    argv.some(
      (a) =>
        a === dash(name) ||
        a.startsWith(`${dash(name)}=`) ||
        (name.length === 1 && /^-[A-Za-z]+$/.test(a) && a.includes(name)),
    );
  // Not all written as options (an unknown command, an extra argument): yargs' own words.
  if (!names.every(isFlag)) return `Unknown argument${names.length > 1 ? 's' : ''}: ${list}`;
  const parts = names.map((name) => {
    // One letter is too short to guess from.
    const near =
      name.length > 1
        ? closestMatch(
            name,
            [...known].filter((k) => k.length > 1),
          )
        : undefined;
    return near ? `${dash(name)} (${suggest(dash(near))})` : dash(name);
  });
  return `unknown ${parts.length > 1 ? 'options' : 'option'} ${parts.join(', ')}`;
}

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
    // The terminal's width (120 when not a terminal): yargs gives example commands half of it.
    .wrap(process.stdout.columns || 120)
    .epilogue(
      'Stack commands take <stack-file> <stack-name> [workspace-dir]; the workspace defaults to ' +
        '.kapps-workspace/<stack-name> next to the stack file. Run `kapps <command> --help` for its options.',
    )
    .fail((message, error) => {
      // A value refused by an option's check (`coerce`) arrives wrapped by yargs: it is still a usage error.
      if (error) throw error.name === 'YError' ? new UsageError(error.message) : error;
      const text = message ?? 'invalid command line';
      const unknown = /^Unknown arguments?: (.+)$/.exec(text);
      if (unknown?.[1]) throw new UsageError(unknownOptions(unknown[1], parser, argv));
      if (/^Name a |^Not enough non-option arguments: got 0,/.test(text)) {
        // A command (or sub-command) was expected: show the list to choose from.
        parser.showHelp((help: string) => process.stderr.write(`${help}\n\n`));
      }
      throw new UsageError(text);
    });
  for (const command of commands) parser = parser.command(command);
  skipHelpCache(parser);
  await parser.parseAsync();
}

/**
 * yargs lays out the help of the command it runs as soon as the handler has started, in case a failure shows it
 * later: a sizeable part of a short command's time. kapps shows help only for usage errors, which yargs finds
 * before any handler starts, so that layout is never used: skip it.
 */
function skipHelpCache(parser: Argv): void {
  const internal = parser as unknown as {
    getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } };
  };
  const usage = internal.getInternalMethods?.().getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => undefined;
}

// Output piped into `head`, a closed terminal: stop writing there, and let the command go on to its end.
guardOutputStreams();
// Once the command is done, the process ends without tearing Node's environment down.
endAtExit();

main(hideBin(process.argv)).catch((error: unknown) => {
  process.exitCode = reportError(error);
});
