// The rows of the speed targets (docs/running.md#how-to-measure): each bench that measures one says it with
// `targetRow` — the figure, its ratio against the baseline measured in the same run, the baseline's own figure,
// the goal, and the machine's load (os.loadavg) when it was measured. `npm run bench` (bench/run.mjs) collects
// them through $KAPPS_BENCH_TARGETS and prints them together at the end with `printTargets`.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import os from 'node:os';

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/**
 * One row: `{ row, figure, baseline, ratio, goal, ok }`, all text but `ratio` (a number, or undefined when the
 * row has no baseline) and `ok` (whether the goal is met). Printed at once, and kept for the table at the end.
 */
export function targetRow(row) {
  const r = { ...row, load: load() };
  process.stdout.write(`  target ${formatRow(r)}\n`);
  const file = process.env.KAPPS_BENCH_TARGETS;
  if (file) appendFileSync(file, `${JSON.stringify(r)}\n`);
}

function formatRow(r) {
  const ratio = r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}× `;
  const verdict = r.ok === undefined ? '' : r.ok ? 'ok' : 'MISSED';
  return `${r.row}: ${ratio}${r.figure}; baseline ${r.baseline}; goal ${r.goal} ${verdict}; load ${r.load}`;
}

/** The table of every row collected in `file`. */
export function printTargets(file) {
  if (!existsSync(file)) return;
  const rows = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  if (rows.length === 0) return;
  process.stdout.write(
    `\n=== targets (ratios against baselines measured in the same run; load = 1/5/15-min average)\n`,
  );
  const head = ['row', 'ratio', 'figure', 'baseline', 'goal', '', 'load'];
  const body = rows.map((r) => [
    r.row,
    r.ratio === undefined ? '—' : `${r.ratio.toFixed(2)}×`,
    r.figure,
    r.baseline,
    r.goal,
    r.ok === undefined ? '' : r.ok ? 'ok' : 'MISSED',
    r.load,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => String(b[i]).length)));
  for (const line of [head, widths.map((w) => '-'.repeat(w)), ...body]) {
    process.stdout.write(`| ${line.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |\n`);
  }
}
