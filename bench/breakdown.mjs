#!/usr/bin/env node
// Where the time of `kapps install -y` goes on the DAG workloads (W2, W1; see workloads.mjs), read from the
// timings the CLI writes with KAPPS_TIMINGS=<file> (NDJSON, see docs/running.md#how-to-measure):
//
//   - the command, phase by phase: start-up (Node and the modules, until the engine starts), opening and planning
//     the stack, the checks, taking the lock, starting the release, the walk, closing the release, and what lies
//     after the last record (exit: the process server and the event loop winding down);
//   - each kapp's visit, part by part: creating its workspace directory, rendering its templates, planning its
//     steps, the step (its command's own life, and the round trip through the process server beyond it), the
//     events shown (reporters) and written to the release's log, the rest of the visit (redaction, conditions,
//     bookkeeping), and the release recorder's save (the part the walk waits for, and until its write is done);
//   - the same parts summed along the run's critical path (the chain of kapps, each started after the dependency
//     that finished last, that ends with the last kapp), with the time between one visit's end and the next one's
//     start (waiting for a worker, the walk's scheduling, the recorder's save, the event loop) and the walk's own
//     start and end. When the bound is the work (work / workers > critical path, as in W2), what counts is each
//     part summed over all kapps and divided by the workers: the column "÷ N workers" gives it as a share of the wall.
//
// Each figure is the median over the rounds; the wall time's min and max and the machine's load are printed with
// it, and the critical-path bound max(critical path × step, work / workers) beside it.
//
//   npm run build && node bench/breakdown.mjs [--rounds 3] [--only W2,W1,W4] [--cli dist/bin/kapps.js]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeStack } from './gen-stack.mjs';
import { timeProcess } from './time-process.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
let cli = path.join(here, '..', 'dist', 'bin', 'kapps.js');
const genDag = process.env.KAPPS_GEN_DAG ?? path.join(here, '..', '..', 'shared', 'bench', 'gen-dag.mjs');

const opts = { rounds: 3, only: ['W2', 'W1'] };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--rounds') opts.rounds = Number(argv[++i]);
  else if (argv[i] === '--only') opts.only = argv[++i].split(',');
  else if (argv[i] === '--cli') cli = path.resolve(argv[++i]);
  else throw new Error(`unknown argument ${argv[i]}`);
}

const WORKLOADS = {
  W1: { nodes: 500, seed: 1, fanin: 3, cmd: 'true', workers: 8 },
  W2: { nodes: 200, seed: 2, fanin: 3, cmd: 'sleep 0.05', workers: 8 },
  W4: { nodes: 2000, seed: 4, fanin: 3, cmd: 'sleep 0.2', workers: 64 },
};

/** The command's phases, in order: the spans the CLI and the engine write. */
const PHASES = [
  ['startup', 'start-up (Node, modules, argv) until the engine'],
  ['open', 'opening and planning the stack'],
  ['no-value-check', 'checking for <no value>'],
  ['lock', 'taking the lock (release begun)'],
  ['workspace', 'filling the workspace (sources)'],
  ['preflight', 'checking the commands exist'],
  ['begin', 'starting the reporters'],
  ['run-log-open', "opening the release's log"],
  ['preview', 'the preview'],
  ['changed', '--changed-only'],
  ['release-start', 'starting the release (recording the plan)'],
  ['spec-plan', '  of which: every phase of the kapps planned for the spec'],
  ['spec-key', '  of which: waiting for the spec key (read while planning)'],
  ['spec-inputs', "  of which: the spec's inputs (variables, templates, sources)"],
  ['spec-complete', '  of which: the complete spec (masked, portable)'],
  ['spec-write', '  of which: the spec written to the release (durably)'],
  ['walk', 'the walk (every kapp visited)'],
  ['run-log-close', "closing the release's log"],
  ['after-run', 'closing the reporters'],
  ['release-finish', 'closing the release'],
  ['release-close', 'closing the release (after an error)'],
  ['finish', 'the CLI after the engine'],
];

/** The parts of a visit (fields of a `visit` record), and what is derived from them. */
const PARTS = [
  ['workspace', "creating the kapp's workspace directory"],
  ['render', 'rendering its templates'],
  ['plan', 'planning its steps'],
  ['child', "the step's command itself (spawn to exit, in the process server)"],
  ['roundTrip', 'the round trip through the process server beyond it'],
  ['show', 'events shown (reporters)'],
  ['log', "events written to the release's log"],
  ['outputs', 'loading outputs'],
  ['other', 'the rest of the visit (redaction, conditions, events built)'],
  ['record', "the recorder's save, as the walk waits for it"],
];

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function run(command, args, env) {
  return timeProcess(command, args, { env });
}

