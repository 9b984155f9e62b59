#!/usr/bin/env node
// The web page's log viewer and change summaries at real sizes, in headless Chromium (web/bench/page-bench.tsx):
// first draw of a 50,000-line log against drawing every line, a search over all of it, the cost per appended batch
// while following; first draw of a 250-change preview as summaries against every spec side by side. Ratios against
// the baseline measured in the same page; absolute times on a shared machine are noise.
//
//   node bench/web-page.mjs [--lines 50000] [--changes 250] [--chromium /usr/bin/chromium]
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
const lines = Number(arg('lines', '50000'));
const changes = Number(arg('changes', '250'));
const executablePath = arg('chromium', process.env.CHROMIUM ?? '/usr/bin/chromium');
if (!existsSync(executablePath)) {
  process.stdout.write(`(skipped: no Chromium at ${executablePath})\n`);
  process.exit(0);
}

const outDir = path.join(root, 'bench/out/web-page');
await build({
  configFile: path.join(root, 'web/vite.config.ts'),
  logLevel: 'warn',
  build: { outDir, emptyOutDir: true, rollupOptions: { input: path.join(root, 'web/bench/page-bench.html') } },
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
  await page.goto(`http://127.0.0.1:${port}/bench/page-bench.html?lines=${lines}&changes=${changes}`);
  await page.waitForFunction(() => window.benchResult, undefined, { timeout: 300_000 });
  const r = await page.evaluate(() => window.benchResult);
  if (r.error) throw new Error(r.error);
  const f = (n) => n.toFixed(1);
  const x = (a, b) => (b / a).toFixed(1);
  process.stdout.write(
    `log of ${r.lines} lines: first draw ${f(r.logFirstMs)} ms (${r.rowsDrawn} rows in the page) vs every line ` +
      `${f(r.logAllMs)} ms: ${x(r.logFirstMs, r.logAllMs)}× less; search ${f(r.searchMs)} ms (${r.matches}); ` +
      `${f(r.appendMs)} ms per batch of 50 lines while following\n` +
      `preview of ${r.changes} changes: summaries ${f(r.previewSummaryMs)} ms vs every spec side by side ` +
      `${f(r.previewAllMs)} ms: ${x(r.previewSummaryMs, r.previewAllMs)}× less\n`,
  );
  if (r.matches !== '0 of 11 matches') throw new Error(`the search found ${r.matches}, not 11 lines`);
} finally {
  await browser.close();
  server.close();
}
