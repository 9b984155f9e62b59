/** Runs: submit, list, show, result; the options a run takes. */
import * as z from 'zod';
import { nameSchema, runIdSchema } from './common.js';
import { MAX_PAGE_LIMIT, CURSOR_PATTERN, RUN_STATES, RUN_TYPES } from './constants.js';
import { checkResultSchema, runApprovalSchema } from './approvals.js';

/** A selector as `-i/-x` take it: `manifest:kapp` or `manifest:*`. */
const selectorSchema = z.string().min(1).max(300);

/**
 * One stack override: a name (or empty, no override). Overrides become values templates read and steps receive, so
 * nothing else is taken: no template source, no spaces to split into arguments, no leading `-` to read as an option.
 */
export const overrideValueSchema = z
  .string()
  .max(128)
  .regex(
    /^(?:[A-Za-z0-9][A-Za-z0-9._-]*)?$/,
    'a name: letters, digits, ".", "_" and "-", not starting with "." or "-" (at most 128 characters)',
  );

/** The stack overrides of the CLI (`--provider`, `--account`, …). */
export const overridesSchema = z
  .object({
    provider: overrideValueSchema,
    provisioner: overrideValueSchema,
    account: overrideValueSchema,
    region: overrideValueSchema,
    profile: overrideValueSchema,
    cluster: overrideValueSchema,
  })
  .partial()
  .strict();

/** The options of a run, as submitted and as the run shows them. */
export const runOptionsSchema = z
  .object({
    include: z.array(selectorSchema).max(1000),
    exclude: z.array(selectorSchema).max(1000),
    parents: z.boolean(),
    changedOnly: z.boolean(),
    keepGoing: z.boolean(),
    workers: z.number().int().min(1).max(64),
    overrides: overridesSchema,
    /** Preview: read the live outputs of installed kapps (3-way preview, `kapps preview --refresh`). */
    refresh: z.boolean(),
    /** Apply: apply exactly what this finished preview run showed (409 "stale preview" when the stack changed since). */
    previewRunId: runIdSchema,
    /**
     * Rollback (and a preview of one): the revision whose desired state is applied again; -1 the one before the
     * latest. Only a revision that succeeded is a target.
     */
    toRevision: z.union([z.number().int().min(1), z.literal(-1)]),
    /** Rollback: delete (in reverse order) the kapps installed now that the target revision did not have. */
    prune: z.boolean(),
    /**
     * Rollback: go on where the target's project commit cannot be checked out (unreachable, or a checkout that had
     * local changes): the recorded sources and variables on top of today's checkout.
     */
    force: z.boolean(),
    /**
     * Apply, destroy, rollback: skip the approvals the stack requires. Only a token of a role its `approvals.break_glass`
     * names may ask (403 otherwise); the use is recorded in the run and its release and notified (`run.break_glass`).
     */
    breakGlass: z.boolean(),
  })
  .partial()
  .strict();
export type RunRequestOptions = z.infer<typeof runOptionsSchema>;

/**
 * The options of a preview an apply (or rollback) of it takes over: what it selected, the overrides and, for the
 * preview of a rollback, its target revision and whether it prunes or forces.
 */
export function previewSelection(options: RunRequestOptions): RunRequestOptions {
  const { include, exclude, parents, overrides, toRevision, prune, force } = options;
  return {
    ...(include ? { include } : {}),
    ...(exclude ? { exclude } : {}),
    ...(parents !== undefined ? { parents } : {}),
    ...(overrides ? { overrides } : {}),
    ...(toRevision !== undefined ? { toRevision } : {}),
    ...(prune !== undefined ? { prune } : {}),
    ...(force !== undefined ? { force } : {}),
  };
}

/**
 * A git ref a client names (a branch, a tag or a commit SHA): data for git, never an option or a revision expression.
 * The server checks it again as kapp sources' refs are checked (src/config/source-uri.ts).
 */
export const gitRefSchema = z
  .string()
  .min(1)
  .max(255)
  .regex(
    /^[A-Za-z0-9_][A-Za-z0-9._/-]*$/,
    'a branch, tag or commit: letters, digits, ".", "_", "/" and "-", not starting with "-", "." or "/"',
  );

/** `POST /api/v1/runs`. */
export const submitRunSchema = runOptionsSchema.extend({
  type: z.enum(RUN_TYPES),
  project: nameSchema,
  stack: nameSchema,
  /**
   * A project from a repository: the branch, tag or commit to run at (default: the project's branch), resolved to a
   * commit when the run is submitted. Not taken by an apply of a preview (it runs at the preview's commit).
   */
  ref: gitRefSchema.optional(),
});
export type SubmitRun = z.infer<typeof submitRunSchema>;

