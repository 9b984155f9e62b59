/**
 * The web page at real sizes, in headless Chromium against a real `kapps serve`: a generated stack of 300 kapps in
 * 10 manifests whose `log` kapp prints 50,000 lines (one in colour) and whose last kapp waits on a gate the test
 * opens; and a run whose server was killed with -9 (errored on the restarted server). Checks the log viewer (every
 * line reachable, search, following the tail stops when the reader scrolls up), "follow running" in the DAG, and
 * that an errored run shows no running kapp. Nothing waits on timing: each step waits for what the page shows.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  horizontalOverflow,
  inView,
  launchBrowser,
  newPage,
  screenshot,
  scrollOf,
  scrollTo,
} from '../support/browser.js';
import {
  cleanupProjects,
  fake,
  fixtureProject,
  kapp,
  killMatching,
  processesMatching,
  tempDir,
  uniqueMarker,
  waitFor,
  type FixtureProject,
} from '../support/project.js';
import { api, startServer, type TestServer } from '../support/server.js';
import { sleep } from '../support/wait.js';

const POLL = { timeout: 60_000, interval: 100 };
const MANIFESTS = 10;
const PER_MANIFEST = 30;
const LOG_LINES = 50_000;
const ESC = '\u001b';
const LOG = '[data-testid="log"]';

let browser: Browser;
let server: TestServer;
let big: FixtureProject;
let doomed: FixtureProject;
let gates: string;
let marker: string;
let bigRun: string;
let erroredRun: string;

/**
 * 300 kapps: manifest `mJ` holds `k0 … k29`, each depending on the one before it unless its number is a multiple
 * of 3 (ten short chains per manifest, so the DAG is 3 ranks wide and 100 kapps tall). `m0:k1` prints the 50,000
 * lines; `m9:k29`, the last node of the last column, waits on a gate.
 */
function bigManifests(changed = 0): Record<string, unknown> {
  const manifests: Record<string, unknown> = {};
  for (let j = 0; j < MANIFESTS; j++) {
    const kapps = [];
    for (let i = 0; i < PER_MANIFEST; i++) {
      const id = `k${i}`;
      const fields = i % 3 === 0 ? {} : { depends_on: [{ id: `k${i - 1}` }] };
      let phases: Record<string, unknown[]> = {};
      if (j === 0 && i === 1)
        phases = {
          apply_install: [
            fake('apply', 'log', [
              '--stdout',
              `${ESC}[32mcoloured-start${ESC}[0m plain-after`,
              '--lines',
              String(LOG_LINES),
              'stdout',
              '--stdout',
              'log-kapp-done',
            ]),
          ],
        };
      if (j === MANIFESTS - 1 && i === PER_MANIFEST - 1)
        phases = {
          apply_install: [
            fake('apply', 'gate', [
              '--stdout',
              'gate-kapp-waiting',
              '--wait-file',
              join(gates, 'open'),
              '120000',
              '--stdout',
              'gate-kapp-passed',
            ]),
          ],
        };
      const n = j * PER_MANIFEST + i;
      if (n < changed) phases = { ...phases, apply_delete: [fake('delete', `v${n}-2`)] };
      kapps.push(kapp(id, phases, fields));
    }
    manifests[`m${j}`] = { kapps };
  }
  return manifests;
}

async function runOf(id: string): Promise<{ status: string }> {
  return (await api(server.url).get<{ status: string }>(`/api/v1/runs/${id}`)).body;
}

