/**
 * The gate between a preview and its apply, as the server applies it to one run: which runs it holds (an apply,
 * destroy or rollback of a stack whose `approvals` require any, or any run checks of the stack), the approval a run is
 * stored with at submission (every path — a client's request, "apply this", a rollback, a push or poll, a drift
 * remediation — submits through `gatedRun`), the one exception (`breakGlass`, for a token of a `break_glass` role),
 * and who may decide on a waiting run.
 */
import type { ApprovalDecision, Role, RunApproval, RunType } from '../../api/index.js';
import type { ReleaseApproval, ReleaseBreakGlass } from '../../release/types.js';
import { KappsError } from '../../diagnostics/errors.js';
import { stackGate, type StackGate } from '../gate-config.js';
import type { ProjectEntry } from '../config.js';
import type { NewRun, RunStore, StoredRun } from '../queue/run-store.js';
import type { ReleaseStore } from '../../release/store-types.js';
import type { ProjectRegistry } from '../projects.js';
import { RUN_KINDS } from './run-plan.js';

/** Who submits or decides: a token's name and role (the server's own triggers have none). */
export interface Actor {
  readonly name: string;
  readonly role: Role;
}

/**
 * A submission the gate refuses: `forbidden` (403: the token may not skip the approvals) or `invalid` (400 naming
 * `field`: a break glass where there is nothing to skip).
 */
export class GateRefused extends KappsError {
  readonly kind: 'forbidden' | 'invalid';
  readonly field: string;
  constructor(kind: 'forbidden' | 'invalid', field: string, message: string) {
    super(message);
    this.kind = kind;
    this.field = field;
  }
}

/** Whether runs of `type` change the stack (an apply, destroy or rollback): the runs approvals hold. */
export function changesStack(type: RunType): boolean {
  return RUN_KINDS[type].records;
}

/** The gate of a run's stack (no approvals and no checks for a project that is not registered). */
export function gateOf(project: ProjectEntry | undefined, stack: string): StackGate {
  return stackGate(project?.gate, stack);
}

/**
 * `run` as it is stored: with the approval its stack's policy asks now (the policy, no decisions, not waiting) when
 * it changes a stack requiring approvals, and with its break glass when `by` asked to skip them (`breakGlass: true`)
 * and may. `GateRefused` when it asks to skip what it may not, or what is not there.
 */
export function gatedRun(project: ProjectEntry | undefined, run: NewRun, by?: Actor, now = new Date()): NewRun {
  const gate = gateOf(project, run.stack);
  const policy = changesStack(run.type) ? gate.approvals : undefined;
  const asked = run.options.breakGlass === true;
  if (asked) {
    if (!changesStack(run.type))
      throw new GateRefused(
        'invalid',
        'body.breakGlass',
        `a ${run.type} run applies nothing: there are no approvals to skip`,
      );
    if (!policy)
      throw new GateRefused(
        'invalid',
        'body.breakGlass',
        `${run.project}/${run.stack} requires no approvals: there are none to skip`,
      );
    const allowed = policy.breakGlass;
    if (!by || !allowed.includes(by.role))
      throw new GateRefused(
        'forbidden',
        'body.breakGlass',
        by
          ? `${by.name} has role ${by.role}; approvals.break_glass of ${run.project}/${run.stack} allows ${allowed.length ? allowed.join(', ') : 'no role'} to skip its approvals`
          : `a run the server starts itself cannot skip approvals`,
      );
  }
  if (!policy) return { ...run, approval: null };
  const approval: RunApproval = {
    required: policy.required,
    fromRoles: [...policy.fromRoles],
    authorMayApprove: policy.authorMayApprove,
    decisions: [],
    waitingSince: null,
    expiresAt: null,
    basedOnRevision: null,
    breakGlass: asked && by ? { by: by.name, role: by.role, at: now.toISOString() } : null,
  };
  return { ...run, approval };
}

/**
 * Whether the run was approved already (its second claim): its preview is stored and its approvals reached the
 * number required.
 */
export function isApproved(run: Pick<StoredRun, 'approval'>): boolean {
  const a = run.approval;
  return !!a && a.waitingSince !== null && approvalsOf(a).length >= a.required;
}

