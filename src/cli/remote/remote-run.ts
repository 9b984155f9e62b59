/**
 * `--server URL` on generate, preview, install -y and delete -y: the run is submitted to a runs server and followed
 * there, its events fed to the same local reporters (listr, plain, JSON) so the output looks as if it ran here; the
 * result (the spec, the preview) is printed as the local command prints it, and the exit code is the run's outcome:
 * 0, 1 (failed, errored, rejected, stale) or 130 (cancelled). Ctrl-C once asks the server to cancel the run and waits
 * for it to end; a second Ctrl-C stops waiting. A run the server holds for approval (`needs-approval`) is said once
 * and waited for; Ctrl-C then leaves it waiting on the server (exit 130). `--no-wait` returns once it is submitted.
 */
import { CancelledError, ExitCode, KappsError, SilentFailure, UsageError } from '../../diagnostics/errors.js';
import type { Reporter } from '../../report/events.js';
import {
  applyResultSchema,
  gitRefSchema,
  nameSchema,
  overrideValueSchema,
  runSchema,
  type Run,
  type RunType,
  type SubmitRun,
} from '../../api/index.js';
import { followRun } from './events.js';
import { ServerClient, serverUrl } from './http.js';
import {
  approvalCount,
  approvers,
  decisionLine,
  indentedLines,
  oneLine,
  rejectionText,
  runText,
  waitingText,
} from './run-text.js';

/** The command-line arguments a remote run takes (those of the local command it stands for). */
export interface RemoteRunArgs {
  readonly server?: string | undefined;
  readonly project?: string | undefined;
  readonly stackName: string;
  readonly include?: readonly string[];
  readonly exclude?: readonly string[];
  readonly parents?: boolean;
  readonly provider?: string | undefined;
  readonly provisioner?: string | undefined;
  readonly account?: string | undefined;
  readonly region?: string | undefined;
  readonly profile?: string | undefined;
  readonly cluster?: string | undefined;
  readonly workers?: number | undefined;
  readonly keepGoing?: boolean;
  readonly changedOnly?: boolean;
  readonly refresh?: boolean;
  /** install/delete: the progress display. */
  readonly reporter?: 'auto' | 'listr' | 'plain' | 'json';
  readonly verbose?: boolean;
  readonly color?: boolean;
  /** generate: yaml | json; preview: table | json. */
  readonly output?: string;
  readonly detailedExitcode?: boolean;
  /** A project from git: the branch, tag or commit to run at. */
  readonly ref?: string | undefined;
  /** A rollback (and its preview): the target revision, whether it prunes, whether it forces. */
  readonly toRevision?: number;
  readonly prune?: boolean;
  readonly force?: boolean;
  /** Apply (or roll back) exactly what this finished preview run showed. */
  readonly previewRunId?: string;
  /** Apply, destroy, rollback: skip the approvals the stack requires (a `break_glass` role's token only). */
  readonly breakGlass?: boolean;
  /** Return once the run is submitted: print it and how to follow it. */
  readonly noWait?: boolean;
}

/** The body of `POST /api/v1/runs` for these arguments. */
export function submitBody(type: RunType, project: string, args: RemoteRunArgs): SubmitRun {
  const overrides: Record<string, string> = {};
  for (const key of ['provider', 'provisioner', 'account', 'region', 'profile', 'cluster'] as const) {
    const value = args[key];
    if (!value) continue;
    // The server takes only names: said here, before anything is sent.
    const checked = overrideValueSchema.safeParse(value);
    if (!checked.success) {
      throw new UsageError(
        `--${key} ${JSON.stringify(value)} is not a value the server takes: ${checked.error.issues[0]?.message ?? ''}`,
      );
    }
    overrides[key] = value;
  }
  return {
    type,
    project,
    stack: args.stackName,
    ...(args.include?.length ? { include: [...args.include] } : {}),
    ...(args.exclude?.length ? { exclude: [...args.exclude] } : {}),
    ...(args.parents ? { parents: true } : {}),
    ...(args.changedOnly ? { changedOnly: true } : {}),
    ...(args.keepGoing ? { keepGoing: true } : {}),
    ...(args.refresh ? { refresh: true } : {}),
    ...(args.workers !== undefined ? { workers: args.workers } : {}),
    ...(Object.keys(overrides).length ? { overrides } : {}),
    ...(args.ref !== undefined ? { ref: checkedRef(args.ref, '--ref') } : {}),
    ...(args.toRevision !== undefined ? { toRevision: args.toRevision } : {}),
    ...(args.prune ? { prune: true } : {}),
    ...(args.force ? { force: true } : {}),
    ...(args.previewRunId !== undefined ? { previewRunId: args.previewRunId } : {}),
    ...(args.breakGlass ? { breakGlass: true } : {}),
  };
}

/** A ref as the server takes it (a usage error here rather than a 400 there): never an option for git. */
export function checkedRef(value: string, what: string): string {
  const checked = gitRefSchema.safeParse(value);
  if (!checked.success) {
    throw new UsageError(
      `${what} ${JSON.stringify(value)} is not a ref the server takes: ${checked.error.issues[0]?.message ?? ''}`,
    );
  }
  return value;
}

