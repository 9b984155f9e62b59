#!/usr/bin/env node
// `kapps preview` of a 1,000-kapp stack against its last release, beside `kapps generate` of the same stack: the
// stack is the W3 shape (the shared generator's seed 3, fan-in 3, `true` as every step) over 100 manifests, installed
// once (`install -y`, file release store in a fresh KAPPS_HOME), then each command is run in turn, round after round,
// so that the machine's load weighs on both alike. Figures: the median wall time of each (min–max), the median CPU
// time (user + system), and the ratio preview / generate. Goal: ≤ 1.5 × generate.
//
//   npm run build && node bench/preview.mjs [--kapps 1000] [--manifests 100] [--rounds 7] [--cli dist/bin/kapps.js]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeStack } from './gen-stack.mjs';
import { targetRow } from './targets.mjs';
import { median, nodeTimer } from './time-process.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
let cli = path.join(here, '..', 'dist', 'bin', 'kapps.js');
const genDag = process.env.KAPPS_GEN_DAG ?? path.join(here, '..', '..', 'shared', 'bench', 'gen-dag.mjs');

const opts = { kapps: 1000, manifests: 100, rounds: 7 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--kapps') opts.kapps = Number(argv[++i]);
  else if (a === '--manifests') opts.manifests = Number(argv[++i]);
  else if (a === '--rounds') opts.rounds = Number(argv[++i]);
  else if (a === '--cli') cli = path.resolve(argv[++i]);
  else throw new Error(`unknown argument ${a}`);
}
for (const [what, file] of [
  ['the built CLI (run `npm run build`)', cli],
  ['the DAG generator (set KAPPS_GEN_DAG)', genDag],
]) {
  if (!existsSync(file)) throw new Error(`${what} is missing: ${file}`);
}

const work = mkdtempSync(path.join(os.tmpdir(), 'kapps-bench-preview-'));
const timer = nodeTimer(work);
const home = path.join(work, 'home');
const env = { ...process.env, KAPPS_HOME: home, NO_COLOR: '1' };

/** One run of the CLI in `dir`: { wall, cpu } in ms and its standard output; a non-zero exit is an error. */
function runOnce(dir, args, okCodes = [0]) {
  return timer.run([cli, ...args], { cwd: dir, env, okCodes });
}

try {
  const dagDir = path.join(work, 'dag');
  const gen = spawnSync(
    process.execPath,
    [genDag, '--nodes', String(opts.kapps), '--seed', '3', '--fanin', '3', '--cmd', 'true'].concat([
      '--out',
      dagDir,
      '--formats',
      'json',
      '--quiet',
    ]),
    { encoding: 'utf8' },
  );
  if (gen.status !== 0) throw new Error(`gen-dag failed:\n${gen.stderr}`);
  const dir = path.join(work, 'stack');
  const shape = writeStack({ dag: path.join(dagDir, 'dag.json'), out: dir, manifests: opts.manifests, workers: 8 });
  await runOnce(dir, ['install', '-y', 'stacks.yaml', 'bench', '--reporter', 'plain', '--no-validate']);
  const commands = {
    generate: ['generate', 'stacks.yaml', 'bench', '-o', 'json'],
    preview: ['preview', 'stacks.yaml', 'bench', '-o', 'json'],
  };
  // A first run of each checks what it says (nothing changed since the install) and warms the file cache.
  const first = JSON.parse((await runOnce(dir, commands.preview)).stdout);
  const unchanged = first.kapps.filter((k) => k.action === 'UnChanged').length;
  if (first.kapps.length !== shape.kapps || unchanged !== shape.kapps || first.hasChanges) {
    throw new Error(`expected ${shape.kapps} kapps UnChanged, got ${unchanged} of ${first.kapps.length}`);
  }
  await runOnce(dir, commands.generate);
  const times = { generate: [], preview: [] };
  for (let r = 0; r < opts.rounds; r++) {
    for (const [name, args] of Object.entries(commands)) times[name].push(await runOnce(dir, args));
  }
  const stat = (name) => {
    const walls = times[name].map((t) => t.wall);
    return {
      wall: median(walls),
      min: Math.min(...walls),
      max: Math.max(...walls),
      cpu: median(times[name].map((t) => t.cpu)),
    };
  };
  const g = stat('generate');
  const p = stat('preview');
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  process.stdout.write(
    `${shape.kapps} kapps in ${shape.manifests} manifests, installed; median of ${opts.rounds} rounds, load ${load}\n` +
      `  generate -o json  wall ${g.wall.toFixed(0)} ms (${g.min.toFixed(0)}–${g.max.toFixed(0)}), cpu ${g.cpu.toFixed(0)} ms\n` +
      `  preview -o json   wall ${p.wall.toFixed(0)} ms (${p.min.toFixed(0)}–${p.max.toFixed(0)}), cpu ${p.cpu.toFixed(0)} ms` +
      ` (${(p.wall / g.wall).toFixed(2)}× generate; cpu ${(p.cpu / g.cpu).toFixed(2)}×)\n`,
  );
  targetRow({
    row: `preview of ${shape.kapps.toLocaleString('en')} kapps against its last release`,
    ratio: p.wall / g.wall,
    figure: `${p.wall.toFixed(0)} ms (${p.min.toFixed(0)}–${p.max.toFixed(0)})`,
    baseline: `generate -o json ${g.wall.toFixed(0)} ms (${g.min.toFixed(0)}–${g.max.toFixed(0)})`,
    goal: '≤ 1.5× generate',
    ok: p.wall / g.wall <= 1.5,
  });
} finally {
  rmSync(work, { recursive: true, force: true });
}
