/**
 * The web page's DAG at scale, in headless Chromium: a run of 1,000 kapps is laid out and drawn, then its 4,000
 * events (start, step, finish per kapp) are applied a batch per animation frame; every node must end up drawn as
 * succeeded. Runs the bench script (bench/web-dag.mjs), which builds its page with Vite and reports the figures.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { CHROMIUM } from '../support/browser.js';

const SCRIPT = fileURLToPath(new URL('../../bench/web-dag.mjs', import.meta.url));

it('draws a 1,000-kapp DAG and updates every node from live events', () => {
  const r = spawnSync(process.execPath, [SCRIPT, '--kapps', '1000', '--batch', '50', '--chromium', CHROMIUM], {
    encoding: 'utf8',
    timeout: 240_000,
  });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^1000 kapps: first draw [\d.]+ ms; 4000 events in batches of 50: /m);
  expect(r.stdout).toContain('1000 nodes drawn succeeded');
}, 300_000);
