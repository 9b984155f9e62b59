/** `kapps generate`: the resolved spec of a stack, without running anything. */
import type { CommandModule } from 'yargs';
import { PHASES, type Phase } from '../../vocabulary.js';
import { stackOptions, type StackArgs } from '../stack-args.js';
import { runRemotely, serverOption, type ServerOptionArgs } from '../server-option.js';

interface GenerateArgs extends StackArgs, ServerOptionArgs {
  project?: string;
  output: 'yaml' | 'json';
  phase: Phase[];
}

export const generateCommand: CommandModule<object, GenerateArgs> = {
  command: 'generate <stack-file> <stack-name> [workspace-dir]',
  describe: 'Print the resolved spec of a stack: each kapp with its dependencies and the run steps of every phase',
  builder: (y) =>
    serverOption(stackOptions(y))
      .option('project', {
        type: 'string',
        requiresArg: true,
        describe: 'With --server: the project, as the server registers it',
        group: 'Runs server:',
      })
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
    if (args.phase.length > 0 && args.server !== undefined) {
      const { UsageError } = await import('../../diagnostics/errors.js');
      throw new UsageError('--phase is not available with --server: the server generates every phase');
    }
    if (await runRemotely('generate', args)) return;
    const { generateDocumentParts } = await import('../../engine/generate.js');
    const { cliContext } = await import('../context.js');
    const parts = await generateDocumentParts(args, cliContext, { phases: args.phase, format: args.output });
    // Written in pieces of about 64 KB: the same bytes, without a copy of a big stack's whole text.
    let chunk = '';
    for (const part of parts) {
      chunk += part;
      if (chunk.length >= 65_536) {
        process.stdout.write(chunk);
        chunk = '';
      }
    }
    if (chunk !== '') process.stdout.write(chunk);
  },
};
