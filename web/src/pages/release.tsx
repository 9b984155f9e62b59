/** One release (spec and state per kapp) and the side-by-side diff of two revisions. */
import { api, type Release, type Whoami } from '../api';
import { ChangeList, diffValues, KappChanges, OPEN_AT_FIRST } from '../change-list';
import { ReleaseSource } from '../commit';
import { asText } from '../diff-view';
import { formatDuration, formatTime, href } from '../format';
import { canRollBackTo, RollbackButton } from '../rollback';
import { useLoad } from '../use-load';

export function ReleasePage(props: { project: string; stack: string; revision: number; who: Whoami }) {
  const { project, stack, revision } = props;
  const { data: r, error } = useLoad(() => api.release(project, stack, revision), [project, stack, revision]);
  // The latest revision: a rollback is offered to an earlier one.
  const summary = useLoad(() => api.stack(project, stack), [project, stack]);
  const latest = summary.data?.latestRelease?.revision ?? null;
  return (
    <section>
      <p class="crumbs">
        <a href={href.stacks()}>Stacks</a> / <a href={href.stack(project, stack)}>{`${project} / ${stack}`}</a>
      </p>
      <h1>
        Release #{revision} of {project}/{stack}
      </h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {r && (
        <>
          <dl class="facts">
            <dt>Operation</dt>
            <dd data-testid="release-operation">
              {r.operation}
              {r.rollbackOf !== undefined && (
                <>
                  , rollback of{' '}
                  <a href={href.release(project, stack, r.rollbackOf)} data-testid="rollback-of">
                    #{r.rollbackOf}
                  </a>
                </>
              )}
            </dd>
            <dt>Phase</dt>
            <dd>
              <span class={`badge r-${r.phase}`}>{r.phase}</span>
              {r.unlocked && ` (unlocked by ${r.unlocked.by} at ${formatTime(r.unlocked.at)})`}
            </dd>
            <dt>Owner</dt>
            <dd>
              {r.owner.user}@{r.owner.host}
            </dd>
            {r.source && (
              <>
                <dt>Source</dt>
                <dd>
                  <ReleaseSource source={r.source} />
                </dd>
              </>
            )}
            {r.approvals && r.approvals.length > 0 && (
              <>
                <dt>Approved by</dt>
                <dd data-testid="release-approvals">
                  <ul class="approvals">
                    {r.approvals.map((a, i) => (
                      <li key={i}>
                        {a.by} at {formatTime(a.at)}
                        {a.comment ? `: ${a.comment}` : ''}
                      </li>
                    ))}
                  </ul>
                </dd>
              </>
            )}
            {r.breakGlass && (
              <>
                <dt>Break glass</dt>
                <dd data-testid="release-break-glass" class="approval-state t-bad">
                  approvals skipped by {r.breakGlass.by} ({r.breakGlass.role}) at {formatTime(r.breakGlass.at)}
                </dd>
              </>
            )}
            <dt>Started</dt>
            <dd>{formatTime(r.createdAt)}</dd>
            <dt>Finished</dt>
            <dd>{formatTime(r.finishedAt)}</dd>
          </dl>
          {canRollBackTo(r) && latest !== null && latest !== revision && (
            <RollbackButton project={project} stack={stack} revision={revision} who={props.who} />
          )}
          {revision > 1 && (
            <p>
              <a href={href.releaseDiff(project, stack, revision - 1, revision)}>Compare with #{revision - 1}</a>
            </p>
          )}
          <h2>State</h2>
          <table class="list" aria-label="State per kapp">
            <thead>
              <tr>
                <th scope="col">Kapp</th>
                <th scope="col">Status</th>
                <th scope="col">Revision</th>
                <th scope="col">Steps</th>
                <th scope="col">Outputs</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(r.state).map(([id, s]) => (
                <tr key={id} data-kapp={id}>
                  <td>{id}</td>
                  <td>
                    <span class={`badge k-${s.status}`}>{s.status}</span>
                  </td>
                  <td>#{s.revision}</td>
                  <td>
                    <ul class="steps">
                      {s.steps.map((st, i) => (
                        <li key={i}>
                          {st.phase}/{st.name}: {st.status}, exit {st.exitCode ?? '—'}, {formatDuration(st.durationMs)}
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td>
                    <pre class="outputs">{JSON.stringify(s.outputs, null, 2)}</pre>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Spec</h2>
          {r.spec.kapps.map((k) => (
            <details key={k.id} class="kapp-yaml">
              <summary>{k.id}</summary>
              <pre>{JSON.stringify(k, null, 2)}</pre>
            </details>
          ))}
        </>
      )}
    </section>
  );
}

function kappValue(release: Release, id: string): unknown {
  const spec = release.spec.kapps.find((k) => k.id === id) ?? null;
  const state = release.state[id];
  return { status: state?.status ?? null, outputs: state?.outputs ?? null, spec };
}

function kappText(release: Release, id: string): string {
  return asText(kappValue(release, id));
}

export function ReleaseDiffPage(props: { project: string; stack: string; from: number; to: number }) {
  const { project, stack, from, to } = props;
  const { data, error } = useLoad(
    () => Promise.all([api.release(project, stack, from), api.release(project, stack, to)]),
    [project, stack, from, to],
  );
  const ids = data
    ? [
        ...new Set([
          ...data[0].spec.kapps.map((k) => k.id),
          ...Object.keys(data[0].state),
          ...data[1].spec.kapps.map((k) => k.id),
          ...Object.keys(data[1].state),
        ]),
      ]
    : [];
  const same = (id: string) =>
    data && JSON.stringify(kappValue(data[0], id)) === JSON.stringify(kappValue(data[1], id));
  const changed = data ? ids.filter((id) => !same(id)) : [];
  return (
    <section>
      <p class="crumbs">
        <a href={href.stacks()}>Stacks</a> / <a href={href.stack(project, stack)}>{`${project} / ${stack}`}</a>
      </p>
      <h1>
        Releases #{from} → #{to} of {project}/{stack}
      </h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {data && changed.length === 0 && <p>No kapp differs.</p>}
      {data && changed.length > OPEN_AT_FIRST && (
        <p class="hint">
          {changed.length} kapps differ: the first {OPEN_AT_FIRST} are open, open the others one by one.
        </p>
      )}
      {data &&
        changed.map((id, i) => {
          const changes = () => diffValues(kappValue(data[0], id), kappValue(data[1], id));
          return (
            <KappChanges
              key={id}
              id={id}
              open={i < OPEN_AT_FIRST}
              summary={id}
              body={() => <ChangeList changes={changes()} label={`Changes of ${id}`} />}
              full={() => ({
                label: `${id}: #${from} and #${to}`,
                before: kappText(data[0], id),
                after: kappText(data[1], id),
                beforeTitle: `#${from}`,
                afterTitle: `#${to}`,
              })}
            />
          );
        })}
    </section>
  );
}
