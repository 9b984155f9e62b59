/** The commands that run kapps: install, delete, output, clean, template. */
import type { CommandModule } from 'yargs';
import { applyOptions, runOptions, type ApplyArgs, type RunArgs } from '../run-args.js';
import {
  applyOnServerOptions,
  localArgs,
  runRemotely,
  serverOption,
  type ApplyOnServerArgs,
  type ServerOptionArgs,
} from '../server-option.js';

const STACK = '<stack-file> <stack-name> [workspace-dir]';

export const installCommand: CommandModule<object, ApplyArgs & ServerOptionArgs & ApplyOnServerArgs> = {
  command: `install ${STACK}`,
  describe: 'Install the selected kapps along the DAG (plan only unless --yes or --one-shot)',
  builder: (y) =>
    applyOnServerOptions(serverOption(applyOptions(y, 'install')))
      .example('$0 install stacks.yaml dev', 'Plan: run plan_install of every kapp; nothing destructive')
      .example('$0 install stacks.yaml dev -y', 'Apply: run apply_install, recorded as a release')
      .example('$0 install stacks.yaml dev --one-shot -i web:*', 'Plan then apply the kapps of manifest web')
      .example('$0 install stacks.yaml dev -y --changed-only', 'Only kapps new or changed since the last release')
      .epilogue(
        'Kapps start as soon as their dependencies are done, up to --workers at a time. A failure stops new kapps ' +
          'from starting (--keep-going runs everything that does not depend on it). Ctrl-C stops the run cleanly ' +
          '(exit 130); a second Ctrl-C kills the running steps at once. Exit codes: 0 success, 1 failure, 2 usage.',
      ),
  handler: async (args) => {
    if (await runRemotely('apply', args)) return;
    const { runCommand } = await import('../run-command.js');
    await runCommand('install', localArgs(args));
  },
};

export const deleteCommand: CommandModule<object, ApplyArgs & ServerOptionArgs & ApplyOnServerArgs> = {
  command: `delete ${STACK}`,
  aliases: ['uninstall'],
  describe: 'Delete the selected kapps, dependents before their dependencies (plan only unless --yes or --one-shot)',
  builder: (y) =>
    applyOnServerOptions(serverOption(applyOptions(y, 'delete')))
      .example('$0 delete stacks.yaml dev', 'Plan: run plan_delete of every kapp')
      .example('$0 delete stacks.yaml dev -y', 'Delete, recorded as a release')
      .epilogue('Outputs are loaded walking down first, so kapps being deleted can still read them.'),
  handler: async (args) => {
    if (await runRemotely('destroy', args)) return;
    const { runCommand } = await import('../run-command.js');
    await runCommand('delete', localArgs(args));
  },
};

function simple(
  name: 'output' | 'clean' | 'template',
  describe: string,
  example: string,
): CommandModule<object, RunArgs> {
  return {
    command: `${name} ${STACK}`,
    ...(name === 'template' ? { aliases: ['templates'] } : {}),
    describe,
    builder: (y) => runOptions(y).example(`$0 ${name} stacks.yaml dev`, example),
    handler: async (args) => {
      const { runCommand } = await import('../run-command.js');
      await runCommand(name, args);
    },
  };
}

export const outputCommand = simple(
  'output',
  'Run the output phase of the selected kapps (e.g. write terraform outputs to files)',
  'Run every selected kapp’s output steps',
);
export const cleanCommand = simple('clean', 'Run the clean phase of the selected kapps', 'Remove generated files');
export const templateCommand = simple(
  'template',
  'Render the templates of the selected kapps (loading the outputs of the kapps they depend on)',
  'Write every selected kapp’s rendered templates',
);
