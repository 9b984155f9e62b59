#!/usr/bin/env node
// `kapps generate -o json` on big stacks: 1,000 and 10,000 kapps over 100 manifests, with the DAG shape of the
// shared generator's W3 workload (seed 3, fan-in 3). Each size is run several times; the figures are the median
// wall time, the median CPU time (user + system, the steadier figure on a busy machine), the median of the runs'
// peak RSS (with the worst run's), and the 10k/1k ratio of each. Goals: 10,000 kapps in ≤ 1.0 s (on a quiet
// machine) and ≤ 200 MB, ratio ≤ 11.
//
// --templated adds a variable and templated arguments to every step (`{{ .kapp.vars.* }}`, `{{ .kapp.id }}`), so
// every kapp's variables are rendered too; the plain shape plans steps written without templates.
//
//   npm run build && node bench/generate.mjs [--sizes 1000,10000] [--runs 5] [--manifests 100] [--templated] [--cli dist/bin/kapps.js]
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { writeStack } from './gen-stack.mjs';
import { targetRow } from './targets.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
let cli = path.join(here, '..', 'dist', 'bin', 'kapps.js');
const genDag = process.env.KAPPS_GEN_DAG ?? path.join(here, '..', '..', 'shared', 'bench', 'gen-dag.mjs');

const opts = { sizes: [1000, 10000], runs: 5, manifests: 100, templated: false };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--sizes') opts.sizes = argv[++i].split(',').map(Number);
  else if (a === '--runs') opts.runs = Number(argv[++i]);
  else if (a === '--manifests') opts.manifests = Number(argv[++i]);
  else if (a === '--templated') opts.templated = true;
  else if (a === '--cli') cli = path.resolve(argv[++i]);
  else throw new Error(`unknown argument ${a}`);
}
for (const [what, file] of [
  ['the built CLI (run `npm run build`)', cli],
  ['the DAG generator (set KAPPS_GEN_DAG)', genDag],
]) {
  if (!existsSync(file)) throw new Error(`${what} is missing: ${file}`);
}

const work = mkdtempSync(path.join(os.tmpdir(), 'kapps-bench-generate-'));
// Loaded into the CLI's process: reports its own CPU time and peak RSS when it exits.
const hook = path.join(work, 'rusage-hook.mjs');
writeFileSync(
  hook,
  "import { writeFileSync } from 'node:fs';\n" +
    "process.on('exit', () => writeFileSync(process.env.KAPPS_BENCH_RUSAGE, JSON.stringify(process.resourceUsage())));\n",
);

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** One `kapps generate -o json` of the stack in `dir`: wall ms, CPU ms, peak RSS MB; stdout is checked or dropped. */
function runOnce(dir, check) {
  const rusageFile = path.join(work, 'rusage.json');
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(
      process.execPath,
      ['--import', pathToFileURL(hook).href, cli, 'generate', 'stacks.yaml', 'bench', '-o', 'json'],
      {
        cwd: dir,
        env: { ...process.env, KAPPS_BENCH_RUSAGE: rusageFile, NO_COLOR: '1' },
        stdio: ['ignore', check ? 'pipe' : 'ignore', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (c) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = performance.now() - t0;
      if (code !== 0) return reject(new Error(`kapps generate exited ${code}:\n${stderr}`));
      if (stderr !== '') return reject(new Error(`kapps generate wrote to stderr:\n${stderr}`));
      const usage = JSON.parse(readFileSync(rusageFile, 'utf8'));
      resolve({
        wall,
        cpu: (usage.userCPUTime + usage.systemCPUTime) / 1000,
        rss: usage.maxRSS / 1024,
        doc: check ? JSON.parse(stdout) : undefined,
      });
    });
  });
}

