/**
 * The preview as the CLI computes it: the spec of the processed kapps now, the latest release's state, the specs
 * recorded for each kapp (read from the release that last changed its entry), and, with `--refresh`, the live
 * outputs read by running the output phase of the installed kapps that declare outputs. The comparison itself is
 * the pure `previewDocument` of `release/preview.ts`.
 *
 * The refresh changes nothing: it runs only output phases (no templates rendered, no other phase), writes no
 * release, and its steps' output is not shown.
 */
import type { SpecKapp } from '../plan/spec.js';
import type { PreviewDocument, PreviewRow, RefreshResult, Release, ReleaseState } from '../release/index.js';
import type { ReleaseStore } from '../release/store-types.js';
import type { Stack } from '../stack/stack.js';
import { toJS } from '../go-value/value.js';
import { openTarget } from './target.js';
import type { EngineContext, TargetParams } from './context.js';

/** What `computePreview` needs from the command line. */
export type PreviewRunArgs = TargetParams & {
  refresh?: boolean;
  workers?: number;
};

/** A preview with everything it was computed from. */
export interface PreviewResult {
  rows: PreviewRow[];
  revision: number | null;
  project: string;
  document: PreviewDocument;
}

/** The ids the run processes, in stack order. */
function processedIds(stack: Stack): string[] {
  return stack.selection.nodes.filter((n) => n.processed).map((n) => n.id);
}

/** The spec each kapp of `ids` had in the release that last changed its state entry (one read per release). */
export async function recordedSpecs(
  store: ReleaseStore,
  latest: Release,
  ids: Iterable<string>,
): Promise<Map<string, SpecKapp>> {
  // Each release's spec by kapp id, made when a kapp first needs it.
  const specs = new Map<number, Map<string, SpecKapp>>();
  const out = new Map<string, SpecKapp>();
  for (const id of ids) {
    const entry = Object.hasOwn(latest.state, id) ? latest.state[id] : undefined;
    if (!entry) continue;
    let byId = specs.get(entry.revision);
    if (!byId) {
      const release =
        entry.revision === latest.revision ? latest : await store.get(latest.project, latest.stack, entry.revision);
      byId = new Map((release?.spec.kapps ?? []).map((k) => [k.id, k] as const));
      specs.set(entry.revision, byId);
    }
    const spec = byId.get(id);
    if (spec) out.set(id, spec);
  }
  return out;
}

/**
 * Read the live outputs of the kapps the preview leaves `UnChanged` that declare outputs: run their output phase
 * and load their outputs, as `kapps output` runs it. A kapp whose output phase fails (or that cannot be read) gives
 * its reason. Runs nothing when no kapp qualifies.
 */
export async function refreshOutputs(
  stack: Stack,
  rows: readonly PreviewRow[],
  workers: number | undefined,
  ctx: EngineContext,
  signal: AbortSignal,
): Promise<Map<string, RefreshResult>> {
  if (workers !== undefined && (!Number.isInteger(workers) || workers < 1)) {
    const { UsageError } = await import('../diagnostics/errors.js');
    throw new UsageError(`--workers must be a whole number ≥ 1, got ${String(workers)}`);
  }
  const inStack = new Set(stack.kapps.map((k) => k.id));
  const ids = rows
    .filter((r) => r.action === 'UnChanged' && inStack.has(r.id))
    .map((r) => r.id)
    .filter((id) => stack.kapp(id).outputIds.length > 0);
  const out = new Map<string, RefreshResult>();
  if (ids.length === 0) return out;
  const { runStack } = await import('../execute/run-stack.js');
  const { stepEnv } = await import('./run.js');
  const env = stepEnv(ctx.env.KAPPS_BACKEND ?? stack.project.backend, ctx);
  const only = new Set(ids);
  // An abort (Ctrl-C, a cancelled run) stops the output steps cleanly (they run in their own process groups), then
  // the preview ends as interrupted.
  const summary = await runStack(
    stack,
    {
      command: 'output',
      mode: 'plan',
      dryRun: false,
      workers: workers ?? stack.project.num_workers,
      keepGoing: true,
      ignoreErrors: false,
      verbose: false,
      env,
      only,
      readOutputs: true,
    },
    { emit: () => undefined, signal },
  );
  if (signal.aborted) {
    const { CancelledError } = await import('../diagnostics/errors.js');
    throw new CancelledError('interrupted while reading the live outputs');
  }
  for (const id of ids) {
    const result = summary.results.get(id);
    if (result?.status === 'succeeded') {
      out.set(id, { outputs: (result.outputs ? toJS(result.outputs) : {}) as never });
    } else {
      out.set(id, { error: `outputs not read: ${result?.reason ?? result?.status ?? 'not run'}` });
    }
  }
  return out;
}

