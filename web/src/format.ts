/** Small display helpers. */
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
};
