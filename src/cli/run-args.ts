/** Options of the commands that run kapps: install, delete, output, clean, template. */
import type { Argv } from 'yargs';
import { numberArg } from './number-args.js';
import { stackOptions, type StackArgs } from './stack-args.js';

export interface RunArgs extends StackArgs {
  dryRun: boolean;
  keepGoing: boolean;
  workers?: number;
  reporter: 'auto' | 'listr' | 'plain' | 'json';
  verbose: boolean;
  color: boolean;
  validate: boolean;
  killGrace: number;
}

export interface ApplyArgs extends RunArgs {
  yes: boolean;
  oneShot: boolean;
  project?: string;
  backend?: string;
  ignoreErrors?: boolean;
  changedOnly?: boolean;
  refresh?: boolean;
  allowNoValue?: boolean;
}

/** The options every run command has. */
export function runOptions<T>(y: Argv<T>): Argv<T & RunArgs> {
  return stackOptions(y)
    .option('dry-run', {
      alias: 'n',
      type: 'boolean',
      default: false,
      describe: 'Print what would run, with the rendered command lines; run nothing, write nothing',
    })
    .option('keep-going', {
      type: 'boolean',
      default: false,
      describe: 'After a failure, still run every kapp that does not depend on the failed one',
    })
    .option('workers', {
      alias: 'w',
      requiresArg: true,
      coerce: numberArg('workers', { integer: true, min: 1 }),
      describe: 'Kapps processed at once (default: num_workers in sugarkube-conf.yaml, env KAPPS_WORKERS, else 5)',
    })
    .option('reporter', {
      choices: ['auto', 'listr', 'plain', 'json'] as const,
      default: 'auto' as const,
      describe:
        'Progress display: auto (listr on a terminal, plain otherwise), plain lines, or NDJSON events on stdout',
    })
    .option('verbose', {
      alias: 'v',
      type: 'boolean',
      default: false,
      describe: 'Show `print: verbose` step output and info messages',
    })
    .option('color', {
      type: 'boolean',
      default: true,
      describe: 'Colours on a terminal (--no-color, or NO_COLOR, turns them off)',
    })
    .option('validate', {
      type: 'boolean',
      default: true,
      describe: 'Check before running that every command exists (--no-validate skips the check)',
    })
    .option('kill-grace', {
      requiresArg: true,
      coerce: numberArg('kill-grace', { integer: false, min: 0 }),
      default: 3,
      describe: 'Seconds between SIGTERM and SIGKILL when a step is stopped (timeout, Ctrl-C)',
    }) as unknown as Argv<T & RunArgs>;
}

/** install/delete: plan, apply or both, and the release options. */
export function applyOptions<T>(y: Argv<T>, verb: 'install' | 'delete'): Argv<T & ApplyArgs> {
  let a = runOptions(y)
    .option('yes', {
      alias: 'y',
      type: 'boolean',
      default: false,
      describe: `Approve: run apply_${verb} (without it, only plan_${verb} runs and nothing is changed)`,
    })
    .option('one-shot', {
      type: 'boolean',
      default: false,
      describe: `Run plan_${verb} then apply_${verb} for each kapp in the same visit`,
    })
    .option('project', {
      type: 'string',
      describe:
        'Project the release is recorded under (default: `project:` in sugarkube-conf.yaml, else the folder of that ' +
        'file, else the git repository, else the stack file’s folder; see docs/releases.md)',
    })
    .option('backend', {
      type: 'string',
      describe: 'Release store: a directory or a postgres:// URL (env KAPPS_BACKEND; default $KAPPS_HOME, ~/.kapps)',
    });
  a = a.option('allow-no-value', {
    type: 'boolean',
    default: false,
    describe:
      'With --yes or --one-shot: run steps whose command, args, env or conditions render <no value> (a variable ' +
      'that is not set), as Sugarkube did; by default that is an error before anything runs',
  });
  if (verb === 'delete') {
    a = a.option('ignore-errors', {
      type: 'boolean',
      default: false,
      describe: 'Go on past failing steps (they are reported)',
    });
  } else {
    a = a
      .option('changed-only', {
        type: 'boolean',
        default: false,
        describe: 'With --yes: only install kapps that are new or changed since the last release',
      })
      .option('refresh', {
        type: 'boolean',
        default: false,
        describe:
          'Read the live outputs of the unchanged installed kapps (their output phase) for the preview of a plan, ' +
          'and with --changed-only also reinstall the kapps whose outputs drifted',
      });
  }
  // `--actions`/`--no-actions` is a stack option (it silences the warnings about actions).
  for (const flag of ['run-actions', 'run-pre-actions', 'run-post-actions']) {
    a = a.option(flag, {
      type: 'boolean',
      hidden: true,
      describe: 'Accepted for compatibility; kapps runs no pre/post actions',
    });
  }
  return a as unknown as Argv<T & ApplyArgs>;
}
