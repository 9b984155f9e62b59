/**
 * The web page in a real browser (headless Chromium) against a real `kapps serve` on loopback, on sample stacks of
 * fake kapps: logging in; a preview with the side-by-side difference of a changed kapp, applied from the page and
 * watched live (DAG nodes waiting → running → succeeded, log lines arriving); a stale preview failing; cancelling a
 * running run; a failing kapp's step lines; a read-only token that sees no changing buttons; unlocking a stale lock;
 * an unreachable server. Steps wait on gate files the test writes, so the page is checked at each state, never by
 * timing. Screenshots of the main pages go to test-results/screenshots/.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, newPage, screenshot } from '../support/browser.js';
import { api, startServer } from '../support/server.js';
import {
  cleanup,
  fakeKapp,
  fileBackend,
  killLeftovers,
  makeProject,
  tempDir,
  waitFor,
  type TestProject,
} from '../fixtures/release/harness.js';

const TOKENS = { read: 'read-token-3b1f', apply: 'apply-token-77ac', admin: 'admin-token-c0de' };
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const MARKER = `kapps-e2e-web-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
const POLL = { timeout: 30_000, interval: 50 };

let browser: Browser;
let server: Awaited<ReturnType<typeof startServer>>;
let gates: string;
let shop: TestProject;
let stale: TestProject;

/** The descriptor of a kapp whose apply step prints `text` (after waiting for `gate`, when given). */
function kapp(tag: string, text: string, gate?: string): string {
  return fakeKapp({ apply: `--tag ${tag} ${gate ? `--wait-file ${gate} 60000 ` : ''}--stdout ${text}` });
}

