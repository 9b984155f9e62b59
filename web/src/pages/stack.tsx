/**
 * One stack: its lock and latest release, buttons to start runs (per role), its run history (filtered, paged by
 * cursor) and its release history (paged), with a diff of two revisions.
 */
import { useState } from 'preact/hooks';
import type { RunType, SubmitRun } from '../../../src/api/index';
import { RUN_STATES, RUN_TYPES } from '../../../src/api/constants';
import { api, ApiError, describeError, roleAtLeast, type Run, type Whoami } from '../api';
import { durationBetween, formatDuration, formatTime, href, runTypeText } from '../format';
import { approvalsSoFar, WaitingForApproval } from '../approval';
import { ProjectRepoLine, RunCommitLine, ReleaseSource } from '../commit';
import { Confirm } from '../confirm';
import { canRollBackTo, RollbackButton } from '../rollback';
import { StartRunDialog } from '../start-run';
import { useLoad } from '../use-load';

const PAGE = 20;

export function StackPage(props: { project: string; stack: string; who: Whoami }) {
  const { project, stack, who } = props;
  const summary = useLoad(() => api.stack(project, stack), [project, stack], { poll: true });
  const waiting = useLoad(() => api.runs({ project, stack, status: 'needs-approval', limit: 100 }), [project, stack], {
    poll: true,
  });
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const [confirm, setConfirm] = useState<RunType | null>(null);
  const [confirmUnlock, setConfirmUnlock] = useState(false);
  const [dialog, setDialog] = useState(false);
  const [runsKey, setRunsKey] = useState(0);
  const [releasesKey, setReleasesKey] = useState(0);

  const [refError, setRefError] = useState<string | null>(null);
  const projects = useLoad(() => api.projects(), []);
  const repo = projects.data?.projects.find((p) => p.name === project)?.repo ?? null;

  /** Start a run; from the dialog, a problem with its ref keeps the dialog open and shows next to the field. */
  const start = async (type: RunType, body: SubmitRun = { type, project, stack }, fromDialog = false) => {
    setConfirm(null);
    if (!fromDialog) setDialog(false);
    try {
      const run = await api.submit(body);
      location.hash = href.run(run.id);
    } catch (e) {
      const refProblem = e instanceof ApiError ? e.problem?.errors?.find((f) => f.field === 'body.ref') : undefined;
      if (fromDialog && refProblem) {
        setRefError((e as ApiError).problem?.detail ?? refProblem.message);
        return;
      }
      setDialog(false);
      setMessage({ text: describeError(e), error: true });
    }
  };
  const unlock = async () => {
    setConfirmUnlock(false);
    try {
      await api.unlock(project, stack);
      setMessage({ text: 'Unlocked: the release is marked failed and the next run may begin.', error: false });
      summary.reload();
      setReleasesKey((k) => k + 1);
    } catch (e) {
      setMessage({ text: describeError(e), error: true });
    }
  };
  const lock = summary.data?.lock;
  const types: { type: RunType; role: 'plan' | 'apply'; confirm: boolean }[] = [
    { type: 'generate', role: 'plan', confirm: false },
    { type: 'preview', role: 'plan', confirm: false },
    { type: 'apply', role: 'apply', confirm: true },
    { type: 'destroy', role: 'apply', confirm: true },
  ];
  const allowed = types.filter((t) => roleAtLeast(who.role, t.role));
  return (
    <section>
      <p class="crumbs">
        <a href={href.stacks()}>Stacks</a> / {project}
      </p>
      <h1>
        {project} / {stack}
      </h1>
      {summary.error && (
        <p role="alert" class="error">
          {summary.error}
        </p>
      )}
      {message && (
        <p role={message.error ? 'alert' : 'status'} class={message.error ? 'error' : 'ok'}>
          {message.text}
        </p>
      )}
      {summary.data && (
        <dl class="facts">
          <dt>Latest release</dt>
          <dd>
            {summary.data.latestRelease ? (
              <a href={href.release(project, stack, summary.data.latestRelease.revision)}>
                #{summary.data.latestRelease.revision} {summary.data.latestRelease.operation}{' '}
                {summary.data.latestRelease.phase}
              </a>
            ) : (
              'none yet'
            )}
          </dd>
          <dt>Lock</dt>
          <dd data-testid="lock">
            {lock ? (
              <>
                Locked by release #{lock.revision} ({lock.operation}, {lock.phase}) of {lock.owner.user}@
                {lock.owner.host}
                {lock.owner.pid !== undefined ? ` pid ${lock.owner.pid}` : ''} since {formatTime(lock.since)}
                {lock.ownerLooksDead && <strong class="dead"> — owner looks dead: {lock.ownerLooksDead}</strong>}
                {roleAtLeast(who.role, 'admin') && (
                  <button type="button" onClick={() => setConfirmUnlock(true)}>
                    Unlock
                  </button>
                )}
              </>
            ) : (
              'free'
            )}
          </dd>
          {repo && (
            <>
              <dt>Repository</dt>
              <dd>
                <ProjectRepoLine repo={repo} />
              </dd>
            </>
          )}
          <dt>Drift</dt>
          <dd>
            <a href={href.drift(project, stack)}>Drift checks and history</a>
          </dd>
          <dt>Running</dt>
          <dd>{summary.data.running.length}</dd>
          <dt>Queued</dt>
          <dd>{summary.data.queued.length}</dd>
          <dt>Waiting for approval</dt>
          <dd data-testid="waiting-approval">{waiting.data ? <WaitingForApproval runs={waiting.data.runs} /> : '—'}</dd>
        </dl>
      )}
      {allowed.length > 0 && (
        <div class="actions" role="group" aria-label="Start a run">
          {allowed.map((t) => (
            <button
              key={t.type}
              type="button"
              class={t.type === 'destroy' ? 'danger' : ''}
              onClick={() => (t.confirm ? setConfirm(t.type) : void start(t.type))}
            >
              {t.type[0]!.toUpperCase() + t.type.slice(1)}
            </button>
          ))}
          <button
            type="button"
            aria-expanded={dialog}
            onClick={() => {
              setRefError(null);
              setDialog(!dialog);
            }}
          >
            Start run…
          </button>
        </div>
      )}
      {dialog && (
        <StartRunDialog
          project={project}
          stack={stack}
          types={allowed.map((t) => t.type)}
          repo={repo}
          refError={refError}
          onStart={(body) => {
            setRefError(null);
            void start(body.type, body, true);
          }}
          onClose={() => {
            setRefError(null);
            setDialog(false);
          }}
        />
      )}
      {confirmUnlock && lock && (
        <Confirm
          label="Confirm unlock"
          confirmText="Confirm unlock"
          danger
          onConfirm={() => void unlock()}
          onCancel={() => setConfirmUnlock(false)}
        >
          <p>
            Unlock {project}/{stack}? Release #{lock.revision} is marked failed and the next run may begin. Do this only
            when its owner is gone.
          </p>
        </Confirm>
      )}
      {confirm && (
        <Confirm
          label={`Confirm ${confirm}`}
          confirmText={`Confirm ${confirm}`}
          danger={confirm === 'destroy'}
          {...(confirm === 'destroy' ? { typeToConfirm: stack } : {})}
          onConfirm={() => void start(confirm)}
          onCancel={() => setConfirm(null)}
        >
          <p>
            {confirm === 'destroy' ? 'Delete' : 'Install'} every selected kapp of {project}/{stack}?
          </p>
          {confirm === 'destroy' && (
            <DestroyList project={project} stack={stack} revision={summary.data?.latestRelease?.revision ?? null} />
          )}
        </Confirm>
      )}
      <RunHistory
        key={runsKey}
        project={project}
        stack={stack}
        who={who}
        onChange={() => {
          setRunsKey((k) => k + 1);
          summary.reload();
        }}
      />
      <ReleaseHistory key={releasesKey} project={project} stack={stack} who={who} />
    </section>
  );
}

