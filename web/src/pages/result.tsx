/**
 * The result of a finished run: generate's spec, preview's actions and side-by-side changes (a rollback's preview
 * offers "Apply this rollback"), apply's, destroy's and rollback's outcome, a drift check's report.
 */
import { useState } from 'preact/hooks';
import type { ApplyResult, DriftReport } from '../../../src/api/index';
import { api, describeError, roleAtLeast, type Run, type Whoami } from '../api';
import { DriftReportView } from '../drift-report';
import { href } from '../format';
import { PreviewChanges, PreviewCounts, type PreviewDocument } from '../preview-view';
import { useLoad } from '../use-load';
import { GenerateResult } from '../yaml-view';

export function RunResult(props: { run: Run; who: Whoami }) {
  const { run } = props;
  const result = useLoad(() => api.result(run.id), [run.id, run.status]);
  // A rejected or stale run applied nothing: it has no result to show.
  if (result.error)
    return run.status === 'rejected' || run.status === 'stale' ? null : run.status === 'succeeded' ||
      ['apply', 'destroy', 'rollback'].includes(run.type) ? (
      <p class="error" role="alert">
        Result: {result.error}
      </p>
    ) : null;
  if (!result.data) return <p>Loading the result…</p>;
  const { type, text } = result.data;
  if (run.type === 'generate' || type.includes('yaml'))
    return (
      <section aria-labelledby="result-h">
        <h2 id="result-h">Result</h2>
        <GenerateResult yaml={text} />
      </section>
    );
  if (run.type === 'preview')
    return <PreviewResult run={run} who={props.who} doc={JSON.parse(text) as PreviewDocument} />;
  if (run.type === 'drift')
    return (
      <section aria-labelledby="result-h">
        <h2 id="result-h">Drift report</h2>
        <DriftReportView report={JSON.parse(text) as DriftReport} />
        <p>
          <a href={href.drift(run.project, run.stack)}>
            Drift of {run.project}/{run.stack}: episodes and history
          </a>
        </p>
      </section>
    );
  const outcome = JSON.parse(text) as ApplyResult;
  return (
    <section aria-labelledby="result-h" data-testid="apply-result">
      <h2 id="result-h">Result</h2>
      <p>{outcome.message}</p>
      <p>
        Kapps: {outcome.kapps.succeeded} succeeded, {outcome.kapps.failed} failed, {outcome.kapps.skipped} skipped,{' '}
        {outcome.kapps.cancelled} cancelled.
      </p>
      {outcome.releaseRevision !== null && (
        <p>
          <a href={href.release(run.project, run.stack, outcome.releaseRevision)}>Release #{outcome.releaseRevision}</a>
        </p>
      )}
    </section>
  );
}

function PreviewResult(props: { run: Run; who: Whoami; doc: PreviewDocument }) {
  const { run, doc } = props;
  const [message, setMessage] = useState<string | null>(null);
  // The preview of a rollback is applied by a rollback run (which takes its target, prune and force); any other by an
  // apply.
  const rollback = run.options.toRevision !== undefined;
  const applyType = rollback ? 'rollback' : 'apply';
  // The apply made from this preview, if any (among the stack's latest applies).
  const applies = useLoad(
    () => api.runs({ project: run.project, stack: run.stack, type: applyType, limit: 100 }),
    [run.id],
    { poll: true },
  );
  const appliedBy = applies.data?.runs.filter((r) => r.options.previewRunId === run.id) ?? [];
  // Applied (or being applied): no second apply is offered; one cancelled or errored may be tried again.
  const applied = appliedBy.some((r) => r.status !== 'cancelled' && r.status !== 'errored');
  const deletes = doc.kapps.filter((k) => k.action === 'Delete').length;
  const applyThis = async () => {
    setMessage(null);
    try {
      const apply = await api.submit({
        type: applyType,
        project: run.project,
        stack: run.stack,
        previewRunId: run.id,
      });
      location.hash = href.run(apply.id);
    } catch (e) {
      setMessage(describeError(e));
    }
  };
  return (
    <section aria-labelledby="result-h" data-testid="preview-result">
      <h2 id="result-h">Preview</h2>
      <PreviewCounts doc={doc} />
      {appliedBy.length > 0 && (
        <p class="ok" data-testid="applied-by">
          Applied by{' '}
          {appliedBy.map((a, i) => (
            <span key={a.id}>
              {i > 0 && ', '}
              <a href={href.run(a.id)}>
                {applyType} {a.id} ({a.status === 'needs-approval' ? 'waiting for approval' : a.status})
              </a>
            </span>
          ))}
          .
        </p>
      )}
      {run.status === 'succeeded' &&
        !rollback &&
        doc.hasChanges &&
        !applied &&
        roleAtLeast(props.who.role, 'apply') && (
          <button type="button" onClick={() => void applyThis()}>
            Apply this
          </button>
        )}
      {run.status === 'succeeded' && rollback && !applied && roleAtLeast(props.who.role, 'apply') && (
        <div class="actions" role="group" aria-label="Apply the rollback">
          {deletes > 0 && (
            <p class="hint" data-testid="rollback-prune">
              {run.options.prune
                ? `It deletes the ${deletes === 1 ? 'kapp' : `${deletes} kapps`} marked Delete (prune).`
                : `${deletes === 1 ? 'The kapp marked Delete stays' : `The ${deletes} kapps marked Delete stay`} installed: this rollback was previewed without prune.`}
            </p>
          )}
          <button type="button" onClick={() => void applyThis()}>
            Apply this rollback
          </button>
        </div>
      )}
      {message && (
        <p role="alert" class="error">
          {message}
        </p>
      )}
      <PreviewChanges doc={doc} />
    </section>
  );
}
