/**
 * The fleet view, a stack's drift page and the rollback flow, in headless Chromium against a real `kapps serve` on
 * loopback with read, plan and apply tokens. `shop` has a kapp whose output phase reads a file: once installed, the
 * test changes that file behind kapps' back and a plan token's "Check now" runs a drift check; the fleet then shows
 * shop drifted (first), the drift page the output as recorded and as read. `app` lives in a git checkout, installed
 * twice (its configuration changed and committed between): "Roll back to #1" previews the rollback, "Apply this
 * rollback" applies it, and revision 3 says "rollback of #1". axe-core finds no violation on these pages.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Release, Run } from '../../src/api/index.js';
import { axeViolations, horizontalOverflow, launchBrowser, loggedIn, screenshot } from '../support/browser.js';
import { api, startServer, waitForRun, type TestServer } from '../support/server.js';
import {
  cleanup,
  fakeKapp,
  fileBackend,
  makeProject,
  tempDir,
  type KappDef,
  type TestProject,
} from '../fixtures/release/harness.js';

const TOKENS = { read: 'read-token-f1ee', plan: 'plan-token-d21f', apply: 'apply-token-7b0c' };
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const POLL = { timeout: 30_000, interval: 50 };
const FINAL = ['succeeded', 'failed', 'cancelled', 'errored'];

let browser: Browser;
let server: TestServer;
let live: string;
let app: TestProject;
/** The project whose environment the server runs with: every step's trace goes to its trace file. */
let traced: TestProject;
/** The rollback's preview run (the accessibility check opens it again). */
let rollbackPreview = '';

/** A kapp whose output phase reads `file` (its output `version`): what is installed, as a drift check sees it. */
function reads(id: string, file: string): KappDef {
  return {
    id,
    descriptor: fakeKapp(
      { apply: `--tag apply-${id}` },
      [
        '    output:',
        '      - name: read',
        '        command: kapps-fake',
        `        args: --tag output-${id} --cat ${file}`,
        `        stdout: ${id}/version.txt`,
        'outputs:',
        '  - id: version',
        '    path: version.txt',
        '    format: text',
        '',
      ].join('\n'),
    ),
  };
}

/** A kapp whose apply step prints `text`. */
function prints(id: string, text: string): KappDef {
  return { id, descriptor: fakeKapp({ apply: `--tag apply-${id} --stdout ${text}` }) };
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Ada Lovelace',
      GIT_AUTHOR_EMAIL: 'ada@example.com',
      GIT_COMMITTER_NAME: 'Ada Lovelace',
      GIT_COMMITTER_EMAIL: 'ada@example.com',
      GIT_CONFIG_NOSYSTEM: '1',
      HOME: app.env.HOME ?? app.root,
    },
  }).trim();
}

async function applyByServer(project: string): Promise<Run> {
  const client = api(server.url, TOKENS.apply);
  const submitted = await client.post<Run>('/api/v1/runs', { type: 'apply', project, stack: 'dev' });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
  const done = await waitForRun(client, submitted.body.id);
  expect(done.status, `the apply of ${project}: ${done.error}`).toBe('succeeded');
  return done;
}

