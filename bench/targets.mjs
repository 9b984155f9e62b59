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
 * One row: `{ row, figure, baseline, ratio, goal, ok, goalRatio?, floors?, unit? }`, all text but `ratio` (a number,
 * or undefined when the row has no baseline), `ok` (whether the goal is met), `goalRatio` (the goal as a number: a
 * ratio to the same baseline, or an absolute figure in `unit`, e.g. ' ms') and `floors` (`[name, value]` pairs: what
 * other programs reach on the same workload in the same run, such as GNU make or a bare Node loop, or what the
 * machine takes for the work a row cannot skip). A missed row whose goal is below one of its floors says so: the goal
 * asks for less than that reaches on this machine. Printed at once, and kept for the table at the end.
 */
export function targetRow(row) {
  const r = { ...row, load: load() };
  process.stdout.write(`  target ${formatRow(r)}\n`);
  const file = process.env.KAPPS_BENCH_TARGETS;
  if (file) appendFileSync(file, `${JSON.stringify(r)}\n`);
}

function formatRow(r) {
  const ratio = r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}× `;
  return `${r.row}: ${ratio}${r.figure}; baseline ${r.baseline}; goal ${r.goal} ${verdict(r)}; load ${r.load}`;
}

/**
 * `ok`, `MISSED`, or `MISSED (the goal is below make -j 1.20×, …)` when floors measured in the same run are above the
 * goal (a floor that rounds to the goal is written with one more digit: 1.154×).
 */
function verdict(r) {
  if (r.ok === undefined) return '';
  if (r.ok) return 'ok';
  const above = (r.floors ?? []).filter(([, value]) => r.goalRatio !== undefined && value > r.goalRatio);
  if (above.length === 0) return 'MISSED';
  const unit = r.unit ?? '×';
  const digits = unit === '×' ? 2 : 1;
  const figure = (value) => {
    const shown = Number(value.toFixed(digits)) > r.goalRatio ? value.toFixed(digits) : value.toFixed(digits + 1);
    return `${shown}${unit}`;
  };
  return `MISSED (the goal is below ${above.map(([name, value]) => `${name} ${figure(value)}`).join(', ')})`;
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
    verdict(r),
    r.load,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => String(b[i]).length)));
  for (const line of [head, widths.map((w) => '-'.repeat(w)), ...body]) {
    process.stdout.write(`| ${line.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |\n`);
  }
}
