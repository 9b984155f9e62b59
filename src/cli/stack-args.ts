/**
 * Options shared by every command that works on a stack: `<stack-file> <stack-name> [workspace-dir]`, selectors,
 * stack overrides, the project config. Declared here once so every command's `--help` says the same.
 */
import type { Argv } from 'yargs';
import { parseSubstitutionFlags } from '../config/source-substitution.js';
import { UsageError } from '../diagnostics/errors.js';
import type { OpenStackRequest } from '../stack/open-stack.js';
import type { Stack } from '../stack/stack.js';

export interface StackArgs {
  stackFile: string;
  stackName: string;
  workspaceDir?: string;
  include: string[];
  exclude: string[];
  parents: boolean;
  provider?: string;
  provisioner?: string;
  account?: string;
  region?: string;
  profile?: string;
  cluster?: string;
  config?: string;
  strictVars: boolean;
  sourceSub?: string[];
}

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
    }) as unknown as Argv<T & StackArgs>;
}

/** How a command uses the stack it opens. */
export interface OpenOptions {
  /** A planning command (generate, graph, vars, validate): nothing is fetched, so warn about unfetched git sources. */
  readonly planning?: boolean;
}

/** The request to open the stack the arguments name. */
export function stackRequest(args: StackArgs, options: OpenOptions = {}): OpenStackRequest {
  const subs = parseSubstitutionFlags(args.sourceSub ?? [], process.cwd());
  if (typeof subs === 'string') throw new UsageError(subs);
  const overrides: Record<string, string> = {};
  for (const key of ['provider', 'provisioner', 'account', 'region', 'profile', 'cluster'] as const) {
    const v = args[key];
    if (v) overrides[key] = v;
  }
  return {
    stackFile: args.stackFile,
    stackName: args.stackName,
    ...(args.workspaceDir ? { workspace: args.workspaceDir } : {}),
    ...(args.config ? { configFile: args.config } : {}),
    cwd: process.cwd(),
    overrides,
    include: args.include,
    exclude: args.exclude,
    parents: args.parents ?? false,
    ...(process.env.KUBECONFIG ? { kubeconfig: process.env.KUBECONFIG } : {}),
    strict: args.strictVars,
    ...(subs.length ? { sourceSubstitutions: subs } : {}),
    ...(options.planning ? { warnUnfetched: true } : {}),
  };
}

const printed = new WeakMap<Stack, number>();

/** Print the stack's warnings not printed yet, on stderr. */
export async function flushWarnings(stack: Stack): Promise<void> {
  const from = printed.get(stack) ?? 0;
  if (stack.warnings.length <= from) return;
  const { formatDiagnostics } = await import('../report/diagnostic-printer.js');
  process.stderr.write(`${formatDiagnostics(stack.warnings.slice(from))}\n`);
  printed.set(stack, stack.warnings.length);
}

/** Open the stack and print its warnings so far on stderr. */
export async function openStackFromArgs(args: StackArgs, options: OpenOptions = {}): Promise<Stack> {
  const { openStack } = await import('../stack/open-stack.js');
  const stack = openStack(stackRequest(args, options));
  await flushWarnings(stack);
  return stack;
}
