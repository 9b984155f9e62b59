#!/usr/bin/env node
// `npm run bench`: every benchmark, one after the other. Each prints its own figures as ratios against a baseline
// measured in the same run (Go's text/template for rendering, GNU make and a bare Node spawn loop for running DAGs);
// absolute times on a shared machine are noise.
//
//   node bench/run.mjs [--only template,generate,workloads,spawn,web]
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const suites = [
  { name: 'template', file: 'template.mjs', what: 'Go-template rendering of the conformance corpus, against gotpl' },
  { name: 'generate', file: 'generate.mjs', what: '`kapps generate -o json` on 1,000 and 10,000 kapps' },
  { name: 'workloads', file: 'workloads.mjs', what: 'W1/W2 DAG workloads: kapps vs make -j8 vs a bare spawn loop' },
  { name: 'spawn', file: 'spawn-overhead.mjs', what: 'spawning steps: kapps spawnStep vs bare child_process' },
  { name: 'web', file: 'web-dag.mjs', what: 'the web page: first draw and per-event update of a 1,000-kapp DAG' },
];
const onlyArg = process.argv.indexOf('--only');
const only = onlyArg >= 0 ? new Set(process.argv[onlyArg + 1]?.split(',')) : undefined;
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
  const r = spawnSync(process.execPath, [file], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exitCode = failed ? 1 : 0;
