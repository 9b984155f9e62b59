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
  /**
   * Git sources: unset, missing ones are fetched and present ones used as they are; `--fetch` (true), run commands
   * also bring present ones up to date; `--no-fetch` (false), nothing is fetched and a kapp that cannot be read is
   * an error.
   */
  fetch?: boolean;
  /** `--no-actions` (false): no warning about Sugarkube actions, which kapps never runs. */
  actions?: boolean;
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

/** How a command uses the stack it opens. */
export interface OpenOptions {
  /**
   * A command that reports on the kapps without running them (generate, graph, vars, validate, preview, a dry
   * run): git sources missing from the workspace are fetched first, or with --no-fetch the command fails.
   */
  readonly planning?: boolean;
  /** An install or delete that applies without --allow-no-value: `<no value>` in a step is an error. */
  readonly applyNoValue?: boolean;
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
    ...(options.applyNoValue ? { applyNoValue: true } : {}),
    ...(args.actions === false ? { quietActions: true } : {}),
    ...(subs.length ? { sourceSubstitutions: subs } : {}),
  };
}

const printed = new WeakMap<Stack, number>();
/** Warnings already printed by this process: a stack opened again (after a fetch) does not repeat them. */
const printedOnce = new Set<string>();

/** Print the stack's warnings not printed yet, on stderr. */
export async function flushWarnings(stack: Stack): Promise<void> {
  const from = printed.get(stack) ?? 0;
  if (stack.warnings.length <= from) return;
  printed.set(stack, stack.warnings.length);
  const fresh = stack.warnings.slice(from).filter((w) => {
    const key = `${w.location?.file ?? ''}:${w.location?.line ?? ''}:${w.message}`;
    if (printedOnce.has(key)) return false;
    printedOnce.add(key);
    return true;
  });
  if (fresh.length === 0) return;
  const { formatDiagnostics } = await import('../report/diagnostic-printer.js');
  process.stderr.write(`${formatDiagnostics(fresh)}\n`);
}

/** Open the stack and print its warnings so far on stderr. */
export async function openStackFromArgs(args: StackArgs, options: OpenOptions = {}): Promise<Stack> {
  const { openStack } = await import('../stack/open-stack.js');
  let stack = openStack(stackRequest(args, options));
  if (options.planning || args.fetch === false) {
    const { fetchMissingSources, missingKapps, missingSourcesError } = await import('./missing-sources.js');
    // A fetched kapp's sugarkube.yaml can add dependencies, hence sources of new ancestors: fetch until none is missing.
    const tried = new Set<string>();
    for (let missing = missingKapps(stack); missing.length > 0; missing = missingKapps(stack)) {
      if (args.fetch === false) throw missingSourcesError(stack, missing, args);
      const fresh = missing.filter((id) => !tried.has(id));
      if (fresh.length === 0) throw missingSourcesError(stack, missing, args);
      for (const id of fresh) tried.add(id);
      await fetchMissingSources(stack, fresh);
      stack = openStack(stackRequest(args, options));
    }
  }
  await flushWarnings(stack);
  return stack;
}