beforeAll(async () => {
  gates = tempDir('kapps-web-scale-gates-');
  marker = uniqueMarker('kapps-web-scale');
  const backend = tempDir('kapps-web-scale-backend-');
  big = fixtureProject({ name: 'big', manifests: bigManifests() });
  doomed = fixtureProject({
    name: 'doomed',
    manifests: {
      web: {
        kapps: [
          kapp('first', { apply_install: [fake('apply', 'first', ['--stdout', 'first-done'])] }),
          kapp('hang', { apply_install: [fake('apply', 'hang', ['--stdout', `hanging ${marker}`, '--hang'])] }),
          kapp('after', { apply_install: [fake('apply', 'after')] }, { depends_on: [{ id: 'hang' }] }),
        ],
      },
    },
  });
  const args = ['--project', `big=${big.stackFile}`, '--project', `doomed=${doomed.stackFile}`, '--backend', backend];
  const env = { PATH: big.env.PATH!, HOME: big.env.HOME!, KAPPS_TRACE: doomed.traceFile };
  // A run of `doomed` whose server is killed with -9 while `hang` runs: the restarted server says it errored.
  const first = await startServer({ args, env });
  const submitted = await api(first.url).post<{ id: string }>('/api/v1/runs', {
    type: 'apply',
    project: 'doomed',
    stack: 'dev',
  });
  expect(submitted.status).toBe(202);
  erroredRun = submitted.body.id;
  await waitFor('the hanging step to start', () => processesMatching(marker).length > 0, 30_000);
  // …once the server recorded that `first` succeeded.
  const firstDone = async () =>
    (await api(first.url).get<{ lines: { text: string }[] }>(`/api/v1/runs/${erroredRun}/logs`)).body.lines.some((l) =>
      /^\[web:first\] .*succeeded/.test(l.text),
    );
  for (let i = 0; i < 300 && !(await firstDone()); i++) await sleep(100);
  first.kill9();
  await first.exited;
  killMatching(marker);
  server = await startServer({ args: [...args, '--listen', new URL(first.url).host], env });
  for (let i = 0; i < 600 && (await runOf(erroredRun)).status !== 'errored'; i++) await sleep(100);
  expect((await runOf(erroredRun)).status, 'the run of the killed server').toBe('errored');

  const r = await api(server.url).post<{ id: string }>('/api/v1/runs', { type: 'apply', project: 'big', stack: 'dev' });
  expect(r.status).toBe(202);
  bigRun = r.body.id;
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  writeFileSync(join(gates, 'open'), 'go');
  await browser?.close();
  await server?.stop();
  killMatching(marker);
  cleanupProjects();
});

async function open(
  hash: string,
  options: { viewport?: { width: number; height: number }; bypassCSP?: boolean } = {},
): Promise<Page> {
  const { page } = await newPage(browser, options);
  await page.goto(`${server.url}/${hash}`);
  return page;
}

/** A screenshot for test-results/, and for docs/images/ when KAPPS_WEB_DOC_SHOTS names that folder. */
async function shot(page: Page, name: string): Promise<void> {
  await screenshot(page, name);
  const docs = process.env.KAPPS_WEB_DOC_SHOTS;
  if (docs) await screenshot(page, name, join(docs, `${name}.png`));
}

function node(page: Page, id: string) {
  return page.locator(`[data-testid="dag"] [data-kapp="${id}"]`);
}

