/**
 * A rollback: the desired state a recorded revision N applied, applied again as a new revision (`rollbackOf: N`).
 * The stack is opened in a copy of its git checkout at N's recorded commit (today's workspace, project and
 * backend), each git source pinned to the commit N recorded for it, and every kapp installed at N must come out with
 * N's recorded spec digest (what differs is listed field by field). The preview is against the latest release: the
 * kapps of N to create or update, and those installed now that N did not have (`Delete`, deleted with `prune`).
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { KappsError } from '../diagnostics/errors.js';
import type { SpecKapp } from '../plan/spec.js';
import type { PreviewDocument, PreviewRow, Release } from '../release/index.js';
import type { PreviewKapp } from '../release/preview.js';
import type { ReleaseSource } from '../release/types.js';
import type { openTarget, TargetStack } from './target.js';
import type { CompleteSpec } from './spec.js';
import type { Stack } from '../stack/stack.js';
import type { EngineContext } from './context.js';
import { defaultWorkspace } from '../stack/open-stack.js';
import { openStackFor } from './open.js';
import type { RunHooks, RunOutcome, RunParams } from './run.js';
import { inRunContext } from './scope.js';
import { viewOf } from './view.js';

/** The options of `kapps release rollback` (a run command's, plus its own). */
export interface RollbackParams extends RunParams {
  /** The target revision (≥ 1), or -1: the one before the latest. */
  toRevision: number;
  /** Delete (in reverse order) the kapps installed now that the target did not have. */
  prune?: boolean;
  /** Go on where the target's commit cannot be checked out, or its specs cannot be reproduced. */
  force?: boolean;
  /**
   * The stack file is in a working tree at this project commit already (a runs server's project from git): it is
   * used as it is when it is the target's commit, and recorded as the rollback's source.
   */
  checkedOut?: ReleaseSource;
}

/** A rollback's hooks: a run's, and a check of its preview before anything is applied (it throws to stop). */
export interface RollbackHooks extends RunHooks {
  check?(preview: RollbackPreview): void | Promise<void>;
}

/** A rollback refused before anything was changed: the reason, and what to do. */
export class RollbackRefusedError extends KappsError {}

/** A rollback computed: what it would do, against which revisions. */
export interface RollbackPreview {
  /** The revision whose desired state is applied again. */
  readonly target: number;
  /** The latest release, which the preview compares with. */
  readonly latest: number;
  readonly project: string;
  readonly rows: PreviewRow[];
  readonly document: PreviewDocument;
  /** Why the recorded sources are applied on today's checkout (`force`), or what differs from N's specs; none: exact. */
  readonly forced: string[];
  /** Kapps installed now that revision N did not have, in the stack (deleted with `prune`). */
  readonly absent: string[];
  /** Kapps installed now that N did not have and that today's stack no longer has: never deleted by a rollback. */
  readonly unknown: string[];
}

