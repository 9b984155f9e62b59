/**
 * Kapps whose git sources are not in the workspace cannot be read (their sugarkube.yaml is in the source). The
 * commands that only plan (validate, generate, graph, vars, preview) and dry runs never report on a kapp they did not
 * read: they fetch the missing sources into the workspace (fetching changes no infrastructure), or, with
 * `--no-fetch`, fail listing the kapps not read and the command that fetches them. Sources already in the workspace
 * are used as they are.
 */
import { KappsError } from '../diagnostics/errors.js';
import { formatCommandLine } from '../report/format.js';
import type { Stack } from '../stack/stack.js';
import type { EngineContext, StackParams } from './context.js';
import { viewOf } from './view.js';

/** The unfetched kapps the command would read: those of the selection's sub-graph. */
export function missingKapps(stack: Stack): string[] {
  const inSubGraph = new Set(stack.selection.nodes.map((n) => n.id));
  return stack.unfetched.filter((id) => inSubGraph.has(id));
}

/** The error of `--no-fetch` when sources are missing: the kapps not read, and the command that fetches them. */
export function missingSourcesError(stack: Stack, ids: readonly string[], args: StackParams): KappsError {
  const command = formatCommandLine('kapps', [
    'workspace',
    'create',
    '--no-update',
    args.stackFile,
    args.stackName,
    ...(args.workspaceDir ? [args.workspaceDir] : []),
    ...args.include.flatMap((s) => ['-i', s]),
    ...args.exclude.flatMap((s) => ['-x', s]),
  ]);
  return new KappsError(
    `${ids.length} kapp(s) not read: their git sources are not in the workspace ${stack.workspace}${args.fetch === false ? ' (--no-fetch)' : ''}\n` +
      `${ids.map((id) => `  ${id}`).join('\n')}\n` +
      `fetch them with: ${command}` +
      (args.fetch === false ? '\n(or run without --no-fetch, which fetches missing sources first)' : ''),
  );
}

/**
 * Fetch the git sources of the kapps `missingKapps` names (only what is missing; nothing is updated), telling the
 * view.
 */
export async function fetchMissingSources(
  stack: Stack,
  ids: readonly string[],
  ctx: EngineContext,
  signal?: AbortSignal,
): Promise<void> {
  const { ensureWorkspace } = await import('../workspace/workspace.js');
  const { gitRunnerFor } = await import('./git-runner.js');
  const kapps = ids.map((id) => stack.kapp(id));
  await ensureWorkspace(
    kapps.map((k) => ({ fqId: k.id, cacheRoot: k.cacheRoot, sources: k.sources.filter((s) => s.kind === 'git') })),
    {
      update: false,
      run: gitRunnerFor(ctx.env),
      ...(signal ? { signal } : {}),
      onFetch: (id, source) => viewOf(ctx).sourceFetching({ kapp: id, source: source.id, missing: true }),
    },
  );
}
