#!/usr/bin/env node
// The walker's own cost: walkDag (dist/execute/walk.js) over graphs of growing size with a `run` that does nothing
// (resolves at once), so every microsecond measured is scheduling. Shapes: a chain, a wide graph (root → N
// middles → sink) and gen-dag-like random layers (fan-in 3). Prints the time per node for each size; a linear
// walker keeps that figure flat as N grows (a quadratic one doubles it with every doubling of N).
//
//   npm run build && node bench/dag-walk.mjs [--sizes 10000,20000,40000,80000] [--concurrency 8] [--rounds 3]
/* global AbortController */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const opts = { sizes: [10_000, 20_000, 40_000, 80_000], concurrency: 8, rounds: 3 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const v = () => argv[++i];
  if (a === '--sizes') opts.sizes = v().split(',').map(Number);
  else if (a === '--concurrency') opts.concurrency = Number(v());
  else if (a === '--rounds') opts.rounds = Number(v());
  else throw new Error(`unknown argument ${a}`);
}

const walkModule = fileURLToPath(new URL('../dist/execute/walk.js', import.meta.url));
if (!existsSync(walkModule)) throw new Error(`${walkModule} is missing: run \`npm run build\` first`);
const { walkDag } = await import(walkModule);

// mulberry32: a small deterministic PRNG, so every run walks the same random graph.
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const shapes = {
  chain: (n) => Array.from({ length: n }, (_, i) => ({ id: `n${i}`, deps: i === 0 ? [] : [`n${i - 1}`] })),
  wide: (n) => {
    const middles = Array.from({ length: n - 2 }, (_, i) => `m${i}`);
    return [{ id: 'root', deps: [] }, ...middles.map((id) => ({ id, deps: ['root'] })), { id: 'sink', deps: middles }];
  },
  layered: (n) => {
    const rnd = random(n);
    const layers = Math.ceil(Math.sqrt(n));
    const nodes = [];
    const byLayer = [];
    for (let i = 0; i < n; i++) {
      const layer = Math.floor((i * layers) / n);
      (byLayer[layer] ??= []).push(`n${i}`);
      const deps = new Set();
      if (layer > 0) {
        const prev = byLayer[layer - 1];
        deps.add(prev[Math.floor(rnd() * prev.length)]);
        const extra = Math.floor(rnd() * 3);
        for (let k = 0; k < extra; k++) deps.add(`n${Math.floor(rnd() * (i - byLayer[layer].length + 1))}`);
      }
      nodes.push({ id: `n${i}`, deps: [...deps] });
    }
    return nodes;
  },
};

const done = Promise.resolve('succeeded');
console.log(`walkDag, run = resolved promise, concurrency ${opts.concurrency}, best of ${opts.rounds}`);
for (const [shape, make] of Object.entries(shapes)) {
  const cells = [];
  for (const n of opts.sizes) {
    const nodes = make(n);
    let best = Infinity;
    for (let r = 0; r < opts.rounds; r++) {
      const t0 = performance.now();
      const result = await walkDag({
        nodes,
        direction: 'down',
        concurrency: opts.concurrency,
        keepGoing: false,
        signal: new AbortController().signal,
        run: () => done,
      });
      best = Math.min(best, performance.now() - t0);
      if (result.statuses.size !== n) throw new Error('lost nodes');
    }
    cells.push(`${n}: ${((best * 1000) / n).toFixed(1)} µs/node`);
  }
  console.log(`${shape.padEnd(8)} ${cells.join('  ')}`);
}
