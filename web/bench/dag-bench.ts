/**
 * The DAG bench, run in Chromium by bench/web-dag.mjs: lay out and draw a DAG of N kapps (time to first draw),
 * then feed it the events of a whole run in batches, one batch per animation frame as the page does with SSE
 * (per-event update cost, and the longest frame).
 */
import '../src/style.css';
import { DagView } from '../src/dag';
import { applyMessage, emptyModel } from '../src/run-model';

const params = new URLSearchParams(location.search);
const N = Number(params.get('kapps') ?? 1000);
const BATCH = Number(params.get('batch') ?? 50);

function frame(): Promise<number> {
  return new Promise((r) => requestAnimationFrame(r));
}

async function main() {
  // A layered stack: each kapp depends on 0–3 of the 60 kapps before it (seeded, so every run draws the same DAG).
  let seed = 42;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const ids = Array.from({ length: N }, (_, i) => `m${String(Math.floor(i / 10)).padStart(3, '0')}:k${i}`);
  const dependsOn: Record<string, string[]> = {};
  ids.forEach((id, i) => {
    const deps = new Set<string>();
    const n = i === 0 ? 0 : Math.floor(rand() * 4);
    for (let j = 0; j < n; j++) deps.add(ids[Math.max(0, i - 1 - Math.floor(rand() * 60))]!);
    dependsOn[id] = [...deps];
  });
  const model = emptyModel();
  const t = (type: string, extra: object) => ({ time: new Date().toISOString(), type, ...extra });
  const box = document.getElementById('dag')!;
  const view = new DagView(box, () => {});

  await frame();
  const t0 = performance.now();
  applyMessage(model, 'run-event', t('run-started', { kapps: ids, dependsOn, phases: ['apply_install'] }));
  view.draw(model.order.map((id) => model.kapps.get(id)!));
  model.dirty.clear();
  box.getBoundingClientRect();
  await frame();
  const firstDraw = performance.now() - t0;

  const events: unknown[] = [];
  for (const id of ids) {
    events.push(t('kapp-started', { kapp: id, role: 'selected' }));
    events.push(t('step-started', { kapp: id, phase: 'apply_install', step: 'run', command: 'x', args: [] }));
    events.push(
      t('step-finished', {
        kapp: id,
        phase: 'apply_install',
        step: 'run',
        status: 'succeeded',
        exitCode: 0,
        durationMs: 5,
      }),
    );
    events.push(t('kapp-finished', { kapp: id, status: 'succeeded', durationMs: 5 }));
  }
  let busy = 0;
  let longest = 0;
  for (let i = 0; i < events.length; i += BATCH) {
    const s = performance.now();
    for (const e of events.slice(i, i + BATCH)) applyMessage(model, 'run-event', e);
    view.update([...model.dirty].map((id) => model.kapps.get(id)!));
    model.dirty.clear();
    box.getBoundingClientRect();
    const spent = performance.now() - s;
    busy += spent;
    longest = Math.max(longest, spent);
    await frame();
  }
  const succeeded = box.querySelectorAll('[data-state="succeeded"]').length;
  (window as unknown as { benchResult: unknown }).benchResult = {
    kapps: N,
    events: events.length,
    firstDrawMs: firstDraw,
    perEventUs: (busy / events.length) * 1000,
    longestBatchMs: longest,
    batch: BATCH,
    succeeded,
  };
}

main().catch((e: unknown) => {
  (window as unknown as { benchResult: unknown }).benchResult = { error: String(e) };
});