/** Compute the preview of the stack's processed kapps against its latest release. */
export async function computePreviewFor(
  stack: Stack,
  args: PreviewRunArgs,
  ctx: EngineContext,
  signal: AbortSignal,
): Promise<PreviewResult> {
  const { applyRefresh, computePreview, previewDocument } = await import('../release/preview.js');
  const { completeSpecOf, previewKappsOf } = await import('./spec.js');
  const { project, store } = await openTarget(stack, args, ctx);
  try {
    const complete = await completeSpecOf(stack, new Set(processedIds(stack)), store, ctx, { record: false });
    const spec = complete.spec;
    const kapps = await previewKappsOf(stack, complete);
    const latest = await store.latest(project, stack.config.name);
    const known = new Set(stack.kapps.map((k) => k.id));
    let rows = computePreview(kapps, latest?.state).filter((r) => r.action !== 'Delete' || !known.has(r.id));
    let refreshed: string[] | null = null;
    if (args.refresh) {
      const live = await refreshOutputs(stack, rows, args.workers, ctx, signal);
      refreshed = [...live.keys()];
      rows = applyRefresh(rows, latest?.state, live);
    }
    const current = new Map(spec.kapps.map((k) => [k.id, k] as const));
    // A kapp left unchanged has the spec recorded for it now (the same digest): the records' specs are read only for
    // the others (a record's spec is most of it, and is read when first asked for).
    const same = new Set(
      rows
        .filter((r) => r.action === 'UnChanged' && current.has(r.id) && latest?.state[r.id]?.specFormat !== undefined)
        .map((r) => r.id),
    );
    const recorded = latest
      ? await recordedSpecs(
          store,
          latest,
          rows.filter((r) => !same.has(r.id)).map((r) => r.id),
        )
      : new Map<string, SpecKapp>();
    for (const id of same) recorded.set(id, current.get(id) as SpecKapp);
    const legacy = new Map(complete.legacy.kapps.map((k) => [k.id, k] as const));
    // A digest keyed with a key of this command's own means nothing to another command: not shown.
    const digests = new Map(complete.keyStored ? kapps.map((k) => [k.id, k.specDigest] as const) : []);
    const document = previewDocument(
      stack.config.name,
      project,
      latest?.revision ?? null,
      rows,
      { current, recorded, legacy, digests },
      refreshed,
    );
    return { rows, revision: latest?.revision ?? null, project, document };
  } finally {
    await store.close();
  }
}

/** `--changed-only`: the kapps to install against `state` (Create, Update and, after a refresh, Drifted). */
export async function changedWithRefresh(
  stack: Stack,
  state: ReleaseState | undefined,
  workers: number | undefined,
  ctx: EngineContext,
  signal: AbortSignal,
  store: ReleaseStore,
): Promise<{ ids: Set<string>; refreshed: string[] }> {
  const { applyRefresh, computePreview } = await import('../release/index.js');
  const { completeSpecOf, previewKappsOf } = await import('./spec.js');
  const complete = await completeSpecOf(stack, new Set(processedIds(stack)), store, ctx, { record: false });
  const rows = computePreview(await previewKappsOf(stack, complete), state);
  const live = await refreshOutputs(stack, rows, workers, ctx, signal);
  const refreshedRows = applyRefresh(rows, state, live);
  const ids = refreshedRows
    .filter((r) => r.action === 'Create' || r.action === 'Update' || r.action === 'Drifted')
    .map((r) => r.id);
  return { ids: new Set(ids), refreshed: [...live.keys()] };
}

/**
 * The rows of a delete's preview: each kapp of `ids` (the kapps a delete processes, in stack order) that `state`
 * has installed, with action `Delete`, in the order the delete takes them (the reverse).
 */
export function deleteRows(ids: readonly string[], state: ReleaseState | undefined): PreviewRow[] {
  return ids
    .filter((id) => state !== undefined && Object.hasOwn(state, id) && state[id]?.status === 'installed')
    .reverse()
    .map((id) => ({ id, action: 'Delete' }));
}

/** The preview of a delete of the stack's processed kapps against its latest release: what it would remove. */
export async function computeDeletePreviewFor(
  stack: Stack,
  args: TargetParams,
  ctx: EngineContext,
): Promise<PreviewResult> {
  const { previewDocument } = await import('../release/index.js');
  const { project, store } = await openTarget(stack, args, ctx);
  try {
    const latest = await store.latest(project, stack.config.name);
    const rows = deleteRows(processedIds(stack), latest?.state);
    const recorded = latest
      ? await recordedSpecs(
          store,
          latest,
          rows.map((r) => r.id),
        )
      : new Map<string, SpecKapp>();
    const document = previewDocument(stack.config.name, project, latest?.revision ?? null, rows, {
      current: new Map(),
      recorded,
    });
    return { rows, revision: latest?.revision ?? null, project, document };
  } finally {
    await store.close();
  }
}
