/**
 * A run as the CLI prints it (`kapps runs show`, `runs submit`, `--no-wait`), and the lines about its approvals and
 * checks (`waiting for approval: …`, `approved run …`). Pure: each function takes the run as the API answers it and
 * returns text. Whatever the server holds that people wrote (comments, check messages, commit subjects) is shown
 * with its control characters replaced, so it cannot move the cursor or recolour the terminal.
 */
import type { ApprovalDecision, CheckResult, Run, RunApproval } from '../../api/index.js';

/** The short form of a commit SHA, as kapps prints it. */
export function shortSha(sha: string): string {
  return sha.slice(0, 12);
}

/** A server's text on one line, control characters shown as spaces, cut at `max` characters. */
export function oneLine(text: string, max: number): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is replaced
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * A server's text of several lines (a run's error that quotes a check's last lines) for stderr: each line as
 * `oneLine` shows it, the lines after the first indented by two spaces.
 */
export function indentedLines(text: string, max = 1000): string {
  return text
    .replace(/\r?\n$/, '')
    .split(/\r?\n/)
    .map((l) => oneLine(l, max))
    .join('\n  ');
}

/** A server's text as lines (a check's last lines of output), each as `oneLine` shows it, blank ones dropped at the ends. */
function textLines(text: string, maxLines: number): string[] {
  const lines = text.split(/\r?\n/).map((l) => oneLine(l, 300).trimEnd());
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  return lines.length > maxLines ? ['…', ...lines.slice(-maxLines)] : lines;
}

/** The distinct tokens that approved (approvals count per token name). */
export function approvers(approval: RunApproval): string[] {
  return [...new Set(approval.decisions.filter((d) => d.decision === 'approved').map((d) => d.by))];
}

/** `1 of 2 approvals`. */
export function approvalCount(approval: RunApproval): string {
  return `${approvers(approval).length} of ${approval.required} approval${approval.required === 1 ? '' : 's'}`;
}

/** Who may approve: `from a token of role apply or admin (not the run's author)`. */
function whoMayApprove(approval: RunApproval): string {
  const roles = approval.fromRoles.join(' or ');
  return `from a token of role ${roles || '(none)'}${approval.authorMayApprove ? '' : " (not the run's author)"}`;
}

/** `approved by alice (apply) at …: looks fine`. */
export function decisionLine(decision: ApprovalDecision): string {
  const comment = decision.comment !== null && decision.comment !== '' ? `: ${oneLine(decision.comment, 300)}` : '';
  return `${decision.decision} by ${oneLine(decision.by, 100)} (${decision.role}) at ${decision.at}${comment}`;
}

/** `conftest (after_preview, mandatory): failed in 120 ms`, then the message's lines, indented. */
export function checkLines(check: CheckResult, maxMessageLines = 20): string[] {
  const head = `${oneLine(check.name, 100)} (${check.stage}, ${check.enforcement}): ${check.status} in ${check.durationMs} ms`;
  return [head, ...textLines(check.message, maxMessageLines).map((l) => `  ${l}`)];
}

/**
 * What `install -y --server` (and the other commands that follow an apply) says, once, when the run starts waiting:
 * the line to approve it, then how many approvals it needs from whom, until when, and the checks' results so far.
 */
export function waitingText(run: Run): string {
  const lines = [`waiting for approval: run ${run.id} (kapps runs approve ${run.id})`];
  const approval = run.approval;
  if (approval) {
    const until = approval.expiresAt !== null ? `; discarded if not decided by ${approval.expiresAt}` : '';
    lines.push(`  ${approvalCount(approval)} so far, ${whoMayApprove(approval)}${until}`);
    for (const decision of approval.decisions) lines.push(`  ${decisionLine(decision)}`);
  }
  for (const check of run.checks) {
    const [head, ...message] = checkLines(check, 3);
    lines.push(`  check ${head ?? ''}`, ...message.map((l) => `    ${l}`));
  }
  return lines.join('\n');
}

/** What `kapps runs approve` prints with the run the server answered. */
export function approvedText(run: Run): string {
  if (run.status === 'needs-approval') {
    return `approved run ${run.id}${run.approval ? ` (${approvalCount(run.approval)})` : ''}`;
  }
  if (run.status === 'queued' || run.status === 'running') return `run ${run.id} is approved and queued to apply`;
  return `approved run ${run.id}; it is ${run.status}${run.error !== null ? `: ${oneLine(run.error, 300)}` : ''}`;
}

