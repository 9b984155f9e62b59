/**
 * Approvals and run checks on the web page, in headless Chromium against a real `kapps serve` whose project `gated`
 * requires one approval (from apply or admin tokens, not by the author) and runs an advisory check after each preview
 * that fails; admin tokens may skip approvals (`break_glass`). Tokens: alice and bob (apply), reader (read), ops
 * (admin). An apply alice starts from the page says it needs an approval, then waits; alice sees no Approve button, bob
 * finds it from the stacks list's badge, sees the change summary and the failed advisory check, approves with a
 * comment, and both pages follow the run to its end; the release shows bob's approval. "Apply this" of a preview and
 * "Apply this rollback" wait the same way. A reader sees a waiting run without buttons; bob rejects one with a comment.
 * A waiting run goes stale when the CLI releases the stack under it, and its page says so. An admin's break glass shows
 * on the run and its release. On prod, which needs two approvals, bob's leaves it waiting and ops' lets it run.
 * axe-core finds no violation on the stacks list, a waiting run, the stack page and a release with its approval; a
 * waiting run fits a 390 px screen.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Release, Run } from '../../src/api/index.js';
import { axeViolations, horizontalOverflow, launchBrowser, loggedIn, screenshot } from '../support/browser.js';
import { api, startServer, waitForRun, type TestServer } from '../support/server.js';
import { cleanupProjects, fake, fixtureProject, kapp, type FixtureProject } from '../support/project.js';

const TOKENS = { alice: 'alice-token-5e1a', bob: 'bob-token-9c2d', reader: 'reader-token-0f3b', ops: 'ops-token-7d4e' };
const ROLES = { alice: 'apply', bob: 'apply', reader: 'read', ops: 'admin' };
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const POLL = { timeout: 30_000, interval: 50 };
const FINAL = ['succeeded', 'failed', 'cancelled', 'errored', 'rejected', 'stale'];
/** What the advisory check prints before it exits 1. */
const CHECK_SAYS = 'estimated cost 120 EUR a month, over the budget of 100';

let browser: Browser;
let server: TestServer;
let gated: FixtureProject;

/** The kapps of `gated` at version `v` (manifest `web`): api depends on db. */
function writeKapps(v: number): void {
  gated.write('manifests/web.yaml', {
    kapps: [
      kapp('db', { apply_install: [fake('apply', `db-v${v}`, ['--stdout', `db-v${v}`])] }),
      kapp(
        'api',
        { apply_install: [fake('apply', `api-v${v}`, ['--stdout', `api-v${v}`])] },
        { depends_on: [{ id: 'db' }] },
      ),
    ],
  });
}

/** Git in the project folder (a clean checkout: its releases record their commit and can be rolled back to). */
function git(...args: string[]): string {
  return execFileSync('git', args, {
    cwd: gated.dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Ada Lovelace',
      GIT_AUTHOR_EMAIL: 'ada@example.com',
      GIT_COMMITTER_NAME: 'Ada Lovelace',
      GIT_COMMITTER_EMAIL: 'ada@example.com',
      GIT_CONFIG_NOSYSTEM: '1',
      HOME: gated.env.HOME ?? gated.root,
    },
  }).trim();
}

/** Version `v` of the kapps, committed. */
function commitKapps(v: number): void {
  writeKapps(v);
  git('add', '-A');
  git('commit', '--quiet', '-m', `kapps v${v}`);
}

