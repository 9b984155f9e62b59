#!/usr/bin/env node
// kapps' process server against spawning in kapps' own process: the same N commands at concurrency C through
// `runProcess` (dist/process/process-runner.js), with the server (the default) and with KAPPS_INPROCESS_SPAWN=1
// (the baseline: kapps spawns each step itself), in interleaved rounds, in one process that holds a heap the size
// of a loaded stack (--heap-mb; forking copies the page tables of the process that spawns, which is why the
// server exists). Figures: median wall time and median CPU time of this process, each as a ratio to the baseline.
//
//   npm run build && node bench/process-server.mjs [--count 300] [--concurrency 8] [--rounds 5] [--heap-mb 200]
//       [--command true]
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const opts = { count: 300, concurrency: 8, rounds: 5, heapMb: 200, command: 'true' };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const v = () => argv[++i];
  if (a === '--count') opts.count = Number(v());
  else if (a === '--concurrency') opts.concurrency = Number(v());
  else if (a === '--rounds') opts.rounds = Number(v());
  else if (a === '--heap-mb') opts.heapMb = Number(v());
  else if (a === '--command') opts.command = v();
  else throw new Error(`unknown argument ${a}`);
}

const runnerModule = fileURLToPath(new URL('../dist/process/process-runner.js', import.meta.url));
if (!existsSync(runnerModule)) throw new Error(`${runnerModule} is missing: run \`npm run build\` first`);
const { runProcess } = await import(runnerModule);

// A heap like a loaded stack's: many small objects (about 100 bytes each).
const heap = [];
for (let i = 0; i < opts.heapMb * 10_000; i++) heap.push({ id: `kapp-${i}`, vars: { n: i } });

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const cwd = process.cwd();
const [command, ...args] = opts.command.split(' ');

async function runAll() {
  let next = 0;
  const worker = async () => {
    while (next < opts.count) {
      next++;
      const r = await runProcess({ command, args, cwd, env });
      if (r.exitCode !== 0) throw new Error(`${opts.command} failed: ${r.spawnError ?? r.exitCode}`);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
}

const modes = {
  'in-process': () => (process.env.KAPPS_INPROCESS_SPAWN = '1'),
  'process server': () => delete process.env.KAPPS_INPROCESS_SPAWN,
};

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const times = Object.fromEntries(Object.keys(modes).map((m) => [m, { wall: [], cpu: [] }]));
// A warm-up round of each (starts the servers and the watchdog), not counted.
for (const set of Object.values(modes)) {
  set();
  await runAll();
}
for (let r = 0; r < opts.rounds; r++) {
  for (const [name, set] of Object.entries(modes)) {
    set();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await runAll();
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    times[name].wall.push(wall);
    times[name].cpu.push((cpu.user + cpu.system) / 1000);
  }
}
const base = { wall: median(times['in-process'].wall), cpu: median(times['in-process'].cpu) };
process.stdout.write(
  `${opts.count} × \`${opts.command}\`, ${opts.concurrency} at a time, heap ${opts.heapMb} MB, ` +
    `median of ${opts.rounds} rounds (ratio to in-process):\n`,
);
for (const name of Object.keys(modes)) {
  const wall = median(times[name].wall);
  const cpu = median(times[name].cpu);
  process.stdout.write(
    `  ${name.padEnd(15)} wall ${wall.toFixed(0).padStart(5)} ms (${(wall / base.wall).toFixed(2)}×), ` +
      `cpu of kapps' process ${cpu.toFixed(0).padStart(5)} ms (${(cpu / base.cpu).toFixed(2)}×)\n`,
  );
}
heap.length = 0;
