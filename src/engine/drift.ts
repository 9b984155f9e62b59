/**
 * A drift check (`kapps drift`, the runs server's `drift` runs): the preview of the stack against its latest release
 * with the live outputs of its unchanged installed kapps read (their output phases run, as `preview --refresh` runs
 * them), compared output by output with what the release recorded (`release/drift.ts`). It changes nothing and
 * writes no release.
 */
import type { DriftIgnore, DriftReport, NoisyPath, PreviousRead } from '../release/drift.js';
import type { Stack } from '../stack/stack.js';
import type { EngineContext, StackParams, TargetParams } from './context.js';
import { openStackFor } from './open.js';
import { openTarget } from './target.js';
import { inRunContext } from './scope.js';

/** What a check takes besides the stack: the ignore rules, the noisy marks and the previous check's reads. */
export interface DriftOptions {
  readonly ignore?: readonly DriftIgnore[];
  readonly noisy?: readonly NoisyPath[];
  readonly previous?: PreviousRead;
  /** Kapps whose output phases run at once (default: the stack's `num_workers`). */
  readonly workers?: number;
  /** When the check is made (ISO); default now. */
  readonly now?: () => string;
}

export interface DriftResult {
  report: DriftReport;
  /** The output paths this check found noisy (the runs server keeps them as marks). */
  newlyNoisy: NoisyPath[];
}

/** Check the stack of `params` for drift against its latest release. */
export function checkDrift(
  params: StackParams & TargetParams,
  ctx: EngineContext,
  signal: AbortSignal,
  options: DriftOptions = {},
): Promise<DriftResult> {
  return inRunContext(ctx, async () => {
    const stack = await openStackFor(params, { planning: true, signal }, ctx);
    return driftOf(stack, params, ctx, signal, options);
  });
}

async function driftOf(
  stack: Stack,
  params: TargetParams,
  ctx: EngineContext,
  signal: AbortSignal,
  options: DriftOptions,
): Promise<DriftResult> {
  const { computePreview } = await import('../release/preview.js');
  const { evaluateDrift } = await import('../release/drift.js');
  const { completeSpecOf, previewKappsOf } = await import('./spec.js');
  const { refreshOutputs } = await import('./preview.js');
  const { project, store } = await openTarget(stack, params, ctx);
  try {
    const processed = new Set(stack.selection.nodes.filter((n) => n.processed).map((n) => n.id));
    const complete = await completeSpecOf(stack, processed, store, ctx, { record: false });
    const latest = await store.latest(project, stack.config.name);
    const known = new Set(stack.kapps.map((k) => k.id));
    // Kapps gone from the stack are pending deletes; the preview's Delete rows of kapps still in it are not.
    const rows = computePreview(await previewKappsOf(stack, complete), latest?.state).filter(
      (r) => r.action !== 'Delete' || !known.has(r.id),
    );
    // Only kapps the latest release installed are read: there is nothing to drift from otherwise.
    const installed = rows.filter((r) => latest?.state[r.id]?.status === 'installed');
    const live = latest ? await refreshOutputs(stack, installed, options.workers, ctx, signal) : new Map();
    return evaluateDrift({
      project,
      stack: stack.config.name,
      checkedAt: options.now ? options.now() : new Date().toISOString(),
      rows,
      basedOnRevision: latest?.revision ?? null,
      state: latest?.state,
      live,
      ...(options.ignore ? { ignore: options.ignore } : {}),
      ...(options.noisy ? { noisy: options.noisy } : {}),
      ...(options.previous ? { previous: options.previous } : {}),
    });
  } finally {
    await store.close();
  }
}
