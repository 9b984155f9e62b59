/**
 * What a submit of a rollback (or of its preview: a preview run with `toRevision`) is checked for, and its target
 * named when it is submitted: `toRevision: -1` becomes the revision it means then, and a project from git runs at
 * the commit that revision recorded.
 */
import type { RunRequestOptions, SubmitRun } from '../../../api/index.js';
import type { RouteContext } from '../context.js';
import { HttpProblem, invalid } from '../problems.js';

/** The revision a rollback applies again, and the project commit it recorded (if any). */
export interface RollbackTarget {
  readonly revision: number;
  readonly commit?: string;
}

const ROLLBACK_FIELDS = ['toRevision', 'prune', 'force'] as const;
/** What a rollback does not take: it applies the whole stack as the revision had it. */
const SELECTION_FIELDS = ['include', 'exclude', 'parents', 'overrides', 'changedOnly', 'refresh'] as const;

/** Whether the submit is a rollback or the preview of one. */
function isRollback(body: Pick<SubmitRun, 'type' | 'toRevision'>): boolean {
  return body.type === 'rollback' || (body.type === 'preview' && body.toRevision !== undefined);
}

/** `toRevision`, `prune` and `force` only on a rollback or its preview; a rollback names its target. */
export function checkRollbackOptions(body: SubmitRun): void {
  for (const field of ROLLBACK_FIELDS) {
    if (body[field] === undefined) continue;
    if (body.type !== 'rollback' && body.type !== 'preview')
      throw invalid(`body.${field}`, `only a rollback run (or the preview of one) takes ${field}`);
    if (body.type === 'preview' && body.toRevision === undefined)
      throw invalid(`body.${field}`, `a preview takes ${field} only with toRevision (the preview of a rollback)`);
  }
  if (body.type === 'rollback' && body.toRevision === undefined && body.previewRunId === undefined)
    throw invalid(
      'body.toRevision',
      'a rollback run names the revision to roll back to: toRevision N (1, 2, …), or -1 for the one before the latest',
    );
  if (!isRollback(body)) return;
  for (const field of SELECTION_FIELDS) {
    if (body[field] !== undefined)
      throw invalid(`body.${field}`, 'a rollback applies the whole stack as the revision had it');
  }
  if (body.ref !== undefined)
    throw invalid('body.ref', 'a rollback runs at the project commit its target revision recorded');
}

/** An apply names a plain preview, a rollback the preview of a rollback (of the same target). */
export function checkRollbackPreview(body: SubmitRun, previewId: string, preview: RunRequestOptions): void {
  if (body.type === 'apply' && preview.toRevision !== undefined)
    throw invalid(
      'body.previewRunId',
      `preview run ${previewId} is the preview of a rollback: submit a rollback run to apply it`,
    );
  if (body.type === 'rollback' && preview.toRevision === undefined)
    throw invalid('body.previewRunId', `preview run ${previewId} is not the preview of a rollback`);
  for (const field of ROLLBACK_FIELDS) {
    if (body[field] !== undefined && body[field] !== preview[field])
      throw invalid(`body.${field}`, `an apply of preview run ${previewId} takes its ${field}`);
  }
}

/**
 * The target of a rollback (or of its preview), read from the release store now: 400 naming `body.toRevision` for
 * a revision that does not exist, 409 for one that did not succeed or is a delete.
 */
export async function rollbackTarget(ctx: RouteContext, body: SubmitRun): Promise<RollbackTarget | undefined> {
  if (!isRollback(body) || body.toRevision === undefined) return undefined;
  const project = ctx.projects.releaseProject(body.project);
  const latest = await ctx.releases.latest(project, body.stack);
  if (!latest) throw invalid('body.toRevision', `${body.project}/${body.stack} has no release to roll back to`);
  const n = body.toRevision === -1 ? latest.revision - 1 : body.toRevision;
  if (n < 1) throw invalid('body.toRevision', `there is no revision before the latest (${latest.revision})`);
  if (n > latest.revision)
    throw invalid('body.toRevision', `revision ${n} does not exist: the latest is ${latest.revision}`);
  const target = n === latest.revision ? latest : await ctx.releases.get(project, body.stack, n);
  if (!target) throw invalid('body.toRevision', `revision ${n} does not exist`);
  if (target.operation !== 'install' || target.phase !== 'succeeded')
    throw new HttpProblem(
      409,
      'conflict',
      target.operation !== 'install'
        ? `revision ${n} is a delete; only an install can be rolled back to`
        : `revision ${n} is ${target.phase}; only a revision that succeeded can be rolled back to`,
    );
  return { revision: n, ...(target.source ? { commit: target.source.commit } : {}) };
}
