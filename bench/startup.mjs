#!/usr/bin/env node
// Start-up: `kapps --help` and `kapps generate` of the sample (samples/demo, stack `local`) against `node -e 0`,
// interleaved in one run so that the machine's load weighs on all three alike. Figures: the median wall time of
// each, each command's time beyond Node's own start (median − median of `node -e 0`), and the median CPU time (user +
// system, the steadier figure on a busy machine). Goals (wall): --help ≤ 100 ms, generate ≤ 200 ms.
//
//   npm run build && node bench/startup.mjs [--runs 15] [--cli dist/bin/kapps.js]
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { targetRow } from './targets.mjs';
import { median, nodeTimer } from './time-process.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const opts = { runs: 15, cli: path.join(root, 'dist', 'bin', 'kapps.js') };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--runs') opts.runs = Number(argv[++i]);
  else if (argv[i] === '--cli') opts.cli = path.resolve(argv[++i]);
  else throw new Error(`unknown argument ${argv[i]}`);
}
if (!existsSync(opts.cli)) throw new Error(`build first (npm run build): ${opts.cli} is missing`);

const cases = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'kapps --help', args: [opts.cli, '--help'], goal: 100, ratioGoal: 1.5 },
  {
    name: 'kapps generate (sample)',
    args: [opts.cli, 'generate', path.join(root, 'samples', 'demo', 'stacks.yaml'), 'local'],
    goal: 200,
    ratioGoal: 3,
  },
];

const work = mkdtempSync(path.join(os.tmpdir(), 'kapps-bench-startup-'));
const timer = nodeTimer(work);

/** One run: { wall, cpu } in ms. */
function timeOnce(args) {
  return timer.run(args, { cwd: root, env: { ...process.env, NO_COLOR: '1' } });
}

const times = cases.map(() => []);
try {
  // One warm-up round (file cache), not counted; then the cases in turn, round after round.
  for (const c of cases) await timeOnce(c.args);
  for (let r = 0; r < opts.runs; r++) {
    for (const [i, c] of cases.entries()) times[i].push(await timeOnce(c.args));
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
const base = median(times[0].map((t) => t.wall));
const baseCpu = median(times[0].map((t) => t.cpu));
process.stdout.write(`${path.relative(root, opts.cli)}, median of ${opts.runs} runs each:\n`);
for (const [i, c] of cases.entries()) {
  const m = median(times[i].map((t) => t.wall));
  const cpu = median(times[i].map((t) => t.cpu));
  const extra = i === 0 ? '' : ` (${(m / base).toFixed(2)}× node -e 0, +${(m - base).toFixed(0)} ms)`;
  const extraCpu = i === 0 ? '' : ` (${(cpu / baseCpu).toFixed(2)}×)`;
  const goal = c.goal ? `; goal ≤ ${c.goal} ms: ${m <= c.goal ? 'ok' : 'MISSED'}` : '';
  process.stdout.write(
    `  ${c.name.padEnd(24)} wall ${m.toFixed(0).padStart(5)} ms${extra}, cpu ${cpu.toFixed(0)} ms${extraCpu}${goal}\n`,
  );
}
for (const [i, c] of cases.entries()) {
  if (!c.ratioGoal) continue;
  const walls = times[i].map((t) => t.wall);
  const m = median(walls);
  targetRow({
    row: c.name,
    ratio: m / base,
    figure: `${m.toFixed(0)} ms (${Math.min(...walls).toFixed(0)}–${Math.max(...walls).toFixed(0)})`,
    baseline: `node -e 0 ${base.toFixed(0)} ms`,
    goal: `≤ ${c.ratioGoal}× node -e 0`,
    ok: m / base <= c.ratioGoal,
  });
}
