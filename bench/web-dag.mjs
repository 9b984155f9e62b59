#!/usr/bin/env node
// The web page's DAG at scale, in headless Chromium: time to first draw (layout + SVG) of a 1,000-kapp run and the
// cost per event of updating it live (events applied in batches, one batch per animation frame, as the page does
// with its event stream), with the longest batch (a frozen page would show here).
//
//   node bench/web-dag.mjs [--kapps 1000] [--batch 50] [--chromium /usr/bin/chromium]
/* global window */
import { createReadStream, existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { build } from 'vite';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const kapps = Number(arg('kapps', '1000'));
const batch = Number(arg('batch', '50'));
const executablePath = arg('chromium', process.env.CHROMIUM ?? '/usr/bin/chromium');
if (!existsSync(executablePath)) {
  process.stdout.write(`(skipped: no Chromium at ${executablePath})\n`);
  process.exit(0);
}

const outDir = path.join(root, 'bench/out/web-dag');
await build({
  configFile: path.join(root, 'web/vite.config.ts'),
  logLevel: 'warn',
  build: { outDir, emptyOutDir: true, rollupOptions: { input: path.join(root, 'web/bench/dag-bench.html') } },
});

const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const file = path.join(outDir, path.normalize(url.pathname).replace(/^(\.\.[/\\])+/, ''));
  if (!file.startsWith(outDir) || !existsSync(file)) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' });
  createReadStream(file).pipe(res);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const { port } = server.address();
const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`http://127.0.0.1:${port}/bench/dag-bench.html?kapps=${kapps}&batch=${batch}`);
  await page.waitForFunction(() => window.benchResult, undefined, { timeout: 300_000 });
  const r = await page.evaluate(() => window.benchResult);
  if (r.error) throw new Error(r.error);
  const f = (n) => n.toFixed(1);
  process.stdout.write(
    `${r.kapps} kapps: first draw ${f(r.firstDrawMs)} ms; ${r.events} events in batches of ${r.batch}: ` +
      `${f(r.perEventUs)} µs per event, longest batch ${f(r.longestBatchMs)} ms; ${r.succeeded} nodes drawn succeeded\n`,
  );
  if (r.succeeded !== r.kapps) throw new Error(`expected ${r.kapps} succeeded nodes, saw ${r.succeeded}`);
} finally {
  await browser.close();
  server.close();
}
