/**
 * `kapps runs submit|list|show|logs|cancel|approve|reject`: the CLI as a client of a runs server (`kapps serve`). The
 * server is `--server URL` or env KAPPS_SERVER; the token is env KAPPS_TOKEN (never a flag, so it stays out of shell
 * histories and process lists).
 */
import type { Argv, CommandModule } from 'yargs';
import { RUN_STATES, RUN_TYPES, type RunState, type RunType } from '../../api/constants.js';
import { numberArg } from '../number-args.js';

interface ServerArgs {
  server?: string;
  output: 'table' | 'json';
}

interface SubmitArgs extends ServerArgs {
  type: (typeof SUBMIT_TYPES)[number];
  stackName: string;
  project: string;
  include: string[];
  exclude: string[];
  parents: boolean;
  changedOnly: boolean;
  keepGoing: boolean;
  refresh: boolean;
  workers?: number;
  provider?: string;
  provisioner?: string;
  account?: string;
  region?: string;
  profile?: string;
  cluster?: string;
  previewRun?: string;
  idempotencyKey?: string;
  ref?: string;
  breakGlass: boolean;
}

interface ListArgs extends ServerArgs {
  project?: string;
  stack?: string;
  type?: RunType;
  status?: RunState;
  createdBy?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

interface IdArgs extends ServerArgs {
  id: string;
}

interface ShowArgs extends IdArgs {
  result: boolean;
}

interface DecideArgs extends IdArgs {
  comment?: string;
}

interface LogsArgs extends IdArgs {
  follow: boolean;
  kapp?: string;
}

function serverOptions<T>(y: Argv<T>): Argv<T & ServerArgs> {
  return y
    .option('server', {
      type: 'string',
      requiresArg: true,
      describe: 'The runs server, e.g. http://127.0.0.1:7070 (env KAPPS_SERVER); the token is env KAPPS_TOKEN',
    })
    .option('output', {
      alias: 'o',
      choices: ['table', 'json'] as const,
      default: 'table' as const,
      describe: 'Output format',
    });
}

async function client(argv: ServerArgs) {
  const { clientFor } = await import('../remote/remote-run.js');
  return argv.server !== undefined
    ? clientFor(argv.server, '--server')
    : clientFor(process.env.KAPPS_SERVER, 'KAPPS_SERVER');
}

/** The types `runs submit` takes: a rollback needs its target (`kapps release rollback --server`). */
const SUBMIT_TYPES = RUN_TYPES.filter((t): t is Exclude<RunType, 'rollback'> => t !== 'rollback');

const submitCommand: CommandModule<object, SubmitArgs> = {
  command: 'submit <type> <stack-name>',
  describe: 'Queue a run on the server and print it (its id, status, place in the queue)',
  builder: (y) =>
    serverOptions(y)
      .positional('type', { choices: SUBMIT_TYPES, demandOption: true, describe: 'What the run does' })
      .positional('stack-name', { type: 'string', demandOption: true, describe: 'The stack, in the project' })
      .option('project', {
        type: 'string',
        demandOption: true,
        requiresArg: true,
        describe: 'The project, as the server registers it',
      })
      .option('include', {
        alias: 'i',
        type: 'string',
        array: true,
        default: [],
        describe: 'Select kapps (repeatable)',
      })
      .option('exclude', {
        alias: 'x',
        type: 'string',
        array: true,
        default: [],
        describe: 'Leave out kapps (repeatable)',
      })
      .option('parents', {
        type: 'boolean',
        default: false,
        describe: 'Also process the ancestors of the selected kapps',
      })
      .option('changed-only', { type: 'boolean', default: false, describe: 'apply: only kapps new or changed' })
      .option('keep-going', {
        type: 'boolean',
        default: false,
        describe: 'After a failure, run what does not depend on it',
      })
      .option('refresh', { type: 'boolean', default: false, describe: 'preview: read the live outputs' })
      .option('workers', {
        alias: 'w',
        requiresArg: true,
        coerce: numberArg('workers', { integer: true, min: 1 }),
        describe: 'Kapps processed at once',
      })
      .option('provider', { type: 'string', describe: "Override the stack's provider", group: 'Stack overrides:' })
      .option('provisioner', {
        type: 'string',
        describe: "Override the stack's provisioner",
        group: 'Stack overrides:',
      })
      .option('account', { type: 'string', describe: "Override the stack's account", group: 'Stack overrides:' })
      .option('region', { type: 'string', describe: "Override the stack's region", group: 'Stack overrides:' })
      .option('profile', { type: 'string', describe: "Override the stack's profile", group: 'Stack overrides:' })
      .option('cluster', { type: 'string', describe: "Override the stack's cluster", group: 'Stack overrides:' })
      .option('preview-run', {
        type: 'string',
        requiresArg: true,
        describe: 'apply: apply exactly what this finished preview run showed (refused when the stack changed since)',
      })
      .option('ref', {
        type: 'string',
        requiresArg: true,
        describe:
          "A project from git: the branch, tag or commit to run at (default: the project's branch), resolved when " +
          'the run is submitted',
      })
      .option('idempotency-key', {
        type: 'string',
        requiresArg: true,
        describe: 'Submitting again with the same key returns the run made the first time',
      })
      .option('break-glass', {
        type: 'boolean',
        default: false,
        describe:
          "apply, destroy: skip the approvals the stack requires — only for a token of a role the project's " +
          'approvals.break_glass names; the use is recorded in the run and its release, and notified',
      })
      .example(
        '$0 runs submit apply dev --project shop --server http://127.0.0.1:7070',
        'Queue an apply of shop/dev',
      ) as unknown as Argv<SubmitArgs>,
  handler: async (argv) => {
    const { submitRun } = await import('../remote/runs.js');
    await submitRun(await client(argv), argv.type, argv.project, argv, argv.output);
  },
};

const listCommand: CommandModule<object, ListArgs> = {
  command: 'list',
  describe: 'List runs, newest first (one page; --cursor for the next)',
  builder: (y) =>
    serverOptions(y)
      .option('project', { type: 'string', requiresArg: true, describe: 'Only this project' })
      .option('stack', { type: 'string', requiresArg: true, describe: 'Only this stack' })
      .option('type', { choices: RUN_TYPES, describe: 'Only runs of this type' })
      .option('status', { choices: RUN_STATES, describe: 'Only runs in this state' })
      .option('created-by', { type: 'string', requiresArg: true, describe: 'Only runs submitted with this token name' })
      .option('since', { type: 'string', requiresArg: true, describe: 'Created at or after (ISO 8601 time)' })
      .option('until', { type: 'string', requiresArg: true, describe: 'Created before (ISO 8601 time)' })
      .option('limit', {
        requiresArg: true,
        coerce: numberArg('limit', { integer: true, min: 1 }),
        describe: 'Runs per page (the server caps it)',
      })
      .option('cursor', { type: 'string', requiresArg: true, describe: 'The page after the one that printed it' }),
  handler: async (argv) => {
    const { listRuns } = await import('../remote/runs.js');
    const query: Record<string, string | number> = {};
    for (const key of [
      'project',
      'stack',
      'type',
      'status',
      'createdBy',
      'since',
      'until',
      'limit',
      'cursor',
    ] as const) {
      const value = argv[key];
      if (value !== undefined) query[key] = value;
    }
    await listRuns(await client(argv), query, argv.output);
  },
};

function idPositional<T>(y: Argv<T>): Argv<T & IdArgs> {
  return serverOptions(y).positional('id', {
    type: 'string',
    demandOption: true,
    describe: 'The run id',
  });
}

const showCommand: CommandModule<object, ShowArgs> = {
  command: 'show <id>',
  describe: 'Print one run; --result prints its result (the spec, the preview, the apply outcome)',
  builder: (y) =>
    idPositional(y).option('result', {
      type: 'boolean',
      default: false,
      describe: 'Print the result of the finished run as the server keeps it (YAML or JSON)',
    }),
  handler: async (argv) => {
    const { showRun } = await import('../remote/runs.js');
    await showRun(await client(argv), argv.id, argv.output, argv.result);
  },
};

const logsCommand: CommandModule<object, LogsArgs> = {
  command: 'logs <id>',
  describe: 'Print the log of a run (-o json: one JSON line each); --follow until it ends',
  builder: (y) =>
    idPositional(y)
      .option('follow', {
        alias: 'f',
        type: 'boolean',
        default: false,
        describe: 'Keep printing as the run goes (from its event stream), until it ends',
      })
      .option('kapp', { type: 'string', requiresArg: true, describe: 'Only the lines of this kapp (manifest:kapp)' }),
  handler: async (argv) => {
    const { runLogs } = await import('../remote/runs.js');
    await runLogs(await client(argv), argv.id, { follow: argv.follow, kapp: argv.kapp, output: argv.output });
  },
};

const cancelCommand: CommandModule<object, IdArgs> = {
  command: 'cancel <id>',
  describe: 'Cancel a run: a queued one (or one waiting for approval) at once, a running one stops as on Ctrl-C',
  builder: (y) => idPositional(y),
  handler: async (argv) => {
    const { cancelRun } = await import('../remote/runs.js');
    await cancelRun(await client(argv), argv.id, argv.output);
  },
};

function decideCommand(decision: 'approve' | 'reject'): CommandModule<object, DecideArgs> {
  const approve = decision === 'approve';
  return {
    command: `${decision} <id>`,
    describe: approve
      ? 'Approve a run waiting for approval (needs-approval): once enough tokens approved, it applies its preview'
      : 'Reject a run waiting for approval: it ends rejected and nothing is applied',
    builder: (y) =>
      idPositional(y)
        .option('comment', {
          type: 'string',
          requiresArg: true,
          describe: `Kept with the ${approve ? 'approval, in the run and the release it records' : 'rejection, in the run'} (one line or several; the server caps its length)`,
        })
        .example(
          approve
            ? `$0 runs approve RUN_ID --comment "checked the preview"`
            : `$0 runs reject RUN_ID --comment "not during the freeze"`,
          approve ? 'Approve it, with a comment' : 'Reject it, saying why',
        )
        .epilogue(
          (approve
            ? 'The run (an apply, destroy or rollback of a stack whose project requires approvals) waits in ' +
              'needs-approval holding its preview: `kapps runs show ID` prints the approvals it needs and has, until when ' +
              'it waits, and its checks; the page and GET /api/v1/runs/ID/preview show the preview itself. Approvals ' +
              'count per distinct token name; the token needs a role of the project’s approvals.from_roles, and the ' +
              "run's author may not approve it unless approvals.author_may_approve. Once approved it is queued again and " +
              'applies exactly the preview approved; if the stack changed meanwhile it ends stale instead. '
            : 'A token allowed to approve it may reject it; its author may not (unless approvals.author_may_approve): ' +
              'kapps runs cancel ID withdraws it. ') +
            'Exit codes: 0 done, 1 refused (401 token, 403 role or author, 404 unknown run, 409 not waiting or already ' +
            'decided by this token), 2 usage.',
        ),
    handler: async (argv) => {
      const { decideRun } = await import('../remote/runs.js');
      await decideRun(await client(argv), argv.id, decision, argv.comment, argv.output);
    },
  };
}

/** The `runs` command group. */
export const runsCommand: CommandModule<object, object> = {
  command: 'runs',
  describe:
    'Submit, list, show, follow, cancel, approve and reject the runs of a runs server (--server URL, token in KAPPS_TOKEN)',
  builder: (y) =>
    y
      .command(submitCommand)
      .command(listCommand)
      .command(showCommand)
      .command(logsCommand)
      .command(cancelCommand)
      .command(decideCommand('approve'))
      .command(decideCommand('reject'))
      .demandCommand(1, 'Name a runs command: submit, list, show, logs, cancel, approve or reject.'),
  handler: () => undefined,
};