describe('the web page at real sizes', () => {
  it('"Follow running" brings the running kapp of a 300-kapp run into view; find, fit, the list by state', async () => {
    const page = await open(`#/runs/${bigRun}`);
    const gate = node(page, 'm9:k29');
    await expect.poll(() => gate.getAttribute('data-state'), POLL).toBe('running');
    expect(await page.locator('[data-testid="dag"] [data-kapp]').count()).toBe(300);
    // The last node of the last column is far outside the DAG's box until followed.
    expect(await inView(page, '[data-testid="dag"] [data-kapp="m9:k29"]')).toBe(false);
    await page.getByLabel('Follow running').check();
    await expect.poll(() => inView(page, '[data-testid="dag"] [data-kapp="m9:k29"]'), POLL).toBe(true);
    expect(await page.getByTestId('progress').textContent()).toMatch(/^299 of 300 kapps done, 1 running/);
    await shot(page, 'run-300-follow-running');
    await page.getByLabel('Follow running').uncheck();

    // Find a kapp by id: its node centred in the DAG, its panel open.
    await page.getByLabel('Find kapp').fill('m5:k13');
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    // (Centred in the DAG's box; the window shows the panel.)
    const inBox = () =>
      page.evaluate(
        '(() => { const box = document.querySelector(\'[data-testid="dag"]\').getBoundingClientRect(); ' +
          'const r = document.querySelector(\'[data-kapp="m5:k13"]\').getBoundingClientRect(); ' +
          'return r.top >= box.top && r.bottom <= box.bottom && r.left >= box.left && r.right <= box.right; })()',
      );
    await expect.poll(inBox, POLL).toBe(true);
    await expect.poll(() => inView(page, '[data-testid="kapp-panel"] h2'), POLL).toBe(true);
    await expect
      .poll(() => page.getByTestId('kapp-panel').getByRole('heading').textContent(), POLL)
      .toContain('m5:k13');
    // Fit: the whole DAG in its box.
    await page.getByRole('button', { name: 'Fit' }).click();
    const fits = await page.evaluate(
      "(() => { const box = document.querySelector('[data-testid=\"dag\"]'); const svg = box.querySelector('svg'); " +
        'return svg.getBoundingClientRect().height <= box.clientHeight && svg.getBoundingClientRect().width <= box.clientWidth; })()',
    );
    expect(fits).toBe(true);
    // The list by state: the running kapp first, the 299 succeeded after it.
    await page.getByLabel('List by state').check();
    const items = page.locator('[data-testid="kapp-list"] li');
    expect(await items.count()).toBe(300);
    expect(await items.first().getAttribute('data-kapp')).toBe('m9:k29');
    expect(await items.first().getAttribute('data-state')).toBe('running');
    expect(await items.nth(1).getAttribute('data-state')).toBe('succeeded');
    // Filtered by manifest, then by state too: the list holds only the kapps kept.
    await page.getByTestId('manifest-filter').selectOption('m3');
    const listed = () =>
      items.evaluateAll((li: { getAttribute(name: string): string | null }[]) =>
        li.map((e) => e.getAttribute('data-kapp')),
      );
    await expect
      .poll(async () => (await listed()).sort(), POLL)
      .toEqual(Array.from({ length: PER_MANIFEST }, (_, i) => `m3:k${i}`).sort());
    expect(await page.getByTestId('kapp-list-count').textContent()).toBe('30 of 300 kapps match the filter.');
    await page.getByTestId('state-filter').selectOption('running');
    await expect.poll(() => items.count(), POLL).toBe(0);
    await page.getByTestId('manifest-filter').selectOption('m9');
    await expect.poll(listed, POLL).toEqual(['m9:k29']);
    // The DAG dims what the filter does not keep.
    await page.getByLabel('DAG', { exact: true }).check();
    const dimmed = () => page.locator('[data-testid="dag"] [data-kapp].dimmed').count();
    await expect.poll(dimmed, POLL).toBe(299);
    expect(await gate.getAttribute('class')).not.toContain('dimmed');
    await page.getByTestId('state-filter').selectOption('');
    await expect.poll(dimmed, POLL).toBe(270);
    await page.getByTestId('manifest-filter').selectOption('');
    await expect.poll(dimmed, POLL).toBe(0);
  }, 120_000);

  it('keeps every line of a 50,000-line log reachable, searchable, in colour, and stops following when scrolled up', async () => {
    const page = await open(`#/runs/${bigRun}`);
    const log = page.getByTestId('log');
    await expect
      .poll(() => page.getByTestId('log-view').locator('.log-count').textContent(), POLL)
      .toMatch(/^5\d{4} lines$/);
    // Only what is in view is in the page.
    expect(await log.locator('.row').count()).toBeLessThan(200);
    // Following the tail: the last line is shown.
    expect(await log.getAttribute('data-follow')).toBe('on');
    // (Which kapp printed last depends on scheduling: the last row is the log's last line, whatever it says.)
    const lastShown = async (): Promise<boolean> => {
      const count = await page.getByTestId('log-view').locator('.log-count').textContent();
      const last = await log.locator('.row .ln').last().textContent();
      return count === `${last ?? ''} lines`;
    };
    await expect.poll(lastShown, POLL).toBe(true);

    // Search: the one line among 50,000, brought into view and marked.
    await page.getByTestId('log-search').fill('line 31337');
    await page.getByTestId('log-search').press('Enter');
    await expect.poll(() => page.getByTestId('log-matches').textContent(), POLL).toBe('1 of 1 matches');
    const hit = log.locator('.row.hit-current');
    expect(await hit.locator('mark').textContent()).toBe('line 31337');
    expect(await inView(page, '[data-testid="log"] .row.hit-current')).toBe(true);
    await page.getByTestId('log-search').fill('line 4999');
    await page.getByTestId('log-search').press('Enter');
    // line 4999, 49990 … 49999.
    await expect.poll(() => page.getByTestId('log-matches').textContent(), POLL).toBe('1 of 11 matches');
    await page.getByRole('button', { name: 'Previous match' }).click();
    expect(await page.getByTestId('log-matches').textContent()).toBe('11 of 11 matches');
    expect(await log.locator('.row.hit-current mark').textContent()).toBe('line 4999');
    await page.getByTestId('log-search').fill('');

    // The coloured line shows in colour, without its escape codes (and is found by its text).
    // (The reporter's line of the step's command has the text too: two matches, the step's output second.)
    await page.getByTestId('log-search').fill('coloured-start plain');
    await page.getByTestId('log-search').press('Enter');
    await page.getByTestId('log-search').press('Enter');
    await expect.poll(() => page.getByTestId('log-matches').textContent(), POLL).toBe('2 of 2 matches');
    const coloured = log.locator('.row.l-stdout.hit-current');
    await expect
      .poll(() => coloured.locator('.lt').textContent(), POLL)
      .toBe('[m0:k1 apply_install/apply] coloured-start plain-after');
    expect(await coloured.locator('.a-f2').textContent()).toBe('coloured-start');
    await page.getByTestId('log-search').fill('');
    // The first line is reachable.
    await scrollTo(page, LOG, 0);
    await expect.poll(() => log.locator('.row[data-line="1"]').count(), POLL).toBe(1);
    expect(await inView(page, '[data-testid="log"] .row[data-line="1"]')).toBe(true);
    await shot(page, 'log-50000');

    // Jump to latest, then scroll up: following stops, and new lines do not pull the view back down.
    await page.getByRole('button', { name: 'Jump to latest ↓' }).click();
    await expect.poll(() => log.getAttribute('data-follow'), POLL).toBe('on');
    await log.hover();
    await page.mouse.wheel(0, -2000);
    await expect.poll(() => log.getAttribute('data-follow'), POLL).toBe('off');
    // (The wheel's scroll lands after its event.)
    await expect.poll(async () => ((s) => s.room - s.top)(await scrollOf(page, LOG)), POLL).toBe(2000);
    const { top, room } = await scrollOf(page, LOG);
    writeFileSync(join(gates, 'open'), 'go');
    await expect.poll(() => page.getByTestId('run-status').textContent(), POLL).toBe('succeeded');
    // Lines arrived below (the log can scroll further than before), and the view stayed where the reader left it.
    await expect.poll(async () => (await scrollOf(page, LOG)).room, POLL).toBeGreaterThan(room);
    expect((await scrollOf(page, LOG)).top).toBe(top);
    await page.getByRole('button', { name: 'Jump to latest ↓' }).click();
    await expect.poll(() => log.locator('.row').last().textContent(), POLL).toMatch(/install succeeded|succeeded/);

    // A link to a line opens the run with that line in view.
    const page2 = await open(`#/runs/${bigRun}/L3`);
    await expect.poll(() => inView(page2, '[data-testid="log"] .row.l-target'), POLL).toBe(true);
    expect(await page2.locator('[data-testid="log"] .row.l-target').getAttribute('data-line')).toBe('3');
  }, 180_000);

  it('shows a 250-change preview as a summary, without drawing every spec', async () => {
    await expect.poll(async () => (await runOf(bigRun)).status, POLL).toBe('succeeded');
    for (const [id, content] of Object.entries(bigManifests(250))) big.write(`manifests/${id}.yaml`, content);
    const r = await api(server.url).post<{ id: string }>('/api/v1/runs', {
      type: 'preview',
      project: 'big',
      stack: 'dev',
    });
    expect(r.status).toBe(202);
    await expect.poll(async () => (await runOf(r.body.id)).status, POLL).toBe('succeeded');
    const page = await open(`#/runs/${r.body.id}`);
    const result = page.getByTestId('preview-result');
    await expect.poll(() => result.locator('p').first().textContent(), POLL).toContain('250 Update, 50 UnChanged');
    // Changed only (the default with many kapps): 250 rows; all 300 on demand.
    expect(await result.locator('table[aria-label="Preview actions"] tbody tr').count()).toBe(250);
    await result.locator('h2').scrollIntoViewIfNeeded();
    await shot(page, 'preview-250');
    await result.getByLabel('Changed only').uncheck();
    expect(await result.locator('table[aria-label="Preview actions"] tbody tr').count()).toBe(300);
    // 250 sections, the first 5 open with their one change each, the others not drawn; no spec side by side.
    const sections = result.locator('details.kapp-diff');
    expect(await sections.count()).toBe(250);
    expect(await result.locator('details.kapp-diff[open]').count()).toBe(5);
    expect(await result.locator('ul.changes').count()).toBe(5);
    expect(await result.locator('table.side-by-side').count()).toBe(0);
    const first = result.locator('details[data-kapp="m0:k0"] ul.changes');
    expect(await first.textContent()).toMatch(/→.*v0-2/);
    // Opening one draws its changes.
    const last = result.locator('details[data-kapp="m8:k9"]');
    expect(await last.locator('ul.changes').count()).toBe(0);
    await last.locator('summary').click();
    await expect.poll(() => last.locator('ul.changes').textContent(), POLL).toMatch(/→.*v249-2/);
  }, 180_000);

  it('shows an errored run with no kapp left running, also on a fresh load', async () => {
    const page = await open(`#/runs/${erroredRun}`);
    await expect.poll(() => page.getByTestId('run-status').textContent(), POLL).toBe('errored');
    await expect.poll(() => node(page, 'web:hang').getAttribute('data-state'), POLL).not.toBeNull();
    const states: Record<string, string | null> = {};
    for (const id of ['web:first', 'web:hang', 'web:after'])
      states[id] = await node(page, id).getAttribute('data-state');
    expect(states).toEqual({ 'web:first': 'succeeded', 'web:hang': 'unfinished', 'web:after': 'unfinished' });
    expect(await page.locator('[data-testid="dag"] [data-state="running"]').count()).toBe(0);
    expect(await page.getByTestId('legend').locator('[data-state="running"]').textContent()).toContain('running: 0');
  }, 120_000);

  it('has no accessibility violations (axe-core) on the stacks, stack, live run (a kapp open) and errored run pages', async () => {
    const pages: [string, string, (page: Page) => Promise<void>][] = [
      ['stacks', '#/', (page) => page.locator('tr[data-stack="big/dev"]').waitFor()],
      [
        'stack',
        '#/stacks/big/dev',
        (page) => page.locator('table[aria-label="Release history"] tr[data-revision]').first().waitFor(),
      ],
      [
        'run with a kapp open',
        `#/runs/${bigRun}`,
        async (page) => {
          await expect.poll(() => node(page, 'm0:k1').getAttribute('data-state'), POLL).toBe('succeeded');
          await node(page, 'm0:k1').click();
          await page.getByTestId('kapp-panel').waitFor();
        },
      ],
      ['errored run', `#/runs/${erroredRun}`, (page) => node(page, 'web:hang').waitFor()],
    ];
    for (const [name, hash, ready] of pages) {
      const page = await open(hash, { bypassCSP: true });
      await ready(page);
      expect({ page: name, violations: await axeViolations(page) }).toEqual({ page: name, violations: [] });
    }
  }, 180_000);

  it('fits a 390 px wide screen: no horizontal scroll on the stacks, stack and run pages', async () => {
    const phone = { viewport: { width: 390, height: 844 } };
    for (const [hash, ready] of [
      ['#/', '[data-stack="big/dev"]'],
      ['#/stacks/big/dev', 'table[aria-label="Release history"] tr[data-revision]'],
      [`#/runs/${bigRun}`, '[data-testid="kapp-list"] li'],
    ] as const) {
      const page = await open(hash, phone);
      await page.locator(ready).first().waitFor();
      expect({ hash, overflow: await horizontalOverflow(page) }).toEqual({ hash, overflow: 0 });
      if (hash.startsWith('#/runs')) await shot(page, 'run-390');
    }
  }, 120_000);
});
