/**
 * The releases of a stack (`GET /api/v1/projects/{p}/stacks/{s}/releases[/{rev}]`, `POST …/unlock`), as
 * `kapps release list|show -o json` shows them.
 */
import * as z from 'zod';
import { releaseOwnerSchema } from './common.js';
import { CURSOR_PATTERN, MAX_PAGE_LIMIT } from './constants.js';
import { breakGlassSchema, releaseApprovalSchema } from './approvals.js';

/** One release of a list, as `kapps release list -o json` shows it. */
/** What every release answer says of a release: which, what, its phase and owner, and when. */
const releaseHeader = {
  project: z.string(),
  stack: z.string(),
  revision: z.number().int(),
  operation: z.string(),
  phase: z.string(),
  owner: releaseOwnerSchema,
  createdAt: z.string(),
  modifiedAt: z.string(),
  finishedAt: z.string().optional(),
  heartbeatAt: z.string(),
  unlocked: z.object({ by: z.string(), at: z.string() }).optional(),
  /** Where its spec came from, for a release a run of a project from a repository made: the repository and commit. */
  source: z
    .object({
      repo: z.string(),
      commit: z.string(),
      /** The checkout had local changes (not committed) when the release was made: its commit alone does not reproduce it. */
      dirty: z.boolean().optional(),
      /** The stack file's path inside the repository. */
      path: z.string().optional(),
    })
    .optional(),
  /** A rollback: the revision whose desired state it applied again. */
  rollbackOf: z.number().int().optional(),
  /** The approvals that let the run of the server apply it (a stack requiring approvals), oldest first. */
  approvals: z.array(releaseApprovalSchema).optional(),
  /** The approvals it needed were skipped by a `break_glass` token. */
  breakGlass: breakGlassSchema.optional(),
};

export const releaseListEntrySchema = z.object({
  ...releaseHeader,
  kappsCount: z.number().int(),
  /** finishedAt − createdAt in milliseconds; null while running. */
  durationMs: z.number().nullable(),
});

/** The query of a release list: `limit` (default 50 when paged) and the `nextCursor` of the page before. */
export const releaseListQuerySchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT),
    cursor: z.string().regex(CURSOR_PATTERN, 'not a cursor this server gave (use the nextCursor of a page)'),
  })
  .partial()
  .strict();

/** Without `limit` and `cursor`: every release, newest first, as a bare list (`kapps release list -o json`). */
export const releaseFullListSchema = z
  .array(releaseListEntrySchema)
  .describe('Without limit and cursor: every release, newest first, not paged (no nextCursor).');

/** With `limit` or `cursor`: one page, newest first; `nextCursor` is null on the last page. */
export const releasePageSchema = z
  .object({
    releases: z.array(releaseListEntrySchema),
    nextCursor: z.string().nullable(),
  })
  .describe('With limit or cursor: one page, newest first; send nextCursor back as cursor for the next (null: last).');
export type ReleasePage = z.infer<typeof releasePageSchema>;

/**
 * `GET …/releases`: not paged without `limit` and `cursor` (a bare list), paged with either (`{releases,
 * nextCursor}`).
 */
export const releaseListSchema = z.union([releasePageSchema, releaseFullListSchema]);
export type ReleaseList = z.infer<typeof releaseListSchema>;

/** One step a kapp ran during a release. */
const releaseStepSchema = z.looseObject({
  phase: z.string(),
  name: z.string(),
  status: z.string(),
  exitCode: z.number().int().nullable(),
  durationMs: z.number(),
});

/** The recorded state of one kapp. */
const kappStateSchema = z.looseObject({
  status: z.string(),
  revision: z.number().int(),
  outputs: z.unknown(),
  steps: z.array(releaseStepSchema),
});

/** One kapp of a release's spec (the `kapps generate` document, sensitive values shown as `(sensitive)`). */
const specKappSchema = z.looseObject({ id: z.string(), dependsOn: z.array(z.string()) });

/**
 * `GET …/releases/{rev}`: one release as `kapps release show -o json` shows it: its summary, the command that made
 * it (secrets masked), the state of every kapp the stack has recorded and the spec of the kapps it selected.
 * Records may hold more fields than these (they are kept as stored).
 */
export const releaseSchema = z.looseObject({
  ...releaseHeader,
  command: z.array(z.string()).optional(),
  state: z.record(z.string(), kappStateSchema),
  spec: z.looseObject({ stack: z.string(), kapps: z.array(specKappSchema) }),
});
export type Release = z.infer<typeof releaseSchema>;

/** `POST …/unlock` (admin): the release that held the lock is now `failed`, marked unlocked. */
export const unlockResultSchema = z.object({
  unlocked: z.literal(true),
  revision: z.number().int(),
  /** The phase it had (`applying` or `deleting`). */
  previousPhase: z.string(),
  /** The holder as it looked when unlocked, in one sentence. */
  holder: z.string(),
  /** The token name that unlocked it. */
  by: z.string(),
});
export type UnlockResult = z.infer<typeof unlockResultSchema>;