beforeAll(async () => {
  // Two stacks of the same kapps: dev needs one approval, prod two.
  const stack = { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/web.yaml' }] };
  gated = fixtureProject({ name: 'gated', manifests: { web: { kapps: [] } }, stacks: { dev: stack, prod: stack } });
  gated.write('.gitignore', '.kapps-workspace/\n');
  git('init', '--quiet', '--initial-branch', 'main');
  commitKapps(1);
  const check = [process.execPath, '-e', `console.log(${JSON.stringify(CHECK_SAYS)}); process.exit(1)`];
  const config = gated.write(
    '../server.yaml',
    [
      'projects:',
      '  - name: gated',
      '    stack_file: gated/stacks.yaml',
      '    approvals:',
      '      required: 1',
      '      break_glass: [admin]',
      '    checks:',
      '      - name: cost',
      '        stage: after_preview',
      '        enforcement: advisory',
      `        command: ${JSON.stringify(check)}`,
      '    stacks:',
      '      prod:',
      '        approvals: {required: 2}',
      'tokens:',
      ...Object.entries(TOKENS).map(
        ([name, token]) =>
          `  - name: ${name}\n    role: ${ROLES[name as keyof typeof ROLES]}\n    sha256: ${sha256(token)}`,
      ),
      '',
    ].join('\n'),
  );
  server = await startServer({ args: ['--config', config], env: gated.env, cwd: gated.root });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  cleanupProjects();
});

function login(token: string, hash = '', bypassCSP = false): Promise<{ page: Page; errors: string[] }> {
  return loggedIn(browser, server.url, token, hash, bypassCSP);
}

async function status(page: Page): Promise<string> {
  return (await page.getByTestId('run-status').textContent()) ?? '';
}

/** Wait until the run page shows `want` as its status (without reloading: the page follows the run live). */
async function statusBecomes(page: Page, want: string): Promise<void> {
  await expect.poll(() => status(page), POLL).toBe(want);
}

function runIdOf(page: Page): string {
  return decodeURIComponent(page.url().split('/runs/')[1]!.split('/')[0]!);
}

/** Wait for run `id` to finish through the API; it ended `want` (else its error says why). */
async function ended(id: string, want: string): Promise<void> {
  const run = await waitForRun(api(server.url, TOKENS.bob), id, (r) => FINAL.includes(r.status), 60_000);
  expect(run.status, run.error ?? '').toBe(want);
}

/** Submit an apply of `gated` as `who` through the API; it ends up waiting for approval. */
async function waitingApply(who: keyof typeof TOKENS): Promise<Run> {
  const client = api(server.url, TOKENS[who]);
  const submitted = await client.post<Run>('/api/v1/runs', { type: 'apply', project: 'gated', stack: 'dev' });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
  const run = await waitForRun(
    client,
    submitted.body.id,
    (r) => r.status === 'needs-approval' || FINAL.includes(r.status),
  );
  expect(run.status, JSON.stringify(run)).toBe('needs-approval');
  return run;
}

describe('web page: approvals and run checks', () => {
  it("an apply waits for approval; its author cannot approve; bob approves from the stacks list's badge", async () => {
    // Alice applies from the stack page: the run's page says it needs an approval, then that it waits for one.
    const alice = await login(TOKENS.alice, '#/stacks/gated/dev');
    await alice.page.getByRole('button', { name: 'Apply', exact: true }).click();
    await alice.page.getByRole('button', { name: 'Confirm apply' }).click();
    await alice.page.getByRole('heading', { name: /^Apply / }).waitFor();
    const id = runIdOf(alice.page);
    const state = alice.page.getByTestId('approval-state');
    await state.waitFor();
    expect(await alice.page.getByTestId('approval-required').innerText()).toBe(
      '1 approval from apply or admin tokens, not by its author (alice)',
    );
    await statusBecomes(alice.page, 'needs-approval');
    await expect
      .poll(() => state.innerText(), POLL)
      .toBe('Waiting for approval: 0 of 1 approval so far. Nothing is applied until it is approved.');
    // The author gets no button, and is told why.
    expect(await alice.page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(await alice.page.getByRole('button', { name: 'Reject' }).count()).toBe(0);
    expect(await alice.page.getByTestId('no-decide').innerText()).toBe(
      'You started this run: another token must approve it.',
    );
    // Its change summary and its check: the advisory check failed, and did not stop it.
    const preview = alice.page.getByTestId('bound-preview');
    await preview.waitFor();
    expect(await preview.getByTestId('preview-counts').innerText()).toBe(
      'Compared with no release (nothing installed yet): 2 Create.',
    );
    const check = alice.page.getByRole('table', { name: 'Checks' }).locator('tr[data-check="cost"]');
    expect(await check.locator('td').allInnerTexts()).toEqual([
      'cost',
      'after the preview',
      'advisory',
      '! failed',
      expect.stringContaining(CHECK_SAYS) as unknown as string,
      expect.stringMatching(/^\d/) as unknown as string,
    ]);
    expect(alice.errors).toEqual([]);

    // Bob: the stacks list shows the waiting run, and links to it.
    const bob = await login(TOKENS.bob, '', true);
    const cell = bob.page.locator('tr[data-stack="gated/dev"]').getByTestId('waiting-approval');
    await expect.poll(() => cell.innerText(), POLL).toContain('1 waiting');
    expect(await bob.page.getByTestId('waiting-total').innerText()).toBe('1 run waits for approval: gated/dev.');
    await screenshot(bob.page, 'stacks-waiting-approval');
    expect({ page: 'stacks', violations: await axeViolations(bob.page) }).toEqual({ page: 'stacks', violations: [] });
    await cell.getByRole('link', { name: `apply ${id}` }).click();
    await bob.page.getByTestId('bound-preview').waitFor();
    const rows = bob.page
      .getByTestId('bound-preview')
      .getByRole('table', { name: 'Preview actions' })
      .locator('tbody tr');
    const summary: string[] = [];
    for (const row of await rows.all())
      summary.push(`${await row.getAttribute('data-kapp')} ${await row.getAttribute('data-action')}`);
    expect(summary).toEqual(['web:db Create', 'web:api Create']);
    await bob.page.getByLabel('Comment (optional, kept with your decision)').fill('looks fine');
    await screenshot(bob.page, 'run-needs-approval');
    await bob.page.getByRole('button', { name: 'Approve' }).click();
    // It goes on and finishes, on bob's page and on alice's (neither reloads).
    await statusBecomes(bob.page, 'succeeded');
    await statusBecomes(alice.page, 'succeeded');
    const decision = bob.page.getByRole('table', { name: 'Decisions' }).locator('tr[data-by="bob"]');
    expect(await decision.locator('td').allInnerTexts()).toEqual([
      'bob (apply)',
      '✓ approved',
      expect.stringMatching(/^\d{4}-\d\d-\d\d /) as unknown as string,
      'looks fine',
    ]);
    expect(await bob.page.getByTestId('approval-state').innerText()).toBe('Approved (1 of 1).');
    expect(await bob.page.getByRole('button', { name: 'Approve' }).count()).toBe(0);

    // The release it recorded shows the approval.
    await bob.page.getByTestId('apply-result').getByRole('link', { name: 'Release #1' }).click();
    const approvals = bob.page.getByTestId('release-approvals');
    await approvals.waitFor();
    expect(await approvals.innerText()).toMatch(/^bob at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ: looks fine$/);
    const release = await api(server.url, TOKENS.bob).get<Release>('/api/v1/projects/gated/stacks/dev/releases/1');
    expect(release.body.approvals?.map((a) => [a.by, a.comment])).toEqual([['bob', 'looks fine']]);
    expect({ page: 'release', violations: await axeViolations(bob.page) }).toEqual({ page: 'release', violations: [] });
    expect(bob.errors).toEqual([]);
    await alice.page.close();
    await bob.page.close();
  });

  it('"Apply this" of a preview and "Apply this rollback" show the run waiting for approval', async () => {
    commitKapps(2);
    const alice = await login(TOKENS.alice, '#/stacks/gated/dev');
    await alice.page.getByRole('button', { name: 'Preview', exact: true }).click();
    await alice.page.getByTestId('preview-result').waitFor();
    // A plain preview runs the checks after it too.
    expect(await alice.page.locator('tr[data-check="cost"]').getAttribute('data-status')).toBe('failed');
    await alice.page.getByRole('button', { name: 'Apply this', exact: true }).click();
    await alice.page.getByRole('heading', { name: /^Apply / }).waitFor();
    await statusBecomes(alice.page, 'needs-approval');
    expect(await alice.page.getByTestId('approval-state').innerText()).toContain('Waiting for approval');
    const apply = runIdOf(alice.page);
    const decided = await api(server.url, TOKENS.bob).post<Run>(`/api/v1/runs/${apply}/approve`, {});
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    await ended(apply, 'succeeded');
    await statusBecomes(alice.page, 'succeeded');

    // Roll back to #1 from its release page: the rollback waits for approval the same way.
    await alice.page.goto(`${server.url}/#/stacks/gated/dev/releases/1`);
    await alice.page.getByRole('button', { name: 'Roll back to this revision' }).click();
    await alice.page.getByRole('button', { name: 'Preview the rollback' }).click();
    await alice.page.getByRole('button', { name: 'Apply this rollback' }).click();
    await alice.page.getByRole('heading', { name: /^Rollback to #1 / }).waitFor();
    await statusBecomes(alice.page, 'needs-approval');
    expect(await alice.page.getByTestId('approval-state').innerText()).toContain('Waiting for approval');
    const rollback = runIdOf(alice.page);
    expect(
      (await api(server.url, TOKENS.bob).post<Run>(`/api/v1/runs/${rollback}/approve`, { comment: 'back to v1' }))
        .status,
    ).toBe(200);
    await ended(rollback, 'succeeded');
    await statusBecomes(alice.page, 'succeeded');
    expect(alice.errors).toEqual([]);
    await alice.page.close();
  });

  it('a reader sees a waiting run without buttons; bob rejects it with a comment', async () => {
    commitKapps(3);
    const run = await waitingApply('alice');
    const reader = await login(TOKENS.reader, `#/runs/${run.id}`);
    await reader.page.getByTestId('bound-preview').waitFor();
    expect(await reader.page.getByTestId('no-decide').innerText()).toBe(
      'Approvals come from tokens of role apply or admin; yours is read.',
    );
    expect(await reader.page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(await reader.page.getByRole('button', { name: 'Reject' }).count()).toBe(0);

    const bob = await login(TOKENS.bob, `#/runs/${run.id}`, true);
    await bob.page.getByRole('button', { name: 'Approve' }).waitFor();
    expect({ page: 'waiting run', violations: await axeViolations(bob.page) }).toEqual({
      page: 'waiting run',
      violations: [],
    });
    // On a phone, nothing is wider than the screen.
    await bob.page.setViewportSize({ width: 390, height: 844 });
    expect(await horizontalOverflow(bob.page)).toBe(0);
    await bob.page.setViewportSize({ width: 1280, height: 900 });
    await bob.page.getByLabel('Comment (optional, kept with your decision)').fill('not on a Friday');
    await bob.page.getByRole('button', { name: 'Reject' }).click();
    await statusBecomes(bob.page, 'rejected');
    await expect
      .poll(() => bob.page.getByTestId('approval-state').innerText(), POLL)
      .toMatch(/^Rejected by bob at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ: not on a Friday Nothing was applied\.$/);
    expect(await bob.page.getByRole('button', { name: 'Reject' }).count()).toBe(0);
    // The reader's page follows it too.
    await statusBecomes(reader.page, 'rejected');

    // The stack's run history shows the new states and filters by them.
    await bob.page.goto(`${server.url}/#/stacks/gated/dev`);
    const history = bob.page.getByRole('table', { name: 'Run history' });
    await history.locator(`tr[data-run="${run.id}"]`).waitFor();
    expect(await history.locator(`tr[data-run="${run.id}"] .badge`).innerText()).toBe('rejected');
    const options = await bob.page.getByLabel('Status').locator('option').allInnerTexts();
    expect(options).toEqual(expect.arrayContaining(['needs-approval', 'rejected', 'stale']));
    await bob.page.getByLabel('Status').selectOption('rejected');
    await expect.poll(() => history.locator('tbody tr[data-run]').count(), POLL).toBe(1);
    expect(await bob.page.getByTestId('waiting-approval').innerText()).toBe('—');
    expect({ page: 'stack', violations: await axeViolations(bob.page) }).toEqual({ page: 'stack', violations: [] });
    expect(bob.errors).toEqual([]);
    expect(reader.errors).toEqual([]);
    await reader.page.close();
    await bob.page.close();
  });

  it('a waiting run the stack was released under goes stale, and its page says so', async () => {
    commitKapps(4);
    const run = await waitingApply('alice');
    // The stack page lists it as waiting, and its history row says how many approvals it has.
    const bob = await login(TOKENS.bob, '#/stacks/gated/dev');
    const waitingCell = bob.page.getByTestId('waiting-approval');
    await expect.poll(() => waitingCell.innerText(), POLL).toBe(`◷ 1 waiting apply ${run.id}`);
    const row = bob.page.getByRole('table', { name: 'Run history' }).locator(`tr[data-run="${run.id}"]`);
    await expect
      .poll(() => row.locator('td[data-label="Status"]').innerText(), POLL)
      .toBe('needs-approval (0 of 1 approved)');
    await waitingCell.getByRole('link', { name: `apply ${run.id}` }).click();
    await bob.page.getByRole('button', { name: 'Approve' }).waitFor();
    // A release by another path: the CLI installs the same stack file on the same backend.
    const installed = await gated.run('install', ['-y'], { env: { KAPPS_BACKEND: server.backend! } });
    expect(installed.code, installed.stderr).toBe(0);
    await statusBecomes(bob.page, 'stale');
    expect(await bob.page.getByTestId('approval-state').innerText()).toBe(
      'Stale: the stack changed under the preview it was bound to. Nothing was applied; a new preview and new approvals are needed.',
    );
    expect(await bob.page.getByTestId('run-error').innerText()).toContain('release');
    expect(await bob.page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    // The preview it was bound to stays to be read.
    await bob.page.getByRole('heading', { name: 'The preview it was bound to' }).waitFor();
    expect(bob.errors).toEqual([]);
    await bob.page.close();
  });

  it('a run that skipped its approvals by break glass says so, and so does its release', async () => {
    commitKapps(5);
    const ops = api(server.url, TOKENS.ops);
    const submitted = await ops.post<Run>('/api/v1/runs', {
      type: 'apply',
      project: 'gated',
      stack: 'dev',
      breakGlass: true,
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    await ended(submitted.body.id, 'succeeded');
    const { page, errors } = await login(TOKENS.bob, `#/runs/${submitted.body.id}`);
    await statusBecomes(page, 'succeeded');
    expect(await page.getByTestId('approval-state').innerText()).toMatch(
      /^Approvals skipped by break glass: ops \(admin\) at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ\.$/,
    );
    await page
      .getByTestId('apply-result')
      .getByRole('link', { name: /^Release #\d+$/ })
      .click();
    const glass = page.getByTestId('release-break-glass');
    await glass.waitFor();
    expect(await glass.innerText()).toMatch(/^approvals skipped by ops \(admin\) at \d{4}-\d\d-\d\d /);
    expect(await page.getByTestId('release-approvals').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a run needing two approvals counts them: bob approves, is told it waits for another, ops approves', async () => {
    const alice = api(server.url, TOKENS.alice);
    const submitted = await alice.post<Run>('/api/v1/runs', { type: 'apply', project: 'gated', stack: 'prod' });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(202);
    const id = submitted.body.id;
    await waitForRun(alice, id, (r) => r.status === 'needs-approval' || FINAL.includes(r.status));
    const { page, errors } = await login(TOKENS.bob, `#/runs/${id}`);
    const state = page.getByTestId('approval-state');
    await expect
      .poll(() => state.innerText(), POLL)
      .toBe('Waiting for approval: 0 of 2 approvals so far. Nothing is applied until it is approved.');
    await page.getByLabel('Comment (optional, kept with your decision)').fill('first of two');
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect
      .poll(() => page.getByRole('status').allInnerTexts(), POLL)
      .toContain('Approved: it waits for more approvals.');
    await expect
      .poll(() => state.innerText(), POLL)
      .toBe('Waiting for approval: 1 of 2 approvals so far. Nothing is applied until it is approved.');
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(await page.getByTestId('no-decide').innerText()).toBe('You approved it: it waits for another approval.');
    expect(await status(page)).toBe('needs-approval');

    // The second approval, by another token: the run goes on, and bob's page follows it to its end.
    const second = await api(server.url, TOKENS.ops).post<Run>(`/api/v1/runs/${id}/approve`, { comment: 'second' });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    await ended(id, 'succeeded');
    await statusBecomes(page, 'succeeded');
    const decisions = page.getByRole('table', { name: 'Decisions' }).locator('tbody tr');
    await expect.poll(() => decisions.count(), POLL).toBe(2);
    expect(await decisions.locator('td[data-label="By"]').allInnerTexts()).toEqual(['bob (apply)', 'ops (admin)']);
    expect(await decisions.locator('td[data-label="Comment"]').allInnerTexts()).toEqual(['first of two', 'second']);
    expect(errors).toEqual([]);
    await page.close();
  });
});
