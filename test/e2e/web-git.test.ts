/**
 * The web page for projects from git, in headless Chromium against a real `kapps serve` whose project `shop` is a
 * git repository on disk (and `plain` a stack file): the run list and detail show a run's short SHA and subject, the
 * start-run dialog runs at a ref (checked through the API), shows an unknown ref's problem next to the field, and
 * has no ref field for a stack-file project.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Run, RunList } from '../../src/api/index.js';
import { launchBrowser, newPage } from '../support/browser.js';
import { gitRemote, type GitRemote } from '../support/git-remote.js';
import { cleanupProjects, fake, fixtureProject, kapp } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun, type TestServer } from '../support/server.js';

let browser: Browser;
let server: TestServer;
let remote: GitRemote;
let first: string;
let second: string;

beforeAll(async () => {
  const p = fixtureProject({
    name: 'infra',
    manifests: { shop: { kapps: [kapp('web', { apply_install: [fake('deploy', 'web', ['--stdout', 'v1'])] })] } },
  });
  remote = gitRemote(p);
  first = remote.head();
  second = remote.commit('Second change of the shop', {}, 'feature');
  const config = p.write(
    '../server.yaml',
    `projects:\n  - name: shop\n    repo:\n      url: ${remote.url}\n      path: stacks.yaml\n` +
      `  - name: plain\n    stack_file: ${p.dir}/stacks.yaml\n`,
  );
  server = await startServer({ args: ['--config', config], env: p.env, cwd: p.root });
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopAllServers();
  cleanupProjects();
});

async function open(hash: string): Promise<Page> {
  const { page } = await newPage(browser);
  await page.goto(`${server.url}/${hash}`);
  return page;
}

describe('web page: projects from git', () => {
  it('shows the short SHA and subject of a run in the run list and on the run', async () => {
    const c = api(server.url);
    const submitted = await c.post<Run>('/api/v1/runs', { type: 'generate', project: 'shop', stack: 'dev' });
    expect(submitted.status).toBe(202);
    await waitForRun(c, submitted.body.id);
    const page = await open('#/stacks/shop/dev');
    const row = page.locator(`tr[data-run="${submitted.body.id}"]`);
    const line = row.getByTestId('run-commit');
    await line.waitFor();
    expect(await line.innerText()).toContain(first.slice(0, 10));
    expect(await line.innerText()).toContain('First stack');
    expect(await row.getByTestId('run-trigger').innerText()).toBe('(api)');
    const link = line.getByRole('link', { name: `run at commit ${first}` });
    expect(await link.getAttribute('title')).toBe(first);
    await link.click();
    const detail = page.locator('dd[data-testid="run-commit"]');
    await detail.waitFor();
    expect(await detail.innerText()).toContain(first.slice(0, 10));
    expect(await detail.innerText()).toContain('First stack');
    expect(await detail.locator('code.sha').getAttribute('title')).toBe(first);
    expect(await page.getByTestId('run-trigger').innerText()).toBe('api');
    await page.close();
  });

  it('starts a run at the ref typed in the dialog, and shows an unknown ref next to the field', async () => {
    const page = await open('#/stacks/shop/dev');
    await page.getByRole('button', { name: 'Start run…' }).click();
    const ref = page.getByLabel('Ref (branch, tag or commit)');
    expect(await ref.getAttribute('placeholder')).toBe('default branch');
    await ref.fill('no-such-branch');
    await page.getByRole('button', { name: 'Start preview' }).click();
    const problem = page.locator('#start-run-ref-error');
    await problem.waitFor();
    expect(await problem.innerText()).toContain('body.ref');
    expect(await problem.innerText()).toContain('no-such-branch');
    expect(await ref.getAttribute('aria-invalid')).toBe('true');

    await ref.fill('feature');
    await page.getByRole('button', { name: 'Start preview' }).click();
    await page.locator('dd[data-testid="run-commit"]').waitFor();
    const runs = await api(server.url).get<RunList>('/api/v1/runs?project=shop&stack=dev&type=preview');
    expect(runs.body.runs).toHaveLength(1);
    expect(runs.body.runs[0]!.commit).toMatchObject({ sha: second, ref: 'feature' });
    expect(page.url()).toContain(runs.body.runs[0]!.id);
    await page.close();
  });

  it('shows the commit a release was applied from, in the release history and on the release', async () => {
    const c = api(server.url);
    const submitted = await c.post<Run>('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    const done = await waitForRun(c, submitted.body.id);
    expect(done.status).toBe('succeeded');
    const page = await open('#/stacks/shop/dev');
    const source = page.getByTestId('release-source').first();
    await source.waitFor();
    expect(await source.innerText()).toContain(first.slice(0, 10));
    expect(await source.innerText()).toContain(remote.url);
    await page.goto(`${server.url}/#/stacks/shop/dev/releases/${done.releaseRevision}`);
    const shown = page.getByTestId('release-source');
    await shown.waitFor();
    expect(await shown.locator('code.sha').getAttribute('title')).toBe(first);
    await page.close();
  });

  it('has no ref field for a project from a stack file', async () => {
    const page = await open('#/stacks/plain/dev');
    await page.getByRole('button', { name: 'Start run…' }).click();
    await page.getByRole('dialog', { name: 'Start a run' }).waitFor();
    expect(await page.getByLabel('Ref (branch, tag or commit)').count()).toBe(0);
    expect(await page.getByTestId('run-commit').count()).toBe(0);
    await page.close();
  });
});
