/**
 * The result of a finished run: generate's spec, preview's actions and side-by-side changes (a rollback's preview
 * offers "Apply this rollback"), apply's, destroy's and rollback's outcome, a drift check's report.
 */
import { useState } from 'preact/hooks';
import type { ApplyResult, DriftReport } from '../../../src/api/index';
import { api, describeError, roleAtLeast, type Run, type Whoami } from '../api';
import { ChangeList, KappChanges, OPEN_AT_FIRST } from '../change-list';
import { asText } from '../diff-view';
import { DriftReportView } from '../drift-report';
import { href } from '../format';
import { useLoad } from '../use-load';
import { GenerateResult } from '../yaml-view';

interface PreviewKapp {
  id: string;
  action: string;
  from: unknown;
  to: unknown;
  changes: { path: string[]; from: unknown; to: unknown }[];
  drift: { path: string[]; from: unknown; to: unknown }[];
  reason: string | null;
}
interface PreviewDocument {
  stack: string;
  project: string;
  basedOnRevision: number | null;
  kapps: PreviewKapp[];
  hasChanges: boolean;
}

const ACTION_ICONS: Record<string, string> = {
  Create: '+',
  Update: '~',
  UnChanged: '=',
  Delete: '−',
  Drifted: '≠',
  Unknown: '?',
};

export function RunResult(props: { run: Run; who: Whoami }) {
  const { run } = props;
  const result = useLoad(() => api.result(run.id), [run.id, run.status]);
  if (result.error)
    return run.status === 'succeeded' || ['apply', 'destroy', 'rollback'].includes(run.type) ? (
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
  const changed = doc.kapps.filter((k) => k.action !== 'UnChanged');
  const deletes = doc.kapps.filter((k) => k.action === 'Delete').length;
  // Many kapps: the table lists the changed ones only, unless asked for all.
  const [changedOnly, setChangedOnly] = useState(doc.kapps.length > 20);
  const rows = changedOnly ? changed : doc.kapps;
  const counts = new Map<string, number>();
  for (const k of doc.kapps) counts.set(k.action, (counts.get(k.action) ?? 0) + 1);
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
      <p>
        Compared with{' '}
        {doc.basedOnRevision === null ? 'no release (nothing installed yet)' : `release #${doc.basedOnRevision}`}:{' '}
        {[...counts].map(([a, n]) => `${n} ${a}`).join(', ') || 'no kapps'}.
      </p>
      {appliedBy.length > 0 && (
        <p class="ok" data-testid="applied-by">
          Applied by{' '}
          {appliedBy.map((a, i) => (
            <span key={a.id}>
              {i > 0 && ', '}
              <a href={href.run(a.id)}>
                {applyType} {a.id} ({a.status})
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
      <label>
        <input
          type="checkbox"
          checked={changedOnly}
          onChange={(e) => setChangedOnly((e.target as HTMLInputElement).checked)}
        />{' '}
        Changed only
      </label>
      <table class="list" aria-label="Preview actions">
        <thead>
          <tr>
            <th scope="col">Kapp</th>
            <th scope="col">Action</th>
            <th scope="col">Changes</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((k) => (
            <tr key={k.id} data-kapp={k.id} data-action={k.action}>
              <td>{k.id}</td>
              <td>
                <span class={`badge a-${k.action}`}>
                  <span aria-hidden="true">{ACTION_ICONS[k.action] ?? ''}</span> {k.action}
                </span>
              </td>
              <td>
                {pathsText(k.changes)}
                {k.drift.length > 0 && ` drift: ${k.drift.map((c) => c.path.join('.')).join(', ')}`}
                {k.reason ?? ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Changes</h3>
      {changed.length > OPEN_AT_FIRST && (
        <p class="hint">
          {changed.length} kapps change: the first {OPEN_AT_FIRST} are open, open the others one by one.
        </p>
      )}
      {changed.map((k, i) => (
        <KappChanges
          key={k.id}
          id={k.id}
          open={i < OPEN_AT_FIRST}
          summary={
            <>
              {k.id}: {k.action}
              <span class="count"> ({countText(k.changes.length + k.drift.length)})</span>
            </>
          }
          body={() => (
            <>
              <ChangeList changes={k.changes} label={`Changes of ${k.id}`} />
              <ChangeList changes={k.drift} label={`Drift of ${k.id}`} kind="drift" />
              {k.reason && <p>{k.reason}</p>}
            </>
          )}
          full={() => ({
            label: `${k.id}: last release and now`,
            before: asText(k.from),
            after: asText(k.to),
            beforeTitle:
              doc.basedOnRevision === null ? 'Last release (none)' : `Last release (#${doc.basedOnRevision})`,
            afterTitle: 'Now',
          })}
        />
      ))}
    </section>
  );
}

function countText(n: number): string {
  return n === 1 ? '1 change' : `${n} changes`;
}

/** The changed paths in a table cell: the first few, then how many more. */
function pathsText(changes: readonly { path: string[] }[]): string {
  const shown = changes.slice(0, 4).map((c) => c.path.join('.'));
  return shown.join(', ') + (changes.length > 4 ? ` and ${changes.length - 4} more` : '');
}