/** The commit a run of a project from a repository works at, resolved when the run was submitted. */
export const runCommitSchema = z.object({
  /** The repository as configured, any credentials in its URL removed. */
  repo: z.string(),
  /** The ref it was resolved from (`main`, `v1.2`, a SHA). */
  ref: z.string(),
  /** The full commit SHA. */
  sha: z.string(),
  /** The commit's subject line and author (`Name <email>`), as git shows them. */
  subject: z.string(),
  author: z.string(),
});
export type RunCommit = z.infer<typeof runCommitSchema>;

export const TRIGGER_KINDS = ['api', 'push', 'pull_request', 'poll', 'schedule', 'drift'] as const;

/**
 * What started a run: a client's request, a webhook's push or pull request, the server's polling, its drift schedule
 * (a scheduled `drift` run), or a drift check that found drift (the preview or apply `drift.remediate` queues).
 */
export const runTriggerSchema = z.object({
  kind: z.enum(TRIGGER_KINDS),
  /** The webhook delivery's id (GitHub's `X-GitHub-Delivery`, GitLab's event UUID); null otherwise. */
  delivery: z.string().nullable(),
  /** The ref the change was to (`refs/heads/main`, `refs/pull/7/head`), or the ref a client asked for; null: none. */
  ref: z.string().nullable(),
});
export type RunTrigger = z.infer<typeof runTriggerSchema>;

/** A run, as `GET /api/v1/runs/{id}` answers. */
export const runSchema = z.object({
  id: runIdSchema,
  type: z.enum(RUN_TYPES),
  project: z.string(),
  stack: z.string(),
  status: z.enum(RUN_STATES),
  /** The name of the token that submitted it (`anonymous` on a loopback server without tokens). */
  createdBy: z.string(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  /** 1 for the next run of its stack to start; null unless queued. */
  queuePosition: z.number().int().nullable(),
  /** The id of the run it waits for (the active or an earlier queued run of its stack), or null. */
  blockedBy: z.string().nullable(),
  /** The release an apply/destroy recorded, once known. */
  releaseRevision: z.number().int().nullable(),
  /** Why it failed, was cancelled or errored, in one line. */
  error: z.string().nullable(),
  options: runOptionsSchema,
  /** The commit it works at (a project from a repository); null for a project from a stack file on the server. */
  commit: runCommitSchema.nullable(),
  /** What started it. */
  trigger: runTriggerSchema,
  /**
   * The approvals it needs and has (a run that changes a stack whose project requires approvals); null otherwise.
   * While it is `needs-approval`, `GET /runs/{id}/preview` is the preview document the approvals bind to.
   */
  approval: runApprovalSchema.nullable(),
  /** The results of the project's run checks so far, in the order they ran. */
  checks: z.array(checkResultSchema),
  /**
   * What the client asking may do with it now (buttons are taken from here): cancel it; approve or reject it (it is
   * `needs-approval`, the client's role may decide, it is not the author unless the author may approve, and it has
   * not approved it already).
   */
  actions: z.object({ cancelable: z.boolean(), approvable: z.boolean(), rejectable: z.boolean() }),
});
export type Run = z.infer<typeof runSchema>;

/** `GET /api/v1/runs`. */
export const runListSchema = z.object({ runs: z.array(runSchema), nextCursor: z.string().nullable() });
export type RunList = z.infer<typeof runListSchema>;
export const runListQuerySchema = z
  .object({
    project: nameSchema,
    stack: nameSchema,
    type: z.enum(RUN_TYPES),
    status: z.enum(RUN_STATES),
    createdBy: z.string().max(128),
    since: z.iso.datetime({ offset: true }),
    until: z.iso.datetime({ offset: true }),
    limit: z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT),
    /** The `nextCursor` of a page: decimal digits, at most 15 (src/server/queue/run-store.ts, one rule for both stores). */
    cursor: z.string().regex(CURSOR_PATTERN, 'not a cursor this server gave (use the nextCursor of a page)'),
  })
  .partial()
  .strict();
export type RunListQuery = z.infer<typeof runListQuerySchema>;

/** The result of an apply or destroy (`GET /api/v1/runs/{id}/result`). */
export const applyResultSchema = z.object({
  message: z.string(),
  releaseRevision: z.number().int().nullable(),
  kapps: z.object({
    succeeded: z.number().int(),
    failed: z.number().int(),
    skipped: z.number().int(),
    cancelled: z.number().int(),
  }),
});
export type ApplyResult = z.infer<typeof applyResultSchema>;
