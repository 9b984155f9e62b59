/**
 * Drift as the page shows it: a stack's drift state in words and a sign (never colour alone), and a drift report (a
 * `drift` run's result, a stack's latest check): each drifted kapp's outputs as recorded and as read, the differences
 * an ignore rule or a noisy mark leaves out said apart, unknown kapps with their reason, pending changes.
 */
import type { DriftChange, DriftKapp, DriftReport, DriftState } from '../../src/api/index';
import { shortValue } from './change-list';
import { formatTime, href } from './format';

const STATE_SIGNS: Record<DriftState | 'never', string> = { inSync: '✓', drifted: '≠', unknown: '?', never: '–' };

/** `in sync`, `drifted: 2 kapps`, `drifted: 1 kapp, 1 not read`, `unknown: 1 kapp not read`, `not checked yet`. */
export function driftStateText(state: DriftState | null, drifted = 0, unknown = 0): string {
  if (state === null) return 'not checked yet';
  if (state === 'inSync') return 'in sync';
  const kapps = (n: number) => `${n} ${n === 1 ? 'kapp' : 'kapps'}`;
  if (state === 'drifted')
    return drifted > 0 ? `drifted: ${kapps(drifted)}${unknown > 0 ? `, ${unknown} not read` : ''}` : 'drifted';
  return unknown > 0 ? `unknown: ${kapps(unknown)} not read` : 'unknown';
}

/** The state as a badge: its sign and its words. */
export function DriftBadge(props: { state: DriftState | null; drifted?: number; unknown?: number }) {
  const key = props.state ?? 'never';
  return (
    <span class={`badge d-${key}`} data-testid="drift-state" data-state={key}>
      <span aria-hidden="true">{STATE_SIGNS[key]}</span> {driftStateText(props.state, props.drifted, props.unknown)}
    </span>
  );
}

function pathText(path: readonly string[]): string {
  // `["outputs", "endpoint"]` reads as `endpoint`: every drift is in the outputs.
  const shown = path[0] === 'outputs' && path.length > 1 ? path.slice(1) : path;
  return shown.join('.');
}

/** One kapp of a report: its differing outputs as recorded and as read, then those left out, then why unknown. */
function DriftKappView(props: { kapp: DriftKapp }) {
  const { kapp } = props;
  return (
    <section class="drift-kapp" data-kapp={kapp.id} data-state={kapp.state} aria-label={`Drift of ${kapp.id}`}>
      <h3>
        {kapp.id}{' '}
        <span class={`badge d-${kapp.state}`}>
          <span aria-hidden="true">{STATE_SIGNS[kapp.state]}</span>{' '}
          {kapp.state === 'inSync' ? 'in sync (differences left out)' : kapp.state}
        </span>
      </h3>
      {kapp.reason && <p data-testid="drift-reason">Could not be read: {kapp.reason}</p>}
      {kapp.changes.length > 0 && (
        <table class="list drift-outputs" aria-label={`Outputs of ${kapp.id} that drifted`}>
          <thead>
            <tr>
              <th scope="col">Output</th>
              <th scope="col">Recorded</th>
              <th scope="col">Read now</th>
            </tr>
          </thead>
          <tbody>
            {kapp.changes.map((c: DriftChange, i) => (
              <tr key={i} data-output={pathText(c.path)}>
                <td data-label="Output">
                  <code>{pathText(c.path)}</code>
                </td>
                <td data-label="Recorded" class="old">
                  <code>{shortValue(c.from)}</code>
                </td>
                <td data-label="Read now" class="new">
                  <code>{shortValue(c.to)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {kapp.ignored.length > 0 && (
        <p class="hint" data-testid="drift-ignored">
          Ignored (a <code>drift.ignore</code> rule): {kapp.ignored.map((p) => pathText(p)).join(', ')}
        </p>
      )}
      {kapp.noisy.length > 0 && (
        <p class="hint" data-testid="drift-noisy">
          Noisy (changed between two reads with no release between, so not drift):{' '}
          {kapp.noisy.map((p) => pathText(p)).join(', ')}
        </p>
      )}
    </section>
  );
}

/** A whole drift report. `runId`: the run that made it, linked. */
export function DriftReportView(props: { report: DriftReport; runId?: string }) {
  const { report } = props;
  const drifted = report.kapps.filter((k) => k.state === 'drifted');
  const unknown = report.kapps.filter((k) => k.state === 'unknown');
  const leftOut = report.kapps.filter((k) => k.state === 'inSync');
  return (
    <div class="drift-report" data-testid="drift-report">
      <p>
        <DriftBadge state={report.state} drifted={drifted.length} unknown={unknown.length} />
      </p>
      <dl class="facts">
        <dt>Checked</dt>
        <dd>
          {formatTime(report.checkedAt)}
          {props.runId && (
            <>
              {' '}
              by <a href={href.run(props.runId)}>run {props.runId}</a>
            </>
          )}
        </dd>
        <dt>Compared with</dt>
        <dd>
          {report.basedOnRevision === null ? (
            'no release'
          ) : (
            <a href={href.release(report.project, report.stack, report.basedOnRevision)}>
              release #{report.basedOnRevision}
            </a>
          )}
        </dd>
        <dt>Kapps read</dt>
        <dd>{report.read.length}</dd>
      </dl>
      {report.reason && (
        <p class="error" data-testid="drift-report-reason">
          {report.reason}
        </p>
      )}
      {report.state === 'inSync' && !report.reason && (
        <p>Every installed kapp's outputs read as the release recorded them.</p>
      )}
      {[...drifted, ...unknown, ...leftOut].map((k) => (
        <DriftKappView key={k.id} kapp={k} />
      ))}
      {report.pending.length > 0 && (
        <section aria-label="Pending changes" data-testid="drift-pending">
          <h3>Pending changes (not drift)</h3>
          <p class="hint">
            The stack's spec now differs from the release for these kapps: a preview shows what would change.
          </p>
          <ul>
            {report.pending.map((p) => (
              <li key={p.id} data-kapp={p.id}>
                {p.id}: <span class={`badge a-${p.action}`}>{p.action}</span>
              </li>
            ))}
          </ul>
        </section>
      )}
    </div>
  );
}