beforeAll(async () => {
  const home = tempDir('kapps-web-fleet-home-');
  const backend = fileBackend(home);
  live = tempDir('kapps-web-fleet-live-');
  writeFileSync(join(live, 'db.txt'), 'db-v1');
  const shop = makeProject('shop', backend, [reads('db', join(live, 'db.txt')), prints('cache', 'cache-v1')]);
  const calm = makeProject('calm', backend, [prints('solo', 'solo-v1')]);
  app = makeProject('app', backend, [prints('api', 'api-v1'), prints('worker', 'worker-v1')]);
  // app is a clean git checkout, so its releases record their commit and can be rolled back to.
  writeFileSync(join(app.dir, '.gitignore'), '.kapps-workspace/\n');
  git(app.dir, 'init', '--quiet', '--initial-branch', 'main');
  git(app.dir, 'add', '-A');
  git(app.dir, 'commit', '--quiet', '-m', 'First app');
  const configDir = tempDir('kapps-web-fleet-config-');
  const config = join(configDir, 'kapps-server.yaml');
  writeFileSync(
    config,
    [
      'projects:',
      ...[shop, calm, app].map((p) => `  - name: ${p.dir.split('/').pop()}\n    stack_file: ${p.stackFile}`),
      'tokens:',
      ...Object.entries(TOKENS).map(
        ([role, token]) => `  - name: ${role}-user\n    role: ${role}\n    sha256: ${sha256(token)}`,
      ),
      '',
    ].join('\n'),
  );
  traced = shop;
  server = await startServer({
    args: ['--backend', home, '--config', 'kapps-server.yaml'],
    env: shop.env,
    cwd: configDir,
  });
  await applyByServer('shop');
  await applyByServer('calm');
  await applyByServer('app');
  // app changes (api prints something else, a kapp is added) and is committed, then installed again: revision 2.
  app.writeKapps([
    prints('api', 'api-v2'),
    prints('worker', 'worker-v1'),
    { id: 'extra', descriptor: fakeKapp({ apply: '--tag apply-extra', delete: '--tag delete-extra' }) },
  ]);
  git(app.dir, 'add', '-A');
  git(app.dir, 'commit', '--quiet', '-m', 'api v2');
  await applyByServer('app');
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  cleanup();
});

function login(token: string, hash = '', bypassCSP = false): Promise<{ page: Page; errors: string[] }> {
  return loggedIn(browser, server.url, token, hash, bypassCSP);
}

async function finalStatus(page: Page): Promise<string> {
  await expect
    .poll(async () => FINAL.includes((await page.getByTestId('run-status').textContent()) ?? ''), POLL)
    .toBe(true);
  return (await page.getByTestId('run-status').textContent()) ?? '';
}