beforeAll(async () => {
  const home = tempDir('kapps-web-home-');
  const backend = fileBackend(home);
  gates = tempDir('kapps-web-gates-');
  shop = makeProject('shop', backend, [
    { id: 'db', descriptor: kapp('db', 'db-v1') },
    { id: 'cache', descriptor: kapp('cache', 'cache-v1') },
    { id: 'api', dependsOn: ['db', 'cache'], descriptor: kapp('api', 'api-v1') },
    { id: 'jobs', dependsOn: ['db'], descriptor: kapp('jobs', 'jobs-v1') },
    { id: 'front', dependsOn: ['api'], descriptor: kapp('front', 'front-v1') },
  ]);
  const slow = makeProject('slow', backend, [
    { id: 'hang', descriptor: fakeKapp({ apply: `--tag hang --stdout hanging-now --fork-sleep 60 ${MARKER} --hang` }) },
  ]);
  const broken = makeProject('broken', backend, [
    {
      id: 'bad',
      descriptor: fakeKapp({ apply: '--tag bad --stdout step-said-hello --stderr fatal-disk-full --exit 3' }),
    },
    { id: 'after', dependsOn: ['bad'], descriptor: kapp('after', 'never') },
  ]);
  stale = makeProject('stale', backend, [
    { id: 'stuck', descriptor: fakeKapp({ apply: `--tag stuck --fork-sleep 60 ${MARKER} --hang` }) },
  ]);
  const configDir = tempDir('kapps-web-config-');
  const config = join(configDir, 'kapps-server.yaml');
  writeFileSync(
    config,
    [
      'projects:',
      ...[shop, slow, broken, stale].map((p) => `  - name: ${p.dir.split('/').pop()}\n    stack_file: ${p.stackFile}`),
      'tokens:',
      ...Object.entries(TOKENS).map(
        ([role, token]) => `  - name: ${role}-user\n    role: ${role}\n    sha256: ${sha256(token)}`,
      ),
      '',
    ].join('\n'),
  );
  server = await startServer({
    args: ['--backend', home, '--config', 'kapps-server.yaml'],
    env: shop.env,
    cwd: configDir,
  });
  // Release 1 of shop, applied by the server; then the stack changes: db, api and front change, db and api now
  // wait for a gate the test opens.
  const client = api(server.url, TOKENS.apply);
  const submitted = await client.post<{ id: string }>('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
  expect(submitted.status).toBe(202);
  let status = 'queued';
  for (let i = 0; i < 600 && !['succeeded', 'failed', 'cancelled', 'errored'].includes(status); i++) {
    await new Promise((r) => setTimeout(r, 100));
    status = (await client.get<{ status: string }>(`/api/v1/runs/${submitted.body.id}`)).body.status;
  }
  expect(status, 'the first apply of shop').toBe('succeeded');
  shop.writeKapps([
    { id: 'db', descriptor: kapp('db', 'db-v2-ready', join(gates, 'db')) },
    { id: 'cache', descriptor: kapp('cache', 'cache-v1') },
    { id: 'api', dependsOn: ['db', 'cache'], descriptor: kapp('api', 'api-v2-ready', join(gates, 'api')) },
    { id: 'jobs', dependsOn: ['db'], descriptor: kapp('jobs', 'jobs-v1') },
    { id: 'front', dependsOn: ['api'], descriptor: kapp('front', 'front-v2') },
  ]);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await killLeftovers(MARKER);
  cleanup();
});

async function login(token: string): Promise<Page> {
  const { page } = await newPage(browser);
  await page.goto(server.url);
  await page.getByLabel('Token').fill(token);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Stacks' }).waitFor();
  return page;
}

function node(page: Page, id: string) {
  return page.locator(`[data-testid="dag"] [data-kapp="${id}"]`);
}

async function runStatus(page: Page): Promise<string | null> {
  return page.getByTestId('run-status').textContent();
}

describe('the web page', () => {
  it('asks for a token, refuses a wrong one, and lists the stacks once logged in', async () => {
    const { page, errors } = await newPage(browser);
    await page.goto(server.url);
    await screenshot(page, 'login');
    await page.getByLabel('Token').fill('not-a-token');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), POLL).toContain('refused');
    await page.getByLabel('Token').fill(TOKENS.apply);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Stacks' }).waitFor();
    expect(await page.getByTestId('who').textContent()).toBe('apply-user (apply)');
    const rows = page.locator('table[aria-label="Stacks"] tbody tr');
    await expect.poll(() => rows.count(), POLL).toBe(4);
    expect(await page.locator('tr[data-stack="shop/dev"]').textContent()).toContain('#1 install succeeded');
    await screenshot(page, 'stacks');
    expect(errors).toEqual([]);
  });

  it('previews a change side by side, applies it from the page and follows the run live', async () => {
    const page = await login(TOKENS.apply);
    await page.locator('tr[data-stack="shop/dev"] a').click();
    await page.getByRole('heading', { name: 'shop / dev' }).waitFor();
    await page.getByRole('button', { name: 'Preview', exact: true }).click();
    await expect.poll(() => runStatus(page), POLL).toBe('succeeded');
    const result = page.getByTestId('preview-result');
    await expect.poll(() => result.locator('tr[data-kapp="web:api"]').getAttribute('data-action'), POLL).toBe('Update');
    const actions: string[] = [];
    for (const row of await result.locator('tr[data-kapp]').all())
      actions.push(`${await row.getAttribute('data-kapp')} ${await row.getAttribute('data-action')}`);
    expect(actions).toEqual([
      'web:db Update',
      'web:cache UnChanged',
      'web:api Update',
      'web:jobs UnChanged',
      'web:front Update',
    ]);
    // Only the changed kapps get a section: their changes as `path: old → new`.
    expect(await result.locator('details.kapp-diff summary').allTextContents()).toEqual([
      'web:db: Update (1 change)',
      'web:api: Update (1 change)',
      'web:front: Update (1 change)',
    ]);
    const apiDiff = result.locator('details[data-kapp="web:api"]');
    const change = apiDiff.locator('ul.changes li');
    expect(await change.count()).toBe(1);
    expect(await change.locator('.old').textContent()).toContain('api-v1');
    expect(await change.locator('.new').textContent()).toContain('api-v2-ready');
    // The changed kapp's spec from the last release and now, side by side on demand, the differing lines marked.
    expect(await apiDiff.locator('table.side-by-side').count()).toBe(0);
    await apiDiff.getByRole('button', { name: 'Full spec side by side' }).click();
    expect(await apiDiff.locator('td.del[data-side="before"]').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('api-v1')]),
    );
    expect(await apiDiff.locator('td.ins[data-side="after"]').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('api-v2-ready')]),
    );
    expect(await apiDiff.locator('caption').textContent()).toMatch(/\d+ lines? differ/);
    await screenshot(page, 'preview');
    const previewUrl = page.url();

    await page.getByRole('button', { name: 'Apply this' }).click();
    await page.waitForURL((url) => url.toString() !== previewUrl);
    // db runs (waiting for its gate), api waits for db.
    await expect.poll(() => node(page, 'web:db').getAttribute('data-state'), POLL).toBe('running');
    expect(await node(page, 'web:api').getAttribute('data-state')).toBe('waiting');
    expect(await node(page, 'web:api').getAttribute('aria-label')).toBe('web:api waiting');
    expect(await runStatus(page)).toBe('running');
    writeFileSync(join(gates, 'db'), 'go');
    await expect.poll(() => node(page, 'web:db').getAttribute('data-state'), POLL).toBe('succeeded');
    await expect.poll(() => node(page, 'web:api').getAttribute('data-state'), POLL).toBe('running');
    await expect.poll(() => node(page, 'web:jobs').getAttribute('data-state'), POLL).toBe('succeeded');
    expect(await node(page, 'web:front').getAttribute('data-state')).toBe('waiting');
    // The steps' own output lines, as they arrive.
    const printed = () => page.locator('[data-testid="log"] .l-stdout .lt').allTextContents();
    await expect.poll(printed, POLL).toContain('[web:db apply_install/apply] db-v2-ready');
    expect((await printed()).filter((l) => l.endsWith('api-v2-ready'))).toEqual([]);
    await screenshot(page, 'run-live');
    if (process.env.KAPPS_WEB_README_SHOT) await screenshot(page, 'readme', process.env.KAPPS_WEB_README_SHOT);
    // Choosing a kapp (with the keyboard here; a click does the same) shows its steps and its log lines.
    await node(page, 'web:db').focus();
    await page.keyboard.press('Enter');
    const panel = page.getByTestId('kapp-panel');
    await expect.poll(() => panel.textContent(), POLL).toContain('db-v2-ready');
    expect(await panel.locator('tbody tr').first().textContent()).toMatch(/apply_installapplysucceeded0/);
    // The panel took the focus; Escape closes it and gives the focus back to the node.
    await expect.poll(() => page.evaluate('document.activeElement && document.activeElement.id'), POLL).toBe('kapp-h');
    await page.keyboard.press('Escape');
    await expect.poll(() => panel.count(), POLL).toBe(0);
    await expect
      .poll(() => page.evaluate("document.activeElement && document.activeElement.getAttribute('data-kapp')"), POLL)
      .toBe('web:db');
    writeFileSync(join(gates, 'api'), 'go');
    await expect.poll(() => runStatus(page), POLL).toBe('succeeded');
    for (const id of ['web:db', 'web:cache', 'web:api', 'web:jobs', 'web:front'])
      expect(await node(page, id).getAttribute('data-state'), id).toBe('succeeded');
    await expect.poll(printed, POLL).toContain('[web:api apply_install/apply] api-v2-ready');
    // Per-kapp filter of the whole log.
    await page.getByTestId('log-filter').selectOption('web:db');
    expect(await printed()).toEqual(['[web:db apply_install/apply] db-v2-ready']);
    await expect.poll(() => page.getByTestId('apply-result').textContent(), POLL).toContain('Release #2');

    const applyId = page.url().split('/runs/')[1];

    // The preview says it was applied, links to the apply and offers no second one.
    await page.goto(previewUrl);
    const appliedBy = page.getByTestId('applied-by');
    await expect.poll(() => appliedBy.textContent(), POLL).toBe(`Applied by apply ${applyId} (succeeded).`);
    expect(await appliedBy.locator('a').getAttribute('href')).toBe(`#/runs/${applyId}`);
    expect(await page.getByRole('button', { name: 'Apply this' }).count()).toBe(0);
  });

  it('generates the spec from the page, one collapsible section per kapp', async () => {
    const page = await login(TOKENS.apply);
    await page.goto(`${server.url}/#/stacks/broken/dev`);
    // Destroy asks for the stack's name before it may be confirmed (here it is not), and says what it would delete:
    // nothing, this stack has no release yet.
    await page.getByRole('button', { name: 'Destroy', exact: true }).click();
    const confirmDestroy = page.getByRole('button', { name: 'Confirm destroy' });
    await expect
      .poll(() => page.getByTestId('destroy-list').textContent(), POLL)
      .toBe('No release yet: nothing is installed to delete.');
    expect(await confirmDestroy.isDisabled()).toBe(true);
    await page.getByLabel('Type dev to confirm').fill('de');
    expect(await confirmDestroy.isDisabled()).toBe(true);
    await page.getByLabel('Type dev to confirm').fill('dev');
    expect(await confirmDestroy.isDisabled()).toBe(false);
    await page.getByRole('button', { name: 'Back' }).click();
    expect(await confirmDestroy.count()).toBe(0);
    await page.getByRole('button', { name: 'Generate', exact: true }).click();
    await expect.poll(() => runStatus(page), POLL).toBe('succeeded');
    const sections = page.locator('details.kapp-yaml');
    await expect.poll(() => sections.locator('summary').allTextContents(), POLL).toEqual(['web:bad', 'web:after']);
    expect(await sections.first().getAttribute('open')).toBeNull();
    await sections.first().locator('summary').click();
    expect(await sections.first().locator('pre').textContent()).toContain('fatal-disk-full');
    expect(await sections.first().locator('.y-key').first().textContent()).toBe('id');
  });

  it("starts a run with the API's options from the Start run dialog", async () => {
    const page = await login(TOKENS.apply);
    await page.goto(`${server.url}/#/stacks/shop/dev`);
    // Destroy lists the kapps of the latest release it would delete before it asks for the stack's name.
    await page.getByRole('button', { name: 'Destroy', exact: true }).click();
    const toDelete = page.getByRole('alertdialog', { name: 'Confirm destroy' });
    await expect
      .poll(() => toDelete.getByTestId('destroy-list').locator('p').textContent(), POLL)
      .toBe('It deletes these 5 kapps of release #2, by id:');
    expect(await toDelete.locator('li').allTextContents()).toEqual([
      'web:api installed',
      'web:cache installed',
      'web:db installed',
      'web:front installed',
      'web:jobs installed',
    ]);
    await toDelete.getByRole('button', { name: 'Back' }).click();
    await page.getByRole('button', { name: 'Start run…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Start a run' });
    // It takes the focus; Escape closes it.
    await expect
      .poll(() => page.evaluate('document.activeElement && document.activeElement.tagName'), POLL)
      .toBe('SELECT');
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count(), POLL).toBe(0);
    await page.getByRole('button', { name: 'Start run…' }).click();
    await dialog.getByLabel('Type').selectOption('generate');
    await dialog.getByLabel(/^Include kapps/).fill('web:api');
    await dialog.getByRole('button', { name: 'Start generate' }).click();
    await expect.poll(() => runStatus(page), POLL).toBe('succeeded');
    // Only the included kapp and what it depends on are in the spec (not web:jobs, not web:front).
    await expect
      .poll(() => page.locator('details.kapp-yaml summary').allTextContents(), POLL)
      .toEqual(['web:db', 'web:cache', 'web:api']);
  });

  it('cancels a running run from the page', async () => {
    const page = await login(TOKENS.apply);
    await page.goto(`${server.url}/#/stacks/slow/dev`);
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByRole('button', { name: 'Confirm apply' }).click();
    await expect.poll(() => node(page, 'web:hang').getAttribute('data-state'), POLL).toBe('running');
    await expect.poll(() => page.getByTestId('log').textContent(), POLL).toContain('hanging-now');
    // Cancel asks first: the confirmation takes the focus, Escape dismisses it and nothing is cancelled.
    await page.getByRole('button', { name: 'Cancel run' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Confirm cancel' });
    await expect
      .poll(() => page.evaluate('document.activeElement && document.activeElement.textContent'), POLL)
      .toBe('Confirm cancel');
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count(), POLL).toBe(0);
    expect(await runStatus(page)).toBe('running');
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await page.getByRole('button', { name: 'Confirm cancel' }).click();
    await expect.poll(() => runStatus(page), POLL).toBe('cancelled');
    await expect.poll(() => node(page, 'web:hang').getAttribute('data-state'), POLL).toBe('cancelled');
    expect(await page.getByRole('button', { name: 'Cancel run' }).count()).toBe(0);
  });

  it("shows a failing kapp's step and its last lines first", async () => {
    const page = await login(TOKENS.apply);
    await page.goto(`${server.url}/#/stacks/broken/dev`);
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.getByRole('button', { name: 'Confirm apply' }).click();
    await expect.poll(() => runStatus(page), POLL).toBe('failed');
    const failure = page.getByTestId('failure');
    await expect.poll(() => failure.textContent(), POLL).toContain('fatal-disk-full');
    expect(await failure.getByRole('heading').textContent()).toContain('web:bad, step apply_install/apply (exit 3)');
    expect(await failure.textContent()).toContain('step-said-hello');
    expect(await node(page, 'web:bad').getAttribute('data-state')).toBe('failed');
    expect(await node(page, 'web:after').getAttribute('data-state')).toBe('skipped');
    // The failure comes before the DAG and the log on the page.
    const [failureTop, dagTop] = await Promise.all([failure.boundingBox(), page.getByTestId('dag').boundingBox()]);
    expect(failureTop!.y).toBeLessThan(dagTop!.y);
    await screenshot(page, 'run-failed');
    // The kapp's log is grouped per step run, under a header with the step's status and duration that collapses it.
    await failure.getByRole('button', { name: 'Show web:bad' }).click();
    const kappLog = page.getByTestId('kapp-log');
    const header = kappLog.locator('.row.group button');
    const shown = () => kappLog.locator('.row[data-line] .lt').allTextContents();
    await expect.poll(() => header.count(), POLL).toBe(1);
    expect(await header.textContent()).toMatch(/^▾ apply_install\/apply: failed, exit 3, [^·]+ · 2 lines$/);
    expect(await header.getAttribute('aria-expanded')).toBe('true');
    expect((await shown()).join('\n')).toContain('step-said-hello');
    expect((await shown()).join('\n')).toContain('fatal-disk-full');
    await header.click();
    await expect.poll(shown, POLL).toEqual([]);
    expect(await header.getAttribute('aria-expanded')).toBe('false');
    expect(await header.textContent()).toMatch(/^▸ apply_install\/apply: failed/);
    await header.click();
    await expect.poll(async () => (await shown()).join('\n'), POLL).toContain('fatal-disk-full');
  });

  it('shows a stale lock, which an admin unlocks and a read-only token cannot', async () => {
    const cli = stale.start(['install', 'stacks.yaml', 'dev', '-y']);
    await waitFor('the step of the CLI run to start', () => stale.traceLines().some((l) => l.event === 'start'));
    cli.child.kill('SIGKILL');
    await cli.done;
    await killLeftovers(MARKER);

    const reader = await login(TOKENS.read);
    await reader.goto(`${server.url}/#/stacks/stale/dev`);
    await expect.poll(() => reader.getByTestId('lock').textContent(), POLL).toContain('owner looks dead');
    // A read-only token sees no button that would change anything.
    await reader.getByRole('table', { name: 'Run history' }).waitFor();
    const changing = /^(Generate|Preview|Apply|Destroy|Unlock|Cancel|Confirm)/;
    expect(await reader.getByRole('button', { name: changing }).count()).toBe(0);
    await reader.goto(`${server.url}/#/stacks/shop/dev`);
    const firstRun = reader.locator('table[aria-label="Run history"] tr[data-run]:has(.r-succeeded) a').first();
    await firstRun.click();
    await expect.poll(() => runStatus(reader), POLL).toBe('succeeded');
    expect(await reader.getByRole('button', { name: changing }).count()).toBe(0);

    const admin = await login(TOKENS.admin);
    await admin.goto(`${server.url}/#/stacks/stale/dev`);
    await expect.poll(() => admin.getByTestId('lock').textContent(), POLL).toContain('owner looks dead');
    await screenshot(admin, 'stack-locked');
    await admin.getByRole('button', { name: 'Unlock', exact: true }).click();
    await admin.getByRole('button', { name: 'Confirm unlock' }).click();
    await expect.poll(() => admin.getByTestId('lock').textContent(), POLL).toBe('free');
    expect(await admin.getByRole('status').textContent()).toContain('Unlocked');
    await expect
      .poll(() => admin.locator('table[aria-label="Release history"] tr[data-revision="1"]').textContent(), POLL)
      .toContain('failed');
  });

  it('filters the run history and pages it with the cursor', async () => {
    // 21 more generate runs of broken (which already has a generate and a failed apply): two pages of 20.
    const client = api(server.url, TOKENS.apply);
    const ids: string[] = [];
    for (let i = 0; i < 21; i++) {
      const r = await client.post<{ id: string }>('/api/v1/runs', {
        type: 'generate',
        project: 'broken',
        stack: 'dev',
      });
      expect(r.status).toBe(202);
      ids.push(r.body.id);
    }
    // They run one after the other; the last one finished means all did.
    await expect
      .poll(async () => (await client.get<{ status: string }>(`/api/v1/runs/${ids[20]}`)).body.status, POLL)
      .toBe('succeeded');
    const page = await login(TOKENS.read);
    await page.goto(`${server.url}/#/stacks/broken/dev`);
    const rows = page.locator('table[aria-label="Run history"] tr[data-run]');
    await expect.poll(() => rows.count(), POLL).toBe(20);
    // Newest first: the last one submitted heads the first page.
    expect(await rows.first().getAttribute('data-run')).toBe(ids[20]);
    await page.getByRole('button', { name: 'Older' }).first().click();
    await expect.poll(() => rows.count(), POLL).toBe(3);
    expect(await page.locator('.pager span').textContent()).toBe('Page 2');
    const second = (await rows.locator('td:nth-child(2)').allTextContents()).sort();
    expect(second).toEqual(['apply', 'generate', 'generate']);
    await page.getByRole('button', { name: 'Newer' }).first().click();
    await expect.poll(() => rows.first().getAttribute('data-run'), POLL).toBe(ids[20]);
    // Filtered by type: the one apply.
    await page.getByLabel('Type').selectOption('apply');
    await expect.poll(() => rows.count(), POLL).toBe(1);
    expect(await rows.locator('td:nth-child(2)').textContent()).toBe('apply');
  });

  it('shows the release and the difference between two releases', async () => {
    const page = await login(TOKENS.read);
    await page.goto(`${server.url}/#/stacks/shop/dev/releases/2`);
    await expect.poll(() => page.locator('tr[data-kapp="web:api"]').textContent(), POLL).toContain('installed');
    await screenshot(page, 'release');
    await page.goto(`${server.url}/#/stacks/shop/dev/diff/1/2`);
    const diff = page.locator('details[data-kapp="web:api"]');
    await expect.poll(() => diff.locator('ul.changes').textContent(), POLL).toMatch(/api-v1.*→.*api-v2-ready/);
    await diff.getByRole('button', { name: 'Full spec side by side' }).click();
    await expect
      .poll(() => diff.locator('td.del').allTextContents(), POLL)
      .toEqual(expect.arrayContaining([expect.stringContaining('api-v1')]));
    expect(await diff.locator('td.ins').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('api-v2-ready')]),
    );
  });

  it('says so when the server cannot be reached', async () => {
    const page = await login(TOKENS.read);
    await server.stop();
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), POLL).toContain('cannot be reached');
  });
});
