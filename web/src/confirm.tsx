/**
 * A confirmation in place: it takes the focus when shown, Escape or "Back" dismisses it; with `typeToConfirm`, the
 * confirm button waits until that text is typed (destroying a stack asks for its name).
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

export function Confirm(props: {
  label: string;
  children: ComponentChildren;
  confirmText: string;
  danger?: boolean;
  typeToConfirm?: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [typed, setTyped] = useState('');
  useEffect(() => {
    box.current?.querySelector<HTMLElement>('input, button')?.focus();
  }, []);
  const ready = props.typeToConfirm === undefined || typed === props.typeToConfirm;
  return (
    <div
      class="confirm"
      role="alertdialog"
      aria-label={props.label}
      ref={box}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          props.onCancel();
        }
      }}
    >
      {props.children}
      {props.typeToConfirm !== undefined && (
        <label>
          Type <strong>{props.typeToConfirm}</strong> to confirm{' '}
          <input
            type="text"
            autocomplete="off"
            value={typed}
            onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
          />
        </label>
      )}
      <button type="button" class={props.danger ? 'danger' : ''} disabled={!ready} onClick={props.onConfirm}>
        {props.confirmText}
      </button>
      <button type="button" onClick={props.onCancel}>
        Back
      </button>
    </div>
  );
}
