/**
 * A preview document as the page shows it: what it compared with and how many kapps per action, the table of actions
 * (changed only on demand) and each changed kapp's changes. A preview run's result and the preview a run waiting for
 * approval is bound to (`GET /runs/{id}/preview`) both show it.
 */
import { useState } from 'preact/hooks';
import { ChangeList, KappChanges, OPEN_AT_FIRST } from './change-list';
import { asText } from './diff-view';

export interface PreviewKapp {
  id: string;
  action: string;
  from: unknown;
  to: unknown;
  changes: { path: string[]; from: unknown; to: unknown }[];
  drift: { path: string[]; from: unknown; to: unknown }[];
  reason: string | null;
}
export interface PreviewDocument {
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

/** "Compared with release #3: 2 Update, 3 UnChanged." */
export function PreviewCounts(props: { doc: PreviewDocument }) {
  const { doc } = props;
  const counts = new Map<string, number>();
  for (const k of doc.kapps) counts.set(k.action, (counts.get(k.action) ?? 0) + 1);
  return (
    <p data-testid="preview-counts">
      Compared with{' '}
      {doc.basedOnRevision === null ? 'no release (nothing installed yet)' : `release #${doc.basedOnRevision}`}:{' '}
      {[...counts].map(([a, n]) => `${n} ${a}`).join(', ') || 'no kapps'}.
    </p>
  );
}

/** The table of actions and the changes of each changed kapp. */
export function PreviewChanges(props: { doc: PreviewDocument }) {
  const { doc } = props;
  const changed = doc.kapps.filter((k) => k.action !== 'UnChanged');
  // Many kapps: the table lists the changed ones only, unless asked for all.
  const [changedOnly, setChangedOnly] = useState(doc.kapps.length > 20);
  const rows = changedOnly ? changed : doc.kapps;
  return (
    <>
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
      {changed.length === 0 && <p>No kapp changes.</p>}
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
    </>
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
