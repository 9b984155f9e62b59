/**
 * "Roll back to this revision" (`apply` role and up, on a succeeded install): it starts the rollback's preview
 * (`type: preview`, `toRevision`) and opens it; the preview's page then offers "Apply this rollback" (result.tsx).
 * Nothing changes before that second step.
 */
import { useState } from 'preact/hooks';
import { api, describeError, roleAtLeast, type Whoami } from './api';
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
  if (!roleAtLeast(props.who.role, 'apply')) return null;
  const start = async () => {
    setError(null);
    setBusy(true);
    try {
      const run = await api.submit({ type: 'preview', project, stack, toRevision: revision });
      location.hash = href.run(run.id);
    } catch (e) {
      setError(describeError(e));
      setBusy(false);
    }
  };
  return (
    <span class="rollback">
      <button
        type="button"
        disabled={busy}
        title="Preview a rollback to this revision first; nothing changes until you apply it"
        onClick={() => void start()}
      >
        {props.compact ? `Roll back to #${revision}` : 'Roll back to this revision'}
      </button>
      {error && (
        <span role="alert" class="error">
          {error}
        </span>
      )}
    </span>
  );
}
