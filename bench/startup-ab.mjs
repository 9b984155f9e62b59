// A/B of the start-up against an older build: `kapps --help` and `kapps generate` of the sample with the build in
// dist/ and with another one (an older dist/ copied aside, with package.json and a node_modules link beside it),
// interleaved round by round with `node -e 0`, so that the machine's load weighs on all alike. Figures: medians with
// min–max of wall and CPU time (user + system), and each as a ratio to `node -e 0` of the same rounds.
//
//   node bench/startup-ab.mjs --old /path/to/old/dist/bin/kapps.js [--runs 15] [--cli dist/bin/kapps.js]
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, nodeTimer } from './time-process.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const opts = { runs: 15, cli: path.join(root, 'dist', 'bin', 'kapps.js'), old: undefined };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--runs') opts.runs = Number(argv[++i]);
  else if (argv[i] === '--cli') opts.cli = path.resolve(argv[++i]);
  else if (argv[i] === '--old') opts.old = path.resolve(argv[++i]);
  else throw new Error(`unknown argument ${argv[i]}`);
}
if (!opts.old) throw new Error('--old <kapps.js of the build to compare with> is required');
for (const f of [opts.cli, opts.old]) if (!existsSync(f)) throw new Error(`${f} is missing`);

const sample = [path.join(root, 'samples', 'demo', 'stacks.yaml'), 'local'];
const cases = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'old --help', args: [opts.old, '--help'] },
  { name: 'new --help', args: [opts.cli, '--help'] },
  { name: 'old generate', args: [opts.old, 'generate', ...sample] },
  { name: 'new generate', args: [opts.cli, 'generate', ...sample] },
];

const work = mkdtempSync(path.join(os.tmpdir(), 'kapps-bench-startup-ab-'));
const timer = nodeTimer(work);
const times = cases.map(() => []);
const loads = [os.loadavg()];
try {
  for (const c of cases) await timer.run(c.args, { cwd: root, env: { ...process.env, NO_COLOR: '1' } });
  for (let r = 0; r < opts.runs; r++) {
    for (const [i, c] of cases.entries()) {
      times[i].push(await timer.run(c.args, { cwd: root, env: { ...process.env, NO_COLOR: '1' } }));
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
loads.push(os.loadavg());
const fmt = (xs) => `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
const base = { wall: median(times[0].map((t) => t.wall)), cpu: median(times[0].map((t) => t.cpu)) };
process.stdout.write(`median (min–max) of ${opts.runs} interleaved rounds, ms; ratio = median / median of node -e 0\n`);
for (const [i, c] of cases.entries()) {
  const wall = times[i].map((t) => t.wall);
  const cpu = times[i].map((t) => t.cpu);
  const ratio =
    i === 0 ? '' : `  ${(median(wall) / base.wall).toFixed(2)}× wall, ${(median(cpu) / base.cpu).toFixed(2)}× cpu`;
  process.stdout.write(`  ${c.name.padEnd(14)} wall ${fmt(wall).padEnd(16)} cpu ${fmt(cpu).padEnd(16)}${ratio}\n`);
}
const load = (l) => l.map((x) => x.toFixed(2)).join(' ');
process.stdout.write(`load (1/5/15 min): ${load(loads[0])} before, ${load(loads[1])} after\n`);
