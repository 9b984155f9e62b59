/** `kapps validate`: plan every phase of the selected kapps and check that every command they run exists. */
import type { CommandModule } from 'yargs';
import { SilentFailure } from '../../diagnostics/errors.js';
import { stackOptions, type StackArgs } from '../stack-args.js';

interface ValidateArgs extends StackArgs {
  verbose: boolean;
}

export const validateCommand: CommandModule<object, ValidateArgs> = {
  command: 'validate <stack-file> <stack-name> [workspace-dir]',
  describe: 'Check the selected kapps: every phase plans, and every command and binary is on PATH',
  builder: (y) =>
    stackOptions(y, { parents: false })
      .option('verbose', {
        alias: 'v',
        type: 'boolean',
        default: false,
        describe: 'Also list where each command was found',
      })
      .example('$0 validate stacks.yaml dev', 'Exit 1 and list what is missing, if anything')
      .epilogue(
        'Checked: the kapps the selection processes (not their ancestors). Each needs every step command and the ' +
          '`binaries` of its steps and of its run units whose conditions hold, on PATH (or, for a path, relative to ' +
          'the step’s working directory). Step names must be unique within a run unit and phase.',
      ),
  handler: async (args) => {
    const { flushWarnings, openStackFromArgs } = await import('../stack-open.js');
    const { validateStack } = await import('../../stack/validate.js');
    const { formatDiagnostics } = await import('../../report/diagnostic-printer.js');
    const stack = await openStackFromArgs(args, { planning: true });
    const report = validateStack(stack, process.env.PATH);
    flushWarnings(stack);
    const out: string[] = [];
    for (const k of report.kapps) {
      out.push(`* ${k.id}${k.requires.length ? ` requires: ${k.requires.join(', ')}` : ''}`);
      if (args.verbose) for (const f of k.found) out.push(`    found ${f}`);
      for (const m of report.missing.filter((x) => x.kapp === k.id)) {
        const what = m.command === '' ? 'names no command' : `${m.kind} '${m.command}' not found`;
        const where = m.phase ? `${m.phase} step '${m.step ?? ''}'` : `run unit '${m.unit}'`;
        out.push(`    missing: ${where} ${what}`);
      }
    }
    process.stdout.write(`${out.join('\n')}\n`);
    if (report.problems.length) process.stderr.write(`${formatDiagnostics(report.problems)}\n`);
    if (report.missing.length > 0 || report.problems.length > 0) {
      const parts = [
        ...(report.missing.length ? [`${report.missing.length} requirement(s) missing`] : []),
        ...(report.problems.length ? [`${report.problems.length} problem(s) in the configuration`] : []),
      ];
      process.stdout.write(`\n${parts.join(', ')}\n`);
      throw new SilentFailure('validation failed');
    }
    process.stdout.write(
      `\nAll ${report.kapps.length} kapp(s) validated: every phase plans and every command was found\n`,
    );
  },
};