/** The approvals of distinct token names (the first of each), oldest first. */
export function approvalsOf(approval: RunApproval): ApprovalDecision[] {
  const seen = new Set<string>();
  return approval.decisions.filter((d) => {
    if (d.decision !== 'approved' || seen.has(d.by)) return false;
    seen.add(d.by);
    return true;
  });
}

/** What a run's release records of its approvals: the approvals that let it apply, and its break glass. */
export function releaseApprovals(run: Pick<StoredRun, 'approval'>): {
  approvals?: ReleaseApproval[];
  breakGlass?: ReleaseBreakGlass;
} {
  const a = run.approval;
  if (!a) return {};
  if (a.breakGlass) return { breakGlass: { ...a.breakGlass } };
  return { approvals: approvalsOf(a).map((d) => ({ by: d.by, at: d.at, comment: d.comment })) };
}

/**
 * Why `who` may not decide on `run` (`approve` or `reject`), or undefined when it may. The author of a run may
 * neither approve nor reject it unless `author_may_approve` (an author withdraws a run by cancelling it).
 */
export function mayNotDecide(run: StoredRun, who: Actor, decision: 'approve' | 'reject'): string | undefined {
  const a = run.approval;
  if (!a) return undefined;
  if (!a.fromRoles.includes(who.role))
    return `${who.name} has role ${who.role}; approvals of ${run.project}/${run.stack} come from ${a.fromRoles.join(', ')}`;
  if (run.createdBy === who.name && !a.authorMayApprove)
    return decision === 'approve'
      ? 'the author of a run may not approve it (approvals.author_may_approve is false)'
      : 'the author of a run may not reject it (approvals.author_may_approve is false): cancel it to withdraw it';
  return undefined;
}

/** Whether `who` may approve and reject `run` now (the actions its answer shows the caller). */
export function decisionActions(run: StoredRun, who: Actor): { approvable: boolean; rejectable: boolean } {
  if (run.status !== 'needs-approval' || !run.approval) return { approvable: false, rejectable: false };
  const allowed = mayNotDecide(run, who, 'approve') === undefined;
  const already = run.approval.decisions.some((d) => d.by === who.name);
  return { approvable: allowed && !already, rejectable: allowed };
}

/** Why a waiting run's approvals no longer hold: the stack's latest release moved off the one its preview compared with. */
export function releaseMoved(basedOn: number | null, now: number | null): string {
  const shown = (r: number | null) => (r === null ? 'none' : String(r));
  return `the stack's release changed while it waited: revision ${shown(basedOn)} then, ${shown(now)} now; a new preview and new approvals are needed`;
}

/**
 * The latest revision now (null: no release) of the stack a waiting run's preview compared with: under the release
 * project its preview names (a project from git keeps its releases under the name its stack file gives, which only
 * an instance that checked it out knows), else the project's.
 */
export async function latestRevision(
  store: Pick<RunStore, 'getPreview'>,
  releases: Pick<ReleaseStore, 'latest'>,
  projects: Pick<ProjectRegistry, 'releaseProject'>,
  run: Pick<StoredRun, 'id' | 'project' | 'stack'>,
): Promise<number | null> {
  const latest = await releases.latest(
    (await previewProject(store, run.id)) ?? projects.releaseProject(run.project),
    run.stack,
  );
  return latest?.revision ?? null;
}

/** The release project the preview a run is bound to names; undefined when it has none (or it cannot be read). */
async function previewProject(store: Pick<RunStore, 'getPreview'>, id: string): Promise<string | undefined> {
  const preview = await store.getPreview(id);
  if (!preview) return undefined;
  try {
    const project = (JSON.parse(preview.body) as { project?: unknown }).project;
    return typeof project === 'string' && project !== '' ? project : undefined;
  } catch {
    return undefined;
  }
}

/** How long `expire_after` was, as the discarded run says it (`7d`, `90m`, `30s`). */
export function waitedText(approval: Pick<RunApproval, 'waitingSince' | 'expiresAt'>): string {
  const seconds = Math.round((Date.parse(approval.expiresAt ?? '') - Date.parse(approval.waitingSince ?? '')) / 1000);
  if (!Number.isFinite(seconds) || seconds <= 0) return 'its time';
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}
