/** `kapps generate` and the preview, as documents: what the CLI prints and the runs server keeps as a run's result. */
import type { Phase } from '../vocabulary.js';
import type { EngineContext, StackParams, TargetParams } from './context.js';
import { flushWarnings, loadOpening, openStackFor } from './open.js';
import { inRunContext } from './scope.js';
import type { PreviewResult } from './preview.js';

/** The resolved spec of the stack as YAML (`kapps generate`) or JSON (`-o json`). */
export async function generateDocument(
  params: StackParams,
  ctx: EngineContext,
  options: { phases?: readonly Phase[]; format?: 'yaml' | 'json'; signal?: AbortSignal } = {},
): Promise<string> {
  return (await generateDocumentParts(params, ctx, options)).join('');
}

/**
 * The same document in consecutive pieces, made only once the whole stack is planned (a problem found on the way
 * leaves nothing written): the CLI writes them one after another, so that a big stack's text is never also copied
 * into one string and one buffer.
 */
export async function generateDocumentParts(
  params: StackParams,
  ctx: EngineContext,
  options: { phases?: readonly Phase[]; format?: 'yaml' | 'json'; signal?: AbortSignal } = {},
): Promise<readonly string[]> {
  // Every module the document needs, loaded before the run's context is entered (see `loadOpening`).
  await loadOpening(params, { planning: true });
  await import('../release/spec-diff.js');
  if (options.format !== 'json') await import('../yaml/stringify.js');
  return inRunContext(ctx, () => generateInContext(params, ctx, options));
}

async function generateInContext(
  params: StackParams,
  ctx: EngineContext,
  options: { phases?: readonly Phase[]; format?: 'yaml' | 'json'; signal?: AbortSignal },
): Promise<readonly string[]> {
  const stack = await openStackFor(
    params,
    { planning: true, ...(options.signal ? { signal: options.signal } : {}) },
    ctx,
  );
  const { redactPlannedKapp } = await import('../release/spec-diff.js');
  const specOptions = options.phases?.length ? { phases: [...options.phases] } : {};
  if (options.format === 'json') {
    // Each kapp written as it is planned, so that a big stack's specs are not all held at once; the pieces (`{` and
    // the stack's name, each kapp with `,` between, the closing lines) are joined once, into the text
    // `JSON.stringify(spec, null, 2)` gives for the whole document.
    const pieces: string[] = [`{\n  "stack": ${JSON.stringify(stack.config.name)},\n  "kapps": [`];
    stack.eachSpecKapp(specOptions, (kapp) => {
      pieces.push(pieces.length === 1 ? '\n' : ',\n');
      // Values named as secrets (`DB_PASSWORD`, `--token …`) are masked as the preview masks them. Written two lists
      // deep, a kapp is indented as in the document: `[\n  [\n` and `\n  ]\n]` are cut off.
      pieces.push(JSON.stringify([[redactPlannedKapp(kapp)]], null, 2).slice(6, -6));
    });
    flushWarnings(stack, ctx);
    pieces.push(pieces.length === 1 ? ']\n}\n' : '\n  ]\n}\n');
    return pieces;
  }
  // Values named as secrets (`DB_PASSWORD`, `--token …`) are masked as the preview masks them.
  const planned = stack.spec(specOptions);
  const spec = { ...planned, kapps: planned.kapps.map(redactPlannedKapp) };
  flushWarnings(stack, ctx);
  const { stringifyData } = await import('../yaml/stringify.js');
  return [stringifyData(spec)];
}

/** The modules a preview loads, loaded before the run's context is entered (see `loadOpening`). */
async function loadPreview(params: StackParams): Promise<void> {
  await loadOpening(params, { planning: true });
  await Promise.all([
    import('./preview.js'),
    import('./spec.js'),
    import('./target.js'),
    import('./git-runner.js'),
    import('../release/preview.js'),
    import('../release/store.js'),
    import('../release/target.js'),
    import('../release/canonical-json.js'),
    // The default backend's store (a PostgreSQL one is loaded when it is named).
    import('../release/file-store.js'),
    import('../plan/complete-spec.js'),
    import('../plan/secrets.js'),
    import('../execute/spec-inputs.js'),
  ]);
}

/** The preview of the stack against its last release (`kapps preview`); `refresh` reads the live outputs. */
export async function previewStack(
  params: StackParams & TargetParams & { refresh?: boolean; workers?: number },
  ctx: EngineContext,
  signal: AbortSignal,
): Promise<PreviewResult> {
  await loadPreview(params);
  return inRunContext(ctx, async () => {
    const { computePreviewFor } = await import('./preview.js');
    const stack = await openStackFor(params, { planning: true, signal }, ctx);
    return computePreviewFor(stack, params, ctx, signal);
  });
}

/** The preview of a delete of the stack (`kapps delete`): its selected installed kapps, each `Delete`. */
export function previewDeleteStack(
  params: StackParams & TargetParams,
  ctx: EngineContext,
  signal: AbortSignal,
): Promise<PreviewResult> {
  return inRunContext(ctx, async () => {
    const { computeDeletePreviewFor } = await import('./preview.js');
    const stack = await openStackFor(params, { planning: true, signal }, ctx);
    return computeDeletePreviewFor(stack, params, ctx);
  });
}
