/**
 * Headless Chromium for the web page's tests (playwright-core driving the system's Chromium, `/usr/bin/chromium`
 * or env KAPPS_CHROMIUM), and screenshots of the main pages into `test-results/screenshots/` (kept by CI, not
 * committed).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.KAPPS_CHROMIUM ?? '/usr/bin/chromium';

export const SCREENSHOTS = fileURLToPath(new URL('../../test-results/screenshots', import.meta.url));

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
}

/** A fresh page (its own session storage) that fails the test on any uncaught page error. */
export async function newPage(browser: Browser): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { page, errors };
}

/** Save a full-page screenshot as `test-results/screenshots/<name>.png` (or to `file`). */
export async function screenshot(page: Page, name: string, file?: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: file ?? path.join(SCREENSHOTS, `${name}.png`), fullPage: !file });
}