const results = new Map();
try {
  for (const size of opts.sizes) {
    const dagDir = path.join(work, `dag-${size}`);
    const gen = spawnSync(
      process.execPath,
      [
        genDag,
        '--nodes',
        String(size),
        '--seed',
        '3',
        '--fanin',
        '3',
        '--cmd',
        'true',
        '--out',
        dagDir,
        '--formats',
        'json',
        '--quiet',
      ],
      { encoding: 'utf8' },
    );
    if (gen.status !== 0) throw new Error(`gen-dag failed:\n${gen.stderr}`);
    const dir = path.join(work, `stack-${size}`);
    const shape = writeStack({
      dag: path.join(dagDir, 'dag.json'),
      out: dir,
      manifests: opts.manifests,
      workers: 8,
      templated: opts.templated,
    });
    // The first run checks the document (and warms the file cache); it is not counted.
    const first = await runOnce(dir, true);
    const planned = first.doc.kapps.filter((k) => k.phases.apply_install.length === 1).length;
    if (first.doc.kapps.length !== size || planned !== size) {
      throw new Error(
        `expected ${size} kapps with one apply_install step each, got ${first.doc.kapps.length} (${planned})`,
      );
    }
    const runs = [];
    for (let i = 0; i < opts.runs; i++) runs.push(await runOnce(dir, false));
    const r = {
      wall: median(runs.map((x) => x.wall)),
      wallMin: Math.min(...runs.map((x) => x.wall)),
      cpu: median(runs.map((x) => x.cpu)),
      // Each run's peak; their median is the figure, the worst beside it (a collection that happens late can add
      // 30–40 MB to one run in ten).
      rss: median(runs.map((x) => x.rss)),
      rssMax: Math.max(...runs.map((x) => x.rss)),
    };
    results.set(size, r);
    process.stdout.write(
      `${String(size).padStart(6)} kapps in ${shape.manifests} manifests${opts.templated ? ' (templated)' : ''}: ` +
        `wall ${(r.wall / 1000).toFixed(2)} s (min ${(r.wallMin / 1000).toFixed(2)} s), ` +
        `cpu ${(r.cpu / 1000).toFixed(2)} s, peak RSS ${r.rss.toFixed(0)} MB (max ${r.rssMax.toFixed(0)} MB)  [${opts.runs} runs]\n`,
    );
  }
  const big = results.get(10000);
  const small = results.get(1000);
  if (big && small) {
    // The machine's own speed beside the row's absolute goal: Node's start, measured now.
    const nodeStarts = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      spawnSync(process.execPath, ['-e', '0']);
      nodeStarts.push(performance.now() - t0);
    }
    const nodeStart = median(nodeStarts);
    const ok = (b) => (b ? 'ok' : 'MISSED');
    process.stdout.write(
      `10k/1k ratio: wall ${(big.wall / small.wall).toFixed(1)}, cpu ${(big.cpu / small.cpu).toFixed(1)} ` +
        `(goal ≤ 11: ${ok(big.wall / small.wall <= 11)})\n` +
        `10,000 kapps: ${(big.wall / 1000).toFixed(2)} s wall (goal ≤ 1.0 s: ${ok(big.wall <= 1000)}), ` +
        `${big.rss.toFixed(0)} MB, worst run ${big.rssMax.toFixed(0)} MB (goal ≤ 200 MB: ${ok(big.rss <= 200)})\n`,
    );
    targetRow({
      row: `W3 generate 10,000 kapps / ${opts.manifests} manifests`,
      ratio: big.wall / small.wall,
      figure: `${(big.wall / 1000).toFixed(2)} s (min ${(big.wallMin / 1000).toFixed(2)} s), peak RSS ${big.rss.toFixed(0)} MB (worst run ${big.rssMax.toFixed(0)} MB)`,
      baseline: `1,000 kapps ${(small.wall / 1000).toFixed(2)} s (ratio = 10k/1k); node -e 0 ${nodeStart.toFixed(0)} ms (10,000 kapps = ${(big.wall / nodeStart).toFixed(1)}× it)`,
      goal: '≤ 1.0 s quiet, ≤ 200 MB, 10k/1k ≤ 11',
      ok: big.wall <= 1000 && big.rss <= 200 && big.wall / small.wall <= 11,
    });
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
