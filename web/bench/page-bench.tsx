/**
 * The log viewer and the change summaries at real sizes, run in Chromium by bench/web-page.mjs. Each figure comes
 * with its baseline measured in the same page, so the ratio says what the design saves:
 * - a 50,000-line log: first draw of the log viewer (only the rows in view) against drawing every line;
 *   a search over all lines; the cost per appended batch while following the tail;
 * - a 250-change preview: first draw of the change summaries against every kapp's spec side by side.
 */
import { render } from 'preact';
import '../src/style.css';
import { ChangeList, diffValues, KappChanges } from '../src/change-list';
import { SideBySide, asText } from '../src/diff-view';
import { LogView } from '../src/log-view';
import type { LogLine } from '../src/api';

const params = new URLSearchParams(location.search);
const LINES = Number(params.get('lines') ?? 50_000);
const CHANGES = Number(params.get('changes') ?? 250);

function frame(): Promise<number> {
  return new Promise((r) => requestAnimationFrame(r));
}

async function timed(draw: () => void): Promise<number> {
  const app = document.getElementById('app')!;
  render(null, app);
  await frame();
  const t0 = performance.now();
  draw();
  app.getBoundingClientRect();
  await frame();
  return performance.now() - t0;
}

function logLines(n: number): LogLine[] {
  const t = Date.parse('2026-01-01T00:00:00Z');
  return Array.from({ length: n }, (_, i) => ({
    time: new Date(t + i * 10).toISOString(),
    stream: i % 50 === 0 ? 'stderr' : 'stdout',
    kapp: `m${i % 10}:k${i % 30}`,
    phase: 'apply_install',
    step: 'apply',
    text: i % 100 === 0 ? `\u001b[32mok\u001b[0m line ${i + 1}` : `line ${i + 1} of the step's output`,
  }));
}

function spec(i: number, version: string) {
  return {
    id: `m${Math.floor(i / 30)}:k${i % 30}`,
    dependsOn: i % 3 ? [`m${Math.floor(i / 30)}:k${(i % 30) - 1}`] : [],
    vars: { version, replicas: 3, image: `registry.example/app-${i}:${version}` },
    steps: Array.from({ length: 6 }, (_, s) => ({ name: `step-${s}`, command: 'helm', args: ['upgrade', `app-${i}`] })),
    sources: [{ uri: `git@example.com:apps/app-${i}.git`, branch: 'main' }],
  };
}

async function main() {
  const app = document.getElementById('app')!;
  const lines = logLines(LINES);
  const start = Date.parse(lines[0]!.time);

  const logFirst = await timed(() =>
    render(<LogView runId="bench" lines={lines} count={lines.length} start={start} label="Log" testId="log" />, app),
  );
  const rowsDrawn = app.querySelectorAll('.log .row').length;
  // Search: type a term that matches 11 lines among all.
  const input = app.querySelector('input[type="search"]') as HTMLInputElement;
  const s0 = performance.now();
  input.value = 'line 4999';
  input.dispatchEvent(new Event('input', { bubbles: true }));
  await frame();
  const searchMs = performance.now() - s0;
  const matches = app.querySelector('[data-testid="log-matches"]')?.textContent ?? '';
  input.value = '';
  input.dispatchEvent(new Event('input', { bubbles: true }));
  await frame();
  // Following the tail: 200 batches of 50 lines, one per frame.
  const live = lines.slice();
  let busy = 0;
  for (let b = 0; b < 200; b++) {
    const s = performance.now();
    live.push(...logLines(50));
    render(<LogView runId="bench" lines={live} count={live.length} start={start} label="Log" testId="log" />, app);
    app.getBoundingClientRect();
    busy += performance.now() - s;
    await frame();
  }
  const appendMs = busy / 200;
  const logAll = await timed(() =>
    render(
      <div class="log">
        {lines.map((l, i) => (
          <div key={i} class="row">
            {l.text}
          </div>
        ))}
      </div>,
      app,
    ),
  );

  const kapps = Array.from({ length: CHANGES }, (_, i) => ({ from: spec(i, 'v1'), to: spec(i, 'v2') }));
  const previewSummary = await timed(() =>
    render(
      <>
        {kapps.map((k, i) => (
          <KappChanges
            key={k.to.id}
            id={k.to.id}
            open={i < 5}
            summary={k.to.id}
            body={() => <ChangeList changes={diffValues(k.from, k.to)} label={k.to.id} />}
            full={() => ({
              label: k.to.id,
              before: asText(k.from),
              after: asText(k.to),
              beforeTitle: 'before',
              afterTitle: 'after',
            })}
          />
        ))}
      </>,
      app,
    ),
  );
  const previewAll = await timed(() =>
    render(
      <>
        {kapps.map((k) => (
          <SideBySide
            key={k.to.id}
            label={k.to.id}
            before={asText(k.from)}
            after={asText(k.to)}
            beforeTitle="before"
            afterTitle="after"
          />
        ))}
      </>,
      app,
    ),
  );
  (window as unknown as { benchResult: unknown }).benchResult = {
    lines: LINES,
    logFirstMs: logFirst,
    logAllMs: logAll,
    rowsDrawn,
    searchMs,
    matches,
    appendMs,
    changes: CHANGES,
    previewSummaryMs: previewSummary,
    previewAllMs: previewAll,
  };
}

main().catch((e: unknown) => {
  (window as unknown as { benchResult: unknown }).benchResult = { error: String(e) };
});
