/**
 * The complete spec of the kapps a command processes, as releases record it and preview compares it: the planned
 * steps (`Stack.spec`), completed with what was read from the workspace (sources, templates, variables) and made
 * portable (`plan/complete-spec.ts`), secrets keyed with the release backend's key.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { StackSpec } from '../plan/spec.js';
import type { PreviewKapp } from '../release/preview.js';
import type { ReleaseStore } from '../release/store-types.js';
import type { Stack } from '../stack/stack.js';
import { timed } from '../diagnostics/timings.js';
import type { EngineContext } from './context.js';

/** The spec now, in its complete form and in the form releases recorded before it. */
export interface CompleteSpec {
  spec: StackSpec;
  /** `Stack.spec`: steps and dependencies with the machine's paths (releases written before spec format 2). */
  legacy: StackSpec;
  /** The kapps whose configuration or templates read `.outputs`. */
  readsOutputs: ReadonlySet<string>;
  /**
   * Whether the secrets and digests were keyed with the backend's key. A command that records nothing does not make
   * the key of a file store that has none (nothing keyed was recorded there yet): it keys with a key of its own.
   */
  keyStored: boolean;
}

/** The complete spec of the kapps `ids` of `stack` (stack order), keyed with `store`'s key. */
export async function completeSpecOf(
  stack: Stack,
  ids: ReadonlySet<string>,
  store: ReleaseStore,
  ctx: EngineContext,
  options: { record: boolean },
): Promise<CompleteSpec> {
  const { completeStackSpec } = await import('../plan/complete-spec.js');
  const { collectSpecInputs } = await import('../execute/spec-inputs.js');
  const { gitRunnerFor } = await import('./git-runner.js');
  // The key is read (or made, on a backend's first record) while the steps are planned.
  const storedKey = store.specKey({ create: options.record });
  const t = ctx.timings;
  let legacy: StackSpec;
  try {
    const start = t?.now();
    legacy = stack.spec({ onlyIds: ids, checkNoValue: false });
    if (t && start !== undefined) t.span('spec-plan', start);
  } catch (e) {
    await storedKey.catch(() => undefined);
    throw e;
  }
  const stored = await timed(t, 'spec-key', () => storedKey);
  const key = stored ?? randomBytes(32);
  const keyed = (text: string): string => createHmac('sha256', key).update(text).digest('hex');
  const { inputs, readsOutputs } = await timed(t, 'spec-inputs', () =>
    collectSpecInputs(stack, legacy.kapps, gitRunnerFor(ctx.env)),
  );
  // A template or variable may read the environment (`env "API_TOKEN"`): such values are masked wherever they appear.
  const { isSecretName } = await import('../plan/secrets.js');
  const envSecrets = Object.entries(ctx.env).flatMap(([name, value]) =>
    // Short values (`true`, `1`) would mask too much to be worth it.
    value !== undefined && value.length >= 8 && isSecretName(name) ? [value] : [],
  );
  const spec = await timed(t, 'spec-complete', () =>
    completeStackSpec(
      legacy,
      inputs,
      (id) => ({ kappDir: stack.kapp(id).cacheRoot, workspace: stack.workspace, stackDir: stack.config.dir }),
      keyed,
      envSecrets,
    ),
  );
  return { spec, legacy, readsOutputs, keyStored: stored !== undefined };
}

/** What preview compares for each kapp: both digests and the dependencies whose outputs it reads. */
export async function previewKappsOf(stack: Stack, complete: CompleteSpec): Promise<PreviewKapp[]> {
  const { specDigest } = await import('../release/canonical-json.js');
  const legacy = new Map(complete.legacy.kapps.map((k) => [k.id, k] as const));
  return complete.spec.kapps.map((k) => {
    const old = legacy.get(k.id);
    const inputsFrom = complete.readsOutputs.has(k.id)
      ? k.dependsOn.filter((p) => stack.kapp(p).outputIds.length > 0)
      : [];
    const kapp: PreviewKapp = {
      id: k.id,
      specDigest: specDigest(k),
      ...(inputsFrom.length ? { inputsFrom } : {}),
    };
    // Compared only with a state recorded before spec format 2 (rare now): computed when it is read.
    if (old) {
      let digest: string | undefined;
      Object.defineProperty(kapp, 'legacyDigest', { enumerable: true, get: () => (digest ??= specDigest(old)) });
    }
    return kapp;
  });
}
