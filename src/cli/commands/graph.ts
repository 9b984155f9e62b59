/** `kapps graph`: the DAG of a stack as text, Graphviz dot, Mermaid or JSON. */
import type { CommandModule } from 'yargs';
import { GRAPH_FORMATS, type GraphFormat } from '../../plan/graph-format.js';
import { stackOptions, type StackArgs } from '../stack-args.js';

interface GraphArgs extends StackArgs {
  format: GraphFormat;
}

export const graphCommand: CommandModule<object, GraphArgs> = {
  command: 'graph <stack-file> <stack-name> [workspace-dir]',
  describe: 'Show the dependency graph of the selected kapps and their ancestors',
  builder: (y) =>
    stackOptions(y)
      .option('format', { alias: 'f', choices: GRAPH_FORMATS, default: 'text' as const, describe: 'Output format' })
      .example('$0 graph stacks.yaml dev', 'Text: * marks kapps that would be processed')
      .example('$0 graph stacks.yaml dev -f dot | dot -Tsvg > dag.svg', 'A picture with Graphviz')
      .epilogue('Kapps whose conditions are false are marked "(conditions failed)" (text) or red (dot).'),
  handler: async (args) => {
    const { openStackFromArgs } = await import('../stack-open.js');
    const { formatGraph } = await import('../../plan/graph-format.js');
    const stack = await openStackFromArgs(args, { planning: true });
    process.stdout.write(`${formatGraph(stack.selection.nodes, args.format, { stackName: stack.config.name })}\n`);
  },
};
