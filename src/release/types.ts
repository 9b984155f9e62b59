/**
 * The release model: every `install -y`, `install --one-shot`, `delete -y` and `delete --one-shot` of a
 * (project, stack) is recorded as one release, a numbered revision holding the spec of the selected kapps, the
 * state of every kapp the stack has ever recorded, a phase and the lock owner.
 *
 * A release whose phase is `applying` or `deleting` is the lock of its (project, stack): no other run may begin
 * until it finishes or is unlocked. Timestamps are ISO 8601 strings in UTC (`2026-01-31T12:00:00.000Z`).
 *
 * This file is a stored format (release files, database rows): add optional fields only.
 */
import type { StackSpec } from '../plan/spec.js';
import type * as z from 'zod';
import type {
  kappStateSchema,
  ownerSchema,
  releaseApprovalRecordSchema,
  releaseBreakGlassRecordSchema,
  releaseRecordSchema,
  releaseSourceSchema,
  selectorsSchema,
  stepRecordSchema,
  unlockSchema,
} from './record-schema.js';

/** What a release does: `install` applies the selected kapps, `delete` removes them. */
export type ReleaseOperation = Release['operation'];

/** The phases of a running release; a release in one of these holds the lock. */
export type RunningPhase = 'applying' | 'deleting';

/** The phases of a finished release. */
export type FinalPhase = 'succeeded' | 'failed' | 'cancelled';

/** A release's phase: running (`applying`/`deleting`) or finished. */
export type ReleasePhase = RunningPhase | FinalPhase;

/** The phases, in the order a release can pass through them. */
export const RELEASE_PHASES = [
  'applying',
  'deleting',
  'succeeded',
  'failed',
  'cancelled',
] as const satisfies readonly ReleasePhase[];

/** The kapp statuses a state entry may have. */
export const KAPP_STATE_STATUSES = ['installed', 'deleted', 'failed', 'skipped', 'cancelled'] as const;

/** The status of one kapp in a release's state. */
export type KappStateStatus = (typeof KAPP_STATE_STATUSES)[number];

/** JSON-safe data: what `JSON.stringify` writes and `JSON.parse` gives back unchanged. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The process that runs (or ran) a release (see `ownerSchema`). */
export type ReleaseOwner = z.infer<typeof ownerSchema>;

/** One step a kapp ran during the release (its fields are documented in `stepRecordSchema`). */
export type StepRecord = z.infer<typeof stepRecordSchema>;

/** The recorded state of one kapp (its fields are documented in `kappStateSchema`). */
export type KappState = z.infer<typeof kappStateSchema>;

/** Kapp id (`manifest:kapp`) → its state. */
export type ReleaseState = Record<string, KappState>;

/** The `-i`/`-x` selectors of the command that made the release. */
export type ReleaseSelectors = z.infer<typeof selectorsSchema>;

/** Who unlocked a release by hand, and when (see `unlockSchema`). */
export type ReleaseUnlock = z.infer<typeof unlockSchema>;

/** Where a release's spec came from (see `releaseSourceSchema`). */
export type ReleaseSource = z.infer<typeof releaseSourceSchema>;

/** One release: a revision of a (project, stack); its fields are documented in `releaseRecordSchema`. */
export type Release = Omit<z.infer<typeof releaseRecordSchema>, 'spec'> & {
  /** The `kapps generate` document of the selected kapps, with sensitive values redacted. */
  spec: StackSpec;
};

/** The light metadata of a release, as `kapps release list` shows it (no spec, no state). */
export interface ReleaseSummary {
  project: string;
  stack: string;
  revision: number;
  operation: ReleaseOperation;
  phase: ReleasePhase;
  /** Number of kapps in the release's spec. */
  kappsCount: number;
  owner: ReleaseOwner;
  createdAt: string;
  modifiedAt: string;
  finishedAt?: string;
  heartbeatAt: string;
  unlocked?: ReleaseUnlock;
  /** The repository and commit its spec was read at (a project from git, a stack file in a git checkout). */
  source?: ReleaseSource;
  /** A rollback: the revision whose desired state it applied again. */
  rollbackOf?: number;
  /** The approvals that let a runs server's run apply it (a stack requiring approvals), oldest first. */
  approvals?: ReleaseApproval[];
  /** The approvals it needed were skipped by a break-glass token. */
  breakGlass?: ReleaseBreakGlass;
}

/** Whether a phase holds the lock (`applying` or `deleting`). */
export function isRunningPhase(phase: ReleasePhase): phase is RunningPhase {
  return phase === 'applying' || phase === 'deleting';
}

/** The light metadata of a full release. */
export function summarise(release: Release): ReleaseSummary {
  return {
    project: release.project,
    stack: release.stack,
    revision: release.revision,
    operation: release.operation,
    phase: release.phase,
    kappsCount: release.spec.kapps.length,
    owner: { ...release.owner },
    createdAt: release.createdAt,
    modifiedAt: release.modifiedAt,
    ...(release.finishedAt !== undefined ? { finishedAt: release.finishedAt } : {}),
    heartbeatAt: release.heartbeatAt,
    ...(release.unlocked ? { unlocked: { ...release.unlocked } } : {}),
    ...(release.source ? { source: summarySource(release.source) } : {}),
    ...(release.rollbackOf !== undefined ? { rollbackOf: release.rollbackOf } : {}),
    ...approvalsOf(release),
  };
}

/** The source as a summary carries it: the repository, the commit, whether the checkout was dirty and the path. */
export function summarySource(source: ReleaseSource): ReleaseSource {
  return {
    repo: source.repo,
    commit: source.commit,
    ...(source.dirty !== undefined ? { dirty: source.dirty } : {}),
    ...(source.path !== undefined ? { path: source.path } : {}),
  };
}

/** An approval that let a runs server's run apply a release (see `releaseApprovalRecordSchema`). */
export type ReleaseApproval = z.infer<typeof releaseApprovalRecordSchema>;

/** The approvals a release needed, skipped by a break-glass token (see `releaseBreakGlassRecordSchema`). */
export type ReleaseBreakGlass = z.infer<typeof releaseBreakGlassRecordSchema>;

/** Copies of a release's approvals and break glass with their known fields only (what a summary carries). */
export function approvalsOf(release: { approvals?: readonly ReleaseApproval[]; breakGlass?: ReleaseBreakGlass }): {
  approvals?: ReleaseApproval[];
  breakGlass?: ReleaseBreakGlass;
} {
  const { approvals, breakGlass } = release;
  return {
    ...(approvals ? { approvals: approvals.map((a) => ({ by: a.by, at: a.at, comment: a.comment })) } : {}),
    ...(breakGlass ? { breakGlass: { by: breakGlass.by, role: breakGlass.role, at: breakGlass.at } } : {}),
  };
}
