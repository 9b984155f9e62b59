#!/usr/bin/env node
// `GET …/releases` of a 300-kapp stack through `kapps serve` (file backend): the whole list (every record read)
// against one page (`?limit=20`, cold then warm) and against `GET /runs?limit=20` of the same server. Goal: a page
// ≤ 50 ms. The releases are made by `kapps install` of a generated stack (300 kapps in 10 manifests, each with
// variables and no steps), `--releases` times.
//
//   npm run build && node bench/web-releases.mjs [--releases 12]
/* global fetch */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '..', 'dist', 'bin', 'kapps.js');
const i = process.argv.indexOf('--releases');
const releases = i >= 0 ? Number(process.argv[i + 1]) : 12;

const dir = mkdtempSync(path.join(os.tmpdir(), 'kapps-bench-releases-'));
const home = path.join(dir, 'home');
mkdirSync(path.join(dir, 'manifests'), { recursive: true });
const manifests = [];
for (let m = 0; m < 10; m++) {
  const kapps = [];
  for (let k = 0; k < 30; k++) {
    const deps = k % 3 ? `    depends_on:\n      - id: k${k - 1}\n` : '';
    const vars = Array.from({ length: 8 }, (_, v) => `      var${v}: value-${m}-${k}-${v}-${'x'.repeat(40)}\n`).join(
      '',
    );
    kapps.push(`  - id: k${k}\n${deps}    vars:\n${vars}    run_units: {}\n`);
  }
  writeFileSync(path.join(dir, 'manifests', `m${m}.yaml`), `kapps:\n${kapps.join('')}`);
  manifests.push(`    - uri: manifests/m${m}.yaml`);
}
writeFileSync(path.join(dir, 'stacks.yaml'), `dev:\n  provider: local\n  manifests:\n${manifests.join('\n')}\n`);
const env = { ...process.env, KAPPS_HOME: home, HOME: dir, NO_COLOR: '1' };
for (let r = 0; r < releases; r++) {
  const run = spawnSync(process.execPath, [cli, 'install', '-y', 'stacks.yaml', 'dev', '--backend', home], {
    cwd: dir,
    env,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`kapps install failed: ${run.stderr}`);
}

const server = spawn(
  process.execPath,
  [cli, 'serve', '--project', 'big=stacks.yaml', '--backend', home, '--listen', '127.0.0.1:0'],
  { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] },
);
try {
  const url = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.setEncoding('utf8').on('data', (c) => {
      out += c;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    server.on('exit', (code) => reject(new Error(`kapps serve exited ${code}`)));
  });
  const time = async (p) => {
    const t0 = performance.now();
    const res = await fetch(`${url}${p}`);
    if (!res.ok) throw new Error(`${p}: ${res.status}`);
    const body = await res.json();
    return { ms: performance.now() - t0, body };
  };
  const median = async (p, n) => {
    const all = [];
    for (let k = 0; k < n; k++) all.push((await time(p)).ms);
    return all.sort((a, b) => a - b)[Math.floor(n / 2)];
  };
  const base = '/api/v1/projects/big/stacks/dev/releases';
  const whole = await median(base, 3);
  const cold = await time(`${base}?limit=20`);
  if (cold.body.releases.length !== Math.min(20, releases)) throw new Error('the page has the wrong length');
  const warm = await median(`${base}?limit=20`, 11);
  const runs = await median('/api/v1/runs?limit=20', 11);
  const f = (n) => n.toFixed(1);
  process.stdout.write(
    `${releases} releases of 300 kapps: the whole list ${f(whole)} ms; a page of 20 ${f(cold.ms)} ms cold, ` +
      `${f(warm)} ms warm (${(whole / warm).toFixed(0)}× less than the whole list; goal ≤ 50 ms); ` +
      `GET /runs?limit=20 ${f(runs)} ms\n`,
  );
} finally {
  server.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