/** One round's breakdown: { wall, phases: {name: ms}, all: {part: ms}, path: {part: ms}, pathKapps }. */
function analyse(records, wall, dag) {
  const phases = {};
  let lastEnd = 0;
  for (const r of records) {
    if (r.start !== undefined) lastEnd = Math.max(lastEnd, r.start + r.ms);
    if (r.span === 'visit' || r.span === 'kapp') continue;
    phases[r.span] = (phases[r.span] ?? 0) + r.ms;
  }
  phases.exit = wall - lastEnd;
  const visits = new Map();
  for (const r of records) if (r.span === 'visit') visits.set(r.kapp.slice(r.kapp.indexOf(':') + 1), r);
  const partsOf = (v) => {
    const p = {
      workspace: v.workspace ?? 0,
      render: v.render ?? 0,
      plan: v.plan ?? 0,
      child: v.child ?? 0,
      roundTrip: (v.step ?? 0) - (v.child ?? 0),
      show: v.show ?? 0,
      log: v.log ?? 0,
      outputs: v.outputs ?? 0,
      record: v.record ?? 0,
      recordWall: v.recordWall ?? 0,
    };
    p.other = v.ms - (p.workspace + p.render + p.plan + (v.step ?? 0) + p.show + p.log + p.outputs);
    return p;
  };
  const all = {};
  for (const v of visits.values()) for (const [k, ms] of Object.entries(partsOf(v))) all[k] = (all[k] ?? 0) + ms;
  // The critical path as it ran: from the visit that ended last, back through the dependency that ended last.
  const deps = new Map(dag.nodes.map((n) => [n.id, n.deps]));
  const end = (v) => v.start + v.ms;
  let id = [...visits.keys()].reduce((a, b) => (end(visits.get(a)) >= end(visits.get(b)) ? a : b));
  const chain = [];
  while (id !== undefined) {
    chain.unshift(id);
    const ds = (deps.get(id) ?? []).filter((d) => visits.has(d));
    id = ds.length ? ds.reduce((a, b) => (end(visits.get(a)) >= end(visits.get(b)) ? a : b)) : undefined;
  }
  const onPath = {};
  for (const k of chain)
    for (const [p, ms] of Object.entries(partsOf(visits.get(k)))) onPath[p] = (onPath[p] ?? 0) + ms;
  // The recorder's save is counted in the gaps between visits, where the walk waits for it.
  onPath.record = 0;
  onPath.recordWall = 0;
  let between = 0;
  for (let i = 1; i < chain.length; i++) between += visits.get(chain[i]).start - end(visits.get(chain[i - 1]));
  const walk = records.find((r) => r.span === 'walk');
  const first = visits.get(chain[0]);
  const last = visits.get(chain.at(-1));
  onPath.between = between;
  onPath.walkEnds = first.start - walk.start + (walk.start + walk.ms - end(last));
  let busy = 0;
  for (const v of visits.values()) busy += v.ms;
  return {
    wall,
    phases,
    all,
    onPath,
    pathKapps: chain.length,
    kapps: visits.size,
    busy,
  };
}

