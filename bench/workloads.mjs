#!/usr/bin/env node
// Running DAG workloads: kapps vs GNU make vs a bare Node spawn loop, on the same DAG, in one run, as ratios.
//
//   W1: 500 kapps, seed 1, fan-in 3, `true`,       8 workers — kapps against the bare spawn loop (goal ≤ 1.8×)
//   W2: 200 kapps, seed 2, fan-in 3, `sleep 0.05`, 8 workers — kapps against max(critical path, work/8) (goal ≤ 1.15×)
//   W4: 2,000 kapps, seed 4, fan-in 3, `sleep 0.2`, 64 workers — against its bound (goal ≤ 1.15×), and its overhead
//       per kapp ((wall − bound) / critical-path kapps) against W2's (goal: no higher at 64 workers than at 8)
//
// The DAG comes from the shared generator (`../shared/bench/gen-dag.mjs`, or $KAPPS_GEN_DAG); each node becomes a
// kapp with one apply_install step running the node's command (bench/gen-stack.mjs). `kapps install -y` runs it
// with the plain reporter into /dev/null and a throwaway release store; `make -jN` runs the Makefile; the bare loop
// spawns the same commands with node:child_process at the same concurrency, respecting the same dependencies
// (bench/bare-loop.mjs), inside this process. A Node command that did only that would also pay Node's start:
// `node -e 0` is timed each round, and "the floor" is the loop plus that start.
//
// W2 is also run with a file source per kapp (a folder of 4 small files, `gen-stack.mjs --file-sources 4`): once
// into an empty workspace (everything copied) and once more into the filled one (nothing changed, nothing should be
// copied), each with a fresh release store, as ratios to the same stack with inline kapps in the same round.
//
//   npm run build && node bench/workloads.mjs [--rounds 3] [--only W1,W2,W4] [--cli dist/bin/kapps.js]
//
// Each workload's row of the speed targets is printed with its ratio, baseline and the load (bench/targets.mjs).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bareLoop } from './bare-loop.mjs';
import { writeStack } from './gen-stack.mjs';
import { targetRow } from './targets.mjs';
import { timeProcess } from './time-process.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
let cli = path.join(here, '..', 'dist', 'bin', 'kapps.js');
const genDag = process.env.KAPPS_GEN_DAG ?? path.join(here, '..', '..', 'shared', 'bench', 'gen-dag.mjs');

const opts = { rounds: 3, only: ['W1', 'W2', 'W4'] };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--rounds') opts.rounds = Number(argv[++i]);
  else if (argv[i] === '--only') opts.only = argv[++i].split(',');
  else if (argv[i] === '--cli') cli = path.resolve(argv[++i]);
  else throw new Error(`unknown argument ${argv[i]}`);
}

const WORKLOADS = {
  W1: { nodes: 500, seed: 1, fanin: 3, cmd: 'true', workers: 8 },
  W2: { nodes: 200, seed: 2, fanin: 3, cmd: 'sleep 0.05', workers: 8, fileSources: 4 },
  W4: { nodes: 2000, seed: 4, fanin: 3, cmd: 'sleep 0.2', workers: 64 },
};

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function spread(xs) {
  return `median ${median(xs).toFixed(0)} (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`;
}

function ratios(xs, base) {
  const r = xs.map((x, i) => x / base[i]);
  return `${median(r).toFixed(2)}× (min ${Math.min(...r).toFixed(2)}, max ${Math.max(...r).toFixed(2)})`;
}

