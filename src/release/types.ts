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
import type { z } from 'zod';
import type { kappStateSchema, stepRecordSchema } from './record-schema.js';

/** What a release does: `install` applies the selected kapps, `delete` removes them. */
export type ReleaseOperation = 'install' | 'delete';

/** The phases of a running release; a release in one of these holds the lock. */
export type RunningPhase = 'applying' | 'deleting';

/** The phases of a finished release. */
export type FinalPhase = 'succeeded' | 'failed' | 'cancelled';

/** A release's phase: running (`applying`/`deleting`) or finished. */
export type ReleasePhase = RunningPhase | FinalPhase;

/** The phases, in the order a release can pass through them. */
export const RELEASE_PHASES: readonly ReleasePhase[] = ['applying', 'deleting', 'succeeded', 'failed', 'cancelled'];

/** The kapp statuses a state entry may have. */
export const KAPP_STATE_STATUSES = ['installed', 'deleted', 'failed', 'skipped', 'cancelled'] as const;

/** The status of one kapp in a release's state. */
export type KappStateStatus = (typeof KAPP_STATE_STATUSES)[number];

/** JSON-safe data: what `JSON.stringify` writes and `JSON.parse` gives back unchanged. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The process that runs (or ran) a release, named in lock messages. */
export interface ReleaseOwner {
  /** Login name of the user. */
  user: string;
  /** Host name of the machine. */
  host: string;
  /** Process id on that host. */
  pid: number;
}

/** One step a kapp ran during the release (its fields are documented in `stepRecordSchema`). */
export type StepRecord = z.infer<typeof stepRecordSchema>;

/** The recorded state of one kapp (its fields are documented in `kappStateSchema`). */
export type KappState = z.infer<typeof kappStateSchema>;

/** Kapp id (`manifest:kapp`) → its state. */
export type ReleaseState = Record<string, KappState>;

/** The `-i`/`-x` selectors of the command that made the release. */
export interface ReleaseSelectors {
  include: string[];
  exclude: string[];
}

/** Who unlocked a release by hand, and when. */
export interface ReleaseUnlock {
  /** `user@host`. */
  by: string;
  /** ISO timestamp. */
  at: string;
}

/** One release: a revision of a (project, stack). */
export interface Release {
  project: string;
  stack: string;
  /** 1, 2, …, with no gaps, per (project, stack). */
  revision: number;
  operation: ReleaseOperation;
  phase: ReleasePhase;
  /** The `kapps generate` document of the selected kapps, with sensitive values redacted. */
  spec: StackSpec;
  /** Every kapp ever recorded for this stack; starts as a copy of the previous release's state. */
  state: ReleaseState;
  /** When the release began (ISO). */
  createdAt: string;
  /** When the record was last written (ISO); strictly increasing, used to detect concurrent writers. */
  modifiedAt: string;
  /** When the release reached a final phase (ISO). */
  finishedAt?: string;
  /** Last sign of life of the owner (ISO); refreshed every 10 s while the release runs. */
  heartbeatAt: string;
  owner: ReleaseOwner;
  /** The command line (argv after `node`), with sensitive values redacted by the caller. */
  command: string[];
  selectors: ReleaseSelectors;
  /** The kapps version that wrote the release. */
  kappsVersion: string;
  /** Set when the release was unlocked by hand (`kapps release unlock`). */
  unlocked?: ReleaseUnlock;
}

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
  };
}
