#!/usr/bin/env node
// The web page's log viewer and change summaries at real sizes, in headless Chromium (web/bench/page-bench.tsx):
// first draw of a 50,000-line log against drawing every line, a search over all of it, the cost per appended batch
// while following; first draw of a 250-change preview as summaries against every spec side by side. Ratios against
// the baseline measured in the same page; absolute times on a shared machine are noise.
//
//   node bench/web-page.mjs [--lines 50000] [--changes 250] [--chromium /usr/bin/chromium]
import { arg, benchInChromium } from './browser-bench.mjs';

const r = await benchInChromium('page-bench.html', { lines: arg('lines', '50000'), changes: arg('changes', '250') });
if (r) {
  const f = (n) => n.toFixed(1);
  const x = (a, b) => (b / a).toFixed(1);
  process.stdout.write(
    `log of ${r.lines} lines: first draw ${f(r.logFirstMs)} ms (${r.rowsDrawn} rows in the page) vs every line ` +
      `${f(r.logAllMs)} ms: ${x(r.logFirstMs, r.logAllMs)}× less; search ${f(r.searchMs)} ms (${r.matches}); ` +
      `${f(r.appendMs)} ms per batch of 50 lines while following\n` +
      `preview of ${r.changes} changes: summaries ${f(r.previewSummaryMs)} ms vs every spec side by side ` +
      `${f(r.previewAllMs)} ms: ${x(r.previewSummaryMs, r.previewAllMs)}× less\n`,
  );
  if (r.matches !== '0 of 11 matches') throw new Error(`the search found ${r.matches}, not 11 lines`);
}
