/**
 * Options shared by every command that works on a stack: `<stack-file> <stack-name> [workspace-dir]`, selectors,
 * stack overrides, the project config. Declared here once so every command's `--help` says the same. Every command
 * module loads this one to declare its options: opening the stack is in ./stack-open.ts, which handlers load.
 */
import type { Argv } from 'yargs';
import type { StackParams } from '../engine/context.js';

export type StackArgs = StackParams;

/** The positional arguments and the selector, override and config options. */
export function stackOptions<T>(
  y: Argv<T>,
  options: { workspace?: boolean; parents?: boolean } = {},
): Argv<T & StackArgs> {
  let a = y
    .positional('stack-file', { type: 'string', describe: 'Stack file (YAML map of named stacks)', demandOption: true })
    .positional('stack-name', { type: 'string', describe: 'Name of the stack in the file', demandOption: true });
  if (options.workspace !== false) {
    a = a.positional('workspace-dir', {
      type: 'string',
      describe: 'Workspace directory (default: .kapps-workspace/<stack-name> next to the stack file)',
    });
  }
  a = a
    .option('include', {
      alias: 'i',
      type: 'string',
      array: true,
      default: [],
      describe: 'Select kapps: manifest:kapp or manifest:* (repeatable)',
      group: 'Selection:',
    })
    .option('exclude', {
      alias: 'x',
      type: 'string',
      array: true,
      default: [],
      describe: 'Leave out kapps: manifest:kapp or manifest:* (repeatable, applied after --include)',
      group: 'Selection:',
    });
  if (options.parents !== false) {
    a = a.option('parents', {
      type: 'boolean',
      default: false,
      describe: 'Also process the ancestors of the selected kapps (otherwise they only provide their outputs)',
      group: 'Selection:',
    });
  }
  return a
    .option('provider', { type: 'string', describe: "Override the stack's provider", group: 'Stack overrides:' })
    .option('provisioner', { type: 'string', describe: "Override the stack's provisioner", group: 'Stack overrides:' })
    .option('account', {
      alias: 'a',
      type: 'string',
      describe: "Override the stack's account",
      group: 'Stack overrides:',
    })
    .option('region', {
      alias: 'r',
      type: 'string',
      describe: "Override the stack's region",
      group: 'Stack overrides:',
    })
    .option('profile', { type: 'string', describe: "Override the stack's profile", group: 'Stack overrides:' })
    .option('cluster', {
      alias: 'c',
      type: 'string',
      describe: "Override the stack's cluster",
      group: 'Stack overrides:',
    })
    .option('config', {
      type: 'string',
      describe:
        'sugarkube-conf.yaml to use (default: searched in ., the stack file’s folder and its parents, ~/.sugarkube)',
    })
    .option('source-sub', {
      type: 'string',
      array: true,
      requiresArg: true,
      describe:
        'PREFIX=REPLACEMENT: fetch git sources whose repository starts with PREFIX from a local path or another URL instead (repeatable; before source_substitutions of sugarkube-conf.yaml)',
    })
    .option('strict-vars', {
      type: 'boolean',
      default: false,
      describe: 'A missing variable is an error instead of rendering <no value>',
    })
    .option('actions', {
      type: 'boolean',
      describe:
        'kapps runs no Sugarkube actions (pre_install_actions, post_install_actions, …, e.g. cluster_update) and ' +
        'warns about each; --no-actions silences those warnings',
    })
    .option('fetch', {
      type: 'boolean',
      describe:
        'Git sources missing from the workspace are fetched before the kapps are read (changes no infrastructure) and ' +
        'those already there are used as they are; --fetch also brings those up to date first (run commands, as ' +
        '`kapps workspace create` does); --no-fetch fetches nothing and fails listing the kapps it cannot read',
    }) as unknown as Argv<T & StackArgs>;
}
