/**
 * A stack's release target: its project (the release key) and its release store, opened. Apart from the run's
 * release (release-run.ts) so that a preview, drift or rollback loads what opening a store needs and nothing more.
 */
import path from 'node:path';
import type { ReleaseStore } from '../release/store-types.js';
import type { BackendSpec } from '../release/store.js';
import type { Stack } from '../stack/stack.js';
import type { EngineContext, TargetParams } from './context.js';
import { viewOf } from './view.js';

/** The warning about a history under the former default project is said once per context. */
const legacyWarned = new WeakSet<EngineContext>();

/** What `openTarget` reads of a stack: its project configuration and its name. */
export interface TargetStack {
  readonly project: Stack['project'];
  readonly config: { readonly name: string };
}

/** The release key and store of a stack. */
export async function openTarget(
  stack: TargetStack,
  args: TargetParams,
  ctx: EngineContext,
): Promise<{ project: string; store: ReleaseStore; where: string; source: string; backend: BackendSpec }> {
  // The store's modules and the project's, not the release API's barrel: a preview or a read needs no recorder.
  const [{ resolveBackend, kappsHome, openReleaseStore, describeBackend }, target] = await Promise.all([
    import('../release/store.js'),
    import('../release/target.js'),
  ]);
  const { resolveProject, describeProjectSource, legacyHistoryHint } = target;
  const resolved = resolveProject({
    flag: args.project,
    config: stack.project.project,
    configFile: stack.project.file,
    stackFile: args.stackFile,
    cwd: ctx.cwd,
  });
  const project = resolved.project;
  const { spec } = resolveBackend({
    flag: args.backend,
    env: ctx.env.KAPPS_BACKEND,
    config: stack.project.backend,
    configDir: stack.project.file ? path.dirname(stack.project.file) : undefined,
    cwd: ctx.cwd,
    kappsHome: kappsHome(ctx.env.KAPPS_HOME),
  });
  const store = ctx.releaseStore?.(spec) ?? (await openReleaseStore(spec));
  if (!legacyWarned.has(ctx)) {
    legacyWarned.add(ctx);
    try {
      const hint = await legacyHistoryHint(store, resolved, stack.config.name);
      if (hint) viewOf(ctx).legacyHistory({ hint });
    } catch (e) {
      await store.close();
      throw e;
    }
  }
  return {
    project,
    store,
    where: describeBackend(spec),
    source: describeProjectSource(resolved.source),
    backend: spec,
  };
}
