// Running one of web/bench/*.html in headless Chromium: build it with the page's vite configuration, serve the
// build on a loopback port, open it and wait for the `window.benchResult` it sets. Shared by the web benchmarks.
/* global window */
import { createReadStream, existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, URLSearchParams } from 'node:url';
import { chromium } from 'playwright-core';
import { build } from 'vite';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** `--name value` from the command line, or `fallback`. */
export function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

/**
 * The `window.benchResult` of `web/bench/<html>` opened with `query`; null (having said so) when there is no
 * Chromium. Throws the page's own `error`.
 */
export async function benchInChromium(html, query) {
  const executablePath = arg('chromium', process.env.CHROMIUM ?? '/usr/bin/chromium');
  if (!existsSync(executablePath)) {
    process.stdout.write(`(skipped: no Chromium at ${executablePath})\n`);
    return null;
  }
  const outDir = path.join(root, 'bench/out', path.basename(html, '.html'));
  await build({
    configFile: path.join(root, 'web/vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true, rollupOptions: { input: path.join(root, 'web/bench', html) } },
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
    await page.goto(`http://127.0.0.1:${port}/bench/${html}?${new URLSearchParams(query)}`);
    await page.waitForFunction(() => window.benchResult, undefined, { timeout: 300_000 });
    const r = await page.evaluate(() => window.benchResult);
    if (r.error) throw new Error(r.error);
    return r;
  } finally {
    await browser.close();
    server.close();
  }
}