/** `kapps install -y` of a stack with a fresh release store (KAPPS_HOME), through the plain reporter. */
async function timeInstall(stackFile, workers) {
  const home = mkdtempSync(path.join(os.tmpdir(), 'kapps-bench-home-'));
  try {
    return await timeProcess(
      process.execPath,
      [cli, 'install', '-y', stackFile, 'bench', '--workers', String(workers), '--reporter', 'plain', '--no-validate'],
      { env: { ...process.env, KAPPS_HOME: home, NO_COLOR: '1' } },
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

async function runWorkload(name, w) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `kapps-bench-${name}-`));
  try {
    const gen = spawnSync(
      process.execPath,
      [
        genDag,
        '--nodes',
        String(w.nodes),
        '--seed',
        String(w.seed),
        '--fanin',
        String(w.fanin),
        '--cmd',
        w.cmd,
        '--out',
        dir,
        '--formats',
        'make,json',
        '--quiet',
      ],
      { encoding: 'utf8' },
    );
    if (gen.status !== 0) throw new Error(`gen-dag failed: ${gen.stderr}`);
    const dag = JSON.parse(readFileSync(path.join(dir, 'dag.json'), 'utf8'));
    writeStack({ dag: path.join(dir, 'dag.json'), out: path.join(dir, 'kapps'), manifests: 10, workers: w.workers });
    const stackFile = path.join(dir, 'kapps', 'stacks.yaml');
    const withFiles = w.fileSources ? path.join(dir, 'kapps-files') : undefined;
    if (withFiles) {
      writeStack({
        dag: path.join(dir, 'dag.json'),
        out: withFiles,
        manifests: 10,
        workers: w.workers,
        fileSources: w.fileSources,
      });
    }
    const times = { kapps: [], make: [], bare: [], node: [], filesFirst: [], filesSecond: [], load: [] };
    for (let r = 0; r < opts.rounds; r++) {
      times.load.push(os.loadavg()[0]);
      times.kapps.push(await timeInstall(stackFile, w.workers));
      times.make.push(await timeProcess('make', ['-s', '-C', dir, `-j${w.workers}`]));
      times.bare.push(await bareLoop(dag.nodes, w.workers));
      times.node.push(await timeProcess(process.execPath, ['-e', '0']));
      if (withFiles) {
        rmSync(path.join(withFiles, '.kapps-workspace'), { recursive: true, force: true });
        times.filesFirst.push(await timeInstall(path.join(withFiles, 'stacks.yaml'), w.workers));
        times.filesSecond.push(await timeInstall(path.join(withFiles, 'stacks.yaml'), w.workers));
      }
    }
    const sec = Number(w.cmd.split(' ')[1] ?? 0) * 1000;
    const bound = sec ? Math.max(dag.criticalPathNodes * sec, (dag.nodes.length * sec) / w.workers) : undefined;
    const m = {
      kapps: median(times.kapps),
      make: median(times.make),
      bare: median(times.bare),
      node: median(times.node),
    };
    m.range = `${Math.min(...times.kapps).toFixed(0)}–${Math.max(...times.kapps).toFixed(0)}`;
    m.bound = bound;
    m.criticalPath = dag.criticalPathNodes;
    const line = [
      `${name}: ${w.nodes} kapps, \`${w.cmd}\`, ${w.workers} workers, critical path ${dag.criticalPathNodes} nodes`,
      `  median wall ms: kapps ${m.kapps.toFixed(0)}, make -j${w.workers} ${m.make.toFixed(0)}, bare spawn loop ${m.bare.toFixed(0)}`,
      `  kapps/bare ${(m.kapps / m.bare).toFixed(2)}×, kapps/make ${(m.kapps / m.make).toFixed(2)}×, bare/make ${(m.bare / m.make).toFixed(2)}×`,
      // The loop runs inside this (warm) process: a command that does the same pays Node's start on top.
      `  a Node command's floor: the bare loop + \`node -e 0\` (${m.node.toFixed(0)} ms) = ${(m.bare + m.node).toFixed(0)} ms, kapps/floor ${(m.kapps / (m.bare + m.node)).toFixed(2)}×`,
    ];
    if (bound) {
      line.push(
        `  lower bound max(critical path, work/${w.workers}) = ${bound.toFixed(0)} ms: kapps ${(m.kapps / bound).toFixed(3)}×, make ${(m.make / bound).toFixed(3)}×, bare ${(m.bare / bound).toFixed(3)}×, the floor ${((m.bare + m.node) / bound).toFixed(3)}×`,
      );
    }
    if (withFiles) {
      line.push(
        `  with a file source of ${w.fileSources} files per kapp (wall ms; ratio to inline kapps in the same round):`,
        `    inline                ${spread(times.kapps)}`,
        `    first run (copies)    ${spread(times.filesFirst)}, ${ratios(times.filesFirst, times.kapps)}`,
        `    second run (no change) ${spread(times.filesSecond)}, ${ratios(times.filesSecond, times.kapps)}; second/first ${ratios(times.filesSecond, times.filesFirst)}`,
      );
    }
    line.push(`  load average (1 min) at each round: ${times.load.map((l) => l.toFixed(2)).join(', ')}`);
    process.stdout.write(`${line.join('\n')}\n`);
    return m;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (!existsSync(cli)) throw new Error('build first: npm run build');
if (!existsSync(genDag)) throw new Error(`the DAG generator is not at ${genDag} (set KAPPS_GEN_DAG)`);
process.stdout.write(`kapps process cost includes start-up, loading the stack, planning and recording the release.\n`);
const measured = {};
for (const name of opts.only) {
  if (!WORKLOADS[name]) throw new Error(`unknown workload ${name} (W1, W2, W4)`);
  measured[name] = await runWorkload(name, WORKLOADS[name]);
}

const ms = (x) => `${x.toFixed(0)} ms`;
/** Wall time beyond the bound, per kapp of the critical path: what each kapp on it adds. */
const perKapp = (m) => (m.kapps - m.bound) / m.criticalPath;
if (measured.W1) {
  const m = measured.W1;
  targetRow({
    row: 'W1 500 × true, 8 workers',
    ratio: m.kapps / m.bare,
    figure: `kapps ${ms(m.kapps)} (${m.range})`,
    baseline: `bare spawn loop ${ms(m.bare)} (+ node -e 0: ${((m.bare + m.node) / m.bare).toFixed(2)}×); make ${ms(m.make)} (${(m.kapps / m.make).toFixed(2)}× make)`,
    goal: '≤ 1.8× the spawn loop',
    ok: m.kapps / m.bare <= 1.8,
  });
}
for (const name of ['W2', 'W4']) {
  const m = measured[name];
  if (!m) continue;
  const w = WORKLOADS[name];
  const w2 = name === 'W4' ? measured.W2 : undefined;
  targetRow({
    row: `${name} ${w.nodes} × ${w.cmd}, ${w.workers} workers`,
    ratio: m.kapps / m.bound,
    figure:
      `kapps ${ms(m.kapps)} (${m.range}), ${perKapp(m).toFixed(1)} ms over the bound per critical-path kapp` +
      (w2 ? ` (W2: ${perKapp(w2).toFixed(1)})` : ''),
    baseline:
      `critical-path bound ${ms(m.bound)}; make ${(m.make / m.bound).toFixed(2)}× (${ms(m.make)}); ` +
      `bare Node loop ${(m.bare / m.bound).toFixed(2)}×, + node -e 0 ${((m.bare + m.node) / m.bound).toFixed(2)}×`,
    goal: `≤ 1.15× the bound${w2 ? ', per-kapp overhead ≤ W2' : ''}`,
    ok: m.kapps / m.bound <= 1.15 && (w2 ? perKapp(m) <= perKapp(w2) : true),
    goalRatio: 1.15,
    floors: [
      ['make -j', m.make / m.bound],
      ["a Node command's floor", (m.bare + m.node) / m.bound],
    ],
  });
}
