/**
 * The fleet: every stack the token may read (`GET /fleet`), its last release, its last drift check and drift state
 * and since when; drifted stacks first, or sorted as asked, and filtered by name. One request, one table: fine at
 * hundreds of stacks.
 */
import { useState } from 'preact/hooks';
import type { FleetStack } from '../../../src/api/index';
import { api } from '../api';
import { DriftBadge, driftStateText } from '../drift-report';
import { formatEvery, formatTime, href } from '../format';
import { useLoad } from '../use-load';

const SORTS = {
  attention: 'Drifted first',
  name: 'Project and stack',
  checked: 'Last check, oldest first',
  released: 'Last release, newest first',
} as const;
type Sort = keyof typeof SORTS;

/** What needs attention first: drifted, unknown, never checked, in sync. */
const RANK: Record<string, number> = { drifted: 0, unknown: 1, never: 2, inSync: 3 };

function byName(a: FleetStack, b: FleetStack): number {
  return a.project === b.project ? cmp(a.stack, b.stack) : cmp(a.project, b.project);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortFleet(stacks: readonly FleetStack[], sort: Sort): FleetStack[] {
  const list = [...stacks];
  const time = (iso: string | null | undefined) => (iso ? Date.parse(iso) : 0);
  list.sort((a, b) => {
    let d = 0;
    if (sort === 'attention') {
      d = RANK[a.drift?.state ?? 'never']! - RANK[b.drift?.state ?? 'never']!;
      // Among the drifted, the longest drifted first.
      if (!d && a.drift?.since && b.drift?.since) d = time(a.drift.since) - time(b.drift.since);
    } else if (sort === 'checked') d = time(a.drift?.checkedAt) - time(b.drift?.checkedAt);
    else if (sort === 'released') d = time(b.lastRelease?.createdAt) - time(a.lastRelease?.createdAt);
    return d || byName(a, b);
  });
  return list;
}

export function FleetPage() {
  const { data, error, reload } = useLoad(() => api.fleet(), [], { poll: true });
  const [sort, setSort] = useState<Sort>('attention');
  const [find, setFind] = useState('');
  const stacks = data?.stacks ?? [];
  const needle = find.trim().toLowerCase();
  const shown = sortFleet(
    needle ? stacks.filter((s) => `${s.project}/${s.stack}`.toLowerCase().includes(needle)) : stacks,
    sort,
  );
  const count = (state: string) => stacks.filter((s) => (s.drift?.state ?? 'never') === state).length;
  return (
    <section>
      <h1>Fleet</h1>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {!data && !error && <p>Loading…</p>}
      {data && (
        <p data-testid="fleet-counts">
          {stacks.length} {stacks.length === 1 ? 'stack' : 'stacks'}: {count('drifted')} drifted, {count('unknown')}{' '}
          unknown, {count('inSync')} in sync, {count('never')} not checked yet.
        </p>
      )}
      <div class="filters">
        <label>
          Sort by{' '}
          <select value={sort} onChange={(e) => setSort((e.target as HTMLSelectElement).value as Sort)}>
            {Object.entries(SORTS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Find <input type="search" value={find} onInput={(e) => setFind((e.target as HTMLInputElement).value)} />
        </label>
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </div>
      {data && stacks.length === 0 && <p>No stacks: no project is registered, or your token may read none.</p>}
      {data && stacks.length > 0 && (
        <table class="list" aria-label="Fleet">
          <thead>
            <tr>
              <th scope="col">Project</th>
              <th scope="col">Stack</th>
              <th scope="col">Last release</th>
              <th scope="col">Last drift check</th>
              <th scope="col">Drift</th>
              <th scope="col">Schedule</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((s) => (
              <FleetRow key={`${s.project}/${s.stack}`} s={s} />
            ))}
            {shown.length === 0 && (
              <tr>
                <td colSpan={6}>No stack matches “{find}”.</td>
              </tr>
            )}
          </tbody>
        </table>
      )}
    </section>
  );
}

function FleetRow(props: { s: FleetStack }) {
  const { s } = props;
  const r = s.lastRelease;
  const d = s.drift;
  return (
    <tr data-stack={`${s.project}/${s.stack}`} data-drift={d?.state ?? 'never'}>
      <td data-label="Project">{s.project}</td>
      <td data-label="Stack">
        <a href={href.stack(s.project, s.stack)}>{s.stack}</a>
      </td>
      <td data-label="Last release" data-testid="fleet-release">
        {r ? (
          <>
            <a href={href.release(s.project, s.stack, r.revision)}>#{r.revision}</a> {r.operation}{' '}
            <span class={`badge r-${r.phase}`}>{r.phase}</span>
            {r.rollbackOf !== null && `, rollback of #${r.rollbackOf}`}, {formatTime(r.createdAt)}
          </>
        ) : (
          'none yet'
        )}
      </td>
      <td data-label="Last drift check">{d ? <a href={href.run(d.runId)}>{formatTime(d.checkedAt)}</a> : '—'}</td>
      <td data-label="Drift">
        <a
          href={href.drift(s.project, s.stack)}
          aria-label={`Drift of ${s.project}/${s.stack}: ${driftStateText(d?.state ?? null, d?.drifted ?? 0, d?.unknown ?? 0)}`}
        >
          <DriftBadge state={d?.state ?? null} drifted={d?.drifted ?? 0} unknown={d?.unknown ?? 0} />
        </a>
        {d?.since && <span data-testid="drift-since"> since {formatTime(d.since)}</span>}
      </td>
      <td data-label="Schedule">
        {s.schedule
          ? `every ${formatEvery(s.schedule.everySeconds)}${s.schedule.nextAt ? `, next ${formatTime(s.schedule.nextAt)}` : ''}`
          : 'not scheduled'}
      </td>
    </tr>
  );
}
