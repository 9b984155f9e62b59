#!/usr/bin/env node
// A step that prints many lines: `kapps install -y` of a one-kapp stack whose step is `seq 1 N` (2,000,000 lines by
// default, about 15 MB), recorded with its log (file store, fresh KAPPS_HOME each round), beside the baseline of a
// bare Node process that spawns the same command and reads all its output, split into lines. Both are run in turn,
// round after round. Figures: the median wall time of each (min–max), kapps' median CPU time and peak RSS, the
// ratio kapps / baseline, and what kapps costs a line above the baseline. No goal: the row shows what a verbose step
// costs (every line is cut out, redacted, shown and stored in the release's log as JSON).
//
//   npm run build && node bench/output.mjs [--lines 2000000] [--rounds 3] [--cli dist/bin/kapps.js]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { targetRow } from './targets.mjs';
import { median, nodeTimer } from './time-process.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
let cli = path.join(here, '..', 'dist', 'bin', 'kapps.js');
const opts = { lines: 2_000_000, rounds: 3 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--lines') opts.lines = Number(argv[++i]);
  else if (a === '--rounds') opts.rounds = Number(argv[++i]);
  else if (a === '--cli') cli = path.resolve(argv[++i]);
  else throw new Error(`unknown argument ${a}`);
}

const work = mkdtempSync(path.join(os.tmpdir(), 'kapps-bench-output-'));
const timer = nodeTimer(work);
const stack = path.join(work, 'stack');
mkdirSync(path.join(stack, 'manifests'), { recursive: true });
writeFileSync(
  path.join(stack, 'stacks.yaml'),
  'bench:\n  provider: local\n  manifests:\n    - uri: manifests/m.yaml\n',
);
writeFileSync(
  path.join(stack, 'manifests', 'm.yaml'),
  [
    'kapps:',
    '  - id: printer',
    '    run_units:',
    '      step:',
    '        apply_install:',
    '          - name: print',
    '            command: seq',
    `            args: 1 ${opts.lines}`,
    '',
  ].join('\n'),
);
// The baseline: spawn the same command, read every chunk and split it into lines (what any reader of a step's
// output has to do), count them.
const bare = path.join(work, 'bare.mjs');
writeFileSync(
  bare,
  [
    "import { spawn } from 'node:child_process';",
    "const child = spawn('seq', ['1', process.argv[2]], { stdio: ['ignore', 'pipe', 'inherit'] });",
    "let lines = 0; let rest = '';",
    "child.stdout.setEncoding('utf8').on('data', (c) => { const parts = (rest + c).split('\\n'); rest = parts.pop(); lines += parts.length; });",
    "child.on('close', (code) => { if (code !== 0 || lines !== Number(process.argv[2])) { console.error('bare loop: exit', code, 'lines', lines); process.exit(1); } });",
    '',
  ].join('\n'),
);

const fmt = (ms) => `${(ms / 1000).toFixed(2)} s`;
const range = (xs) => `${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}`;
const runs = { kapps: [], bare: [] };
try {
  for (let round = 0; round < opts.rounds; round++) {
    const home = path.join(work, `home-${round}`);
    const env = { ...process.env, KAPPS_HOME: home, NO_COLOR: '1' };
    runs.kapps.push(
      await timer.run([cli, 'install', '-y', 'stacks.yaml', 'bench', '--reporter', 'plain'], { cwd: stack, env }),
    );
    runs.bare.push(await timer.run([bare, String(opts.lines)], { cwd: stack }));
    rmSync(home, { recursive: true, force: true });
  }
  const k = median(runs.kapps.map((r) => r.wall));
  const b = median(runs.bare.map((r) => r.wall));
  const perLine = ((k - b) * 1000) / opts.lines;
  process.stdout.write(
    `a step printing ${opts.lines.toLocaleString('en')} lines (${opts.rounds} rounds):\n` +
      `  kapps install -y: ${fmt(k)} (${range(runs.kapps.map((r) => r.wall))}), cpu ${fmt(median(runs.kapps.map((r) => r.cpu)))}, ` +
      `peak RSS ${median(runs.kapps.map((r) => r.maxRssMb)).toFixed(0)} MB\n` +
      `  bare Node reader: ${fmt(b)} (${range(runs.bare.map((r) => r.wall))})\n` +
      `  kapps / bare: ${(k / b).toFixed(2)}×, ${perLine.toFixed(2)} µs a line above it\n`,
  );
  targetRow({
    row: `a step printing ${opts.lines.toLocaleString('en')} lines, recorded`,
    ratio: k / b,
    figure: `${fmt(k)}, ${perLine.toFixed(2)} µs a line above the baseline`,
    baseline: `a bare Node reader of the same output ${fmt(b)}`,
    goal: '— (shown, no goal)',
  });
} finally {
  rmSync(work, { recursive: true, force: true });
}