/** What `kapps runs reject` prints with the run the server answered. */
export function rejectedText(run: Run): string {
  return run.status === 'rejected'
    ? `rejected run ${run.id}`
    : `rejected run ${run.id}; it is ${run.status}${run.error !== null ? `: ${oneLine(run.error, 300)}` : ''}`;
}

/** The rejection that ended a run, as one phrase: `rejected by bob (admin): not now`. */
export function rejectionText(run: Run): string {
  const rejection = run.approval?.decisions.filter((d) => d.decision === 'rejected').at(-1);
  if (rejection) {
    const comment =
      rejection.comment !== null && rejection.comment !== '' ? `: ${oneLine(rejection.comment, 300)}` : '';
    return `rejected by ${oneLine(rejection.by, 100)} (${rejection.role})${comment}`;
  }
  return `rejected${run.error !== null ? `: ${oneLine(run.error, 300)}` : ''}`;
}

/** What started a run: `api`, `push refs/heads/main (delivery …)`, `poll`, … */
function triggerText(trigger: Run['trigger']): string {
  return [
    trigger.kind,
    ...(trigger.ref !== null ? [oneLine(trigger.ref, 200)] : []),
    ...(trigger.delivery !== null ? [`(delivery ${oneLine(trigger.delivery, 100)})`] : []),
  ].join(' ');
}

/** `kapps runs show`: one `key: value` line per field that has a value, then its approvals and checks. */
export function runText(run: Run): string {
  const approval = run.approval;
  const actions = (['cancel', 'approve', 'reject'] as const).filter(
    (a) => run.actions[a === 'cancel' ? 'cancelable' : a === 'approve' ? 'approvable' : 'rejectable'],
  );
  const fields: [string, string | null][] = [
    ['id', run.id],
    ['type', run.type],
    ['project', run.project],
    ['stack', run.stack],
    ['status', run.status],
    ['createdBy', oneLine(run.createdBy, 100)],
    ['createdAt', run.createdAt],
    ['startedAt', run.startedAt],
    ['finishedAt', run.finishedAt],
    ['queuePosition', run.queuePosition === null ? null : String(run.queuePosition)],
    ['blockedBy', run.blockedBy],
    ['releaseRevision', run.releaseRevision === null ? null : String(run.releaseRevision)],
    ['error', run.error === null ? null : oneLine(run.error, 1000)],
    ['commit', run.commit ? `${shortSha(run.commit.sha)} ${oneLine(run.commit.subject, 200)}` : null],
    ['ref', run.commit ? oneLine(run.commit.ref, 200) : null],
    ['author', run.commit ? oneLine(run.commit.author, 200) : null],
    ['repo', run.commit ? oneLine(run.commit.repo, 300) : null],
    ['trigger', triggerText(run.trigger)],
    ['approval', approval ? `${approvalCount(approval)}, ${whoMayApprove(approval)}` : null],
    ['basedOnRevision', approval?.basedOnRevision != null ? String(approval.basedOnRevision) : null],
    ['waitingSince', approval?.waitingSince ?? null],
    ['expiresAt', approval?.expiresAt ?? null],
    [
      'breakGlass',
      approval?.breakGlass
        ? `approvals skipped by ${oneLine(approval.breakGlass.by, 100)} (${approval.breakGlass.role}) at ${approval.breakGlass.at}`
        : null,
    ],
    ['actions', actions.length > 0 && run.status === 'needs-approval' ? actions.join(', ') : null],
  ];
  const width = Math.max(...fields.map(([k]) => k.length), 'options'.length);
  const lines = fields.filter(([, v]) => v !== null).map(([k, v]) => `${`${k}:`.padEnd(width + 2)}${v ?? ''}`);
  if (Object.keys(run.options).length > 0) lines.push(`${'options:'.padEnd(width + 2)}${JSON.stringify(run.options)}`);
  if (approval && approval.decisions.length > 0) {
    lines.push('decisions:');
    for (const decision of approval.decisions) lines.push(`  ${decisionLine(decision)}`);
  }
  if (run.checks.length > 0) {
    lines.push('checks:');
    for (const check of run.checks) lines.push(...checkLines(check).map((l) => `  ${l}`));
  }
  return `${lines.join('\n')}\n`;
}