/**
 * What a destroy would delete: the kapps the stack's latest release holds as present (its state, every status but
 * `deleted`), read from that release before the stack's name is asked for.
 */
function DestroyList(props: { project: string; stack: string; revision: number | null }) {
  const { project, stack, revision } = props;
  const release = useLoad(
    () => (revision === null ? Promise.resolve(null) : api.release(project, stack, revision)),
    [project, stack, revision],
  );
  if (revision === null) return <p data-testid="destroy-list">No release yet: nothing is installed to delete.</p>;
  if (release.error)
    return (
      <p role="alert" class="error">
        {release.error}
      </p>
    );
  if (!release.data) return <p data-testid="destroy-list">Reading release #{revision}…</p>;
  const present = Object.entries(release.data.state)
    .filter(([, s]) => s.status !== 'deleted')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (present.length === 0)
    return <p data-testid="destroy-list">Release #{revision} holds no installed kapp: nothing to delete.</p>;
  return (
    <div data-testid="destroy-list">
      <p>
        It deletes these {present.length} kapps of release #{revision}, by id:
      </p>
      <ul class="destroy-list">
        {present.map(([id, s]) => (
          <li key={id} data-kapp={id}>
            {id} <span class={`badge k-${s.status}`}>{s.status}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

function RunHistory(props: { project: string; stack: string; who: Whoami; onChange: () => void }) {
  const [type, setType] = useState('');
  const [status, setStatus] = useState('');
  const [createdBy, setCreatedBy] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [toCancel, setToCancel] = useState<string | null>(null);
  const cursor = cursors[cursors.length - 1];
  const runs = useLoad(
    () =>
      api.runs({
        project: props.project,
        stack: props.stack,
        limit: PAGE,
        ...(type ? { type: type as RunType } : {}),
        ...(status ? { status: status as Run['status'] } : {}),
        ...(createdBy ? { createdBy } : {}),
        ...(cursor ? { cursor } : {}),
      }),
    [props.project, props.stack, type, status, createdBy, cursor],
    { poll: true },
  );
  const filter = (set: (v: string) => void) => (ev: Event) => {
    set((ev.target as HTMLInputElement).value);
    setCursors([]);
  };
  const cancel = async (id: string) => {
    setToCancel(null);
    try {
      await api.cancel(id);
      props.onChange();
    } catch (e) {
      setError(describeError(e));
    }
  };
  return (
    <section aria-labelledby="runs-h">
      <h2 id="runs-h">Runs</h2>
      <div class="filters">
        <label>
          Type{' '}
          <select value={type} onChange={filter(setType)}>
            <option value="">any</option>
            {RUN_TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          Status{' '}
          <select value={status} onChange={filter(setStatus)}>
            <option value="">any</option>
            {RUN_STATES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          By <input type="text" value={createdBy} onChange={filter(setCreatedBy)} size={12} />
        </label>
        <button type="button" onClick={runs.reload}>
          Refresh
        </button>
      </div>
      {(runs.error ?? error) && (
        <p role="alert" class="error">
          {runs.error ?? error}
        </p>
      )}
      {toCancel && (
        <Confirm
          label="Confirm cancel"
          confirmText="Confirm cancel"
          danger
          onConfirm={() => void cancel(toCancel)}
          onCancel={() => setToCancel(null)}
        >
          <p>Cancel run {toCancel}? Its running steps are stopped.</p>
        </Confirm>
      )}
      <table class="list" aria-label="Run history">
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Type</th>
            <th scope="col">Status</th>
            <th scope="col">By</th>
            <th scope="col">Created</th>
            <th scope="col">Duration</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {runs.data?.runs.map((r) => (
            <tr key={r.id} data-run={r.id}>
              <td data-label="Run">
                <a href={href.run(r.id)}>{r.id}</a>
                {r.commit && (
                  <>
                    <br />
                    <RunCommitLine commit={r.commit} trigger={r.trigger} runHref={href.run(r.id)} />
                  </>
                )}
              </td>
              <td data-label="Type">{runTypeText(r)}</td>
              <td data-label="Status">
                <span class={`badge r-${r.status}`}>{r.status}</span>
                {r.queuePosition !== null && ` (#${r.queuePosition} in queue)`}
                {r.status === 'needs-approval' &&
                  r.approval &&
                  ` (${approvalsSoFar(r.approval)} of ${r.approval.required} approved)`}
              </td>
              <td data-label="By">{r.createdBy}</td>
              <td data-label="Created">{formatTime(r.createdAt)}</td>
              <td data-label="Duration">{formatDuration(durationBetween(r.startedAt, r.finishedAt))}</td>
              <td>
                {r.actions.cancelable && roleAtLeast(props.who.role, 'apply') && (
                  <button type="button" aria-label={`Cancel run ${r.id}`} onClick={() => setToCancel(r.id)}>
                    Cancel
                  </button>
                )}
              </td>
            </tr>
          ))}
          {runs.data?.runs.length === 0 && (
            <tr>
              <td colSpan={7}>No runs.</td>
            </tr>
          )}
        </tbody>
      </table>
      <div class="pager">
        <button type="button" disabled={!cursors.length} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer
        </button>
        <span>Page {cursors.length + 1}</span>
        <button
          type="button"
          disabled={!runs.data?.nextCursor}
          onClick={() => runs.data?.nextCursor && setCursors([...cursors, runs.data.nextCursor])}
        >
          Older
        </button>
      </div>
    </section>
  );
}

function ReleaseHistory(props: { project: string; stack: string; who: Whoami }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const cursor = cursors[cursors.length - 1];
  const list = useLoad(
    () => api.releases(props.project, props.stack, { limit: PAGE, ...(cursor ? { cursor } : {}) }),
    [props.project, props.stack, cursor],
    { poll: true },
  );
  return (
    <section aria-labelledby="releases-h">
      <h2 id="releases-h">Releases</h2>
      {list.error && (
        <p role="alert" class="error">
          {list.error}
        </p>
      )}
      <table class="list" aria-label="Release history">
        <thead>
          <tr>
            <th scope="col">Revision</th>
            <th scope="col">Operation</th>
            <th scope="col">Phase</th>
            <th scope="col">Kapps</th>
            <th scope="col">Owner</th>
            <th scope="col">Started</th>
            <th scope="col">Duration</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.data?.releases.map((r, i) => (
            <tr key={r.revision} data-revision={r.revision}>
              <td data-label="Revision">
                <a href={href.release(props.project, props.stack, r.revision)}>#{r.revision}</a>
              </td>
              <td data-label="Operation">
                {r.operation}
                {r.rollbackOf !== undefined && (
                  <span data-testid="rollback-of">
                    , rollback of <a href={href.release(props.project, props.stack, r.rollbackOf)}>#{r.rollbackOf}</a>
                  </span>
                )}
                {r.source && (
                  <>
                    <br />
                    <ReleaseSource source={r.source} />
                  </>
                )}
              </td>
              <td data-label="Phase">
                <span class={`badge r-${r.phase}`}>{r.phase}</span>
                {r.unlocked ? ` (unlocked by ${r.unlocked.by})` : ''}
                {r.approvals && r.approvals.length > 0 && (
                  <span class="hint" data-testid="approved-by">
                    {' '}
                    approved by {r.approvals.map((a) => a.by).join(', ')}
                  </span>
                )}
                {r.breakGlass && (
                  <span class="hint" data-testid="break-glass">
                    {' '}
                    break glass by {r.breakGlass.by}
                  </span>
                )}
              </td>
              <td data-label="Kapps">{r.kappsCount}</td>
              <td data-label="Owner">
                {r.owner.user}@{r.owner.host}
              </td>
              <td data-label="Started">{formatTime(r.createdAt)}</td>
              <td data-label="Duration">{r.durationMs === null ? 'running' : formatDuration(r.durationMs)}</td>
              <td>
                {/* The newest release (first of the first page) is what is installed: no rollback to it. */}
                {canRollBackTo(r) && !(i === 0 && cursors.length === 0) && (
                  <RollbackButton
                    project={props.project}
                    stack={props.stack}
                    revision={r.revision}
                    who={props.who}
                    compact
                  />
                )}
              </td>
            </tr>
          ))}
          {list.data?.releases.length === 0 && (
            <tr>
              <td colSpan={8}>No releases yet.</td>
            </tr>
          )}
        </tbody>
      </table>
      <div class="pager">
        <button type="button" disabled={!cursors.length} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer
        </button>
        <button
          type="button"
          disabled={!list.data?.nextCursor}
          onClick={() => list.data?.nextCursor && setCursors([...cursors, list.data.nextCursor])}
        >
          Older
        </button>
      </div>
      <form
        class="filters"
        aria-label="Compare two releases"
        onSubmit={(ev) => {
          ev.preventDefault();
          if (from && to) location.hash = href.releaseDiff(props.project, props.stack, Number(from), Number(to));
        }}
      >
        <label>
          From revision{' '}
          <input type="number" min={1} value={from} onInput={(e) => setFrom((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          To revision{' '}
          <input type="number" min={1} value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" disabled={!from || !to}>
          Compare
        </button>
      </form>
    </section>
  );
}
