/**
 * `kapps runs submit|list|show|logs|cancel|approve|reject`: the runs of a runs server, from the command line, as
 * tables or JSON.
 */
import { CancelledError, UsageError } from '../../diagnostics/errors.js';
import { formatLogLine } from '../../log/line.js';
import {
  MAX_APPROVAL_COMMENT,
  logChunkSchema,
  runListSchema,
  runSchema,
  type LogLine,
  type Run,
  type RunListQuery,
  type RunType,
} from '../../api/index.js';
import { followRun } from './events.js';
import type { ServerClient } from './http.js';
import { checkName, submitBody, type RemoteRunArgs } from './remote-run.js';
import { approvedText, oneLine, rejectedText, runText, shortSha } from './run-text.js';

export type Output = 'table' | 'json';

function runPath(id: string, tail = ''): string {
  return `runs/${encodeURIComponent(id)}${tail}`;
}

/** `kapps runs submit`: queue a run and print it. */
export async function submitRun(
  client: ServerClient,
  type: RunType,
  project: string,
  args: RemoteRunArgs & { previewRun?: string | undefined; idempotencyKey?: string | undefined },
  output: Output,
): Promise<void> {
  checkName(project, '--project');
  checkName(args.stackName, 'the stack');
  const body = { ...submitBody(type, project, args), ...(args.previewRun ? { previewRunId: args.previewRun } : {}) };
  const run = await client.json('POST', 'runs', runSchema, {
    body,
    ...(args.idempotencyKey ? { headers: { 'idempotency-key': args.idempotencyKey } } : {}),
    what: `the ${type} run of ${project}/${args.stackName}`,
  });
  printRun(run, output);
}

/** `kapps runs list`: one page of the history, newest first; the next page's cursor on stderr. */
export async function listRuns(client: ServerClient, query: RunListQuery, output: Output): Promise<void> {
  const page = await client.json('GET', 'runs', runListSchema, {
    query: query,
    what: 'the list of runs',
  });
  if (output === 'json') {
    process.stdout.write(`${JSON.stringify(page, null, 2)}\n`);
    return;
  }
  if (page.runs.length === 0) {
    process.stdout.write('No runs.\n');
  } else {
    const rows = page.runs.map((r) => [
      r.id,
      r.type,
      `${r.project}/${r.stack}`,
      r.status,
      r.createdBy,
      r.trigger.kind,
      r.createdAt,
      r.releaseRevision === null ? '-' : String(r.releaseRevision),
      r.commit ? `${shortSha(r.commit.sha)} ${oneLine(r.commit.subject, 60)}` : '-',
    ]);
    process.stdout.write(
      table(['ID', 'TYPE', 'STACK', 'STATUS', 'BY', 'TRIGGER', 'CREATED', 'RELEASE', 'COMMIT'], rows),
    );
  }
  if (page.nextCursor !== null) process.stderr.write(`More: kapps runs list --cursor ${page.nextCursor}\n`);
}

/** `kapps runs show`: one run; with `result`, its result as the server keeps it (the spec YAML, the preview JSON, …). */
export async function showRun(client: ServerClient, id: string, output: Output, result: boolean): Promise<void> {
  if (result) {
    const answer = await client.raw('GET', runPath(id, '/result'), { what: `the result of run ${id}` });
    process.stdout.write(answer.text.endsWith('\n') || answer.text === '' ? answer.text : `${answer.text}\n`);
    return;
  }
  printRun(await client.json('GET', runPath(id), runSchema, { what: `run ${id}` }), output);
}

/** `kapps runs cancel`: cancel a queued run at once, or ask a running one to stop. */
export async function cancelRun(client: ServerClient, id: string, output: Output): Promise<void> {
  const run = await client.json('POST', runPath(id, '/cancel'), runSchema, { what: `the cancel of run ${id}` });
  if (output === 'json') {
    process.stdout.write(`${JSON.stringify(run, null, 2)}\n`);
    return;
  }
  const state =
    run.status === 'running'
      ? 'running; the server is stopping it'
      : run.status === 'cancelled'
        ? 'cancelled'
        : run.status;
  process.stdout.write(`Run ${run.id}: ${state}\n`);
}

/**
 * `kapps runs approve|reject`: decide on a run waiting for approval (`needs-approval`), with an optional comment kept
 * with the decision; prints what it did (`approved run X (1 of 2 approvals)`, `run X is approved and queued to
 * apply`, `rejected run X`), or the run as the server answered it with `-o json`.
 */
export async function decideRun(
  client: ServerClient,
  id: string,
  decision: 'approve' | 'reject',
  comment: string | undefined,
  output: Output,
): Promise<void> {
  if (comment !== undefined && comment.length > MAX_APPROVAL_COMMENT) {
    throw new UsageError(
      `--comment is ${comment.length} characters long; the server keeps at most ${MAX_APPROVAL_COMMENT}`,
    );
  }
  const run = await client.json('POST', runPath(id, `/${decision}`), runSchema, {
    body: comment !== undefined ? { comment } : {},
    what: `the ${decision === 'approve' ? 'approval' : 'rejection'} of run ${id}`,
  });
  if (output === 'json') {
    process.stdout.write(`${JSON.stringify(run, null, 2)}\n`);
    return;
  }
  process.stdout.write(`${decision === 'approve' ? approvedText(run) : rejectedText(run)}\n`);
}

/**
 * `kapps runs logs`: the log of a run as text (or NDJSON lines with `-o json`); `follow` keeps printing, from the
 * event stream, until the run ends.
 */
export async function runLogs(
  client: ServerClient,
  id: string,
  options: { follow: boolean; kapp: string | undefined; output: Output },
): Promise<void> {
  const print = (line: LogLine): void => {
    if (options.kapp !== undefined && line.kapp !== options.kapp) return;
    process.stdout.write(options.output === 'json' ? `${JSON.stringify(line)}\n` : formatLogLine(line));
  };
  if (options.follow) {
    const stop = new AbortController();
    const onSignal = (): void => stop.abort(new CancelledError('stopped following (the run goes on)'));
    process.once('SIGINT', onSignal);
    try {
      const run = await followRun(client, id, { onLog: print }, { signal: stop.signal });
      process.stderr.write(`Run ${run.id} ${run.status}${run.error ? `: ${run.error}` : ''}\n`);
    } finally {
      process.off('SIGINT', onSignal);
    }
    return;
  }
  let offset = 0;
  for (;;) {
    const chunk = await client.json('GET', runPath(id, '/logs'), logChunkSchema, {
      query: { offset },
      what: `the log of run ${id}`,
    });
    for (const line of chunk.lines) print(line);
    if (chunk.complete || chunk.lines.length === 0 || chunk.nextOffset <= offset) return;
    offset = chunk.nextOffset;
  }
}

function printRun(run: Run, output: Output): void {
  process.stdout.write(output === 'json' ? `${JSON.stringify(run, null, 2)}\n` : runText(run));
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}
