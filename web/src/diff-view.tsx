/** Two texts side by side, line by line, with removed lines marked on the left and added ones on the right. */
import { diffLines } from 'diff';

interface Row {
  left: string | null;
  right: string | null;
  kind: 'same' | 'removed' | 'added' | 'changed';
}

export function sideBySideRows(before: string, after: string): Row[] {
  const rows: Row[] = [];
  const parts = diffLines(before, after);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const lines = splitLines(part.value);
    if (!part.added && !part.removed) {
      for (const l of lines) rows.push({ left: l, right: l, kind: 'same' });
    } else if (part.removed) {
      const next = parts[i + 1];
      const added = next?.added ? splitLines(next.value) : [];
      if (next?.added) i++;
      const n = Math.max(lines.length, added.length);
      for (let j = 0; j < n; j++) {
        const l = lines[j] ?? null;
        const r = added[j] ?? null;
        rows.push({ left: l, right: r, kind: l !== null && r !== null ? 'changed' : l !== null ? 'removed' : 'added' });
      }
    } else {
      for (const l of lines) rows.push({ left: null, right: l, kind: 'added' });
    }
  }
  return rows;
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

const MARK = { same: ' ', removed: '−', added: '+', changed: '~' } as const;

export function SideBySide(props: {
  before: string;
  after: string;
  beforeTitle: string;
  afterTitle: string;
  label: string;
}) {
  const rows = sideBySideRows(props.before, props.after);
  const changed = rows.filter((r) => r.kind !== 'same').length;
  return (
    <table class="side-by-side" aria-label={props.label}>
      <caption>
        {props.label}: {changed === 0 ? 'no differences' : `${changed} line${changed === 1 ? '' : 's'} differ`}
      </caption>
      <thead>
        <tr>
          <th scope="col">{props.beforeTitle}</th>
          <th scope="col">{props.afterTitle}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r, i) => (
          <tr key={i} class={`d-${r.kind}`}>
            <td class={r.left === null ? 'empty' : r.kind === 'same' ? '' : 'del'} data-side="before">
              {r.left !== null && (
                <>
                  <span class="mark" aria-label={r.kind === 'same' ? undefined : 'removed'}>
                    {r.kind === 'same' ? ' ' : MARK.removed}
                  </span>
                  {r.left}
                </>
              )}
            </td>
            <td class={r.right === null ? 'empty' : r.kind === 'same' ? '' : 'ins'} data-side="after">
              {r.right !== null && (
                <>
                  <span class="mark" aria-label={r.kind === 'same' ? undefined : 'added'}>
                    {r.kind === 'same' ? ' ' : MARK.added}
                  </span>
                  {r.right}
                </>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A value as the side-by-side views show it: stable, indented JSON ("(none)" when absent). */
export function asText(value: unknown): string {
  return value === null || value === undefined ? '(none)\n' : `${JSON.stringify(value, null, 2)}\n`;
}
