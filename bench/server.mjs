#!/usr/bin/env node
// The runs server (`kapps serve`), warm (started once, one run done before measuring), on loopback:
//
//   latency: submit-to-first-step of an apply of a one-kapp stack (POST /runs → the step's own start, read from
//            the `step-started` event and from a file the step touches), median of N;
//   W2:      the W2 workload (200 kapps, `sleep 0.05`, 8 workers; see workloads.mjs) applied through the server
//            (POST → final status seen by the client) against max(critical path, work/8) and against
//            `kapps install -y` of the same stack in the same run, and against the bare spawn loop of
//            bench/bare-loop.mjs in this process (goal ≤ 1.1× the bound: a warm server pays no start-up);
//   reads:   requests per second of GET /runs/{id} from 8 concurrent clients while 20 SSE clients follow a
//            running run's events.
//
// The server's backend is a temp directory, or PostgreSQL with --backend postgres://… (or $KAPPS_BENCH_PG); the CLI
// it is compared with always records into a temp directory. `--postgres` measures latency and W2 a second time on a
// throwaway PostgreSQL server on loopback with its default durability (scripts/throwaway-postgres.mjs: fsync and
// synchronous commit on, as in production), when PostgreSQL is installed; `npm run bench` passes it, so that both
// backends' rows are printed.
//
// `--cli DIR` runs the server of another build (DIR is its `dist/`, e.g. an older one copied aside).
//
//   npm run build && node bench/server.mjs [--rounds 3] [--only latency,W2,reads] [--backend postgres://…] [--postgres]
//                                          [--cli DIR]
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { TextDecoder } from 'node:util';
import { findPgBin, startThrowawayPostgres } from '../scripts/throwaway-postgres.mjs';
import { bareLoop } from './bare-loop.mjs';
import { writeStack } from './gen-stack.mjs';
import { targetRow } from './targets.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
let cli = path.join(here, '..', 'dist', 'cli', 'main.js');
const genDag = process.env.KAPPS_GEN_DAG ?? path.join(here, '..', '..', 'shared', 'bench', 'gen-dag.mjs');

const opts = {
  rounds: 3,
  only: ['latency', 'W2', 'reads'],
  backend: process.env.KAPPS_BENCH_PG ?? '',
  postgres: false,
};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--rounds') opts.rounds = Number(argv[++i]);
  else if (argv[i] === '--only') opts.only = argv[++i].split(',');
  else if (argv[i] === '--backend') opts.backend = argv[++i];
  else if (argv[i] === '--postgres') opts.postgres = true;
  else if (argv[i] === '--cli') cli = path.resolve(argv[++i], 'cli', 'main.js');
  else throw new Error(`unknown argument ${argv[i]}`);
}

const W2 = { nodes: 200, seed: 2, fanin: 3, cmd: 'sleep 0.05', workers: 8 };

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Start `kapps serve` on a free loopback port; resolves once it prints its start line. */
function startServer(projects, env) {
  return new Promise((resolve, reject) => {
    const args = [cli, 'serve', '--listen', '127.0.0.1:0', '--max-runs', '2'];
    for (const [name, file] of Object.entries(projects)) args.push('--project', `${name}=${file}`);
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`kapps serve exited ${code}: ${err.slice(-2000)}`)));
    child.stdout.on('data', (c) => {
      out += c;
      const m = /kapps serve: listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ url: m[1], child, stop: () => stopServer(child) });
    });
  });
}

function stopServer(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function api(url, method, pathname, body) {
  const res = await globalThis.fetch(`${url}/api/v1${pathname}`, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${pathname}: ${res.status} ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

/**
 * Follow a run's events until its final status. `onEvent(name, data)` sees each one as it arrives; resolves with the
 * final run.
 */
async function follow(url, id, onEvent = () => {}, signal) {
  const res = await globalThis.fetch(`${url}/api/v1/runs/${id}/events`, { signal });
  if (res.status !== 200) throw new Error(`events of ${id}: ${res.status}`);
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data = '';
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl).replace(/\r$/, '');
      buffer = buffer.slice(nl + 1);
      if (line === '') {
        if (event && data) {
          const parsed = JSON.parse(data);
          onEvent(event, parsed);
          if (event === 'status' && ['succeeded', 'failed', 'cancelled', 'errored'].includes(parsed.status)) {
            return parsed;
          }
        }
        event = '';
        data = '';
      } else if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data += line.slice(5).trim();
    }
  }
  throw new Error(`the event stream of ${id} ended without a final status`);
}

