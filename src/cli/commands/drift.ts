/** `kapps drift`: whether the installed kapps still are what the last release recorded (for a cron job in CI). */
import type { CommandModule } from 'yargs';
import { UsageError } from '../../diagnostics/errors.js';
import { stackOptions, type StackArgs } from '../stack-args.js';

interface DriftArgs extends StackArgs {
  output: 'text' | 'json';
  project?: string;
  backend?: string;
  workers?: number;
  ignore?: string[];
}

/** `--ignore KAPP=PATH[,PATH…]` as ignore rules. */
export function parseIgnore(values: readonly string[]): { kapp: string; outputs: string[] }[] {
  return values.map((value) => {
    const eq = value.indexOf('=');
    const kapp = eq > 0 ? value.slice(0, eq) : '';
    const outputs =
      eq > 0
        ? value
            .slice(eq + 1)
            .split(',')
            .filter(Boolean)
        : [];
    if (!kapp || outputs.length === 0) {
      throw new UsageError(
        `--ignore takes KAPP=OUTPUT[,OUTPUT…] (\`infra:*=last_seen,*.timestamp\`), got \`${value}\``,
      );
    }
    return { kapp, outputs };
  });
}

export const driftCommand: CommandModule<object, DriftArgs> = {
  command: 'drift <stack-file> <stack-name> [workspace-dir]',
  describe: 'Check for drift: read the live outputs of the installed kapps and compare them with the last release',
  builder: (y) =>
    stackOptions(y)
      .option('output', {
        alias: 'o',
        choices: ['text', 'json'] as const,
        default: 'text' as const,
        describe: 'Output format (json: the drift report, `kapps schema drift`)',
      })
      .option('project', {
        type: 'string',
        describe: 'Project of the releases (default: from sugarkube-conf.yaml or the folder)',
      })
      .option('backend', { type: 'string', describe: 'Release store: a directory or a postgres:// URL' })
      .option('workers', { alias: 'w', type: 'number', describe: 'Kapps read at once' })
      .option('ignore', {
        type: 'string',
        array: true,
        requiresArg: true,
        describe:
          'Output changes that are not drift: KAPP=OUTPUT[,OUTPUT…], `*` any text in a kapp and one segment (or ' +
          'part of one) in a dotted output path, `**` any number of segments (`infra:*=last_seen,*.timestamp`)',
      })
      .example('$0 drift stacks.yaml prod', 'Exit 0 in sync, 2 drifted, 1 on an error or when it cannot tell')
      .epilogue(
        'Runs the output phase of each installed kapp whose configuration is unchanged and that declares outputs, ' +
          'as `kapps preview --refresh` does, and compares what it reads with what the last release recorded, ' +
          'output by output (sensitive values masked). Nothing is changed and no release is written. Kapps whose ' +
          'configuration differs from the release are listed as pending changes, not drift (see `kapps preview`). ' +
          'Exit 0 in sync, 2 drifted, 1 on an error, an unreadable kapp or a stack without a release.',
      ),
  handler: async (args) => {
    try {
      const ignore = parseIgnore(args.ignore ?? []);
      const { checkDrift } = await import('../../engine/drift.js');
      const { cliContext } = await import('../context.js');
      const { formatDriftReport } = await import('../../report/drift-text.js');
      // Ctrl-C (or SIGTERM) stops the output steps cleanly, then the command ends as interrupted (130).
      const controller = new AbortController();
      const stop = (): void => controller.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      const { report } = await checkDrift(args, cliContext, controller.signal, {
        ignore,
        ...(args.workers !== undefined ? { workers: args.workers } : {}),
      }).finally(() => {
        process.removeListener('SIGINT', stop);
        process.removeListener('SIGTERM', stop);
      });
      process.stdout.write(args.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatDriftReport(report));
      process.exitCode = report.state === 'inSync' ? 0 : report.state === 'drifted' ? 2 : 1;
    } catch (error) {
      // 2 means "drifted" here: an error that would exit 2 (a usage error) exits 1; an interruption stays 130.
      const { reportError } = await import('../errors.js');
      const code = reportError(error);
      process.exitCode = code === 2 ? 1 : code;
    }
  },
};