/** Check a project or stack name as the server takes it (a usage error here rather than a 400 there). */
export function checkName(value: string, what: string): void {
  const checked = nameSchema.safeParse(value);
  if (!checked.success) {
    throw new UsageError(
      `${what} ${JSON.stringify(value)} is not a name the server takes: ${checked.error.issues[0]?.message ?? ''}`,
    );
  }
}

/** The client of `--server`, with the token of `KAPPS_TOKEN`. */
export function clientFor(server: string | undefined, from = '--server'): ServerClient {
  return new ServerClient(serverUrl(server, from), process.env.KAPPS_TOKEN);
}

/**
 * Run `type` on the server and print what the local command prints; the exit code is the run's outcome. Returns the
 * run as it ended (succeeded: a failure throws).
 */
export async function remoteRun(type: RunType, args: RemoteRunArgs): Promise<Run> {
  if (args.project === undefined || args.project === '') {
    throw new UsageError("--project is required with --server: name the server's registered project");
  }
  checkName(args.project, '--project');
  checkName(args.stackName, 'the stack');
  const client = clientFor(args.server);
  const submitted = await client.json('POST', 'runs', runSchema, {
    body: submitBody(type, args.project, args),
    what: `the ${type} run of ${args.project}/${args.stackName}`,
  });
  process.stderr.write(`Run ${submitted.id}: ${type} of ${submitted.project}/${submitted.stack} on ${client.origin}\n`);
  const breakGlass = submitted.approval?.breakGlass;
  if (breakGlass) {
    process.stderr.write(
      `Approvals skipped by break glass: ${oneLine(breakGlass.by, 100)} (${breakGlass.role}); recorded in the run and its release\n`,
    );
  }
  if (args.noWait) {
    notWaiting(client, submitted, args);
    return submitted;
  }

  const reporters: Reporter[] = [];
  const applies = type === 'apply' || type === 'destroy' || type === 'rollback';
  if (applies) {
    const { createReporter } = await import('../../report/create-reporter.js');
    const isTTY = process.stdout.isTTY === true;
    reporters.push(
      await createReporter({
        kind: args.reporter ?? 'auto',
        stdout: process.stdout,
        stderr: process.stderr,
        isTTY,
        verbose: args.verbose ?? false,
        color: (args.color ?? true) && isTTY && !process.env.NO_COLOR,
        mode: { command: type === 'destroy' ? 'delete' : 'install', planOnly: false },
      }),
    );
  }
  const notice = (text: string): void => {
    if (!reporters.some((r) => safely(() => r.notice?.(text) ?? false))) process.stderr.write(`${text}\n`);
  };

  // Ctrl-C: once, cancel on the server and wait; twice, stop waiting. While the run waits for approval, it is left
  // waiting there: the approvals it has and the preview they bind to are not thrown away by a closed terminal.
  const stopWaiting = new AbortController();
  let interrupted = false;
  let status = submitted.status;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (status === 'needs-approval' && !interrupted) {
      stopWaiting.abort(
        new CancelledError(
          `run ${submitted.id} is still waiting for approval on the server; cancel it with kapps runs cancel ${submitted.id}`,
        ),
      );
      return;
    }
    if (interrupted) {
      stopWaiting.abort(
        new CancelledError(`stopped waiting for run ${submitted.id} (the server goes on cancelling it)`),
      );
      return;
    }
    interrupted = true;
    notice(`${signal}: cancelling run ${submitted.id} on ${client.origin}; ^C again to stop waiting`);
    client
      .json('POST', `runs/${encodeURIComponent(submitted.id)}/cancel`, runSchema, {
        what: `the cancel of run ${submitted.id}`,
      })
      .catch((error: unknown) => notice(`kapps: ${error instanceof Error ? error.message : String(error)}`));
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, onSignal);

  let queuedSaid = false;
  let waitingSaid = false;
  let approvedSaid = false;
  const decisionsSaid = new Set<string>();
  let ranToEnd = false;
  let run: Run;
  try {
    run = await followRun(
      client,
      submitted.id,
      {
        onRunEvent: (event) => {
          if (event.type === 'run-finished') ranToEnd = true;
          for (const reporter of [...reporters]) {
            if (!safely(() => (reporter.onEvent(event), true))) reporters.splice(reporters.indexOf(reporter), 1);
          }
        },
        onStatus: (run) => {
          status = run.status;
          const decisions = run.approval?.decisions ?? [];
          if (run.status === 'needs-approval') {
            if (!waitingSaid) {
              waitingSaid = true;
              for (const d of decisions) decisionsSaid.add(`${d.by} ${d.at}`);
              notice(waitingText(run));
            }
            // Decisions taken while it waits (an approval of two needed), each said once.
            for (const d of decisions) {
              if (decisionsSaid.has(`${d.by} ${d.at}`)) continue;
              decisionsSaid.add(`${d.by} ${d.at}`);
              notice(`${decisionLine(d)}${run.approval ? ` (${approvalCount(run.approval)})` : ''}`);
            }
          } else if (waitingSaid && !approvedSaid && (run.status === 'queued' || run.status === 'running')) {
            approvedSaid = true;
            const by = run.approval ? approvers(run.approval).map((b) => oneLine(b, 100)) : [];
            notice(
              `Run ${run.id} approved${by.length > 0 ? ` by ${by.join(', ')}` : ''}; it applies the preview approved`,
            );
          }
          // (A status written while it was queued, shown once it runs, may name the run itself.)
          if (run.status === 'queued' && run.blockedBy && run.blockedBy !== run.id && !queuedSaid) {
            queuedSaid = true;
            notice(`Queued behind run ${run.blockedBy} (position ${run.queuePosition ?? '?'})`);
          }
        },
        onReconnect: (attempt, reason) => {
          if (attempt === 1) notice(`kapps: the event stream dropped (${reason}); reconnecting`);
        },
      },
      { signal: stopWaiting.signal },
    );
  } finally {
    for (const s of signals) process.off(s, onSignal);
    for (const reporter of reporters.splice(0)) {
      await reporter.close().catch(() => undefined);
    }
  }
  await finish(client, type, run, args, interrupted, ranToEnd);
  return run;
}

