/** `kapps generate`: the resolved spec of a stack, without running anything. */
import type { CommandModule } from 'yargs';
import { PHASES, type Phase } from '../../vocabulary.js';
import { stackOptions, type StackArgs } from '../stack-args.js';

interface GenerateArgs extends StackArgs {
  output: 'yaml' | 'json';
  phase: Phase[];
}

export const generateCommand: CommandModule<object, GenerateArgs> = {
  command: 'generate <stack-file> <stack-name> [workspace-dir]',
  describe: 'Print the resolved spec of a stack: each kapp with its dependencies and the run steps of every phase',
  builder: (y) =>
    stackOptions(y)
      .option('output', {
        alias: 'o',
        choices: ['yaml', 'json'] as const,
        default: 'yaml' as const,
        describe: 'Output format',
      })
      .option('phase', {
        type: 'string',
        array: true,
        choices: PHASES,
        default: [] as Phase[],
        describe: 'Only plan these phases (repeatable; default: all six)',
      })
      .example('$0 generate stacks.yaml dev -o json', 'The whole plan as one JSON document')
      .example('$0 generate stacks.yaml dev --phase apply_install', 'What install -y would run')
      .epilogue(
        'Outputs that only a run can produce render as in plan mode (an empty map). The JSON document is a stable ' +
          'interface: {"stack", "kapps": [{"id", "dependsOn", "selected", "conditionsOk", "phases": {PHASE: [STEP...]}}]}.',
      ),
  handler: async (args) => {
    const { generateDocument } = await import('../../engine/generate.js');
    const { cliContext } = await import('../context.js');
    process.stdout.write(await generateDocument(args, cliContext, { phases: args.phase, format: args.output }));
  },
};
