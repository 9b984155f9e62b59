#!/usr/bin/env node
// The web page's DAG at scale, in headless Chromium: time to first draw (layout + SVG) of a 1,000-kapp run and the
// cost per event of updating it live (events applied in batches, one batch per animation frame, as the page does
// with its event stream), with the longest batch (a frozen page would show here).
//
//   node bench/web-dag.mjs [--kapps 1000] [--batch 50] [--chromium /usr/bin/chromium]
import { arg, benchInChromium } from './browser-bench.mjs';

const r = await benchInChromium('dag-bench.html', { kapps: arg('kapps', '1000'), batch: arg('batch', '50') });
if (r) {
  const f = (n) => n.toFixed(1);
  process.stdout.write(
    `${r.kapps} kapps: first draw ${f(r.firstDrawMs)} ms; ${r.events} events in batches of ${r.batch}: ` +
      `${f(r.perEventUs)} µs per event, longest batch ${f(r.longestBatchMs)} ms; ${r.succeeded} nodes drawn succeeded\n`,
  );
  if (r.succeeded !== r.kapps) throw new Error(`expected ${r.kapps} succeeded nodes, saw ${r.succeeded}`);
}
