/**
 * The run page shows a run's outbound notifications, in headless Chromium against a real `kapps serve` whose project
 * sends `run.finished` to a receiver on loopback that answers 500 once, then 200: the delivery, its state and each
 * attempt's answer.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Run } from '../../src/api/index.js';
import { launchBrowser, newPage } from '../support/browser.js';
import { cleanupProjects, fake, fixtureProject, kapp } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun, type TestServer } from '../support/server.js';

let browser: Browser;
let server: TestServer;
let receiver: Server;
let answered = 0;

beforeAll(async () => {
  receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      answered++;
      response
        .writeHead(answered === 1 ? 500 : 200, { 'content-type': 'text/plain' })
        .end(answered === 1 ? 'busy' : 'ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  const p = fixtureProject({
    manifests: { shop: { kapps: [kapp('web', { apply_install: [fake('deploy', 'web')] })] } },
    env: { NOTIFY_KEY: 'a-signing-key' },
  });
  const config = p.write(
    '../server.yaml',
    `projects:\n  - name: shop\n    stack_file: ${p.dir}/stacks.yaml\n    notify:\n` +
      `      - url: http://127.0.0.1:${port}/hook\n        events: [run.finished]\n        secret_env: NOTIFY_KEY\n`,
  );
  server = await startServer({ args: ['--config', config], env: p.env, cwd: p.root });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopAllServers();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
  cleanupProjects();
});

describe('web page: notifications of a run', () => {
  it("shows a run's delivery, its state and each attempt's answer", async () => {
    const c = api(server.url);
    const submitted = await c.post<Run>('/api/v1/runs', { type: 'generate', project: 'shop', stack: 'dev' });
    await waitForRun(c, submitted.body.id);
    const { page } = await newPage(browser);
    await page.goto(`${server.url}/#/runs/${submitted.body.id}`);
    const section = page.getByRole('region', { name: 'Notifications' });
    await section.waitFor();
    const row = section.locator('tbody tr');
    expect(await row.count()).toBe(1);
    expect(await row.locator('td').nth(0).innerText()).toBe('run.finished');
    expect(await row.locator('td').nth(1).innerText()).toContain('/hook');
    // Retried after the 500: the page follows the delivery until it is delivered.
    await row.getByText('delivered').waitFor({ timeout: 30_000 });
    const attempts = await row.locator('ol.attempts li').allInnerTexts();
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toContain('HTTP 500');
    expect(attempts[1]).toContain('HTTP 200');
    await page.close();
  });
});
