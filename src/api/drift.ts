/**
 * Drift: whether what is installed still is what the last release recorded. A `drift` run (scheduled by the server's
 * `drift:` configuration, or submitted) reads the live outputs of a stack's installed kapps (`preview --refresh`),
 * writes no release, and its result is a drift report. The server keeps each stack's reports, its open drift episode
 * (one per drift that persists across checks) and the outputs it found noisy:
 * `GET /api/v1/projects/{p}/stacks/{s}/drift`; `GET /api/v1/fleet` summarises every stack.
 */
import * as z from 'zod';
import { runIdSchema } from './common.js';

/** `inSync`: every installed kapp read as recorded; `drifted`: some did not; `unknown`: some could not be read. */
export const DRIFT_STATES = ['inSync', 'drifted', 'unknown'] as const;
export type DriftState = (typeof DRIFT_STATES)[number];

/** One output that differs: its path (`["outputs", "endpoint"]`), as recorded and as read (masked when sensitive). */
export const driftChangeSchema = z.object({
  path: z.array(z.string()).min(1),
  from: z.unknown(),
  to: z.unknown(),
});
export type DriftChange = z.infer<typeof driftChangeSchema>;

/**
 * A kapp whose outputs read differ from those recorded (`drifted`; `inSync` when every difference is ignored or
 * noisy), or that could not be read (`unknown`).
 */
export const driftKappSchema = z.object({
  id: z.string(),
  state: z.enum(['drifted', 'unknown', 'inSync']),
  /** The outputs that differ, less those an ignore rule or a noisy mark leaves out. */
  changes: z.array(driftChangeSchema),
  /** The outputs that differ but an ignore rule leaves out (`drift.ignore`). */
  ignored: z.array(z.array(z.string())),
  /** The outputs that differ but are marked noisy (they changed between two reads with no release between). */
  noisy: z.array(z.array(z.string())),
  /** Why it could not be read (`unknown`), or null. */
  reason: z.string().nullable(),
});
export type DriftKapp = z.infer<typeof driftKappSchema>;

/**
 * The result of one drift check (a `drift` run's result, `kapps drift -o json`): the stack's state, the kapps that
 * drifted or could not be read, and the kapps whose spec differs from the release (changes not applied yet: not
 * drift, said apart).
 */
export const driftReportSchema = z.object({
  project: z.string(),
  stack: z.string(),
  state: z.enum(DRIFT_STATES),
  checkedAt: z.string(),
  /** The release the live state was compared with; null when the stack has none (state `unknown`). */
  basedOnRevision: z.number().int().nullable(),
  /** The kapps that drifted, could not be read, or differ only where ignored or noisy, in stack order. */
  kapps: z.array(driftKappSchema),
  /** Kapps whose spec now differs from the release (`Create`, `Update`, `Delete`): pending changes, not drift. */
  pending: z.array(z.object({ id: z.string(), action: z.string() })),
  /** The kapps whose live outputs were read. */
  read: z.array(z.string()),
  /** Why the state is `unknown` as a whole (no release yet, the check failed), or null. */
  reason: z.string().nullable(),
  /**
   * A digest of each output read, per kapp (`{kapp: {output: sha256}}`): how the server tells an output that changes
   * on every read (noisy) from a drift.
   */
  readDigests: z.record(z.string(), z.record(z.string(), z.string())),
});
export type DriftReport = z.infer<typeof driftReportSchema>;

/** One check of a stack, as its history lists it. */
export const driftCheckSummarySchema = z.object({
  runId: runIdSchema,
  checkedAt: z.string(),
  state: z.enum(DRIFT_STATES),
  basedOnRevision: z.number().int().nullable(),
  /** The ids of the kapps that drifted, and of those that could not be read. */
  drifted: z.array(z.string()),
  unknown: z.array(z.string()),
  /** The drift episode the check belongs to, or null (in sync). */
  episodeId: z.string().nullable(),
});
export type DriftCheckSummary = z.infer<typeof driftCheckSummarySchema>;

/**
 * A drift episode: from the first check that found the stack drifted to the first that found it in sync again. A
 * drift that persists across checks is one episode (one notification), not a new alarm each time.
 */
export const driftEpisodeSchema = z.object({
  id: z.string(),
  openedAt: z.string(),
  /** The run that found it. */
  openedBy: runIdSchema,
  lastSeenAt: z.string(),
  /** The checks that found it drifted. */
  checks: z.number().int().min(1),
  /** Every kapp found drifted during the episode. */
  kapps: z.array(z.string()),
  /** When a check found the stack in sync again, or null while open. */
  closedAt: z.string().nullable(),
  /** The runs `remediate:` queued for it (a preview or an apply of the drifted kapps). */
  remediations: z.array(z.object({ runId: runIdSchema, type: z.string() })),
});
export type DriftEpisode = z.infer<typeof driftEpisodeSchema>;

/** An output marked noisy: it changed between two reads with no release between them, so it is not drift. */
export const noisyOutputSchema = z.object({
  kapp: z.string(),
  /** The output's path (`["outputs", "last_seen"]`). */
  path: z.array(z.string()),
  since: z.string(),
});
export type NoisyOutput = z.infer<typeof noisyOutputSchema>;

/** A stack's drift schedule: how often it is checked and when next. */
export const driftScheduleSchema = z.object({
  everySeconds: z.number().int().min(1),
  nextAt: z.string().nullable(),
  remediate: z.enum(['none', 'preview', 'apply']),
});
export type DriftSchedule = z.infer<typeof driftScheduleSchema>;

/** `GET /api/v1/projects/{p}/stacks/{s}/drift`: the latest check in full, the open episode and the history. */
export const stackDriftSchema = z.object({
  project: z.string(),
  stack: z.string(),
  /** null: the stack is not scheduled (a drift run may still be submitted). */
  schedule: driftScheduleSchema.nullable(),
  /** The latest check, with the run that made it; null before the first. */
  latest: driftReportSchema.extend({ runId: runIdSchema }).nullable(),
  /** The open episode, or null (in sync, or never drifted). */
  episode: driftEpisodeSchema.nullable(),
  /** Checks, newest first (at most 100). */
  history: z.array(driftCheckSummarySchema),
  /** Episodes, newest first (at most 50). */
  episodes: z.array(driftEpisodeSchema),
  noisy: z.array(noisyOutputSchema),
});
export type StackDrift = z.infer<typeof stackDriftSchema>;

/** One stack of the fleet: its last release, its drift state and since when. */
export const fleetStackSchema = z.object({
  project: z.string(),
  stack: z.string(),
  lastRelease: z
    .object({
      revision: z.number().int(),
      operation: z.string(),
      phase: z.string(),
      createdAt: z.string(),
      finishedAt: z.string().nullable(),
      /** The revision it rolled back to, for a rollback. */
      rollbackOf: z.number().int().nullable(),
      commit: z.string().nullable(),
    })
    .nullable(),
  drift: z
    .object({
      state: z.enum(DRIFT_STATES),
      checkedAt: z.string(),
      runId: runIdSchema,
      drifted: z.number().int(),
      unknown: z.number().int(),
      /** When the open episode began (drifted since), or null. */
      since: z.string().nullable(),
    })
    .nullable(),
  schedule: driftScheduleSchema.nullable(),
});
export type FleetStack = z.infer<typeof fleetStackSchema>;

/** `GET /api/v1/fleet`: every stack of every project the caller may read, by project then stack. */
export const fleetSchema = z.object({ stacks: z.array(fleetStackSchema) });
export type Fleet = z.infer<typeof fleetSchema>;
