/** Small display helpers. */
import type { Run } from '../../src/api/index';

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime())
    ? iso
    : d
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z');
}

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}

export function durationBetween(from: string | null | undefined, to: string | null | undefined): number | null {
  if (!from || !to) return null;
  return new Date(to).getTime() - new Date(from).getTime();
}

/** The location hash of a page. */
export const href = {
  stacks: () => '#/',
  stack: (p: string, s: string) => `#/stacks/${encodeURIComponent(p)}/${encodeURIComponent(s)}`,
  run: (id: string) => `#/runs/${encodeURIComponent(id)}`,
  /** A line (1-based) of a run's log. */
  runLine: (id: string, line: number) => `#/runs/${encodeURIComponent(id)}/L${line}`,
  release: (p: string, s: string, rev: number) => `${href.stack(p, s)}/releases/${rev}`,
  releaseDiff: (p: string, s: string, a: number, b: number) => `${href.stack(p, s)}/diff/${a}/${b}`,
  fleet: () => '#/fleet',
  drift: (p: string, s: string) => `${href.stack(p, s)}/drift`,
};

/** An interval in seconds as people say it: `30 s`, `5 min`, `6 h`, `1 d 12 h`. */
export function formatEvery(seconds: number): string {
  const units: [number, string][] = [
    [86_400, 'd'],
    [3600, 'h'],
    [60, 'min'],
    [1, 's'],
  ];
  const parts: string[] = [];
  let rest = Math.max(0, Math.round(seconds));
  for (const [size, name] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n} ${name}`);
    rest -= n * size;
  }
  return parts.slice(0, 2).join(' ') || '0 s';
}

/** A run's type in words: `rollback to #3`, `preview of a rollback to #3`, `drift check`, `apply`. */
export function runTypeText(run: Pick<Run, 'type' | 'options'>): string {
  const to = run.options.toRevision;
  const target = to === undefined ? '' : to === -1 ? ' to the revision before the latest' : ` to #${to}`;
  if (run.type === 'rollback') return `rollback${target}`;
  if (run.type === 'preview' && to !== undefined) return `preview of a rollback${target}`;
  if (run.type === 'drift') return 'drift check';
  return run.type;
}
