/** `kapps vars`: per kapp, the merged variables and the rendered descriptor. */
import type { CommandModule } from 'yargs';
import { stackOptions, type StackArgs } from '../stack-args.js';

interface VarsArgs extends StackArgs {
  suppress: string[];
  output: 'yaml' | 'json';
}

export const varsCommand: CommandModule<object, VarsArgs> = {
  command: 'vars <stack-file> <stack-name> [workspace-dir]',
  describe: 'Show each kapp’s merged variables and its rendered configuration',
  builder: (y) =>
    stackOptions(y)
      .option('suppress', {
        alias: 's',
        type: 'string',
        array: true,
        default: [],
        describe: 'Blank this variable path in the output, e.g. -s kapp.vars.password (repeatable)',
      })
      .option('output', {
        alias: 'o',
        choices: ['yaml', 'json'] as const,
        default: 'yaml' as const,
        describe: 'Output format',
      })
      .example('$0 vars stacks.yaml dev -i web:app', 'Variables of one kapp')
      .epilogue(
        'Every kapp of the sub-graph is shown, whatever its conditions. Outputs that only a run can produce show as ' +
          'empty maps.',
      ),
  handler: async (args) => {
    const { flushWarnings, openStackFromArgs } = await import('../stack-open.js');
    const { kappVarsReport } = await import('../../stack/vars-report.js');
    const stack = await openStackFromArgs(args, { planning: true });
    const report = kappVarsReport(stack, args.suppress);
    if (args.output === 'json') {
      const { toJS } = await import('../../go-value/value.js');
      process.stdout.write(
        `${JSON.stringify(
          report.map((r) => ({ id: r.id, variables: toJS(r.variables), config: toJS(r.config) })),
          null,
          2,
        )}\n`,
      );
    } else {
      const { stringify } = await import('../../yaml/stringify.js');
      for (const r of report) {
        process.stdout.write(`***** Start variables for kapp '${r.id}' *****\n`);
        process.stdout.write(stringify(r.variables, { lineWidth: 0, sortMapEntries: true }));
        process.stdout.write(`***** End variables for kapp '${r.id}' *****\n`);
        process.stdout.write(`***** Start config for kapp '${r.id}' *****\n`);
        process.stdout.write(stringify(r.config, { lineWidth: 0 }));
        process.stdout.write(`***** End config for kapp '${r.id}' *****\n`);
      }
    }
    flushWarnings(stack);
  },
};