/** Submit and wait for the final status, by the event stream. */
async function runToEnd(url, body) {
  const t0 = performance.now();
  const run = await api(url, 'POST', '/runs', body);
  const final = await follow(url, run.id);
  const ms = performance.now() - t0;
  if (final.status !== 'succeeded') throw new Error(`run ${run.id} ${final.status}: ${final.error ?? ''}`);
  return ms;
}

function writeProject(dir, stack, manifest) {
  mkdirSync(path.join(dir, 'manifests'), { recursive: true });
  writeFileSync(path.join(dir, 'stacks.yaml'), stack);
  writeFileSync(path.join(dir, 'manifests', 'm.yaml'), manifest);
  return path.join(dir, 'stacks.yaml');
}

function serverEnv(home) {
  const env = { ...process.env, KAPPS_HOME: home, NO_COLOR: '1' };
  delete env.KAPPS_TOKEN;
  if (opts.backend) env.KAPPS_BACKEND = opts.backend;
  else delete env.KAPPS_BACKEND;
  return env;
}

async function latency(work) {
  const marker = path.join(work, 'touched');
  const stackFile = writeProject(
    path.join(work, 'one'),
    'one:\n  provider: local\n  provisioner: none\n  cluster: bench\n  manifests:\n    - uri: manifests/m.yaml\n',
    `kapps:\n  - id: k\n    run_units:\n      step:\n        apply_install:\n          - name: touch\n            command: touch\n            args: "${marker}"\n`,
  );
  const home = mkdtempSync(path.join(os.tmpdir(), 'kapps-bench-serve-home-'));
  const server = await startServer({ one: stackFile }, serverEnv(home));
  try {
    await runToEnd(server.url, { type: 'apply', project: 'one', stack: 'one' }); // warm-up
    const toEvent = [];
    const toTouch = [];
    for (let r = 0; r < Math.max(5, opts.rounds * 3); r++) {
      rmSync(marker, { force: true });
      const wall0 = Date.now();
      const run = await api(server.url, 'POST', '/runs', { type: 'apply', project: 'one', stack: 'one' });
      let started;
      const final = await follow(server.url, run.id, (name, data) => {
        if (name === 'run-event' && data.type === 'step-started' && started === undefined)
          started = Date.parse(data.time);
      });
      if (final.status !== 'succeeded') throw new Error(`latency run ${final.status}: ${final.error ?? ''}`);
      toEvent.push(started - wall0);
      toTouch.push(statSync(marker).mtimeMs - wall0);
    }
    process.stdout.write(
      `latency: submit-to-first-step on a warm server (${toEvent.length} runs, median): ` +
        `step-started event ${median(toEvent).toFixed(0)} ms, the step's own file touched ${median(toTouch).toFixed(0)} ms\n`,
    );
    const goal = opts.backend ? 25 : 10;
    const floor = opts.backend ? undefined : await durableFloor(home);
    if (floor !== undefined) {
      process.stdout.write(
        `  the floor on this machine: ${floor.toFixed(1)} ms (${DURABLE_WRITES} durable replaces of a 2 KB file in the ` +
          "server's directory and one spawn of `true`, one after another, median of 9)\n",
      );
    }
    targetRow({
      row: `submit → first step, warm server (${opts.backend ? 'PostgreSQL' : 'files'})`,
      figure: `${median(toEvent).toFixed(0)} ms (${Math.min(...toEvent)}–${Math.max(...toEvent)}) to step-started`,
      baseline:
        floor === undefined
          ? 'none (an absolute figure)'
          : `none (an absolute figure); ${DURABLE_WRITES} durable writes and a spawn ${floor.toFixed(1)} ms`,
      goal: `≤ ${goal} ms`,
      ok: median(toEvent) <= goal,
      goalRatio: goal,
      unit: ' ms',
      ...(floor === undefined ? {} : { floors: [[`${DURABLE_WRITES} durable writes and a spawn`, floor]] }),
    });
  } finally {
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * What a run on the file backend must do before its first step, without kapps: the durable writes on its path (the
 * submission, the claim, the release's record created, its spec written: each a temp file written and fsynced,
 * renamed, its directory fsynced) and the step's spawn, one after another in this process. Median of 9, ms.
 */
const DURABLE_WRITES = 4;
async function durableFloor(dir) {
  const { open, rename } = await import('node:fs/promises');
  const file = path.join(dir, 'floor.json');
  const text = 'x'.repeat(2048);
  const times = [];
  for (let round = 0; round < 9; round++) {
    const t0 = performance.now();
    for (let i = 0; i < DURABLE_WRITES; i++) {
      const temp = `${file}.${i}.tmp`;
      const handle = await open(temp, 'w', 0o600);
      await handle.writeFile(text, 'utf8');
      await handle.sync();
      await handle.close();
      await rename(temp, file);
      const d = await open(dir, 'r');
      await d.sync();
      await d.close();
    }
    await new Promise((resolve, reject) => {
      const child = spawn('true', [], { stdio: ['ignore', 'pipe', 'pipe'] });
      child.once('spawn', resolve);
      child.once('error', reject);
    });
    times.push(performance.now() - t0);
  }
  rmSync(file, { force: true });
  return median(times);
}

async function w2(work) {
  if (!existsSync(genDag)) throw new Error(`the DAG generator is not at ${genDag} (set KAPPS_GEN_DAG)`);
  const dir = path.join(work, 'w2');
  mkdirSync(dir, { recursive: true });
  const gen = spawnSync(
    process.execPath,
    [
      genDag,
      '--nodes',
      String(W2.nodes),
      '--seed',
      String(W2.seed),
      '--fanin',
      String(W2.fanin),
      '--cmd',
      W2.cmd,
      '--out',
      dir,
      '--formats',
      'json',
      '--quiet',
    ],
    { encoding: 'utf8' },
  );
  if (gen.status !== 0) throw new Error(`gen-dag failed: ${gen.stderr}`);
  const dag = JSON.parse(readFileSync(path.join(dir, 'dag.json'), 'utf8'));
  writeStack({ dag: path.join(dir, 'dag.json'), out: path.join(dir, 'kapps'), manifests: 10, workers: W2.workers });
  const stackFile = path.join(dir, 'kapps', 'stacks.yaml');
  const home = mkdtempSync(path.join(os.tmpdir(), 'kapps-bench-serve-home-'));
  const server = await startServer({ bench: stackFile }, serverEnv(home));
  const body = { type: 'apply', project: 'bench', stack: 'bench', workers: W2.workers };
  const times = { server: [], cli: [], bare: [] };
  try {
    await runToEnd(server.url, body); // warm-up
    for (let r = 0; r < opts.rounds; r++) {
      times.server.push(await runToEnd(server.url, body));
      // The floor of a warm server: the bare spawn loop, inside this already running process.
      times.bare.push(await bareLoop(dag.nodes, W2.workers));
      const cliHome = mkdtempSync(path.join(os.tmpdir(), 'kapps-bench-home-'));
      const t0 = performance.now();
      const res = spawnSync(
        process.execPath,
        [
          cli,
          'install',
          '-y',
          stackFile,
          'bench',
          '--workers',
          String(W2.workers),
          '--reporter',
          'plain',
          '--no-validate',
        ],
        {
          env: { ...serverEnv(cliHome), KAPPS_BACKEND: cliHome },
          stdio: ['ignore', 'ignore', 'pipe'],
          encoding: 'utf8',
        },
      );
      times.cli.push(performance.now() - t0);
      rmSync(cliHome, { recursive: true, force: true });
      if (res.status !== 0) throw new Error(`kapps install exited ${res.status}: ${res.stderr.slice(-2000)}`);
    }
  } finally {
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
  const sec = 50;
  const bound = Math.max(dag.criticalPathNodes * sec, (dag.nodes.length * sec) / W2.workers);
  const m = { server: median(times.server), cli: median(times.cli), bare: median(times.bare) };
  process.stdout.write(
    `W2 through a warm server: ${W2.nodes} kapps, \`${W2.cmd}\`, ${W2.workers} workers, critical path ${dag.criticalPathNodes} nodes\n` +
      `  median wall ms: server (submit → final status) ${m.server.toFixed(0)}, CLI install -y ${m.cli.toFixed(0)}\n` +
      `  lower bound max(critical path, work/${W2.workers}) = ${bound.toFixed(0)} ms: server ${(m.server / bound).toFixed(3)}× ` +
      `(goal ≤ 1.1×), CLI ${(m.cli / bound).toFixed(3)}×, bare spawn loop ${(m.bare / bound).toFixed(3)}×; server/CLI ${(m.server / m.cli).toFixed(2)}×\n`,
  );
  targetRow({
    row: `W2 through a warm server (${opts.backend ? 'PostgreSQL' : 'files'})`,
    ratio: m.server / bound,
    figure: `server ${m.server.toFixed(0)} ms (${Math.min(...times.server).toFixed(0)}–${Math.max(...times.server).toFixed(0)})`,
    baseline: `critical-path bound ${bound.toFixed(0)} ms; CLI ${(m.cli / bound).toFixed(2)}×; bare Node spawn loop ${(m.bare / bound).toFixed(2)}×`,
    goal: '≤ 1.1× the bound',
    ok: m.server / bound <= 1.1,
    goalRatio: 1.1,
    floors: [['the bare Node spawn loop', m.bare / bound]],
  });
}

async function reads(work) {
  const stackFile = writeProject(
    path.join(work, 'long'),
    'long:\n  provider: local\n  provisioner: none\n  cluster: bench\n  manifests:\n    - uri: manifests/m.yaml\n',
    'kapps:\n  - id: k\n    run_units:\n      step:\n        apply_install:\n          - name: wait\n            command: sleep\n            args: "30"\n',
  );
  const home = mkdtempSync(path.join(os.tmpdir(), 'kapps-bench-serve-home-'));
  const server = await startServer({ long: stackFile }, serverEnv(home));
  const abort = new globalThis.AbortController();
  try {
    const run = await api(server.url, 'POST', '/runs', { type: 'apply', project: 'long', stack: 'long' });
    for (let n = 0; n < 50; n++) {
      if ((await api(server.url, 'GET', `/runs/${run.id}`)).status === 'running') break;
      await sleep(100);
    }
    const streams = Array.from({ length: 20 }, () =>
      follow(server.url, run.id, () => {}, abort.signal).catch(() => undefined),
    );
    await sleep(300);
    const seconds = 3;
    const until = performance.now() + seconds * 1000;
    let count = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (performance.now() < until) {
          const res = await globalThis.fetch(`${server.url}/api/v1/runs/${run.id}`);
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`GET /runs/{id}: ${res.status}`);
          count++;
        }
      }),
    );
    process.stdout.write(
      `reads: GET /runs/{id} with 20 SSE clients attached, 8 concurrent clients: ${(count / seconds).toFixed(0)} requests/s\n`,
    );
    await api(server.url, 'POST', `/runs/${run.id}/cancel`).catch(() => undefined);
    abort.abort();
    await Promise.all(streams);
  } finally {
    abort.abort();
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

if (!existsSync(cli)) throw new Error('build first: npm run build');
const work = mkdtempSync(path.join(os.tmpdir(), 'kapps-bench-serve-'));
try {
  process.stdout.write(`backend: ${opts.backend ? 'PostgreSQL' : 'files (a temp directory)'}\n`);
  if (opts.only.includes('latency')) await latency(work);
  if (opts.only.includes('W2')) await w2(work);
  if (opts.only.includes('reads')) await reads(work);
  if (opts.postgres && !opts.backend) await onThrowawayPostgres(work);
} finally {
  rmSync(work, { recursive: true, force: true });
}

/** Latency and W2 again, on a throwaway PostgreSQL server (default durability), when one can be started here. */
async function onThrowawayPostgres(work) {
  if (!opts.only.includes('latency') && !opts.only.includes('W2')) return;
  if (!findPgBin()) {
    process.stdout.write('backend: PostgreSQL not measured (no /usr/lib/postgresql/<N>/bin/initdb here)\n');
    return;
  }
  const pg = await startThrowawayPostgres({ durable: true });
  try {
    opts.backend = pg.url;
    process.stdout.write('backend: PostgreSQL (a throwaway server on loopback, fsync and synchronous commit on)\n');
    const dir = path.join(work, 'pg');
    mkdirSync(dir);
    if (opts.only.includes('latency')) await latency(dir);
    if (opts.only.includes('W2')) await w2(dir);
  } finally {
    opts.backend = '';
    await pg.stop();
  }
}
