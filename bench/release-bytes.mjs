#!/usr/bin/env node
// What recording a release costs in bytes: an install-like recording of N kapps (1,000 and 10,000) through the real
// recorder (dist/release/recorder.js) into the real file store and into PostgreSQL (KAPPS_BENCH_PG_URL, or a throwaway
// server on loopback when PostgreSQL is installed: scripts/throwaway-postgres.mjs).
// Kapps finish 8 at a time every 8 ms (about the pace of 8 workers running short steps), each with a small output
// and one step, as `install -y` records them; the release then finishes. Printed per N: the bytes this process
// wrote in all (write system calls, from /proc/self/io `wchar`: record files, journal, fsync'd temp files — or the
// bytes sent to the database), bytes per kapp, the ratio of the 10k figure to the 1k one (linear ⇒ ≈ 10) and the
// wall time per kapp (from the first kapp finishing to the release finished). Medians over rounds, with min/max.
//
//   npm run build && node bench/release-bytes.mjs [--rounds 3] [--sizes 1000,10000]
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { findPgBin, startThrowawayPostgres } from '../scripts/throwaway-postgres.mjs';
import { targetRow } from './targets.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const opts = { rounds: 3, sizes: [1000, 10000] };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--rounds') opts.rounds = Number(argv[++i]);
  else if (argv[i] === '--sizes') opts.sizes = argv[++i].split(',').map(Number);
  else throw new Error(`unknown argument ${argv[i]}`);
}
const dist = (file) => {
  const p = path.join(root, 'dist', file);
  if (!existsSync(p)) throw new Error(`${p} is missing: run \`npm run build\` first`);
  return import(p);
};
const { beginRelease } = await dist('release/recorder.js');
const { FileReleaseStore } = await dist('release/file-store.js');
const { PgReleaseStore } = await dist('release/pg-store.js');

