/** Every registered project and stack: latest release, lock, running and queued runs. */
import { api, type StackSummary } from '../api';
import { ProjectRepoLine } from '../commit';
import { formatTime, href } from '../format';
import { useLoad } from '../use-load';

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
      return summaries;
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
            </tr>
          </thead>
          <tbody>
            {data.map(({ project, repo, stack, summary, error: e }) => {
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
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
