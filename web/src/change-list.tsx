/**
 * A kapp's changes as a short list, `path: old → new`, rendered only when its section is opened; the full spec
 * side by side only on demand. Previews and release diffs of hundreds of kapps stay a page of summaries.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { SideBySide } from './diff-view';

export interface Change {
  path: (string | number)[];
  from: unknown;
  to: unknown;
}

/** How many kapps' sections are open at first; the rest are collapsed (and not rendered until opened). */
export const OPEN_AT_FIRST = 5;
const VALUE_CHARS = 160;

/** The leaves that differ between two JSON values, `path: from → to` (lists compared item by item). */
export function diffValues(from: unknown, to: unknown, path: (string | number)[] = [], out: Change[] = []): Change[] {
  if (out.length >= 500) return out;
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (Array.isArray(from) && Array.isArray(to)) {
    for (let i = 0; i < Math.max(from.length, to.length); i++) diffValues(from[i], to[i], [...path, i], out);
  } else if (isObj(from) && isObj(to)) {
    for (const k of new Set([...Object.keys(from), ...Object.keys(to)])) diffValues(from[k], to[k], [...path, k], out);
  } else if (JSON.stringify(from) !== JSON.stringify(to)) {
    out.push({ path, from, to });
  }
  return out;
}

/** A value in one line, cut when long. */
export function shortValue(v: unknown): string {
  if (v === undefined) return '(none)';
  const text = JSON.stringify(v) ?? typeof v;
  return text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS - 1)}…` : text;
}

export function ChangeList(props: { changes: readonly Change[]; label: string; kind?: string }) {
  if (!props.changes.length) return null;
  return (
    <ul class="changes" aria-label={props.label}>
      {props.changes.map((c, i) => (
        <li key={i} data-path={c.path.join('.')}>
          {props.kind && <span class="change-kind">{props.kind} </span>}
          <code class="path">{c.path.join('.') || '(whole)'}</code>: <span class="old">{shortValue(c.from)}</span>{' '}
          <span aria-label="becomes">→</span> <span class="new">{shortValue(c.to)}</span>
        </li>
      ))}
    </ul>
  );
}

/**
 * One kapp's section: its summary line always, its body (the change list, then the full spec on demand) only
 * once opened.
 */
export function KappChanges(props: {
  id: string;
  summary: ComponentChildren;
  open: boolean;
  body: () => ComponentChildren;
  full: () => { before: string; after: string; beforeTitle: string; afterTitle: string; label: string };
}) {
  const [open, setOpen] = useState(props.open);
  const [full, setFull] = useState(false);
  return (
    <details class="kapp-diff" data-kapp={props.id} open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>{props.summary}</summary>
      {open && (
        <>
          {props.body()}
          <button type="button" aria-expanded={full} onClick={() => setFull(!full)}>
            {full ? 'Hide the full spec' : 'Full spec side by side'}
          </button>
          {full && <SideBySide {...props.full()} />}
        </>
      )}
    </details>
  );
}
