#!/usr/bin/env node
// Template engine throughput: renders the conformance corpus N times with the built engine (dist/), runs the Go
// oracle `gotpl` on the same corpus repeated N times inside one invocation, and prints both rates and their ratio.
//   node bench/template.mjs [--rounds N] [--gotpl PATH] [--corpus FILE] [--fixtures DIR]
// Without a gotpl binary (CI has no Go) only the engine's rate is printed.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : dflt;
};
const rounds = Number(opt('rounds', '20'));
const corpusFile = resolve(opt('corpus', join(root, 'test/fixtures/go-template/shared/corpus.json')));
const shared = '/work/shared/conformance/go-template';
const gotpl = opt('gotpl', existsSync(join(shared, 'gotpl')) ? join(shared, 'gotpl') : '');
const fixtures = resolve(opt('fixtures', join(root, 'test/fixtures/go-template/shared/fixtures')));

const { runCases } = await import(join(root, 'dist/template/cases.js'));
const { parseLosslessJson } = await import(join(root, 'dist/template/lossless-json.js'));
const { parseYamlValue } = await import(join(root, 'dist/yaml/read.js'));

const text = readFileSync(corpusFile, 'utf8');
const doc = parseLosslessJson(text);
const count = doc.cases.length;
const options = {
  fixturesDir: fixtures,
  getEnv: (n) => process.env[n],
  decodeYaml: (t) => parseYamlValue(t, { goMaps: true }),
};

// Warm up (parse cache, JIT), then measure.
runCases(doc, options);
const t0 = process.hrtime.bigint();
for (let i = 0; i < rounds; i++) runCases(doc, options);
const tsSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
const tsRate = (count * rounds) / tsSeconds;
console.log(`kapps engine: ${count * rounds} renders in ${tsSeconds.toFixed(3)} s = ${tsRate.toFixed(0)} renders/s`);

if (!gotpl || !existsSync(gotpl)) {
  console.log('gotpl: not available (pass --gotpl PATH to compare)');
  process.exit(0);
}
// Keep the original number literals (1.0 stays a float): splice the case texts instead of re-serialising data.
const lines = text.split('\n').filter((l) => l.startsWith('{"id"'));
const input = [];
for (let i = 0; i < rounds; i++) {
  for (const l of lines) input.push(l.replace(/,$/, '').replace(/^\{"id": "([^"]*)"/, `{"id": "$1#${i}"`));
}
const payload = `{"cases":[\n${input.join(',\n')}\n]}\n`;
const g0 = process.hrtime.bigint();
execFileSync(gotpl, ['-fixtures', fixtures], { input: payload, maxBuffer: 1 << 30 });
const goSeconds = Number(process.hrtime.bigint() - g0) / 1e9;
const goRate = (lines.length * rounds) / goSeconds;
console.log(
  `gotpl:        ${lines.length * rounds} renders in ${goSeconds.toFixed(3)} s = ${goRate.toFixed(0)} renders/s`,
);
console.log(`ratio gotpl/kapps: ${(goRate / tsRate).toFixed(2)} (target <= 3)`);
