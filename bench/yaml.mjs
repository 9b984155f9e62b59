#!/usr/bin/env node
// The hand-written YAML code against the `yaml` package it stands in for, in one process, as ratios:
//   - reading: kapps' fast reader (dist/yaml/fast-parse.js, `parseFast`) against the `yaml` package building the
//     same located tree (dist/yaml/lib-parse.js, `parseWithYamlLib`, what kapps falls back to), and against the
//     package's own `parse` to plain JS (no locations) for reference; on the YAML files of the repository's samples
//     and fixtures that the fast reader takes, and on a generated manifest of 300 kapps;
//   - writing release records: kapps' record writer (dist/release/record-yaml.js, `recordYaml`) against the
//     package's `stringify`, on a generated record of 200 kapps; every written text is read back and compared first.
// Each figure is the median over rounds of the time for a fixed amount of work; the ratio is baseline / kapps
// (how many times faster the hand-written code is).
//
//   npm run build && node bench/yaml.mjs [--rounds 7]
import { isDeepStrictEqual } from 'node:util';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const opts = { rounds: 7 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--rounds') opts.rounds = Number(argv[++i]);
  else throw new Error(`unknown argument ${argv[i]}`);
}
const dist = (file) => {
  const p = path.join(root, 'dist', file);
  if (!existsSync(p)) throw new Error(`${p} is missing: run \`npm run build\` first`);
  return import(p);
};
const { parseFast } = await dist('yaml/fast-parse.js');
const { parseWithYamlLib } = await dist('yaml/lib-parse.js');
const { recordYaml } = await dist('release/record-yaml.js');

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Median ms of `fn` run `times` times, over the rounds, the variants interleaved round by round. */
function compare(variants, times) {
  const ms = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (const fn of Object.values(variants)) for (let i = 0; i < times; i++) fn(); // warm-up
  for (let r = 0; r < opts.rounds; r++) {
    for (const [name, fn] of Object.entries(variants)) {
      const t0 = performance.now();
      for (let i = 0; i < times; i++) fn();
      ms[name].push(performance.now() - t0);
    }
  }
  return Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, median(v)]));
}

function yamlFiles(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) yamlFiles(p, out);
    else if (/\.ya?ml$/.test(name)) out.push(p);
  }
  return out;
}

/** A manifest of `n` kapps with the shapes stacks use: vars, lists, templates, quoted and multi-line values. */
function manifest(n) {
  const lines = ['defaults:', '  vars:', '    region: eu-west-1', '    replicas: 2', 'kapps:'];
  for (let i = 0; i < n; i++) {
    lines.push(
      `  - id: kapp-${i}`,
      `    depends_on: [kapp-${Math.max(0, i - 1)}, kapp-${Math.max(0, i - 7)}]`,
      '    vars:',
      `      name: "service-${i}"`,
      `      port: ${8000 + i}`,
      '      enabled: true',
      `      url: https://example.com/kapps/${i}?q=1`,
      '      tags:',
      '        - web',
      `        - tier-${i % 3}`,
      '    templates:',
      `      - source: templates/values-${i}.yaml.tpl`,
      '        dest: _generated_values.yaml',
      '    run_units:',
      '      make:',
      '        apply_install:',
      '          - name: helm',
      '            command: helm',
      '            args: upgrade --install {{ .kapp.id }} . -f values.yaml',
      '            env_vars:',
      '              KUBECONFIG: "{{ .kubeconfig }}"',
      '    notes: |',
      `      Kapp ${i} serves the web tier.`,
      '      It is installed after its dependencies.',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** A release record of `n` kapps: the fields a record holds (steps, outputs, multi-line logs, odd strings). */
function record(n) {
  const kapps = [];
  for (let i = 0; i < n; i++) {
    kapps.push({
      id: `manifest-${i % 10}:kapp-${i}`,
      status: i % 17 === 0 ? 'failed' : 'succeeded',
      startedAt: `2026-11-25T14:${String(i % 60).padStart(2, '0')}:00.000Z`,
      durationMs: 1234 + i,
      steps: [
        {
          phase: 'apply_install',
          name: 'helm',
          command: 'helm',
          args: ['upgrade', '--install', `kapp-${i}`, '.', '-f', 'values.yaml', '--set', 'a=yes'],
          exitCode: i % 17 === 0 ? 1 : 0,
          outputTail: ['Release "kapp" has been upgraded. Happy Helming!', 'NAME: kapp', `REVISION: ${i}`, ''],
        },
      ],
      outputs: { endpoint: `https://kapp-${i}.example.com`, port: 8000 + i, on: 'on', empty: '', list: [] },
      vars: { replicas: 2, region: 'eu-west-1', note: 'line one\nline two\n', nothing: null, '0x1f': '0x1f' },
    });
  }
  return { apiVersion: 'kapps/v1', kind: 'Release', project: 'demo', stack: 'local', revision: 7, kapps };
}

// Reading.
const files = [...yamlFiles(path.join(root, 'samples')), ...yamlFiles(path.join(root, 'test', 'fixtures'))];
const corpus = [];
let gaveUp = 0;
for (const file of files) {
  const text = readFileSync(file, 'utf8');
  let fast;
  try {
    fast = parseFast(text, file);
    parseWithYamlLib(text, file);
  } catch {
    continue; // a fixture that is meant to be wrong
  }
  if (fast === undefined) gaveUp++;
  else corpus.push({ file, text });
}
const big = manifest(300);
if (parseFast(big, 'big.yaml') === undefined) throw new Error('the fast reader gave up on the generated manifest');
const corpusBytes = corpus.reduce((n, f) => n + f.text.length, 0);
process.stdout.write(
  `reading: ${corpus.length} files (${(corpusBytes / 1024).toFixed(0)} KiB; the fast reader leaves ${gaveUp} more ` +
    `to the package) and a manifest of 300 kapps (${(big.length / 1024).toFixed(0)} KiB)\n`,
);
for (const [what, texts, times] of [
  ['files', corpus, 5],
  ['300 kapps', [{ file: 'big.yaml', text: big }], 1],
]) {
  const each = (fn) => () => {
    for (const f of texts) fn(f.text, f.file);
  };
  const m = compare({ fast: each(parseFast), lib: each(parseWithYamlLib), libPlain: each((t) => parse(t)) }, times);
  process.stdout.write(
    `  ${what.padEnd(12)} fast reader ${m.fast.toFixed(1)} ms; yaml package, located tree ${m.lib.toFixed(1)} ms ` +
      `(${(m.lib / m.fast).toFixed(1)}× the fast reader's time), plain parse ${m.libPlain.toFixed(1)} ms ` +
      `(${(m.libPlain / m.fast).toFixed(1)}×)\n`,
  );
}

// Writing records.
const rec = record(200);
const written = recordYaml(rec);
if (!isDeepStrictEqual(parse(written), rec)) throw new Error('the record writer does not read back the same');
if (!isDeepStrictEqual(parse(stringify(rec)), rec)) throw new Error('stringify does not read back the same');
const w = compare({ recordYaml: () => recordYaml(rec), stringify: () => stringify(rec) }, 2);
process.stdout.write(
  `writing a record of 200 kapps (${(written.length / 1024).toFixed(0)} KiB): record writer ` +
    `${w.recordYaml.toFixed(1)} ms, yaml stringify ${w.stringify.toFixed(1)} ms ` +
    `(${(w.stringify / w.recordYaml).toFixed(1)}× the record writer's time)\n`,
);
