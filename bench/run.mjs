#!/usr/bin/env node
// `npm run bench`: every benchmark, one after the other. Each prints its own figures as ratios against a baseline
// measured in the same run (Go's text/template for rendering, GNU make and a bare Node spawn loop for running DAGs);
// absolute times on a shared machine are noise. At the end, the rows of the speed targets the suites measured
// (bench/targets.mjs), each with its ratio, its baseline and the machine's load.
//
//   node bench/run.mjs [--only startup,template,generate,preview,workloads,breakdown,spawn,process-server,release-bytes,output,yaml,server,web,web-page,web-releases]
//                      [--rounds N]   (passed to the suites that take it: preview, workloads, breakdown, output, server)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { printTargets } from './targets.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const suites = [
  {
    name: 'startup',
    file: 'startup.mjs',
    what: '`kapps --help` and `kapps generate` of the sample, beside `node -e 0`',
  },
  { name: 'template', file: 'template.mjs', what: 'Go-template rendering of the conformance corpus, against gotpl' },
  { name: 'generate', file: 'generate.mjs', what: '`kapps generate -o json` on 1,000 and 10,000 kapps' },
  {
    name: 'preview',
    file: 'preview.mjs',
    what: '`kapps preview` of a 1,000-kapp stack against its last release, beside its `generate`',
    rounds: true,
  },
  {
    name: 'workloads',
    file: 'workloads.mjs',
    what: 'W1/W2/W4 DAG workloads: kapps vs make -jN vs a bare spawn loop',
    rounds: true,
  },
  {
    name: 'breakdown',
    file: 'breakdown.mjs',
    what: "where W2's and W1's time goes (KAPPS_TIMINGS): the command's phases, each kapp's visit, the critical path",
    rounds: true,
  },
  { name: 'spawn', file: 'spawn-overhead.mjs', what: 'spawning steps: kapps spawnStep vs bare child_process' },
  {
    name: 'process-server',
    file: 'process-server.mjs',
    what: 'running steps through the process server vs spawning in-process (KAPPS_INPROCESS_SPAWN=1)',
  },
  {
    name: 'release-bytes',
    file: 'release-bytes.mjs',
    what: 'bytes written recording a release of 1,000 and 10,000 kapps',
  },
  {
    name: 'output',
    file: 'output.mjs',
    what: 'a step printing 2,000,000 lines, recorded, against a bare Node reader of the same output',
    rounds: true,
  },
  { name: 'yaml', file: 'yaml.mjs', what: 'the fast YAML reader and the record writer vs the yaml package' },
  {
    name: 'server',
    file: 'server.mjs',
    what: '`kapps serve`: submit-to-first-step, W2 through a warm server, reads; files, then PostgreSQL',
    rounds: true,
    args: ['--postgres'],
  },
  { name: 'web', file: 'web-dag.mjs', what: 'the web page: first draw and per-event update of a 1,000-kapp DAG' },
  {
    name: 'web-page',
    file: 'web-page.mjs',
    what: 'the web page: a 50,000-line log and a 250-change preview, against drawing everything',
  },
  {
    name: 'web-releases',
    file: 'web-releases.mjs',
    what: '`GET …/releases` of a 300-kapp stack: a page against the whole list and against /runs',
  },
];
const onlyArg = process.argv.indexOf('--only');
const only = onlyArg >= 0 ? new Set(process.argv[onlyArg + 1]?.split(',')) : undefined;
const roundsArg = process.argv.indexOf('--rounds');
const rounds = roundsArg >= 0 ? process.argv[roundsArg + 1] : undefined;
const work = mkdtempSync(path.join(os.tmpdir(), 'kapps-bench-'));
const targets = path.join(work, 'targets.ndjson');
let failed = 0;
for (const s of suites) {
  if (only && !only.has(s.name)) continue;
  const file = path.join(here, s.file);
  process.stdout.write(`\n=== ${s.name}: ${s.what}\n`);
  if (!existsSync(file)) {
    process.stdout.write(`(missing: ${s.file})\n`);
    failed++;
    continue;
  }
  const args = [file, ...(s.rounds && rounds ? ['--rounds', rounds] : []), ...(s.args ?? [])];
  const r = spawnSync(process.execPath, args, {
    stdio: 'inherit',
    env: { ...process.env, KAPPS_BENCH_TARGETS: targets },
  });
  if (r.status !== 0) failed++;
}
printTargets(targets);
rmSync(work, { recursive: true, force: true });
process.exitCode = failed ? 1 : 0;
