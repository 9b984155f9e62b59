/** `kapps workspace create`: fetch every selected kapp's sources into the workspace. */
import type { CommandModule } from 'yargs';
import { stackOptions, type StackArgs } from '../stack-args.js';

interface WorkspaceArgs extends StackArgs {
  dryRun: boolean;
  update: boolean;
}

const createCommand: CommandModule<object, WorkspaceArgs> = {
  command: 'create <stack-file> <stack-name> [workspace-dir]',
  describe: 'Fetch the sources of the selected kapps (and their ancestors) into the workspace',
  builder: (y) =>
    stackOptions(y)
      .option('dry-run', { alias: 'n', type: 'boolean', default: false, describe: 'Only list what would be fetched' })
      .option('update', {
        type: 'boolean',
        default: true,
        describe:
          'Bring git checkouts up to date (refused for a checkout with local changes); --no-update only fetches missing ones',
      })
      .example('$0 workspace create stacks.yaml dev', 'Fill .kapps-workspace/dev next to the stack file') as never,
  handler: async (args) => {
    const { openStackFromArgs } = await import('../stack-open.js');
    const { ensureWorkspace } = await import('../../workspace/workspace.js');
    const { gitRunnerFor } = await import('../../engine/git-runner.js');
    const stack = await openStackFromArgs(args);
    const kapps = stack.selection.nodes.map((n) => stack.kapp(n.id)).filter((k) => k.sources.length > 0);
    for (const k of kapps) {
      for (const s of k.sources) {
        const what = s.kind === 'git' ? `${s.repo}//${s.path}#${s.ref}` : s.path;
        process.stdout.write(`${args.dryRun ? 'Would fetch' : 'Fetching'} ${k.id} source ${s.id}: ${what}\n`);
      }
    }
    if (!args.dryRun) {
      await ensureWorkspace(
        kapps.map((k) => ({ fqId: k.id, cacheRoot: k.cacheRoot, sources: k.sources })),
        { update: args.update, run: gitRunnerFor(process.env) },
      );
      process.stdout.write(`Workspace ready at ${stack.workspace}\n`);
    }
  },
};

export const workspaceCommand: CommandModule = {
  command: 'workspace',
  aliases: ['ws'],
  describe: 'Manage the workspace that holds the kapps’ sources',
  builder: (y) => y.command(createCommand as never).demandCommand(1, 'Name a workspace command: create.'),
  handler: () => undefined,
};
