/**
 * The runs server's public API: the schemas that validate requests and describe responses (the OpenAPI document at
 * `/api/v1/openapi.json` is generated from them). Clients (`kapps runs …`, `--server`, the web page) rely on these
 * shapes: add fields, never rename or remove them.
 */
import { z } from 'zod';

export const RUN_TYPES = ['generate', 'preview', 'apply', 'destroy'] as const;
export type RunType = (typeof RUN_TYPES)[number];

/** `queued → running → succeeded | failed | cancelled`; `errored`: the server running it died under it. */
export const RUN_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'errored'] as const;
export type RunState = (typeof RUN_STATES)[number];
export const FINAL_RUN_STATES: readonly RunState[] = ['succeeded', 'failed', 'cancelled', 'errored'];

/** Roles, each including the ones before it: read < plan (generate, preview) < apply (apply, destroy, cancel) < admin (unlock). */
export const ROLES = ['read', 'plan', 'apply', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** A project or stack name as clients give it: a name, never a path. */
export const nameSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a name: letters, digits, ".", "_" and "-", not starting with "." or "-"');

/** A run id: opaque to clients. */
export const runIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/);

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
  })
  .partial()
  .strict();
export type RunRequestOptions = z.infer<typeof runOptionsSchema>;

/** The options of a preview an apply of it takes over: what it selected and the overrides. */
export function previewSelection(options: RunRequestOptions): RunRequestOptions {
  const { include, exclude, parents, overrides } = options;
  return {
    ...(include ? { include } : {}),
    ...(exclude ? { exclude } : {}),
    ...(parents !== undefined ? { parents } : {}),
    ...(overrides ? { overrides } : {}),
  };
}

/** `POST /api/v1/runs`. */
export const submitRunSchema = runOptionsSchema.extend({
  type: z.enum(RUN_TYPES),
  project: nameSchema,
  stack: nameSchema,
});
export type SubmitRun = z.infer<typeof submitRunSchema>;

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
  /** What a client may do with it now (buttons are taken from here). */
  actions: z.object({ cancelable: z.boolean() }),
});
export type Run = z.infer<typeof runSchema>;

/**
 * The one rule of a page's cursor, runs and releases alike: 1 to 15 decimal digits (a safe integer), as the server
 * gives it in `nextCursor` (src/server/queue/policy.ts).
 */
export const CURSOR_PATTERN = /^[0-9]{1,15}$/;

/** `GET /api/v1/runs`. */
export const runListSchema = z.object({ runs: z.array(runSchema), nextCursor: z.string().nullable() });
export const runListQuerySchema = z
  .object({
    project: nameSchema,
    stack: nameSchema,
    type: z.enum(RUN_TYPES),
    status: z.enum(RUN_STATES),
    createdBy: z.string().max(128),
    since: z.iso.datetime({ offset: true }),
    until: z.iso.datetime({ offset: true }),
    limit: z.coerce.number().int().min(1).max(500),
    /** The `nextCursor` of a page (`CURSOR_PATTERN`). */
    cursor: z.string().regex(CURSOR_PATTERN, 'not a cursor this server gave (use the nextCursor of a page)'),
  })
  .partial()
  .strict();
export type RunListQuery = z.infer<typeof runListQuerySchema>;

/** One line of a run's log: the plain reporter's lines (`stream: 'kapps'`) and every line a step printed. */
export const logLineSchema = z.object({
  time: z.string(),
  stream: z.enum(['kapps', 'stdout', 'stderr']),
  kapp: z.string().optional(),
  phase: z.string().optional(),
  step: z.string().optional(),
  text: z.string(),
});
export type LogLine = z.infer<typeof logLineSchema>;

/** `GET /api/v1/runs/{id}/logs?offset=N`: the log's lines from byte offset N of its NDJSON form. */
export const logChunkSchema = z.object({
  offset: z.number().int(),
  nextOffset: z.number().int(),
  lines: z.array(logLineSchema),
  /** The run is finished and nothing follows nextOffset. */
  complete: z.boolean(),
});
export type LogChunk = z.infer<typeof logChunkSchema>;

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

/** An error answer (RFC 9457, `application/problem+json`). */
export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().optional(),
  instance: z.string().optional(),
  /** 400: each field at fault. */
  errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
});
export type Problem = z.infer<typeof problemSchema>;

/**
 * Server-Sent Events of `GET /api/v1/runs/{id}/events`: each has an `id:` (a sequence number per run, for
 * `Last-Event-ID`) and one of these `event:` names with JSON `data:`:
 * - `run-event`: a run event as `--reporter json` prints it (src/report/events.ts);
 * - `log`: a `LogLine`;
 * - `status`: the run as `GET /runs/{id}` answers, whenever its status changes; the stream ends after the one with
 *   a final status.
 */
export const SSE_EVENT_NAMES = ['run-event', 'log', 'status'] as const;

/** `GET /api/v1/whoami`: the caller's token name and role (a page shows only the buttons the role allows). */
export const whoamiSchema = z.object({
  name: z.string(),
  role: z.enum(ROLES),
  /** The projects the token is limited to (`shop`, `team-*`); absent when it reaches every project. */
  projects: z.array(z.string()).optional(),
});

/** `GET /api/v1/projects`: the registered projects and the stacks their stack file defines. */
export const projectListSchema = z.object({
  projects: z.array(z.object({ name: z.string(), stacks: z.array(z.string()) })),
});

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

/** One release of `GET /api/v1/projects/{p}/stacks/{s}/releases`, as `kapps release list -o json` shows it. */
export const releaseListEntrySchema = z.object({
  project: z.string(),
  stack: z.string(),
  revision: z.number().int(),
  operation: z.string(),
  phase: z.string(),
  kappsCount: z.number().int(),
  owner: z.object({
    user: z.string(),
    machineUser: z.string().optional(),
    host: z.string(),
    pid: z.number().int().optional(),
  }),
  createdAt: z.string(),
  modifiedAt: z.string(),
  finishedAt: z.string().optional(),
  heartbeatAt: z.string(),
  unlocked: z.object({ by: z.string(), at: z.string() }).optional(),
  /** finishedAt − createdAt in milliseconds; null while running. */
  durationMs: z.number().nullable(),
});

/**
 * `GET /api/v1/projects/{p}/stacks/{s}/releases`: without `limit` and `cursor`, every release newest first (a bare
 * list, as `kapps release list -o json` prints it); with either, one page `{releases, nextCursor}` (default 50).
 */
export const releaseListQuerySchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(500),
    cursor: z.string().regex(CURSOR_PATTERN, 'not a cursor this server gave (use the nextCursor of a page)'),
  })
  .partial()
  .strict();
export const releasePageSchema = z.object({
  releases: z.array(releaseListEntrySchema),
  nextCursor: z.string().nullable(),
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
