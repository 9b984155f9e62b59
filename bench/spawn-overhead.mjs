#!/usr/bin/env node
// What kapps' process spawning costs over the floor: the same N commands at concurrency C, run
//   - bare:          node:child_process.spawn, stdin ignored, stdout/stderr piped and collected, own group;
//   - spawnStep:     kapps' spawnStep (dist/process/spawn.js);
//   - execa-lean:    execa 9 with everything spawnStep does not need turned off (no buffering, decoding, final
//                    newline stripping, cleanup handler or forced kill; own group), output collected by listeners;
//   - execa-default: execa(cmd, args, { reject: false }) with every other option at its default;
// in interleaved rounds, and prints each one's median wall time and median CPU time of this (parent) process, each
// with its ratio to bare's. Absolute times on a shared machine are noise; compare ratios, and prefer the CPU
// ratio when other jobs load the machine (wall time then mostly measures the neighbours).
//
//   npm run build && node bench/spawn-overhead.mjs [--count 500] [--concurrency 8] [--rounds 5] [--command true]
//       [--only bare,spawnStep]
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const opts = { count: 500, concurrency: 8, rounds: 5, command: 'true', only: null };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const v = () => argv[++i];
  if (a === '--count') opts.count = Number(v());
  else if (a === '--concurrency') opts.concurrency = Number(v());
  else if (a === '--rounds') opts.rounds = Number(v());
  else if (a === '--command') opts.command = v();
  else if (a === '--only') opts.only = v().split(',');
  else throw new Error(`unknown argument ${a}`);
}

const spawnModule = fileURLToPath(new URL('../dist/process/spawn.js', import.meta.url));
if (!existsSync(spawnModule)) throw new Error(`${spawnModule} is missing: run \`npm run build\` first`);
const { spawnStep } = await import(spawnModule);
const { execa } = await import('execa');

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const cwd = process.cwd();
const [command, ...args] = opts.command.split(' ');

function bare() {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, out, err }));
  });
}

const variants = {
  bare,
  spawnStep: async () => {
    const r = await spawnStep({ command, args, cwd, env });
    if (r.exitCode !== 0) throw new Error(`${opts.command} failed: ${r.spawnError ?? r.exitCode}`);
    return r;
  },
  'execa-lean': async () => {
    const sub = execa(command, args, {
      cwd,
      env,
      extendEnv: false,
      stdin: 'ignore',
      detached: true,
      reject: false,
      buffer: false,
      stripFinalNewline: false,
      cleanup: false,
      forceKillAfterDelay: false,
    });
    const out = [];
    sub.stdout.on('data', (c) => out.push(c));
    sub.stderr.on('data', (c) => out.push(c));
    return await sub;
  },
  'execa-default': () => execa(command, args, { reject: false }),
};

async function loop(fn) {
  let next = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (next < opts.count) {
        next++;
        await fn();
      }
    }),
  );
  const cpu = process.cpuUsage(c0);
  return { wall: performance.now() - t0, cpu: (cpu.user + cpu.system) / 1000 };
}

const names = opts.only ?? Object.keys(variants);
if (!names.includes('bare')) names.unshift('bare');
const samples = Object.fromEntries(names.map((n) => [n, []]));
await loop(variants.bare); // warm-up: page cache, JIT
for (let round = 0; round < opts.rounds; round++) {
  for (const name of names) samples[name].push(await loop(variants[name]));
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const floor = median(samples.bare.map((s) => s.wall));
const cpuFloor = median(samples.bare.map((s) => s.cpu));
console.log(
  `${opts.count} × \`${opts.command}\`, concurrency ${opts.concurrency}, ${opts.rounds} rounds, node ${process.version}`,
);
for (const name of names) {
  const wall = median(samples[name].map((s) => s.wall));
  const cpu = median(samples[name].map((s) => s.cpu));
  console.log(
    `${name.padEnd(14)} wall ${wall.toFixed(0).padStart(6)} ms (×${(wall / floor).toFixed(2)})` +
      `  cpu ${cpu.toFixed(0).padStart(6)} ms (×${(cpu / cpuFloor).toFixed(2)})`,
  );
}