async function breakdown(name, w) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `kapps-bench-breakdown-${name}-`));
  try {
    const gen = spawnSync(
      process.execPath,
      [genDag, '--nodes', String(w.nodes), '--seed', String(w.seed), '--fanin', String(w.fanin), '--cmd', w.cmd].concat(
        ['--out', dir, '--formats', 'json', '--quiet'],
      ),
      { encoding: 'utf8' },
    );
    if (gen.status !== 0) throw new Error(`gen-dag failed: ${gen.stderr}`);
    const dag = JSON.parse(readFileSync(path.join(dir, 'dag.json'), 'utf8'));
    writeStack({
      dag: path.join(dir, 'dag.json'),
      out: path.join(dir, 'kapps'),
      manifests: 10,
      workers: w.workers,
    });
    const stackFile = path.join(dir, 'kapps', 'stacks.yaml');
    const rounds = [];
    for (let r = 0; r < opts.rounds; r++) {
      const home = mkdtempSync(path.join(os.tmpdir(), 'kapps-bench-home-'));
      const file = path.join(dir, `timings-${r}.ndjson`);
      const args = [cli, 'install', '-y', stackFile, 'bench', '--workers', String(w.workers)];
      const wall = await run(process.execPath, [...args, '--reporter', 'plain', '--no-validate'], {
        ...process.env,
        KAPPS_HOME: home,
        NO_COLOR: '1',
        KAPPS_TIMINGS: file,
      });
      rmSync(home, { recursive: true, force: true });
      const records = readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      rounds.push(analyse(records, wall, dag));
    }
    const sec = Number(w.cmd.split(' ')[1] ?? 0) * 1000;
    const bound = Math.max(dag.criticalPathNodes * sec, (dag.nodes.length * sec) / w.workers);
    print(name, w, dag, bound, rounds);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function print(name, w, dag, bound, rounds) {
  const walls = rounds.map((r) => r.wall);
  const wall = median(walls);
  const med = (f) => median(rounds.map(f));
  const walk = med((r) => r.phases.walk ?? 0);
  const out = [];
  out.push(
    `${name}: ${w.nodes} kapps, \`${w.cmd}\`, ${w.workers} workers, critical path ${dag.criticalPathNodes} kapps; ` +
      `${opts.rounds} rounds, load ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    `  wall ${wall.toFixed(0)} ms (${Math.min(...walls).toFixed(0)}–${Math.max(...walls).toFixed(0)})` +
      (bound
        ? `, critical-path bound ${bound.toFixed(0)} ms: wall ${(wall / bound).toFixed(2)}×, walk ${(walk / bound).toFixed(2)}×`
        : '') +
      `; outside the walk ${(wall - walk).toFixed(0)} ms (${((100 * (wall - walk)) / wall).toFixed(0)}%)`,
    '',
    `  the command${' '.repeat(70)}ms   share of wall`,
  );
  for (const [span, what] of [...PHASES, ['exit', 'after the last record: exit, Node starting before it']]) {
    if (!rounds.some((r) => r.phases[span] !== undefined)) continue;
    const ms = med((r) => r.phases[span] ?? 0);
    out.push(
      `    ${`${span}: ${what}`.padEnd(78)} ${ms.toFixed(1).padStart(7)}   ${((100 * ms) / wall).toFixed(1).padStart(5)}%`,
    );
  }
  const pathKapps = med((r) => r.pathKapps);
  out.push(
    '',
    `  a kapp's visit${' '.repeat(67)}all kapps: ms  ms/kapp  ÷${w.workers} workers | critical path (${pathKapps} kapps): ms  ms/kapp  share of wall`,
  );
  for (const [part, what] of [
    ...PARTS,
    ['between', 'between visits on the path: waiting for a worker, the walk, the event loop'],
    ['walkEnds', "the walk's start and end around the path (waiting for the saves)"],
  ]) {
    const total = med((r) => r.all[part] ?? 0);
    const perKapp = med((r) => (r.all[part] ?? 0) / r.kapps);
    const onPath = med((r) => r.onPath[part] ?? 0);
    const allCols =
      part in rounds[0].all
        ? `${total.toFixed(1).padStart(9)} ${perKapp.toFixed(2).padStart(8)} ${((100 * total) / w.workers / wall).toFixed(1).padStart(8)}%`
        : ' '.repeat(28);
    out.push(
      `    ${`${part}: ${what}`.padEnd(78)} ${allCols} | ${onPath.toFixed(1).padStart(9)} ${(onPath / pathKapps).toFixed(2).padStart(8)}   ${((100 * onPath) / wall).toFixed(1).padStart(5)}%`,
    );
  }
  const busy = med((r) => r.busy) / w.workers;
  out.push(
    `    the workers' time: Σ visits ÷ ${w.workers} = ${busy.toFixed(0)} ms (the walk: ${walk.toFixed(0)} ms); ` +
      `Σ commands ÷ ${w.workers} = ${(med((r) => r.all.child) / w.workers).toFixed(0)} ms`,
  );
  const recordWall = med((r) => (r.all.recordWall ?? 0) / r.kapps);
  out.push(`    (the recorder's save until its write is done: ${recordWall.toFixed(1)} ms per kapp, beside the walk)`);
  process.stdout.write(`${out.join('\n')}\n\n`);
}

if (!existsSync(cli)) throw new Error('build first: npm run build');
if (!existsSync(genDag)) throw new Error(`the DAG generator is not at ${genDag} (set KAPPS_GEN_DAG)`);
for (const name of opts.only) {
  if (!WORKLOADS[name]) throw new Error(`unknown workload ${name} (W1, W2, W4)`);
  await breakdown(name, WORKLOADS[name]);
}
