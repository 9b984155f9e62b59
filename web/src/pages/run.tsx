/**
 * A run, live: status and timeline, the DAG of its kapps coloured and labelled by state, the selected kapp's
 * steps and log, the whole log following the tail (filtered per kapp), the failing step's last lines first, and
 * the result once it is finished. Stream messages are folded into a model as they arrive and shown once per
 * animation frame; the DAG is laid out once and then only its nodes' classes change.
 */
import { Component } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { stripAnsi } from '../ansi';
import { api, describeError, followEvents, isFinal, roleAtLeast, type LogLine, type Run, type Whoami } from '../api';
import { ApprovalSection, RunChecks } from '../approval';
import { RunCommitFacts } from '../commit';
import { DagView } from '../dag';
import { durationBetween, formatDuration, formatTime, href, runTypeText } from '../format';
import { Confirm } from '../confirm';
import { LogView } from '../log-view';
import {
  applyMessage,
  emptyModel,
  finalise,
  STATE_ICONS,
  type KappState,
  type KappView,
  type RunModel,
} from '../run-model';
import { RunResult } from './result';
import { Notifications } from './notifications';

export function RunPage(props: { id: string; who: Whoami; line?: number | null }) {
  const model = useRef<RunModel>(emptyModel());
  const [, setVersion] = useState(0);
  const [run, setRun] = useState<Run | null>(null);
  // The run as `GET /runs/{id}` answers the caller: its `actions` are the caller's (the stream's may not be).
  const [asCaller, setAsCaller] = useState<Run | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [filter, setFilter] = useState('');
  const [notice, setNotice] = useState<string | null>(null);
  const [followRunning, setFollowRunning] = useState(false);
  const [confirmCancel, setConfirmCancel] = useState(false);
  const [view, setView] = useState<'dag' | 'list'>(() => (matchMedia('(max-width: 640px)').matches ? 'list' : 'dag'));
  const [find, setFind] = useState('');
  const [stateFilter, setStateFilter] = useState('');
  const [manifestFilter, setManifestFilter] = useState('');
  const followRef = useRef(false);
  followRef.current = followRunning;
  const dagBox = useRef<HTMLDivElement>(null);
  const dag = useRef<DagView | null>(null);

  useEffect(() => {
    const abort = new AbortController();
    let frame = 0;
    const flush = () => {
      frame = 0;
      const m = model.current;
      if (dag.current) {
        if (m.graphChanged) {
          m.graphChanged = false;
          dag.current.draw(m.order.map((id) => m.kapps.get(id)!));
        } else if (m.dirty.size) {
          dag.current.update([...m.dirty].map((id) => m.kapps.get(id)!));
        }
        if (followRef.current) revealRunning(dag.current, m, m.dirty);
        m.dirty.clear();
      }
      if (m.status) setRun(m.status);
      setVersion((v) => v + 1);
    };
    const schedule = () => {
      if (!frame) frame = requestAnimationFrame(flush);
    };
    api
      .run(props.id)
      .then(async (r) => {
        setRun(r);
        setAsCaller(r);
        await followEvents(
          props.id,
          (batch) => {
            for (const msg of batch) applyMessage(model.current, msg.event, msg.data);
            schedule();
          },
          abort.signal,
          (connected) => setNotice(connected ? null : 'The event stream was cut: reconnecting…'),
        );
        if (abort.signal.aborted) return;
        const final = await api.run(props.id);
        model.current.status = final;
        finalise(model.current, final.status);
        if (isFinal(final.status) && model.current.log.length === 0) {
          // A server that replays no log on the stream still has it by offset.
          let offset = 0;
          for (;;) {
            const chunk = await api.logs(props.id, offset);
            model.current.log.push(...chunk.lines);
            if (chunk.complete || chunk.nextOffset === offset) break;
            offset = chunk.nextOffset;
          }
        }
        schedule();
      })
      .catch((e: unknown) => {
        if (!abort.signal.aborted) setError(describeError(e));
      });
    return () => {
      abort.abort();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [props.id]);

  // The caller's actions again whenever the status or the decisions change; while the run waits for approval, every
  // few seconds too (others' approvals change nothing in its status).
  const decisions = run?.approval?.decisions.length ?? 0;
  useEffect(() => {
    if (!run) return;
    let live = true;
    const load = () =>
      api.run(props.id).then(
        (r) => live && setAsCaller(r),
        () => {},
      );
    if (asCaller?.status !== run.status || (asCaller.approval?.decisions.length ?? 0) !== decisions) void load();
    const timer = run.status === 'needs-approval' ? setInterval(() => void load(), WAITING_POLL_MS) : undefined;
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [props.id, run?.status, decisions]);

  useEffect(() => {
    if (!dagBox.current) return;
    dag.current = new DagView(dagBox.current, (id) => setSelected((s) => (s === id ? null : id)));
    const m = model.current;
    if (m.order.length) dag.current.draw(m.order.map((id) => m.kapps.get(id)!));
    m.graphChanged = false;
    m.dirty.clear();
  }, []);

  useEffect(() => dag.current?.select(selected), [selected]);

  const keep = kappFilter(stateFilter, manifestFilter);
  useEffect(() => dag.current?.filter(keep), [stateFilter, manifestFilter]);

  useEffect(() => {
    if (followRunning && dag.current) revealRunning(dag.current, model.current, new Set());
  }, [followRunning]);

  /** "Show kapp": the node centred in the DAG, its details opened and brought into view. */
  const showKapp = (id: string) => {
    setSelected(id);
    dag.current?.reveal(id);
    requestAnimationFrame(() => {
      const panel = document.getElementById('kapp-h');
      panel?.scrollIntoView({ block: 'start' });
      panel?.focus({ preventScroll: true });
    });
  };

  // A link to a line shows it among all lines.
  useEffect(() => {
    if (props.line != null) setFilter('');
  }, [props.line]);

  const m = model.current;
  const status = run?.status;
  const cancel = async () => {
    setConfirmCancel(false);
    try {
      setRun(await api.cancel(props.id));
      setNotice('Cancel requested.');
    } catch (e) {
      setNotice(describeError(e));
    }
  };
  const start = run?.startedAt ? Date.parse(run.startedAt) : null;
  // The approval as the caller's answer has it when it is about the same status (it may hold newer decisions).
  const current = asCaller && run && asCaller.status === run.status ? asCaller : null;
  const shown = run && current && decisionsOf(current) >= decisionsOf(run) ? current : run;
  const kapp = selected ? m.kapps.get(selected) : undefined;

  return (
    <section class="run">
      {run && (
        <p class="crumbs">
          <a href={href.stacks()}>Stacks</a> /{' '}
          <a href={href.stack(run.project, run.stack)}>{`${run.project} / ${run.stack}`}</a>
        </p>
      )}
      <h1>
        {run ? capitalize(runTypeText(run)) : 'Run'} {props.id}{' '}
        {status && (
          <span class={`badge r-${status}`} data-testid="run-status">
            {status}
          </span>
        )}
      </h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {notice && <p role="status">{notice}</p>}
      {run && (
        <>
          {run.options.toRevision !== undefined && (
            <p data-testid="rollback-target">
              {run.type === 'preview' ? 'What a rollback would change: ' : 'Rolls back: '}
              {run.options.toRevision === -1 ? (
                'to the revision before the latest'
              ) : (
                <>
                  to the desired state of{' '}
                  <a href={href.release(run.project, run.stack, run.options.toRevision)}>
                    release #{run.options.toRevision}
                  </a>
                </>
              )}
              {run.options.prune ? ', deleting the kapps it did not have' : ''}
              {run.options.force ? ', forced (recorded sources and variables on top of the checkout of today)' : ''}.
            </p>
          )}
          {run.commit && (
            <dl class="facts" aria-label="Source">
              <RunCommitFacts commit={run.commit} trigger={run.trigger} />
            </dl>
          )}
          <ol class="timeline" aria-label="Timeline">
            <li>
              Queued {formatTime(run.createdAt)} by {run.createdBy}
              {run.queuePosition !== null && `, #${run.queuePosition} in the queue`}
              {run.blockedBy && (
                <>
                  , waiting for <a href={href.run(run.blockedBy)}>{run.blockedBy}</a>
                </>
              )}
            </li>
            <li>Started {formatTime(run.startedAt)}</li>
            {m.kapps.size > 0 && (
              <li data-testid="progress">
                <Progress model={m} run={run} />
              </li>
            )}
            <li>
              Finished {formatTime(run.finishedAt)}
              {run.finishedAt &&
                ` (${formatDuration(durationBetween(run.startedAt ?? run.createdAt, run.finishedAt))})`}
            </li>
          </ol>
          {run.error && (
            <p class="error" data-testid="run-error">
              {run.error}
            </p>
          )}
          {run.actions.cancelable && roleAtLeast(props.who.role, 'apply') && (
            <button type="button" class="danger" onClick={() => setConfirmCancel(true)}>
              Cancel run
            </button>
          )}
          {shown?.approval && (
            <ApprovalSection
              run={shown}
              actions={current?.actions ?? { approvable: false, rejectable: false }}
              who={props.who}
              onDecided={(after) => setAsCaller(after)}
            />
          )}
          <RunChecks checks={shown?.checks ?? run.checks} />
          {confirmCancel && run.actions.cancelable && (
            <Confirm
              label="Confirm cancel"
              confirmText="Confirm cancel"
              danger
              onConfirm={() => void cancel()}
              onCancel={() => setConfirmCancel(false)}
            >
              <p>Cancel this run? Its running steps are stopped; what they did stays done.</p>
            </Confirm>
          )}
        </>
      )}
      {m.failure && <Failure failure={m.failure} log={m.log} onShow={showKapp} />}
      {/* A finished run that visited no kapps (a generate, a preview without refresh) has no DAG to show; nor has a
          run waiting for approval before it applies (its Approval section says so). */}
      <section
        hidden={!m.started && !!status && (isFinal(status) || status === 'needs-approval')}
        aria-labelledby="kapps-h"
      >
        <h2 id="kapps-h">Kapps</h2>
        <Legend model={m} />
        <div class="filters">
          <fieldset class="view-switch">
            <legend class="sr-only">View</legend>
            <label>
              <input type="radio" name="kapps-view" checked={view === 'dag'} onChange={() => setView('dag')} /> DAG
            </label>
            <label>
              <input type="radio" name="kapps-view" checked={view === 'list'} onChange={() => setView('list')} /> List
              by state
            </label>
          </fieldset>
          <form
            class="find"
            onSubmit={(e) => {
              e.preventDefault();
              const id = find.trim();
              const hit = m.kapps.has(id) ? id : m.order.find((k) => k.includes(id));
              if (hit) {
                setView('dag');
                requestAnimationFrame(() => showKapp(hit));
              } else setNotice(`No kapp matches ${id}.`);
            }}
          >
            <label>
              Find kapp{' '}
              <input
                type="search"
                list="kapp-ids"
                value={find}
                onInput={(e) => setFind((e.target as HTMLInputElement).value)}
              />
            </label>
            <datalist id="kapp-ids">
              <KappOptions order={m.order} count={m.order.length} />
            </datalist>
            <button type="submit">Show</button>
          </form>
          <label>
            State{' '}
            <select
              value={stateFilter}
              data-testid="state-filter"
              onChange={(e) => setStateFilter((e.target as HTMLSelectElement).value)}
            >
              <option value="">all</option>
              {STATE_ORDER.map((st) => (
                <option key={st} value={st}>
                  {st}
                </option>
              ))}
            </select>
          </label>
          <label>
            Manifest{' '}
            <select
              value={manifestFilter}
              data-testid="manifest-filter"
              onChange={(e) => setManifestFilter((e.target as HTMLSelectElement).value)}
            >
              <option value="">all</option>
              <ManifestOptions order={m.order} count={m.order.length} />
            </select>
          </label>
          <button type="button" aria-label="Zoom in" onClick={() => dag.current?.zoom(1.25)}>
            +
          </button>
          <button type="button" aria-label="Zoom out" onClick={() => dag.current?.zoom(0.8)}>
            −
          </button>
          <button type="button" onClick={() => dag.current?.fit()}>
            Fit
          </button>
          <label>
            <input
              type="checkbox"
              checked={followRunning}
              onChange={(e) => setFollowRunning((e.target as HTMLInputElement).checked)}
            />{' '}
            Follow running
          </label>
        </div>
        <button
          type="button"
          class="skip"
          onClick={() => document.querySelector<HTMLElement>('[data-testid="log"]')?.focus()}
        >
          Skip past the DAG to the log
        </button>
        <div class="dag-box" ref={dagBox} data-testid="dag" hidden={view !== 'dag'} />
        {view === 'list' && <KappList model={m} keep={keep} onShow={showKapp} />}
        {!m.started && <p>{status === 'queued' ? 'Waiting for the run to start…' : 'No kapps yet.'}</p>}
      </section>
      {kapp && (
        <KappPanel
          kapp={kapp}
          runId={props.id}
          log={m.log}
          count={m.log.length}
          start={start}
          onClose={() => {
            const id = selected;
            setSelected(null);
            if (id) dag.current?.focus(id);
          }}
        />
      )}
      <h2 id="log-h">Log</h2>
      <div class="filters">
        <label>
          Kapp{' '}
          <select
            value={filter}
            data-testid="log-filter"
            onChange={(e) => setFilter((e.target as HTMLSelectElement).value)}
          >
            <option value="">all</option>
            <KappOptions order={m.order} count={m.order.length} />
          </select>
        </label>
      </div>
      <LogView
        runId={props.id}
        lines={m.log}
        count={m.log.length}
        {...(filter ? { kapp: filter } : {})}
        start={start}
        label={filter ? `Log of ${filter}` : 'Log'}
        testId="log"
        target={props.line ?? null}
      />
      {run && isFinal(run.status) && <RunResult run={run} who={props.who} />}
      {run && <Notifications run={run} />}
    </section>
  );
}

/** The manifest of a kapp: its id up to the first `:` (`web:db` → `web`). */
function manifestOf(id: string): string {
  const colon = id.indexOf(':');
  return colon < 0 ? id : id.slice(0, colon);
}

/** What the state and manifest filters keep (null when both show all). */
function kappFilter(state: string, manifest: string): ((id: string, state: KappState) => boolean) | null {
  if (!state && !manifest) return null;
  return (id, s) => (!state || s === state) && (!manifest || manifestOf(id) === manifest);
}

/** The manifest filter's options, each manifest once in the order of its first kapp. */
class ManifestOptions extends Component<{ order: string[]; count: number }> {
  override shouldComponentUpdate(next: { count: number }): boolean {
    return next.count !== this.props.count;
  }
  override render() {
    return (
      <>
        {[...new Set(this.props.order.map(manifestOf))].map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </>
    );
  }
}

/** The per-kapp filter's options; rendered again only when kapps were added. */
class KappOptions extends Component<{ order: string[]; count: number }> {
  override shouldComponentUpdate(next: { count: number }): boolean {
    return next.count !== this.props.count;
  }
  override render() {
    return (
      <>
        {this.props.order.map((id) => (
          <option key={id} value={id}>
            {id}
          </option>
        ))}
      </>
    );
  }
}

function Legend(props: { model: RunModel }) {
  const counts = new Map<string, number>();
  for (const k of props.model.kapps.values()) counts.set(k.state, (counts.get(k.state) ?? 0) + 1);
  return (
    <ul class="legend" aria-label="Kapps by state" data-testid="legend">
      {(Object.keys(STATE_ICONS) as (keyof typeof STATE_ICONS)[]).map((s) => (
        <li key={s} class={`s-${s}`} data-state={s}>
          <span class="swatch" aria-hidden="true">
            {STATE_ICONS[s]}
          </span>{' '}
          {s}: {counts.get(s) ?? 0}
        </li>
      ))}
    </ul>
  );
}

function Failure(props: { failure: NonNullable<RunModel['failure']>; log: LogLine[]; onShow: (id: string) => void }) {
  const { kapp, step } = props.failure;
  const lines =
    step.outputTail && step.outputTail.length
      ? step.outputTail
      : props.log
          .filter((l) => l.kapp === kapp && l.step === step.name && l.stream !== 'kapps')
          .slice(-20)
          .map((l) => l.text);
  const plain = lines.map(stripAnsi);
  return (
    <section class="failure" aria-labelledby="failure-h" data-testid="failure">
      <h2 id="failure-h">
        ✗ Failed: {kapp}, step {step.phase}/{step.name}
        {step.exitCode !== null ? ` (exit ${step.exitCode})` : ''}
      </h2>
      {step.reason && <p>{step.reason}</p>}
      <pre class="tail" tabindex={0} aria-label={`Last lines of ${kapp}, step ${step.name}`}>
        {plain.join('\n')}
      </pre>
      <button type="button" onClick={() => props.onShow(kapp)}>
        Show {kapp}
      </button>
    </section>
  );
}

function KappPanel(props: {
  kapp: KappView;
  runId: string;
  log: LogLine[];
  count: number;
  start: number | null;
  onClose: () => void;
}) {
  const k = props.kapp;
  // The panel takes the focus when a kapp is chosen; Escape closes it.
  useEffect(() => document.getElementById('kapp-h')?.focus({ preventScroll: true }), [k.id]);
  return (
    <section
      class="kapp-panel"
      aria-labelledby="kapp-h"
      data-testid="kapp-panel"
      onKeyDown={(e) => {
        if (e.key === 'Escape') props.onClose();
      }}
    >
      <h2 id="kapp-h" tabindex={-1}>
        {STATE_ICONS[k.state]} {k.id}: {k.state}
      </h2>
      <button type="button" onClick={props.onClose}>
        Close
      </button>
      {k.reason && <p>{k.reason}</p>}
      {k.dependsOn.length > 0 && <p>Depends on: {k.dependsOn.join(', ')}</p>}
      <table class="list" aria-label={`Steps of ${k.id}`}>
        <thead>
          <tr>
            <th scope="col">Phase</th>
            <th scope="col">Step</th>
            <th scope="col">Status</th>
            <th scope="col">Exit code</th>
            <th scope="col">Duration</th>
          </tr>
        </thead>
        <tbody>
          {k.steps.map((s, i) => (
            <tr key={i}>
              <td>{s.phase}</td>
              <td>{s.name}</td>
              <td>{s.status}</td>
              <td>{s.exitCode ?? '—'}</td>
              <td>{formatDuration(s.durationMs)}</td>
            </tr>
          ))}
          {k.steps.length === 0 && (
            <tr>
              <td colSpan={5}>No steps ran.</td>
            </tr>
          )}
        </tbody>
      </table>
      <LogView
        runId={props.runId}
        lines={props.log}
        count={props.count}
        kapp={k.id}
        steps={k.steps}
        start={props.start}
        label={`Log of ${k.id}`}
        testId="kapp-log"
        small
      />
    </section>
  );
}

/** How far the run is: kapps finished of all, and the time since it started. */
function Progress(props: { model: RunModel; run: Run }) {
  let done = 0;
  let running = 0;
  for (const k of props.model.kapps.values()) {
    if (k.state === 'running') running++;
    else if (k.state !== 'waiting' && k.state !== 'queued') done++;
  }
  const end = props.run.finishedAt ? Date.parse(props.run.finishedAt) : Date.now();
  const since = props.run.startedAt ? Date.parse(props.run.startedAt) : null;
  return (
    <>
      {done} of {props.model.kapps.size} kapps done{running ? `, ${running} running` : ''}
      {since !== null && ` · elapsed ${formatDuration(end - since)}`}
    </>
  );
}

/** Keep a running kapp in view: the one that just started, else the first running one when none is in view. */
function revealRunning(dag: DagView, m: RunModel, changed: Set<string>): void {
  const running = m.order.filter((id) => m.kapps.get(id)?.state === 'running');
  if (!running.length || running.some((id) => dag.isVisible(id))) return;
  const started = running.find((id) => changed.has(id));
  dag.reveal(started ?? running[0]!);
}

/** The order of the list view: what needs attention first. */
const STATE_ORDER = ['failed', 'running', 'queued', 'unfinished', 'waiting', 'cancelled', 'skipped', 'succeeded'];

/** The kapps as a list sorted by state (the phone and keyboard view of the DAG). */
function KappList(props: {
  model: RunModel;
  keep: ((id: string, state: KappState) => boolean) | null;
  onShow: (id: string) => void;
}) {
  const { keep } = props;
  const kapps = [...props.model.kapps.values()]
    .filter((k) => !keep || keep(k.id, k.state))
    .sort((a, b) => STATE_ORDER.indexOf(a.state) - STATE_ORDER.indexOf(b.state));
  return (
    <>
      {keep && (
        <p data-testid="kapp-list-count">
          {kapps.length} of {props.model.kapps.size} kapps match the filter.
        </p>
      )}
      <ul class="kapp-list" aria-label="Kapps by state" data-testid="kapp-list">
        {kapps.map((k) => (
          <li key={k.id} class={`s-${k.state}`} data-kapp={k.id} data-state={k.state}>
            <button type="button" onClick={() => props.onShow(k.id)}>
              <span aria-hidden="true">{STATE_ICONS[k.state]}</span> {k.id} {k.state}
            </button>
          </li>
        ))}
      </ul>
    </>
  );
}

/** How often a run waiting for approval is read again (others' decisions). */
const WAITING_POLL_MS = 5000;

function decisionsOf(run: Run): number {
  return run.approval?.decisions.length ?? 0;
}

function capitalize(text: string): string {
  return text ? text[0]!.toUpperCase() + text.slice(1) : text;
}
