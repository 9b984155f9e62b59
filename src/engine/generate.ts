/** `kapps generate` and the preview, as documents: what the CLI prints and the runs server keeps as a run's result. */
import type { Phase } from '../vocabulary.js';
import type { EngineContext, StackParams, TargetParams } from './context.js';
import { flushWarnings, openStackFor } from './open.js';
import { inRunContext } from './scope.js';
import type { PreviewResult } from './preview.js';

/** The resolved spec of the stack as YAML (`kapps generate`) or JSON (`-o json`). */
export function generateDocument(
  params: StackParams,
  ctx: EngineContext,
  options: { phases?: readonly Phase[]; format?: 'yaml' | 'json'; signal?: AbortSignal } = {},
): Promise<string> {
  return inRunContext(ctx, () => generateInContext(params, ctx, options));
}

async function generateInContext(
  params: StackParams,
  ctx: EngineContext,
  options: { phases?: readonly Phase[]; format?: 'yaml' | 'json'; signal?: AbortSignal },
): Promise<string> {
  const stack = await openStackFor(
    params,
    { planning: true, ...(options.signal ? { signal: options.signal } : {}) },
    ctx,
  );
  const { redactKappSpec, redactStackSpec } = await import('../release/spec-diff.js');
  const specOptions = options.phases?.length ? { phases: [...options.phases] } : {};
  if (options.format === 'json') {
    // Each kapp written as it is planned: a big stack's specs are not all held at once. The text is what
    // `JSON.stringify(spec, null, 2)` gives for the whole document.
    const kapps: string[] = [];
    stack.eachSpecKapp(specOptions, (kapp) => {
      // Values named as secrets (`DB_PASSWORD`, `--token …`) are masked as the preview masks them.
      // Written two lists deep, it is indented as in the document: `[\n  [\n` and `\n  ]\n]` are cut off.
      kapps.push(JSON.stringify([[redactKappSpec(kapp)]], null, 2).slice(6, -6));
    });
    flushWarnings(stack, ctx);
    const list = kapps.length ? `[\n${kapps.join(',\n')}\n  ]` : '[]';
    return `{\n  "stack": ${JSON.stringify(stack.config.name)},\n  "kapps": ${list}\n}\n`;
  }
  // Values named as secrets (`DB_PASSWORD`, `--token …`) are masked as the preview masks them.
  const spec = redactStackSpec(stack.spec(specOptions));
  flushWarnings(stack, ctx);
  const { stringify } = await import('../yaml/stringify.js');
  return stringify(spec, { lineWidth: 0 });
}

/** The preview of the stack against its last release (`kapps preview`); `refresh` reads the live outputs. */
export function previewStack(
  params: StackParams & TargetParams & { refresh?: boolean; workers?: number },
  ctx: EngineContext,
  signal: AbortSignal,
): Promise<PreviewResult> {
  return inRunContext(ctx, async () => {
    const { computePreviewFor } = await import('./preview.js');
    const stack = await openStackFor(params, { planning: true, signal }, ctx);
    return computePreviewFor(stack, params, ctx, signal);
  });
}
