/**
 * Headless Chromium for the web page's tests (playwright-core driving the system's Chromium, `/usr/bin/chromium`
 * or env KAPPS_CHROMIUM; smooth scrolling off, so a wheel scrolls at once), and screenshots of the main pages into `test-results/screenshots/` (kept by CI, not
 * committed).
 */
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.KAPPS_CHROMIUM ?? '/usr/bin/chromium';

export const SCREENSHOTS = fileURLToPath(new URL('../../test-results/screenshots', import.meta.url));

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-smooth-scrolling'],
  });
}

/** A fresh page (its own session storage) that fails the test on any uncaught page error. */
export async function newPage(
  browser: Browser,
  options: { viewport?: { width: number; height: number }; bypassCSP?: boolean } = {},
): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 900 },
    bypassCSP: options.bypassCSP ?? false,
  });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { page, errors };
}

/**
 * A fresh page logged in to the server at `url` with `token` (the stacks list shown), then at `hash` when given
 * (`#/runs/ID`); `bypassCSP` for pages axe-core is injected into.
 */
export async function loggedIn(
  browser: Browser,
  url: string,
  token: string,
  hash = '',
  bypassCSP = false,
): Promise<{ page: Page; errors: string[] }> {
  const opened = await newPage(browser, { bypassCSP });
  await opened.page.goto(url);
  await opened.page.getByLabel('Token').fill(token);
  await opened.page.getByRole('button', { name: 'Log in' }).click();
  await opened.page.getByRole('heading', { name: 'Stacks' }).waitFor();
  if (hash) await opened.page.goto(`${url}/${hash}`);
  return opened;
}

/** Save a full-page screenshot as `test-results/screenshots/<name>.png` (or to `file`). */
export async function screenshot(page: Page, name: string, file?: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: file ?? path.join(SCREENSHOTS, `${name}.png`), fullPage: !file });
}

/**
 * In the page: whether the element `sel` is in view, inside every scrolling box around it and the window (its
 * whole height, and its start: a log row may be wider than its box). A string: the tests have no DOM types.
 */
const IN_VIEW = `(sel) => {
  const el = document.querySelector(sel);
  if (!el) return false;
  const r = el.getBoundingClientRect();
  const clip = { top: 0, left: 0, bottom: innerHeight, right: innerWidth };
  for (let box = el.parentElement; box; box = box.parentElement) {
    if (!(box instanceof HTMLElement) || getComputedStyle(box).overflow === 'visible') continue;
    const b = box.getBoundingClientRect();
    clip.top = Math.max(clip.top, b.top);
    clip.left = Math.max(clip.left, b.left);
    clip.bottom = Math.min(clip.bottom, b.bottom);
    clip.right = Math.min(clip.right, b.right);
  }
  return r.top >= clip.top && r.bottom <= clip.bottom && r.left >= clip.left && Math.min(r.right, r.left + 100) <= clip.right;
}`;

/** Whether the element matching `selector` is visible on screen, not scrolled away in its box or the window. */
export async function inView(page: Page, selector: string): Promise<boolean> {
  return (await page.evaluate(`(${IN_VIEW})(${JSON.stringify(selector)})`)) === true;
}

/** A scrolling element's `scrollTop`, `scrollHeight - clientHeight` (how far it can scroll) and `scrollWidth - clientWidth`. */
export async function scrollOf(page: Page, selector: string): Promise<{ top: number; room: number; wide: number }> {
  return page.evaluate<{ top: number; room: number; wide: number }>(
    `(() => { const el = document.querySelector(${JSON.stringify(selector)}); ` +
      'return { top: el.scrollTop, room: el.scrollHeight - el.clientHeight, wide: el.scrollWidth - el.clientWidth }; })()',
  );
}

/** Scroll an element to `top`. */
export async function scrollTo(page: Page, selector: string, top: number): Promise<void> {
  await page.evaluate(`document.querySelector(${JSON.stringify(selector)}).scrollTop = ${Number(top)}`);
}

/** A rule axe-core found broken: its id, how many elements, the first one's selector. */
export interface AxeViolation {
  id: string;
  nodes: number;
  first: string;
}

/**
 * Run axe-core (the devDependency, injected into the page: open the page with `bypassCSP`, since the server's
 * Content-Security-Policy refuses injected scripts) on the whole document; its violations.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate("typeof window.axe === 'object'")))
    await page.addScriptTag({ path: createRequire(import.meta.url).resolve('axe-core/axe.min.js') });
  return page.evaluate<AxeViolation[]>(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => " +
      '({ id: v.id, nodes: v.nodes.length, first: String(v.nodes[0] && v.nodes[0].target) })))',
  );
}

/** How much wider than the window the page is (0: no horizontal scroll). */
export async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
}
