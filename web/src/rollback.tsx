/**
 * "Roll back to this revision" (`apply` role and up, on a succeeded install): it asks whether to prune (and force),
 * then starts the rollback's preview (`type: preview`, `toRevision`, `prune`, `force`: the rollback that applies it
 * takes them from it) and opens it; the preview's page then offers "Apply this rollback" (result.tsx). Nothing
 * changes before that second step.
 */
import { useState } from 'preact/hooks';
import { api, describeError, roleAtLeast, type Whoami } from './api';
import { Confirm } from './confirm';
import { href } from './format';

/** Whether a release may be the target of a rollback: a succeeded install. */
export function canRollBackTo(release: { operation: string; phase: string }): boolean {
  return release.operation === 'install' && release.phase === 'succeeded';
}

export function RollbackButton(props: {
  project: string;
  stack: string;
  revision: number;
  who: Whoami;
  /** A shorter label, in a table row: "Roll back to #N". */
  compact?: boolean;
}) {
  const { project, stack, revision } = props;
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [asking, setAsking] = useState(false);
  const [prune, setPrune] = useState(false);
  const [force, setForce] = useState(false);
  if (!roleAtLeast(props.who.role, 'apply')) return null;
  const start = async () => {
    setError(null);
    setBusy(true);
    try {
      const run = await api.submit({
        type: 'preview',
        project,
        stack,
        toRevision: revision,
        ...(prune ? { prune: true } : {}),
        ...(force ? { force: true } : {}),
      });
      location.hash = href.run(run.id);
    } catch (e) {
      setError(describeError(e));
      setBusy(false);
    }
  };
  return (
    <span class="rollback">
      <button type="button" disabled={busy} aria-expanded={asking} onClick={() => setAsking(!asking)}>
        {props.compact ? `Roll back to #${revision}` : 'Roll back to this revision'}
      </button>
      {asking && (
        <Confirm
          label={`Roll back to #${revision}`}
          confirmText="Preview the rollback"
          onConfirm={() => {
            setAsking(false);
            void start();
          }}
          onCancel={() => setAsking(false)}
        >
          <p>
            Roll {project}/{stack} back to the desired state of release #{revision}: its project commit, kapp sources
            and variables. First a preview shows what would change; nothing changes until you apply it.
          </p>
          <label>
            <input type="checkbox" checked={prune} onChange={(e) => setPrune((e.target as HTMLInputElement).checked)} />{' '}
            Prune: delete the kapps installed now that #{revision} did not have (otherwise they stay installed)
          </label>
          <label>
            <input type="checkbox" checked={force} onChange={(e) => setForce((e.target as HTMLInputElement).checked)} />{' '}
            Force: when #{revision}'s commit cannot be checked out (its checkout had local changes, or the commit is
            gone), use its recorded sources and variables on top of today's checkout
          </label>
        </Confirm>
      )}
      {error && (
        <span role="alert" class="error">
          {error}
        </span>
      )}
    </span>
  );
}
