#!/usr/bin/env node
// The run layer on a whole DAG workload: walkDag + spawnStep (dist/execute/walk.js, dist/process/spawn.js) running every node's command along
// its dependencies, against the floor of a bare child_process.spawn loop over the same commands at the same
// concurrency with no dependencies at all. Prints median wall and CPU times and their ratios to the floor.
// This is the scheduling-and-spawning part of a kapps run; the CLI adds start-up, config and reporting on top.
//
//   node /work/shared/bench/gen-dag.mjs --nodes 500 --seed 1 --fanin 3 --cmd true --out /tmp/w1 --formats json
//   npm run build && node bench/dag-run.mjs --dag /tmp/w1/dag.json [--concurrency 8] [--rounds 5]
//
// dag.json: {nodes: [{id, deps, cmd}]}; `cmd` is split on spaces (no shell).
/* global AbortController */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const opts = { dag: null, concurrency: 8, rounds: 5 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const v = () => argv[++i];
  if (a === '--dag') opts.dag = v();
  else if (a === '--concurrency') opts.concurrency = Number(v());
  else if (a === '--rounds') opts.rounds = Number(v());
  else throw new Error(`unknown argument ${a}`);
}
if (!opts.dag) throw new Error('usage: dag-run.mjs --dag dag.json [--concurrency 8] [--rounds 5]');

const dist = (file) => {
  const p = fileURLToPath(new URL(`../dist/${file}`, import.meta.url));
  if (!existsSync(p)) throw new Error(`${p} is missing: run \`npm run build\` first`);
  return p;
};
const { spawnStep } = await import(dist('process/spawn.js'));
const { walkDag } = await import(dist('execute/walk.js'));

const { nodes } = JSON.parse(readFileSync(opts.dag, 'utf8'));
const commands = new Map(nodes.map((n) => [n.id, n.cmd.split(' ')]));
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const cwd = process.cwd();

function bareOne([command, ...args]) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    child.stdout.on('data', () => {});
    child.stderr.on('data', () => {});
    child.on('error', reject);
    child.on('close', resolve);
  });
}

async function bare() {
  const list = [...commands.values()];
  let next = 0;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (next < list.length) await bareOne(list[next++]);
    }),
  );
}

async function walk() {
  const result = await walkDag({
    nodes: nodes.map(({ id, deps }) => ({ id, deps })),
    direction: 'down',
    concurrency: opts.concurrency,
    keepGoing: false,
    signal: new AbortController().signal,
    run: async (id, signal) => {
      const [command, ...args] = commands.get(id);
      const r = await spawnStep({ command, args, cwd, env, signal });
      return r.exitCode === 0 ? 'succeeded' : { status: 'failed', reason: r.spawnError ?? `exit ${r.exitCode}` };
    },
  });
  const failed = [...result.statuses.values()].filter((s) => s.status !== 'succeeded');
  if (failed.length > 0) throw new Error(`${failed.length} nodes did not succeed: ${failed[0].reason}`);
}

async function measure(fn) {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await fn();
  const cpu = process.cpuUsage(c0);
  return { wall: performance.now() - t0, cpu: (cpu.user + cpu.system) / 1000 };
}

const variants = { 'bare loop': bare, 'walkDag+spawnStep': walk };
const samples = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
await bare(); // warm-up
for (let r = 0; r < opts.rounds; r++) {
  for (const [name, fn] of Object.entries(variants)) samples[name].push(await measure(fn));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const floor = samples['bare loop'];
console.log(`${nodes.length} nodes from ${opts.dag}, concurrency ${opts.concurrency}, ${opts.rounds} rounds`);
for (const [name, s] of Object.entries(samples)) {
  const wall = median(s.map((x) => x.wall));
  const cpu = median(s.map((x) => x.cpu));
  console.log(
    `${name.padEnd(18)} wall ${wall.toFixed(0).padStart(6)} ms (×${(wall / median(floor.map((x) => x.wall))).toFixed(2)})` +
      `  cpu ${cpu.toFixed(0).padStart(6)} ms (×${(cpu / median(floor.map((x) => x.cpu))).toFixed(2)})`,
  );
}