/** Everything a rollback prepared: the preview, and how to open and record it. */
interface Prepared {
  readonly preview: RollbackPreview;
  /** The parameters that open the stack as revision N had it (a copy of the checkout, pins, today's workspace). */
  readonly params: RunParams & { source?: ReleaseSource; rollbackOf: number };
  /** Removes the copy of the checkout. */
  dispose(): Promise<void>;
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** The revision `toRevision` names, given the latest. */
function targetRevision(toRevision: number, latest: Release): number {
  const n = toRevision === -1 ? latest.revision - 1 : toRevision;
  if (!Number.isInteger(n) || n < 1)
    throw new RollbackRefusedError(
      toRevision === -1
        ? `there is no revision before the latest (${latest.revision}) to roll back to`
        : `--to must be a revision ≥ 1 or -1, got ${String(toRevision)}`,
    );
  if (n > latest.revision)
    throw new RollbackRefusedError(`revision ${n} does not exist: the latest is ${latest.revision}`);
  return n;
}

/** Why revision N cannot be a target at all (force does not change it). */
function hardRefusal(release: Release): string | undefined {
  if (release.operation !== 'install')
    return `revision ${release.revision} is a delete; only an install can be rolled back to`;
  if (release.phase !== 'succeeded')
    return `revision ${release.revision} ${release.phase === 'applying' ? 'is still running' : release.phase}; only a revision that succeeded can be rolled back to`;
  return undefined;
}

/** The git commits revision N recorded for each git source of its installed kapps: kapp → source → SHA. */
function pinsOf(specs: ReadonlyMap<string, SpecKapp>): Record<string, Record<string, string>> {
  const pins: Record<string, Record<string, string>> = {};
  for (const [id, spec] of specs) {
    for (const source of spec.sources ?? []) {
      if (source.kind === 'git' && typeof source.commit === 'string' && SHA.test(source.commit)) {
        (pins[id] ??= {})[source.id] = source.commit;
      }
    }
  }
  return pins;
}

/** Where the project's commit can be checked out from, or why not. */
async function materialise(
  target: Release,
  workspace: string,
  params: RollbackParams,
  ctx: EngineContext,
): Promise<{ stackFile: string; source: ReleaseSource; dispose: () => Promise<void> } | { refused: string }> {
  const source = target.source;
  const n = target.revision;
  const given = params.checkedOut;
  if (given && source && !source.dirty) {
    if (given.commit !== source.commit)
      return { refused: `the run is at commit ${given.commit}, revision ${n} recorded ${source.commit}` };
    return { stackFile: path.resolve(ctx.cwd, params.stackFile), source: given, dispose: () => Promise.resolve() };
  }
  if (!source)
    return {
      refused: `revision ${n} recorded no project commit (it was made before kapps recorded them, or outside a git checkout)`,
    };
  if (source.dirty === true)
    return {
      refused: `the checkout of revision ${n} had local changes (not committed): commit ${source.commit.slice(0, 12)} alone does not reproduce it`,
    };
  const { checkoutTop, copyAtCommit, hasCommit } = await import('./checkout.js');
  const { gitRunnerFor } = await import('./git-runner.js');
  const run = gitRunnerFor(ctx.env);
  const stackFile = path.resolve(ctx.cwd, params.stackFile);
  const top = await checkoutTop(run, path.dirname(stackFile));
  if (!top) return { refused: `the stack file ${params.stackFile} is not in a git checkout now` };
  if (!(await hasCommit(run, top, source.commit)))
    return {
      refused: `commit ${source.commit} of revision ${n} is not reachable in the checkout ${top} (fetch it, e.g. git fetch origin)`,
    };
  const rel = source.path ?? path.relative(top, stackFile).split(path.sep).join('/');
  if (path.isAbsolute(rel) || rel.split('/').includes('..'))
    return { refused: `revision ${n} recorded the stack file path ${JSON.stringify(rel)}, outside its checkout` };
  const parent = path.dirname(workspace);
  await mkdir(parent, { recursive: true });
  const copy = await copyAtCommit(run, top, source.commit, parent);
  return {
    stackFile: path.join(copy.dir, ...rel.split('/')),
    source: { repo: source.repo, commit: source.commit, dirty: false, path: rel },
    dispose: () => copy.remove(),
  };
}

/** The kapps of revision N whose spec now is not the one N recorded: each with its changes, field by field. */
async function specDifferences(
  stack: Stack,
  ids: readonly string[],
  target: Release,
  recorded: ReadonlyMap<string, SpecKapp>,
  complete: { spec: { kapps: SpecKapp[] } },
  digests: ReadonlyMap<string, string>,
): Promise<string[]> {
  const { diffKappSpecs, formatChange } = await import('../release/spec-diff.js');
  const current = new Map(complete.spec.kapps.map((k) => [k.id, k] as const));
  const out: string[] = [];
  for (const id of ids) {
    const entry = target.state[id];
    if (!entry || entry.specDigest === undefined || entry.specDigest === digests.get(id)) continue;
    if (!stack.kapps.some((k) => k.id === id)) {
      out.push(`kapp ${id}: not in the stack at this commit`);
      continue;
    }
    const changes = diffKappSpecs(recorded.get(id) ?? null, current.get(id) ?? null).map(formatChange);
    out.push(
      `kapp ${id}: its spec now differs from the one revision ${target.revision} recorded` +
        (changes.length ? `:\n${changes.map((c) => `    ${c}`).join('\n')}` : ' (not recorded field by field)'),
    );
  }
  return out;
}

/** The store a rollback reads, and the releases it is between: the latest and the target. */
interface Between {
  readonly target: Awaited<ReturnType<typeof openTarget>>;
  readonly latest: Release;
  readonly release: Release;
  /** The kapps installed at the target. */
  readonly installed: string[];
}

/** The latest release and revision N, refused when N cannot be a target. */
async function between(today: TargetStack, params: RollbackParams, ctx: EngineContext): Promise<Between> {
  const { openTarget: open } = await import('./target.js');
  const target = await open(today, params, ctx);
  try {
    const { store, project } = target;
    const stackName = today.config.name;
    const latest = await store.latest(project, stackName);
    if (!latest) throw new RollbackRefusedError(`${project}/${stackName} has no release to roll back to`);
    const n = targetRevision(params.toRevision, latest);
    const release = await store.get(project, stackName, n);
    if (!release) throw new RollbackRefusedError(`revision ${n} of ${project}/${stackName} does not exist`);
    const hard = hardRefusal(release);
    if (hard) throw new RollbackRefusedError(hard);
    const installed = Object.keys(release.state).filter((id) => release.state[id]?.status === 'installed');
    if (installed.length === 0) throw new RollbackRefusedError(`revision ${n} has no installed kapp`);
    return { target, latest, release, installed };
  } catch (e) {
    await target.store.close();
    throw e;
  }
}

/** The stack as revision N had it, opened with today's workspace, project and backend, and its complete spec. */
interface AtTarget {
  readonly stack: Stack;
  readonly params: RunParams;
  readonly source?: ReleaseSource;
  readonly complete: CompleteSpec;
  readonly kapps: PreviewKapp[];
  /** Why it is not an exact reproduction (with `force`). */
  readonly forced: string[];
  dispose(this: void): Promise<void>;
}

/** Open the stack at N's commit (or, forced, today's checkout) with N's source commits, and check its specs. */
async function openAt(
  workspace: string,
  b: Between,
  params: RollbackParams,
  ctx: EngineContext,
  signal: AbortSignal,
): Promise<AtTarget> {
  const n = b.release.revision;
  const forced: string[] = [];
  const at = await materialise(b.release, workspace, params, ctx);
  if ('refused' in at) {
    if (!params.force)
      throw new RollbackRefusedError(
        `cannot roll back to revision ${n}: ${at.refused}\n(--force rolls back to its recorded sources and variables on top of today's checkout)`,
      );
    forced.push(`${at.refused}: today's checkout is used, with revision ${n}'s recorded source commits`);
  }
  const dispose = 'refused' in at ? () => Promise.resolve() : at.dispose;
  try {
    const { recordedSpecs } = await import('./preview.js');
    const recorded = await recordedSpecs(b.target.store, b.release, b.installed);
    const backend = b.target.backend;
    const base: RunParams = {
      ...params,
      stackFile: 'refused' in at ? params.stackFile : at.stackFile,
      workspaceDir: workspace,
      project: b.target.project,
      backend: backend.kind === 'file' ? backend.root : backend.url,
      sourcePins: pinsOf(recorded),
      exclude: [],
      parents: false,
    };
    // The kapps of N that the stack at this commit has (a forced rollback may miss some).
    const known = new Set((await openStackFor({ ...base, include: [] }, { signal }, ctx)).kapps.map((k) => k.id));
    const include = b.installed.filter((id) => known.has(id));
    if (include.length === 0) throw new RollbackRefusedError(`none of the kapps of revision ${n} is in the stack`);
    const open: RunParams = { ...base, include };
    const { prepareWorkspace } = await import('./run.js');
    const stack = await prepareWorkspace(await openStackFor(open, { signal }, ctx), open, { signal }, ctx, signal);
    const { completeSpecOf, previewKappsOf } = await import('./spec.js');
    const ids = stack.selection.nodes.filter((x) => x.processed).map((x) => x.id);
    const complete = await completeSpecOf(stack, new Set(ids), b.target.store, ctx, { record: false });
    const kapps = await previewKappsOf(stack, complete);
    const digests = new Map(kapps.map((k) => [k.id, k.specDigest] as const));
    const differences = [
      ...b.installed
        .filter((id) => !known.has(id))
        .map((id) => `kapp ${id}: installed at revision ${n}, not in the stack at this commit`),
      ...(await specDifferences(stack, include, b.release, recorded, complete, digests)),
    ];
    if (differences.length && !params.force)
      throw new RollbackRefusedError(
        `cannot reproduce revision ${n} exactly:\n  ${differences.join('\n  ')}\n` +
          `(a variable given on the command line then is not recorded as such; --force applies what the stack gives now)`,
      );
    forced.push(...differences);
    const source = 'refused' in at ? undefined : at.source;
    return { stack, params: open, ...(source ? { source } : {}), complete, kapps, forced, dispose };
  } catch (e) {
    await dispose();
    throw e;
  }
}

/**
 * The kapps of today's stack, to tell the kapps a rollback may delete (`prune`) from those today's stack no longer
 * has. Only when some kapp is to be deleted; a stack that cannot be opened today (what a rollback may be for) is an
 * error only with `prune`, else none is deleted.
 */
async function todaysKapps(
  params: RollbackParams,
  needed: boolean,
  ctx: EngineContext,
  signal: AbortSignal,
): Promise<ReadonlySet<string>> {
  if (!needed) return new Set();
  try {
    const today = await openStackFor({ ...params, include: [], exclude: [] }, { signal }, ctx);
    return new Set(today.kapps.map((k) => k.id));
  } catch (e) {
    if (params.prune) throw e;
    return new Set();
  }
}

/**
 * Compute the rollback to `params.toRevision`: refuse (with the reason) a target that cannot be reproduced, else
 * the preview. The caller disposes of what it returns.
 */
async function prepare(params: RollbackParams, ctx: EngineContext, signal: AbortSignal): Promise<Prepared> {
  // Today's project configuration names the release store; today's stack itself may be what is broken.
  const { loadProjectConfig } = await import('../config/index.js');
  const stackFile = path.resolve(ctx.cwd, params.stackFile);
  const { config } = loadProjectConfig({
    cwd: ctx.cwd,
    stackFile,
    ...(params.config !== undefined ? { configFile: params.config } : {}),
  });
  const b = await between({ project: config, config: { name: params.stackName } }, params, ctx);
  try {
    const workspace = path.resolve(ctx.cwd, params.workspaceDir ?? defaultWorkspace(stackFile, params.stackName));
    const at = await openAt(workspace, b, params, ctx, signal);
    try {
      const { recordedSpecs } = await import('./preview.js');
      const { computePreview, previewDocument } = await import('../release/index.js');
      const { latest, target } = b;
      const rows = computePreview(at.kapps, latest.state);
      const gone = rows.filter((r) => r.action === 'Delete').map((r) => r.id);
      const todayKnown = await todaysKapps(params, gone.length > 0, ctx, signal);
      const { complete } = at;
      const document = previewDocument(params.stackName, target.project, latest.revision, rows, {
        current: new Map(complete.spec.kapps.map((k) => [k.id, k] as const)),
        recorded: await recordedSpecs(
          target.store,
          latest,
          rows.map((r) => r.id),
        ),
        legacy: new Map(complete.legacy.kapps.map((k) => [k.id, k] as const)),
        digests: new Map(complete.keyStored ? at.kapps.map((k) => [k.id, k.specDigest] as const) : []),
      });
      const n = b.release.revision;
      return {
        preview: {
          target: n,
          latest: latest.revision,
          project: target.project,
          rows,
          document,
          forced: at.forced,
          absent: gone.filter((id) => todayKnown.has(id)),
          unknown: gone.filter((id) => !todayKnown.has(id)),
        },
        params: { ...at.params, rollbackOf: n, ...(at.source ? { source: at.source } : {}) },
        dispose: at.dispose,
      };
    } catch (e) {
      await at.dispose();
      throw e;
    }
  } finally {
    await b.target.store.close();
  }
}

/** The preview of a rollback, changing nothing but the workspace's sources (fetched at N's commits). */
export function previewRollback(
  params: RollbackParams,
  ctx: EngineContext,
  signal: AbortSignal,
): Promise<RollbackPreview> {
  return inRunContext(ctx, async () => {
    const prepared = await prepare(params, ctx, signal);
    await prepared.dispose();
    return prepared.preview;
  });
}

/** What a rollback applied: the install recorded with `rollbackOf`, then the delete of `--prune` (if any). */
export interface RollbackOutcome extends RunOutcome {
  readonly preview: RollbackPreview;
  /** The delete of the kapps absent at the target (`prune`). */
  readonly pruned?: RunOutcome;
}

/**
 * Roll back: show the preview, install the kapps of revision N to create or update (recorded as a new revision with
 * `rollbackOf: N`), then with `prune` delete the kapps N did not have, in reverse order (a second revision, also
 * `rollbackOf: N`), from today's stack. Throws `RollbackRefusedError` before changing anything when it cannot.
 */
export function rollbackStack(params: RollbackParams, hooks: RollbackHooks): Promise<RollbackOutcome> {
  const { ctx, signal } = hooks;
  return inRunContext(ctx, async () => {
    const prepared = await prepare(params, ctx, signal);
    try {
      const { preview } = prepared;
      const view = viewOf(ctx);
      view.rollbackPlanned({ ...preview, prune: params.prune ?? false });
      view.previewShown({ revision: preview.latest, rows: preview.rows, document: preview.document });
      await hooks.check?.(preview);
      const { runOperation } = await import('./run.js');
      const outcome = await runOperation('install', { ...prepared.params, yes: true, changedOnly: true }, hooks);
      if (!params.prune || preview.absent.length === 0 || outcome.summary.status !== 'succeeded')
        return { ...outcome, preview };
      const pruned = await runOperation(
        'delete',
        {
          ...params,
          include: preview.absent,
          exclude: [],
          parents: false,
          yes: true,
          changedOnly: false,
          rollbackOf: preview.target,
        },
        hooks,
      );
      return { ...pruned, preview, pruned };
    } finally {
      await prepared.dispose();
    }
  });
}
