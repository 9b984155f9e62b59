/** Every registered project and stack: latest release, lock, running and queued runs. */
import { api, type Run, type StackSummary } from '../api';
import { WaitingForApproval } from '../approval';
import { ProjectRepoLine } from '../commit';
import { formatTime, href } from '../format';
import { useLoad } from '../use-load';

/** At most this many runs waiting for approval are read per project. */
const WAITING_LIMIT = 100;

export function StacksPage() {
  const { data, error, reload } = useLoad(
    async () => {
      const { projects } = await api.projects();
      const pairs = projects.flatMap((p) => p.stacks.map((s) => ({ project: p.name, repo: p.repo, stack: s })));
      const summaries = await Promise.all(
        pairs.map(async (pair) => {
          try {
            return { ...pair, summary: await api.stack(pair.project, pair.stack), error: null };
          } catch (e) {
            return { ...pair, summary: null as StackSummary | null, error: String(e) };
          }
        }),
      );
      // The runs waiting for approval, one request per project (a project this token may not list shows none).
      const waiting = new Map<string, Run[]>();
      await Promise.all(
        projects.map(async (p) => {
          try {
            const { runs } = await api.runs({ project: p.name, status: 'needs-approval', limit: WAITING_LIMIT });
            for (const run of runs)
              waiting.set(`${run.project}/${run.stack}`, [...(waiting.get(`${run.project}/${run.stack}`) ?? []), run]);
          } catch {
            // shown as none
          }
        }),
      );
      return summaries.map((s) => ({ ...s, waiting: waiting.get(`${s.project}/${s.stack}`) ?? [] }));
    },
    [],
    { poll: true },
  );
  return (
    <section>
      <h1>Stacks</h1>
      <button type="button" onClick={reload}>
        Refresh
      </button>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {!data && !error && <p>Loading…</p>}
      {data && data.some((s) => s.waiting.length > 0) && (
        <p class="approval-state t-wait" data-testid="waiting-total">
          {waitingText(data.reduce((n, s) => n + s.waiting.length, 0))}:{' '}
          {data
            .filter((s) => s.waiting.length > 0)
            .map((s) => `${s.project}/${s.stack}`)
            .join(', ')}
          .
        </p>
      )}
      {data && data.length === 0 && <p>No projects are registered on this server.</p>}
      {data && data.length > 0 && (
        <table class="list" aria-label="Stacks">
          <thead>
            <tr>
              <th scope="col">Project</th>
              <th scope="col">Stack</th>
              <th scope="col">Latest release</th>
              <th scope="col">Lock</th>
              <th scope="col">Running</th>
              <th scope="col">Queued</th>
              <th scope="col">Waiting for approval</th>
            </tr>
          </thead>
          <tbody>
            {data.map(({ project, repo, stack, summary, error: e, waiting }) => {
              const r = summary?.latestRelease;
              const lock = summary?.lock;
              return (
                <tr key={`${project}/${stack}`} data-stack={`${project}/${stack}`}>
                  <td data-label="Project">
                    {project}
                    {repo && (
                      <>
                        <br />
                        <ProjectRepoLine repo={repo} />
                      </>
                    )}
                  </td>
                  <td data-label="Stack">
                    <a href={href.stack(project, stack)}>{stack}</a>
                  </td>
                  <td data-label="Latest release">
                    {e
                      ? 'unavailable'
                      : r
                        ? `#${r.revision} ${r.operation} ${r.phase}, ${formatTime(r.createdAt)} by ${r.owner.user}@${r.owner.host}`
                        : 'none yet'}
                  </td>
                  <td data-label="Lock">
                    {lock ? (
                      <span class="locked">
                        locked by #{lock.revision} ({lock.owner.user}@{lock.owner.host})
                        {lock.ownerLooksDead ? `, owner looks dead: ${lock.ownerLooksDead}` : ''}
                      </span>
                    ) : (
                      'free'
                    )}
                  </td>
                  <td data-label="Running">
                    {summary?.running.map((run) => (
                      <a key={run.id} href={href.run(run.id)}>
                        {run.type} {run.status}
                      </a>
                    ))}
                    {summary && summary.running.length === 0 && '—'}
                  </td>
                  <td data-label="Queued">{summary ? summary.queued.length : '—'}</td>
                  <td data-label="Waiting for approval" data-testid="waiting-approval">
                    <WaitingForApproval runs={waiting} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

function waitingText(n: number): string {
  return n === 1 ? '1 run waits for approval' : `${n} runs wait for approval`;
}
