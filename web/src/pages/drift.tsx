/**
 * A stack's drift (`GET …/stacks/{s}/drift`): its schedule, the latest check in full (each drifted kapp's outputs as
 * recorded and as read), the open episode, past episodes and the checks' history, and "Check now" (a `drift` run,
 * `plan` role and up).
 */
import { useState } from 'preact/hooks';
import type { DriftEpisode, StackDrift } from '../../../src/api/index';
import { api, describeError, roleAtLeast, type Whoami } from '../api';
import { DriftBadge, DriftReportView } from '../drift-report';
import { formatEvery, formatTime, href } from '../format';
import { useLoad } from '../use-load';

export function DriftPage(props: { project: string; stack: string; who: Whoami }) {
  const { project, stack, who } = props;
  const drift = useLoad(() => api.drift(project, stack), [project, stack], { poll: true });
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const checkNow = async () => {
    setMessage(null);
    setBusy(true);
    try {
      const run = await api.submit({ type: 'drift', project, stack });
      location.hash = href.run(run.id);
    } catch (e) {
      setMessage(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  const d = drift.data;
  return (
    <section>
      <p class="crumbs">
        <a href={href.fleet()}>Fleet</a> / <a href={href.stack(project, stack)}>{`${project} / ${stack}`}</a>
      </p>
      <h1>
        Drift of {project}/{stack}
      </h1>
      {drift.error && (
        <p role="alert" class="error">
          {drift.error}
        </p>
      )}
      {message && (
        <p role="alert" class="error">
          {message}
        </p>
      )}
      {!d && !drift.error && <p>Loading…</p>}
      {roleAtLeast(who.role, 'plan') && (
        <div class="actions">
          <button type="button" disabled={busy} onClick={() => void checkNow()}>
            Check now
          </button>
          <span class="hint">Reads the live outputs of the installed kapps; changes nothing.</span>
        </div>
      )}
      {d && <DriftBody d={d} />}
    </section>
  );
}

function DriftBody(props: { d: StackDrift }) {
  const { d } = props;
  const latest = d.latest;
  return (
    <>
      <dl class="facts" aria-label="Drift summary">
        <dt>State</dt>
        <dd>
          {latest ? (
            <DriftBadge
              state={latest.state}
              drifted={latest.kapps.filter((k) => k.state === 'drifted').length}
              unknown={latest.kapps.filter((k) => k.state === 'unknown').length}
            />
          ) : (
            <DriftBadge state={null} />
          )}
          {d.episode && <span data-testid="drift-since"> since {formatTime(d.episode.openedAt)}</span>}
        </dd>
        <dt>Schedule</dt>
        <dd data-testid="drift-schedule">
          {d.schedule ? (
            <>
              every {formatEvery(d.schedule.everySeconds)}, next {formatTime(d.schedule.nextAt)}
              {d.schedule.remediate !== 'none' &&
                `; on drift, queues ${d.schedule.remediate === 'apply' ? 'an apply' : 'a preview'} of the drifted kapps`}
            </>
          ) : (
            <>
              not scheduled (no <code>drift:</code> in the server configuration covers this stack): checked only when
              asked
            </>
          )}
        </dd>
      </dl>
      {d.episode && <OpenEpisode e={d.episode} />}
      <section aria-labelledby="latest-h">
        <h2 id="latest-h">Latest check</h2>
        {latest ? <DriftReportView report={latest} runId={latest.runId} /> : <p>No check yet.</p>}
      </section>
      {d.noisy.length > 0 && (
        <section aria-labelledby="noisy-h">
          <h2 id="noisy-h">Noisy outputs</h2>
          <p class="hint">
            Outputs that changed between two reads with no release between them: their differences are not drift. A
            release that changes the kapp clears its marks.
          </p>
          <ul data-testid="noisy-outputs">
            {d.noisy.map((n) => (
              <li key={`${n.kapp} ${n.path.join('.')}`}>
                {n.kapp}: <code>{n.path.join('.')}</code> since {formatTime(n.since)}
              </li>
            ))}
          </ul>
        </section>
      )}
      <section aria-labelledby="history-h">
        <h2 id="history-h">Checks</h2>
        <table class="list" aria-label="Drift checks">
          <thead>
            <tr>
              <th scope="col">Checked</th>
              <th scope="col">State</th>
              <th scope="col">Drifted kapps</th>
              <th scope="col">Could not be read</th>
              <th scope="col">Against</th>
              <th scope="col">Run</th>
            </tr>
          </thead>
          <tbody>
            {d.history.map((c) => (
              <tr key={c.runId} data-run={c.runId} data-state={c.state}>
                <td data-label="Checked">{formatTime(c.checkedAt)}</td>
                <td data-label="State">
                  <DriftBadge state={c.state} drifted={c.drifted.length} unknown={c.unknown.length} />
                </td>
                <td data-label="Drifted kapps">{c.drifted.join(', ') || '—'}</td>
                <td data-label="Could not be read">{c.unknown.join(', ') || '—'}</td>
                <td data-label="Against">
                  {c.basedOnRevision === null ? (
                    '—'
                  ) : (
                    <a href={href.release(d.project, d.stack, c.basedOnRevision)}>#{c.basedOnRevision}</a>
                  )}
                </td>
                <td data-label="Run">
                  <a href={href.run(c.runId)}>{c.runId}</a>
                </td>
              </tr>
            ))}
            {d.history.length === 0 && (
              <tr>
                <td colSpan={6}>No checks yet.</td>
              </tr>
            )}
          </tbody>
        </table>
      </section>
      <section aria-labelledby="episodes-h">
        <h2 id="episodes-h">Episodes</h2>
        <p class="hint">
          An episode runs from the first check that found drift to the first that found the stack in sync again.
        </p>
        <table class="list" aria-label="Drift episodes">
          <thead>
            <tr>
              <th scope="col">Opened</th>
              <th scope="col">Closed</th>
              <th scope="col">Checks</th>
              <th scope="col">Kapps</th>
              <th scope="col">Remediation</th>
            </tr>
          </thead>
          <tbody>
            {d.episodes.map((e) => (
              <tr key={e.id} data-episode={e.id}>
                <td data-label="Opened">
                  {formatTime(e.openedAt)} (<a href={href.run(e.openedBy)}>found by {e.openedBy}</a>)
                </td>
                <td data-label="Closed">{e.closedAt ? formatTime(e.closedAt) : 'open'}</td>
                <td data-label="Checks">{e.checks}</td>
                <td data-label="Kapps">{e.kapps.join(', ')}</td>
                <td data-label="Remediation">
                  <Remediations e={e} />
                </td>
              </tr>
            ))}
            {d.episodes.length === 0 && (
              <tr>
                <td colSpan={5}>No drift found yet.</td>
              </tr>
            )}
          </tbody>
        </table>
      </section>
    </>
  );
}

function Remediations(props: { e: DriftEpisode }) {
  if (props.e.remediations.length === 0) return <>—</>;
  return (
    <>
      {props.e.remediations.map((r, i) => (
        <span key={r.runId}>
          {i > 0 && ', '}
          <a href={href.run(r.runId)}>
            {r.type} {r.runId}
          </a>
        </span>
      ))}
    </>
  );
}

function OpenEpisode(props: { e: DriftEpisode }) {
  const { e } = props;
  return (
    <section aria-labelledby="episode-h" data-testid="open-episode">
      <h2 id="episode-h">Open drift episode</h2>
      <dl class="facts">
        <dt>Since</dt>
        <dd>
          {formatTime(e.openedAt)}, found by <a href={href.run(e.openedBy)}>run {e.openedBy}</a>
        </dd>
        <dt>Last seen</dt>
        <dd>
          {formatTime(e.lastSeenAt)} ({e.checks} {e.checks === 1 ? 'check' : 'checks'})
        </dd>
        <dt>Kapps</dt>
        <dd>{e.kapps.join(', ')}</dd>
        <dt>Remediation</dt>
        <dd>
          <Remediations e={e} />
        </dd>
      </dl>
    </section>
  );
}
