/**
 * Approvals and run checks on a run's page: what the run needs and has (required approvals, from which roles, who
 * approved or rejected it, when and with what comment, since when it waits and until when), the preview it is bound
 * to while it waits (`GET /runs/{id}/preview`), Approve and Reject with an optional comment (shown from the run's
 * `actions`, which the server computes for the calling token), and the results of its checks.
 */
import { useState } from 'preact/hooks';
import type { CheckResult, RunApproval } from '../../src/api/index';
import { api, ApiError, describeError, type Run, type Whoami } from './api';
import { formatDuration, formatTime, href } from './format';
import { PreviewChanges, PreviewCounts, type PreviewDocument } from './preview-view';
import { useLoad } from './use-load';

/** The approvals that count: one per distinct token name. */
export function approvalsSoFar(approval: RunApproval): number {
  return new Set(approval.decisions.filter((d) => d.decision === 'approved').map((d) => d.by)).size;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A failed approve or reject in words: the problem's detail first (who may not, why it is no longer waiting). */
export function decisionError(error: unknown): string {
  if (error instanceof ApiError && (error.status === 403 || error.status === 409) && error.problem?.detail)
    return `${error.status === 403 ? 'Not allowed' : error.problem.title}: ${error.problem.detail}`;
  return describeError(error);
}

/** One line that says where a gated run is: needs approvals, waits, approved, rejected, stale, skipped. */
function approvalState(run: Run, approval: RunApproval): { text: string; tone: 'wait' | 'ok' | 'bad' | 'info' } {
  const approved = approvalsSoFar(approval);
  const rejection = approval.decisions.find((d) => d.decision === 'rejected');
  if (approval.breakGlass)
    return {
      text: `Approvals skipped by break glass: ${approval.breakGlass.by} (${approval.breakGlass.role}) at ${formatTime(approval.breakGlass.at)}.`,
      tone: 'bad',
    };
  switch (run.status) {
    case 'needs-approval':
      return {
        text: `Waiting for approval: ${approved} of ${plural(approval.required, 'approval')} so far. Nothing is applied until it is approved.`,
        tone: 'wait',
      };
    case 'rejected':
      return {
        text: rejection
          ? `Rejected by ${rejection.by} at ${formatTime(rejection.at)}${rejection.comment ? `: ${rejection.comment}` : '.'} Nothing was applied.`
          : 'Rejected. Nothing was applied.',
        tone: 'bad',
      };
    case 'stale':
      return {
        text: 'Stale: the stack changed under the preview it was bound to. Nothing was applied; a new preview and new approvals are needed.',
        tone: 'bad',
      };
    case 'queued':
    case 'running':
      return approved >= approval.required
        ? { text: 'Approved: it applies exactly the preview that was approved.', tone: 'ok' }
        : {
            text: `Needs ${plural(approval.required, 'approval')} before it applies: it runs its preview first, then waits here for approval.`,
            tone: 'info',
          };
    default:
      return approved >= approval.required
        ? { text: `Approved (${approved} of ${approval.required}).`, tone: 'ok' }
        : { text: `Needed ${plural(approval.required, 'approval')}; it had ${approved}.`, tone: 'info' };
  }
}

/** Why the caller sees no Approve button on a waiting run (it may still see Reject). */
function whyNoButtons(run: Run, approval: RunApproval, who: Whoami): string {
  if (approval.decisions.some((d) => d.by === who.name && d.decision === 'approved'))
    return 'You approved it: it waits for another approval.';
  if (who.name === run.createdBy && !approval.authorMayApprove)
    return 'You started this run: another token must approve it.';
  if (!approval.fromRoles.includes(who.role))
    return `Approvals come from tokens of role ${approval.fromRoles.join(' or ')}; yours is ${who.role}.`;
  return 'Your token may not approve it.';
}

export function ApprovalSection(props: {
  run: Run;
  /** What the caller may do (from `GET /runs/{id}`; the stream's status may not be the caller's). */
  actions: Pick<Run['actions'], 'approvable' | 'rejectable'>;
  who: Whoami;
  onDecided: (run: Run) => void;
}) {
  const { run, actions, who } = props;
  const approval = run.approval;
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  if (!approval) return null;
  const state = approvalState(run, approval);
  const waiting = run.status === 'needs-approval';
  const decide = async (decision: 'approve' | 'reject') => {
    setBusy(true);
    setMessage(null);
    try {
      const after = await api.decide(run.id, decision, comment.trim());
      setComment('');
      setMessage({
        text:
          decision === 'reject'
            ? 'Rejected.'
            : after.status === 'needs-approval'
              ? 'Approved: it waits for more approvals.'
              : 'Approved: the run goes on.',
        error: false,
      });
      props.onDecided(after);
    } catch (e) {
      setMessage({ text: decisionError(e), error: true });
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="approval" aria-labelledby="approval-h" data-testid="approval">
      <h2 id="approval-h">Approval</h2>
      <p class={`approval-state t-${state.tone}`} data-testid="approval-state">
        {state.text}
      </p>
      <dl class="facts">
        <dt>Required</dt>
        <dd data-testid="approval-required">
          {plural(approval.required, 'approval')} from {approval.fromRoles.join(' or ')} tokens
          {approval.authorMayApprove ? ' (its author may approve)' : `, not by its author (${run.createdBy})`}
        </dd>
        {approval.waitingSince && (
          <>
            <dt>Waiting since</dt>
            <dd>{formatTime(approval.waitingSince)}</dd>
          </>
        )}
        {approval.expiresAt && (
          <>
            <dt>Expires at</dt>
            <dd>
              {formatTime(approval.expiresAt)}
              {waiting && ' (then it is discarded)'}
            </dd>
          </>
        )}
        {approval.basedOnRevision !== null && (
          <>
            <dt>Bound to</dt>
            <dd>
              the preview against{' '}
              <a href={href.release(run.project, run.stack, approval.basedOnRevision)}>
                release #{approval.basedOnRevision}
              </a>
            </dd>
          </>
        )}
      </dl>
      {approval.decisions.length > 0 && (
        <table class="list" aria-label="Decisions">
          <thead>
            <tr>
              <th scope="col">By</th>
              <th scope="col">Decision</th>
              <th scope="col">At</th>
              <th scope="col">Comment</th>
            </tr>
          </thead>
          <tbody>
            {approval.decisions.map((d, i) => (
              <tr key={i} data-by={d.by} data-decision={d.decision}>
                <td data-label="By">
                  {d.by} ({d.role})
                </td>
                <td data-label="Decision">
                  <span class={`badge dec-${d.decision}`}>
                    <span aria-hidden="true">{d.decision === 'approved' ? '✓' : '✗'}</span> {d.decision}
                  </span>
                </td>
                <td data-label="At">{formatTime(d.at)}</td>
                <td data-label="Comment" class="comment">
                  {d.comment ?? '—'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {waiting && (actions.approvable || actions.rejectable) && (
        <form
          class="decide"
          aria-label="Decide"
          onSubmit={(e) => {
            e.preventDefault();
          }}
        >
          <label for="decide-comment">Comment (optional, kept with your decision)</label>
          <textarea
            id="decide-comment"
            rows={2}
            value={comment}
            onInput={(e) => setComment((e.target as HTMLTextAreaElement).value)}
          />
          <div class="actions">
            {actions.approvable && (
              <button type="button" disabled={busy} onClick={() => void decide('approve')}>
                Approve
              </button>
            )}
            {actions.rejectable && (
              <button type="button" class="danger" disabled={busy} onClick={() => void decide('reject')}>
                Reject
              </button>
            )}
          </div>
        </form>
      )}
      {waiting && !actions.approvable && (
        <p class="hint" data-testid="no-decide">
          {whyNoButtons(run, approval, who)}
        </p>
      )}
      {message && (
        <p role={message.error ? 'alert' : 'status'} class={message.error ? 'error' : 'ok'}>
          {message.text}
        </p>
      )}
      {(waiting || run.status === 'rejected' || run.status === 'stale') && <BoundPreview run={run} />}
    </section>
  );
}

/** The preview document a run is bound to: the change summary the approvals are asked for. */
function BoundPreview(props: { run: Run }) {
  const { run } = props;
  const preview = useLoad(() => api.boundPreview(run.id), [run.id]);
  if (preview.error)
    return (
      <p role="alert" class="error">
        The preview it is bound to: {preview.error}
      </p>
    );
  if (preview.data === null) return null;
  let doc: PreviewDocument;
  try {
    doc = JSON.parse(preview.data) as PreviewDocument;
  } catch {
    return (
      <p role="alert" class="error">
        The preview it is bound to is not JSON.
      </p>
    );
  }
  return (
    <section aria-labelledby="bound-preview-h" data-testid="bound-preview">
      <h3 id="bound-preview-h">
        {run.status === 'needs-approval' ? 'What it applies once approved' : 'The preview it was bound to'}
      </h3>
      <PreviewCounts doc={doc} />
      <PreviewChanges doc={doc} />
    </section>
  );
}

const STAGE_TEXT: Record<CheckResult['stage'], string> = {
  after_preview: 'after the preview',
  before_apply: 'before the apply',
};

/** The results of a run's checks, in the order they ran. */
export function RunChecks(props: { checks: readonly CheckResult[] }) {
  const { checks } = props;
  if (checks.length === 0) return null;
  const failed = checks.filter((c) => c.status === 'failed');
  return (
    <section aria-labelledby="checks-h" data-testid="checks">
      <h2 id="checks-h">Checks</h2>
      <p>
        {plural(checks.length, 'check')}: {checks.length - failed.length} passed, {failed.length} failed
        {failed.some((c) => c.enforcement === 'advisory') && ' (an advisory check that fails does not stop the run)'}.
      </p>
      <table class="list" aria-label="Checks">
        <thead>
          <tr>
            <th scope="col">Check</th>
            <th scope="col">Stage</th>
            <th scope="col">Enforcement</th>
            <th scope="col">Status</th>
            <th scope="col">Message</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {checks.map((c, i) => (
            <tr key={i} data-check={c.name} data-status={c.status}>
              <td data-label="Check">{c.name}</td>
              <td data-label="Stage">{STAGE_TEXT[c.stage] ?? c.stage}</td>
              <td data-label="Enforcement">{c.enforcement}</td>
              <td data-label="Status">
                <span class={`badge c-${c.status}${c.enforcement === 'advisory' ? ' advisory' : ''}`}>
                  <span aria-hidden="true">
                    {c.status === 'passed' ? '✓' : c.enforcement === 'advisory' ? '!' : '✗'}
                  </span>{' '}
                  {c.status}
                </span>
              </td>
              <td data-label="Message">
                {c.message ? (
                  <pre class="check-message" tabindex={0} aria-label={`Message of ${c.name}`}>
                    {c.message}
                  </pre>
                ) : (
                  '—'
                )}
              </td>
              <td data-label="Duration">{formatDuration(c.durationMs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** A stack's runs waiting for approval: a badge with their count, and a link to each (the oldest first). */
export function WaitingForApproval(props: { runs: readonly Run[] }) {
  const runs = [...props.runs].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0));
  if (runs.length === 0) return <>—</>;
  return (
    <>
      <span class="badge r-needs-approval">
        <span aria-hidden="true">◷</span> {runs.length} waiting
      </span>{' '}
      {runs.map((r) => (
        <a key={r.id} class="waiting-approval" href={href.run(r.id)}>
          {r.type} {r.id}
        </a>
      ))}
    </>
  );
}
