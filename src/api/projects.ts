/** Projects and their stacks: the registered projects, and a stack's latest release, lock and active runs. */
import * as z from 'zod';
import { runSchema } from './runs.js';

/** Where a project from git comes from: its repository (credentials removed), branch and stack file in it. */
export const projectRepoSchema = z.object({
  url: z.string(),
  /** The branch runs take by default; null: the remote's default branch. */
  branch: z.string().nullable(),
  path: z.string(),
  /** The newest commit of the branch this server resolved (null before any). */
  head: z.object({ sha: z.string(), subject: z.string(), author: z.string() }).nullable(),
});

/**
 * `GET /api/v1/projects`: the registered projects and the stacks their stack file defines (for a project from git,
 * at the newest commit of its branch the server knows); `repo` is null for a stack file on the server.
 */
export const projectListSchema = z.object({
  projects: z.array(z.object({ name: z.string(), stacks: z.array(z.string()), repo: projectRepoSchema.nullable() })),
});
export type ProjectList = z.infer<typeof projectListSchema>;

/** The lock of a stack: the release that holds it, when one is applying or deleting. */
export const stackLockSchema = z.object({
  revision: z.number().int(),
  operation: z.string(),
  phase: z.string(),
  owner: z
    .object({
      user: z.string(),
      machineUser: z.string().optional(),
      host: z.string(),
      pid: z.number().int().optional(),
    })
    .passthrough(),
  since: z.string(),
  /** Why the owner looks dead (`process 123 is not running on host`), or null when it may be alive. */
  ownerLooksDead: z.string().nullable(),
});

/** `GET /api/v1/projects/{p}/stacks/{s}`. */
export const stackSummarySchema = z.object({
  project: z.string(),
  stack: z.string(),
  latestRelease: z
    .object({
      revision: z.number().int(),
      operation: z.string(),
      phase: z.string(),
      createdAt: z.string(),
      modifiedAt: z.string(),
      owner: z.object({ user: z.string(), host: z.string() }).passthrough(),
    })
    .nullable(),
  lock: stackLockSchema.nullable(),
  running: z.array(runSchema),
  queued: z.array(runSchema),
});
export type StackSummary = z.infer<typeof stackSummarySchema>;