function safely(action: () => boolean): boolean {
  try {
    return action();
  } catch {
    return false;
  }
}

/** Print the result and map the final state to the exit code. */
async function finish(
  client: ServerClient,
  type: RunType,
  run: Run,
  args: RemoteRunArgs,
  interrupted: boolean,
  ranToEnd: boolean,
) {
  const where = `run ${run.id} on ${client.origin}`;
  if (interrupted && run.status !== 'succeeded') {
    throw new CancelledError(
      `interrupted; ${where} ${run.status === 'cancelled' ? 'was cancelled' : `ended ${run.status}`}`,
    );
  }
  if (run.status === 'cancelled') {
    throw new CancelledError(interrupted ? `interrupted; ${where} was cancelled` : `${where} was cancelled${why(run)}`);
  }
  if (run.status === 'errored') throw new KappsError(`${where} errored${why(run)}`);
  if (run.status === 'rejected') throw new KappsError(`${where} was ${rejectionText(run)}; nothing was applied`);
  if (run.status === 'stale') {
    throw new KappsError(
      `${where} is stale${why(run)}; nothing was applied` +
        (run.error?.includes('new preview') ? '' : ': submit it again for a new preview and new approvals'),
    );
  }
  if (run.status === 'failed') {
    if (type === 'apply' || type === 'destroy' || type === 'rollback') {
      // The summary was shown by the reporter; say why when the run itself broke, or ended before it ran.
      if (run.error || !ranToEnd) process.stderr.write(`kapps: ${where} failed${why(run)}\n`);
      throw new SilentFailure('the run failed');
    }
    throw new KappsError(`${where} failed${why(run)}`);
  }
  const path = `runs/${encodeURIComponent(run.id)}/result`;
  const what = `the result of run ${run.id}`;
  if (type === 'generate') {
    const { text } = await client.raw('GET', path, { what });
    if (args.output === 'json') {
      const { parse } = await import('yaml');
      process.stdout.write(`${JSON.stringify(parse(text), null, 2)}\n`);
    } else {
      process.stdout.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
    }
  } else if (type === 'preview') {
    const { text } = await client.raw('GET', path, { what });
    const { printPreviewDocument } = await import('./preview-output.js');
    const hasChanges = printPreviewDocument(text, args.output === 'json' ? 'json' : 'table', client.origin);
    if (args.detailedExitcode) process.exitCode = hasChanges ? 2 : ExitCode.ok;
  } else {
    const result = await client.json('GET', path, applyResultSchema, { what });
    const revision = result.releaseRevision ?? run.releaseRevision;
    if (args.reporter !== 'json' && revision !== null) {
      process.stdout.write(`Recorded as release ${revision} of stack ${run.stack} by ${where}\n`);
    }
  }
}

function why(run: Run): string {
  return run.error ? `: ${indentedLines(run.error)}` : '';
}

/** `--no-wait`: the run as submitted (JSON with `--reporter json`), and, on stderr, how to follow it. */
function notWaiting(client: ServerClient, run: Run, args: RemoteRunArgs): void {
  process.stdout.write(args.reporter === 'json' ? `${JSON.stringify(run)}\n` : runText(run));
  const server = `--server ${client.origin}`;
  process.stderr.write(
    `Not waiting for run ${run.id}. Follow it: kapps runs logs ${run.id} --follow ${server}\n` +
      `Its state: kapps runs show ${run.id} ${server}` +
      (run.approval && !run.approval.breakGlass
        ? `\nIt needs ${approvalCount(run.approval).replace(/^\d+ of /, '')} before it applies: kapps runs approve ${run.id} ${server}`
        : '') +
      '\n',
  );
}