/** Bytes this process has passed to write system calls so far (Linux). */
function written() {
  const m = /^wchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'));
  if (!m) throw new Error('/proc/self/io has no wchar line');
  return Number(m[1]);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function spec(n) {
  const kapps = [];
  for (let i = 0; i < n; i++) {
    const id = `m${Math.floor(i / 100)}:k${i}`;
    const step = {
      name: 'apply',
      unit: 'kapp',
      command: 'sh',
      args: ['-c', `echo ${i}`],
      env: {},
      workingDir: `/work/${id}`,
      expectedExitCode: 0,
      ignoreErrors: false,
      loadOutputs: false,
    };
    kapps.push({
      id,
      dependsOn: i > 0 ? [`m${Math.floor((i - 1) / 100)}:k${i - 1}`] : [],
      selected: true,
      conditionsOk: true,
      phases: { plan_install: [], apply_install: [step], plan_delete: [], apply_delete: [], output: [], clean: [] },
    });
  }
  return { stack: 'dev', kapps, format: 2 };
}

let projects = 0;
async function once(store, n) {
  const project = `bench-${process.pid}-${++projects}`;
  const s = spec(n);
  const recorder = await beginRelease({
    store,
    project,
    stack: 'dev',
    operation: 'install',
    spec: s,
    command: ['kapps', 'install', '-y', 'stack.yaml', 'dev'],
    selectors: { include: [], exclude: [] },
    kappsVersion: 'bench',
  });
  const before = written();
  const start = performance.now();
  const saves = [];
  for (let i = 0; i < n; i++) {
    const at = new Date().toISOString();
    saves.push(
      recorder.recordKapp(s.kapps[i].id, {
        status: 'installed',
        outputs: { index: i, host: `h${i}.local` },
        steps: [
          {
            phase: 'apply_install',
            name: 'apply',
            status: 'succeeded',
            exitCode: 0,
            startedAt: at,
            endedAt: at,
            durationMs: 1,
            timedOut: false,
          },
        ],
      }),
    );
    if (i % 8 === 7) await sleep(8);
  }
  recorder.flush();
  await Promise.all(saves);
  await recorder.finish('succeeded');
  const ms = performance.now() - start;
  const bytes = written() - before;
  const stored = await store.get(project, 'dev', recorder.revision);
  if (stored?.phase !== 'succeeded' || Object.keys(stored.state).length !== n) {
    throw new Error(
      `release ${project}/dev reads back wrong: ${stored?.phase}, ${Object.keys(stored?.state ?? {}).length} kapps`,
    );
  }
  return { bytes, msPerKapp: ms / n };
}

async function backend(name, make) {
  const perSize = new Map();
  for (const n of opts.sizes) {
    const runs = [];
    for (let r = 0; r < opts.rounds; r++) {
      const { store, done } = await make();
      try {
        runs.push(await once(store, n));
      } finally {
        await done();
      }
    }
    perSize.set(n, runs);
  }
  console.log(
    `${name}: load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  console.log('  kapps    bytes in all (median [min–max])        bytes/kapp   ms/kapp (median [min–max])');
  for (const [n, runs] of perSize) {
    const b = runs.map((x) => x.bytes);
    const t = runs.map((x) => x.msPerKapp);
    console.log(
      `  ${String(n).padStart(6)}   ${fmtBytes(median(b)).padStart(10)} [${fmtBytes(Math.min(...b))}–${fmtBytes(Math.max(...b))}]`.padEnd(
        50,
      ) +
        `${String(Math.round(median(b) / n)).padStart(10)}   ${median(t).toFixed(3)} [${Math.min(...t).toFixed(3)}–${Math.max(...t).toFixed(3)}]`,
    );
  }
  const [small, large] = [opts.sizes[0], opts.sizes.at(-1)];
  if (small !== large) {
    const ratio = median(perSize.get(large).map((x) => x.bytes)) / median(perSize.get(small).map((x) => x.bytes));
    console.log(`  bytes ${large}/${small}: ${ratio.toFixed(1)} (linear ⇒ ≈ ${(large / small).toFixed(0)})`);
    // Linear: the larger release costs at most 10 % more bytes per kapp than the smaller one (a whole record
    // rewritten per kapp would make the ratio grow with the size: about (large / small)² / …).
    const perKapp = (n) => median(perSize.get(n).map((x) => x.bytes)) / n;
    targetRow({
      row: `release record bytes, ${large.toLocaleString('en')} kapps (${name.replace(/ \(.*\)$/, '')})`,
      ratio,
      figure: `${fmtBytes(median(perSize.get(large).map((x) => x.bytes)))} in all, ${Math.round(perKapp(large))} B/kapp`,
      baseline: `${small.toLocaleString('en')} kapps: ${Math.round(perKapp(small))} B/kapp`,
      goal: `linear: ≤ ${((1.1 * large) / small).toFixed(0)}× the ${small.toLocaleString('en')}-kapp bytes`,
      ok: ratio <= (1.1 * large) / small,
    });
  }
}

function fmtBytes(b) {
  if (b >= 1e9) return `${(b / 1e9).toFixed(2)} GB`;
  if (b >= 1e6) return `${(b / 1e6).toFixed(1)} MB`;
  return `${(b / 1e3).toFixed(0)} kB`;
}

await backend('file store', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'kapps-bench-release-'));
  return { store: new FileReleaseStore(dir), done: async () => rmSync(dir, { recursive: true, force: true }) };
});
// PostgreSQL: the database named by KAPPS_BENCH_PG_URL, else a throwaway server on loopback when one is installed.
const pgBackend = (url) =>
  backend('PostgreSQL (bytes sent to the server)', async () => {
    const store = new PgReleaseStore(url);
    return { store, done: () => store.close() };
  });
if (process.env.KAPPS_BENCH_PG_URL) {
  await pgBackend(process.env.KAPPS_BENCH_PG_URL);
} else if (findPgBin()) {
  const pg = await startThrowawayPostgres({ durable: true });
  try {
    await pgBackend(pg.url);
  } finally {
    await pg.stop();
  }
} else {
  console.log('PostgreSQL: skipped (not installed here; or set KAPPS_BENCH_PG_URL to a database kapps may use)');
}
