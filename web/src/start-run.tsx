/**
 * "Start run…": a run of any type with the API's options (kapps to include and exclude, refresh, keep going,
 * changed only; for a project from git, the ref to run at). It takes the focus, Escape closes it; a destroy waits
 * for the stack's name. `refError` is the server's word on the ref, shown next to its field.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { RunType, SubmitRun } from '../../src/api/index';
import type { ProjectRepo } from './commit';

export function StartRunDialog(props: {
  project: string;
  stack: string;
  types: readonly RunType[];
  /** The project's repository; null: a stack file on the server (no ref field). */
  repo: ProjectRepo | null;
  refError?: string | null;
  onStart: (body: SubmitRun) => void;
  onClose: () => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [type, setType] = useState<RunType>(props.types.includes('preview') ? 'preview' : props.types[0]!);
  const [include, setInclude] = useState('');
  const [exclude, setExclude] = useState('');
  const [refresh, setRefresh] = useState(false);
  const [keepGoing, setKeepGoing] = useState(false);
  const [changedOnly, setChangedOnly] = useState(false);
  const [typed, setTyped] = useState('');
  const [ref, setRef] = useState('');
  useEffect(() => box.current?.querySelector<HTMLElement>('select')?.focus(), []);
  const selectors = (text: string) => text.split(/[\s,]+/).filter(Boolean);
  const ready = type !== 'destroy' || typed === props.stack;
  return (
    <div
      class="confirm start-run"
      role="dialog"
      aria-label="Start a run"
      ref={box}
      onKeyDown={(e) => {
        if (e.key === 'Escape') props.onClose();
      }}
    >
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!ready) return;
          props.onStart({
            type,
            project: props.project,
            stack: props.stack,
            ...(selectors(include).length ? { include: selectors(include) } : {}),
            ...(selectors(exclude).length ? { exclude: selectors(exclude) } : {}),
            ...(type === 'preview' && refresh ? { refresh: true } : {}),
            ...(keepGoing ? { keepGoing: true } : {}),
            ...(changedOnly ? { changedOnly: true } : {}),
            ...(props.repo && ref.trim() ? { ref: ref.trim() } : {}),
          });
        }}
      >
        <label>
          Type{' '}
          <select value={type} onChange={(e) => setType((e.target as HTMLSelectElement).value as RunType)}>
            {props.types.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        {props.repo && (
          <label>
            Ref (branch, tag or commit){' '}
            <input
              type="text"
              autocomplete="off"
              spellcheck={false}
              placeholder={props.repo.branch ?? 'default branch'}
              value={ref}
              aria-invalid={props.refError ? true : undefined}
              aria-describedby={props.refError ? 'start-run-ref-error' : undefined}
              onInput={(e) => setRef((e.target as HTMLInputElement).value)}
            />
            {props.refError && (
              <span id="start-run-ref-error" role="alert" class="error field-error">
                {props.refError}
              </span>
            )}
          </label>
        )}
        <label>
          Include kapps (<code>manifest:kapp</code> or <code>manifest:*</code>, separated by spaces){' '}
          <input type="text" value={include} onInput={(e) => setInclude((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          Exclude kapps{' '}
          <input type="text" value={exclude} onInput={(e) => setExclude((e.target as HTMLInputElement).value)} />
        </label>
        {type === 'preview' && (
          <label>
            <input
              type="checkbox"
              checked={refresh}
              onChange={(e) => setRefresh((e.target as HTMLInputElement).checked)}
            />{' '}
            Refresh (read the live outputs of installed kapps)
          </label>
        )}
        <label>
          <input
            type="checkbox"
            checked={keepGoing}
            onChange={(e) => setKeepGoing((e.target as HTMLInputElement).checked)}
          />{' '}
          Keep going after a failure
        </label>
        <label>
          <input
            type="checkbox"
            checked={changedOnly}
            onChange={(e) => setChangedOnly((e.target as HTMLInputElement).checked)}
          />{' '}
          Changed kapps only
        </label>
        {type === 'destroy' && (
          <label>
            Type <strong>{props.stack}</strong> to confirm{' '}
            <input
              type="text"
              autocomplete="off"
              value={typed}
              onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
            />
          </label>
        )}
        <button type="submit" class={type === 'destroy' ? 'danger' : ''} disabled={!ready}>
          Start {type}
        </button>
        <button type="button" onClick={props.onClose}>
          Back
        </button>
      </form>
    </div>
  );
}
