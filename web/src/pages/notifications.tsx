/**
 * A run's outbound notifications (`GET /runs/{id}/notifications`): each delivery's event, receiver and state, and
 * every attempt's answer. Shown only when the run's project sends any; followed while one is pending.
 */
import { api, type Run } from '../api';
import { formatTime } from '../format';
import { useLoad } from '../use-load';

export function Notifications(props: { run: Run }) {
  const { run } = props;
  const { data } = useLoad(() => api.notifications(run.id), [run.id, run.status], { poll: true });
  const deliveries = data?.notifications ?? [];
  if (deliveries.length === 0) return null;
  return (
    <section aria-labelledby="notifications-h" data-testid="notifications">
      <h2 id="notifications-h">Notifications</h2>
      <table>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Receiver</th>
            <th scope="col">State</th>
            <th scope="col">Attempts</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => (
            <tr key={d.id}>
              <td>{d.event}</td>
              <td class="mono">{d.url}</td>
              <td>
                <span class={`badge n-${d.state}`}>{d.state}</span>
                {d.state === 'pending' && d.nextAttemptAt && ` (next ${formatTime(d.nextAttemptAt)})`}
              </td>
              <td>
                <ol class="attempts">
                  {d.attempts.map((a, i) => (
                    <li key={i} title={a.body}>
                      {formatTime(a.at)}: {a.status !== null ? `HTTP ${a.status}` : (a.error ?? 'no answer')} in{' '}
                      {a.durationMs} ms
                    </li>
                  ))}
                </ol>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