describe('the fleet and drift pages', () => {
  it('"Check now" finds the output changed behind kapps\' back; the fleet shows shop drifted first', async () => {
    writeFileSync(join(live, 'db.txt'), 'db-v2');
    const { page, errors } = await login(TOKENS.plan, '#/stacks/shop/dev/drift');
    await page.getByRole('heading', { name: 'Drift of shop/dev' }).waitFor();
    expect(await page.getByTestId('drift-schedule').innerText()).toContain('not scheduled');
    await page.getByRole('button', { name: 'Check now' }).click();
    // The drift run's page: its type in words, then its result as a drift report.
    await page.getByRole('heading', { name: /^Drift check / }).waitFor();
    expect(await finalStatus(page)).toBe('succeeded');
    const report = page.getByTestId('drift-report');
    await report.waitFor();
    expect(await report.getByTestId('drift-state').first().innerText()).toContain('drifted: 1 kapp');
    const row = report.locator('[data-kapp="web:db"] tr[data-output="version"]');
    expect(await row.locator('td').allInnerTexts()).toEqual(['version', '"db-v1"', '"db-v2"']);
    expect(await report.locator('[data-kapp="web:cache"]').count()).toBe(0);
    const runId = page.url().split('/runs/')[1]!;

    // The fleet: shop drifted and first; calm never checked; app's rows too.
    await page.getByRole('link', { name: 'Fleet' }).click();
    const fleet = page.getByRole('table', { name: 'Fleet' });
    await fleet.waitFor();
    const shopRow = fleet.locator('tr[data-stack="shop/dev"]');
    await expect.poll(() => shopRow.getAttribute('data-drift'), POLL).toBe('drifted');
    expect(await fleet.locator('tbody tr').first().getAttribute('data-stack')).toBe('shop/dev');
    expect(await shopRow.getByTestId('drift-state').innerText()).toContain('drifted: 1 kapp');
    expect(await shopRow.getByTestId('drift-since').innerText()).toMatch(/^ since \d{4}-\d\d-\d\d /);
    expect(await shopRow.getByTestId('fleet-release').innerText()).toMatch(/^#1 install succeeded, \d{4}-/);
    expect(await fleet.locator('tr[data-stack="calm/dev"]').getByTestId('drift-state').innerText()).toContain(
      'not checked yet',
    );
    expect(await page.getByTestId('fleet-counts').innerText()).toBe(
      '3 stacks: 1 drifted, 0 unknown, 0 in sync, 2 not checked yet.',
    );
    // Sorted by name, calm comes first; Find keeps the matching stacks.
    await page.getByLabel('Sort by').selectOption('name');
    expect(await fleet.locator('tbody tr').first().getAttribute('data-stack')).toBe('app/dev');
    await page.getByLabel('Find').fill('sho');
    expect(await fleet.locator('tbody tr').count()).toBe(1);
    await screenshot(page, 'fleet');

    // Its drift page: the episode, the check in the history (a link to its run), the output recorded and read.
    await shopRow.getByRole('link', { name: /^Drift of shop\/dev: drifted/ }).click();
    await page.getByTestId('open-episode').waitFor();
    expect(await page.getByTestId('open-episode').innerText()).toContain('web:db');
    const check = page.getByRole('table', { name: 'Drift checks' }).locator(`tr[data-run="${runId}"]`);
    expect(await check.getAttribute('data-state')).toBe('drifted');
    expect(await check.getByRole('link', { name: runId }).getAttribute('href')).toBe(`#/runs/${runId}`);
    const latest = page.getByRole('table', { name: 'Outputs of web:db that drifted' });
    expect(await latest.locator('tbody td').allInnerTexts()).toEqual(['version', '"db-v1"', '"db-v2"']);
    await screenshot(page, 'drift');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('offers "Check now" to plan and up only, and no rollback to a read token', async () => {
    const { page } = await login(TOKENS.read, '#/stacks/shop/dev/drift');
    await page.getByRole('table', { name: 'Drift checks' }).locator('tbody tr[data-run]').first().waitFor();
    expect(await page.getByRole('button', { name: 'Check now' }).count()).toBe(0);
    await page.goto(`${server.url}/#/stacks/app/dev`);
    await page.getByRole('table', { name: 'Release history' }).locator('tr[data-revision="1"]').waitFor();
    expect(await page.getByRole('button', { name: /^Roll back/ }).count()).toBe(0);
    await page.close();
  });
  it('has no accessibility violations (axe-core) on the fleet and drift pages, and fits a 390 px screen', async () => {
    const pages: [string, string, (page: Page) => Promise<void>][] = [
      ['fleet', '#/fleet', (page) => page.locator('table[aria-label="Fleet"] tr[data-drift="drifted"]').waitFor()],
      ['drift', '#/stacks/shop/dev/drift', (page) => page.getByTestId('drift-report').waitFor()],
    ];
    const { page } = await login(TOKENS.apply, '', true);
    for (const [name, hash, ready] of pages) {
      await page.goto(`${server.url}/${hash}`);
      await ready(page);
      expect({ page: name, violations: await axeViolations(page) }).toEqual({ page: name, violations: [] });
    }
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, hash, ready] of pages) {
      await page.goto(`${server.url}/${hash}`);
      await ready(page);
      expect({ page: name, overflow: await horizontalOverflow(page) }).toEqual({ page: name, overflow: 0 });
    }
    await page.close();
  });
});

describe('rolling back from the page', () => {
  it('asks about prune, previews the rollback to #1, applies it: revisions 3 and 4 say "rollback of #1"', async () => {
    const { page, errors } = await login(TOKENS.apply, '#/stacks/app/dev');
    const history = page.getByRole('table', { name: 'Release history' });
    await history.locator('tr[data-revision="2"]').waitFor();
    // The latest release is what is installed: no rollback to it.
    expect(await history.locator('tr[data-revision="2"]').getByRole('button').count()).toBe(0);
    await history.locator('tr[data-revision="1"]').getByRole('link', { name: '#1' }).click();
    await page.getByRole('button', { name: 'Roll back to this revision' }).click();
    // Asked first: prune or not (the rollback takes it from its preview); the dialog takes the focus.
    const ask = page.getByRole('alertdialog', { name: 'Roll back to #1' });
    await ask.waitFor();
    expect(await page.evaluate('document.activeElement.type')).toBe('checkbox');
    await ask.getByLabel(/Prune: delete the kapps installed now/).check();
    await ask.getByRole('button', { name: 'Preview the rollback' }).click();

    // The rollback's preview: api goes back to v1, nothing applied yet.
    await page.getByRole('heading', { name: /^Preview of a rollback to #1 / }).waitFor();
    expect(await page.getByTestId('rollback-target').innerText()).toContain('release #1');
    expect(await finalStatus(page)).toBe('succeeded');
    const preview = page.getByTestId('preview-result');
    await preview.waitFor();
    expect(await preview.locator('tr[data-kapp="web:api"]').getAttribute('data-action')).toBe('Update');
    expect(await preview.locator('tr[data-kapp="web:worker"]').getAttribute('data-action')).toBe('UnChanged');
    expect(await preview.locator('tr[data-kapp="web:extra"]').getAttribute('data-action')).toBe('Delete');
    expect(await preview.getByRole('button', { name: 'Apply this', exact: true }).count()).toBe(0);
    const previewId = page.url().split('/runs/')[1]!;
    const releases = await api(server.url, TOKENS.read).get<{ releases: Release[] }>(
      '/api/v1/projects/app/stacks/dev/releases?limit=5',
    );
    expect(releases.body.releases.map((r) => r.revision)).toEqual([2, 1]);
    rollbackPreview = previewId;
    await screenshot(page, 'rollback-preview');

    expect(await preview.getByTestId('rollback-prune').innerText()).toBe('It deletes the kapp marked Delete (prune).');
    const before = traced.traceLines().length;
    await preview.getByRole('button', { name: 'Apply this rollback' }).click();
    await page.getByRole('heading', { name: /^Rollback to #1 / }).waitFor();
    expect(await finalStatus(page)).toBe('succeeded');
    const run = await api(server.url, TOKENS.read).get<Run>(`/api/v1/runs/${page.url().split('/runs/')[1]!}`);
    expect(run.body).toMatchObject({ type: 'rollback', options: { previewRunId: previewId, prune: true } });
    // Revision 1's api step ran again; extra, absent at #1, was deleted.
    const started = traced
      .traceLines()
      .slice(before)
      .filter((l) => l.event === 'start')
      .map((l) => l.args);
    expect(started).toEqual([
      expect.stringContaining('--tag apply-api --stdout api-v1') as unknown,
      expect.stringContaining('--tag delete-extra') as unknown,
    ]);
    // The rollback recorded revision 3 (the install of #1's desired state) and, pruning, 4 (the delete of extra):
    // the result links the last, and both say what they roll back to.
    await page.getByTestId('apply-result').getByRole('link', { name: 'Release #4' }).click();
    const operation = page.getByTestId('release-operation');
    await expect.poll(() => operation.textContent(), POLL).toBe('delete, rollback of #1');
    await page.goto(`${server.url}/#/stacks/app/dev/releases/3`);
    await expect.poll(() => operation.textContent(), POLL).toBe('install, rollback of #1');
    expect(await operation.getByRole('link', { name: '#1' }).getAttribute('href')).toBe('#/stacks/app/dev/releases/1');
    await screenshot(page, 'rollback-release');
    // The release history says so too, and the preview now names the rollback that applied it.
    await page.goto(`${server.url}/#/stacks/app/dev`);
    const history2 = page.getByRole('table', { name: 'Release history' });
    await history2.locator('tr[data-revision="4"]').waitFor();
    for (const rev of ['3', '4'])
      expect(await history2.locator(`tr[data-revision="${rev}"]`).getByTestId('rollback-of').innerText()).toBe(
        ', rollback of #1',
      );
    expect(await history2.locator('tr[data-revision="2"]').getByTestId('rollback-of').count()).toBe(0);
    await page.goto(`${server.url}/#/runs/${previewId}`);
    await page.getByTestId('applied-by').waitFor();
    expect(await page.getByTestId('applied-by').innerText()).toContain('rollback');
    expect(await page.getByRole('button', { name: 'Apply this rollback' }).count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('has no accessibility violations (axe-core) on the rollback preview', async () => {
    expect(rollbackPreview).not.toBe('');
    const { page } = await login(TOKENS.apply, `#/runs/${rollbackPreview}`, true);
    await page.getByTestId('applied-by').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.close();
  });
});
