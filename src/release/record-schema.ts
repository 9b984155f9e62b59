/**
 * Validation of stored release records. Every backend reads records through `parseReleaseRecord`, so a damaged
 * file or row is reported with where it is and what is wrong, never used half-read and never skipped.
 *
 * Unknown fields are kept (records written by a newer kapps keep their extra fields when an older one updates
 * them); the spec is only checked as far as the release code relies on it.
 */
import * as z from 'zod';
import { PHASES, STEP_STATUSES } from '../vocabulary.js';
import { ReleaseRecordError } from './errors.js';
import { plainCheckOf } from './record-check.js';
import { KAPP_STATE_STATUSES, RELEASE_PHASES, type Release } from './types.js';

const isoTime = z.iso.datetime({ offset: true });

/**
 * One step a kapp ran during a release, as recorded in the release's state. The `StepRecord` type is inferred from
 * this schema; records are read with `.loose()` so that fields written by a newer kapps are kept.
 */
export const stepRecordSchema = z.object({
  /** The run-unit phase the step belongs to. */
  phase: z.enum(PHASES),
  /** The step's name. */
  name: z.string(),
  status: z.enum(STEP_STATUSES),
  /** Exit code of the command; null when it was killed by a signal or never started. */
  exitCode: z.number().int().nullable(),
  /** When the step started (ISO). */
  startedAt: isoTime,
  /** When the step ended (ISO). */
  endedAt: isoTime,
  /** Wall time in milliseconds. */
  durationMs: z.number().nonnegative(),
  /** Whether the step was stopped by its timeout. */
  timedOut: z.boolean(),
});

const stepSchema = stepRecordSchema.loose();

/** The recorded state of one kapp. The `KappState` type is inferred from this schema. */
export const kappStateSchema = z.object({
  status: z.enum(KAPP_STATE_STATUSES),
  /** The kapp's non-sensitive outputs (JSON-safe), as loaded by its steps; `{}` when none. */
  outputs: z.json(),
  /** The steps run by the release that last changed this entry, in order. */
  steps: z.array(stepRecordSchema),
  /** sha256 (hex) of the kapp's canonical spec JSON when it was last recorded; compared by preview. */
  specDigest: z.string(),
  /**
   * The format of the spec `specDigest` was computed from (2: sources, templates, variables, relative paths, keyed
   * secrets); absent for entries written before, whose digest covers steps and dependencies only.
   */
  specFormat: z.number().int().positive().optional(),
  /** Why the kapp failed or was cancelled (credentials masked), when it did; absent otherwise. */
  error: z.string().optional(),
  /** The revision of the release that last changed this entry. */
  revision: z.number().int().positive(),
  /** When this entry last changed (ISO). */
  updatedAt: isoTime,
});

const looseKappStateSchema = kappStateSchema.extend({ steps: z.array(stepSchema) }).loose();

const specSchema = z.looseObject({
  stack: z.string(),
  format: z.number().int().positive().optional(),
  kapps: z.array(
    z.looseObject({
      id: z.string(),
      dependsOn: z.array(z.string()),
      selected: z.boolean(),
      conditionsOk: z.boolean(),
      phases: z.record(z.string(), z.array(z.looseObject({ name: z.string() }))),
    }),
  ),
});

/** The process that runs (or ran) a release, named in lock messages. `ReleaseOwner` is inferred from it. */
export const ownerSchema = z.object({
  /** Who ran it: the login name of the user, or for a runs server run the name of the token that submitted it. */
  user: z.string(),
  /** A runs server run: the login name the server runs as (`user` names the token). */
  machineUser: z.string().optional(),
  /** Host name of the machine. */
  host: z.string(),
  /** Process id on that host. */
  pid: z.number().int(),
});

/** The `-i`/`-x` selectors of the command that made the release. */
export const selectorsSchema = z.object({ include: z.array(z.string()), exclude: z.array(z.string()) });

/** Who unlocked a release by hand, and when. */
export const unlockSchema = z.object({
  /** `user@host`. */
  by: z.string(),
  /** ISO timestamp. */
  at: isoTime,
});

/**
 * Where a release's spec came from: a run of a project kept in a git repository, at one commit, or a command run in
 * a git checkout (its commit, and whether it had local changes).
 */
export const releaseSourceSchema = z.object({
  /** The repository's URL, without credentials (a checkout without a remote: its top folder). */
  repo: z.string(),
  /** The full commit SHA the run worked at. */
  commit: z.string(),
  /** The checkout had local changes (not committed): its commit alone does not reproduce the release. */
  dirty: z.boolean().optional(),
  /** The stack file's path inside the repository (`/`-separated). */
  path: z.string().optional(),
});

/** An approval that let a runs server's run apply the release (a stack requiring approvals): the token's name. */
export const releaseApprovalRecordSchema = z.object({
  /** The name of the token that approved. */
  by: z.string(),
  at: isoTime,
  /** Its comment, as given (null: none). */
  comment: z.string().nullable(),
});

/** The approvals a stack requires, skipped by a token of a `break_glass` role: who, of which role, when. */
export const releaseBreakGlassRecordSchema = z.object({ by: z.string(), role: z.string(), at: isoTime });

/** One release: a revision of a (project, stack). `Release` is inferred from it (with the spec's full type). */
export const releaseRecordSchema = z.object({
  project: z.string().min(1),
  stack: z.string().min(1),
  /** 1, 2, …, with no gaps, per (project, stack). */
  revision: z.number().int().positive(),
  operation: z.enum(['install', 'delete']),
  phase: z.enum(RELEASE_PHASES),
  /** When the release began (ISO). */
  createdAt: isoTime,
  /** When the record was last written (ISO); strictly increasing, used to detect concurrent writers. */
  modifiedAt: isoTime,
  /** When the release reached a final phase (ISO). */
  finishedAt: isoTime.optional(),
  /** Last sign of life of the owner (ISO); refreshed every 10 s while the release runs. */
  heartbeatAt: isoTime,
  owner: ownerSchema,
  /** The command line (argv after `node`), with sensitive values redacted by the caller. */
  command: z.array(z.string()),
  selectors: selectorsSchema,
  /** The kapps version that wrote the release. */
  kappsVersion: z.string(),
  /** Set when the release was unlocked by hand (`kapps release unlock`). */
  unlocked: unlockSchema.optional(),
  /** The repository and commit its spec was read at (a runs server's project from git); absent otherwise. */
  source: releaseSourceSchema.optional(),
  /** A rollback (`kapps release rollback --to N`): the revision N whose desired state it applied again. */
  rollbackOf: z.number().int().positive().optional(),
  /** The approvals that let a runs server's run apply it, oldest first (a stack requiring approvals). */
  approvals: z.array(releaseApprovalRecordSchema).optional(),
  /** Set when a `break_glass` token skipped the approvals it needed. */
  breakGlass: releaseBreakGlassRecordSchema.optional(),
  /**
   * Why the release failed before its kapps ran (a configuration or template error, a missing command, a source
   * that could not be fetched), credentials masked; absent otherwise.
   */
  error: z.string().optional(),
  /** Every kapp ever recorded for this stack; starts as a copy of the previous release's state. */
  state: z.record(z.string(), kappStateSchema),
  /** The `kapps generate` document of the selected kapps, with sensitive values redacted. */
  spec: specSchema,
});

/** What records are read with: the same schema, keeping the fields a newer kapps wrote. */
export const releaseReadSchema = releaseRecordSchema
  .extend({
    owner: ownerSchema.loose(),
    selectors: selectorsSchema.loose(),
    unlocked: unlockSchema.loose().optional(),
    source: releaseSourceSchema.loose().optional(),
    approvals: z.array(releaseApprovalRecordSchema.loose()).optional(),
    breakGlass: releaseBreakGlassRecordSchema.loose().optional(),
    state: z.record(z.string(), looseKappStateSchema),
  })
  .loose();

/**
 * Check that `data` (parsed YAML or JSON) is a release record and return it typed. `where` names the record in
 * the error (a file path or a database row). Throws `ReleaseRecordError` listing every problem.
 */
export function parseReleaseRecord(data: unknown, where: string): Release {
  // A record zod would give back unchanged is taken as it is (see record-check.ts); zod checks the rest.
  if (plainCheckOf(releaseReadSchema)?.(data)) return data as Release;
  const result = releaseReadSchema.safeParse(data);
  if (!result.success) throw new ReleaseRecordError(where, problemsOf(result.error));
  // `Release` is this schema's type, except the spec, which the schema checks only as far as releases rely on it.
  return result.data as unknown as Release;
}

/** The record without its spec, as `parseRecordWithLazySpec` checks it before the spec is asked for. */
const releaseHeadSchema = releaseReadSchema.omit({ spec: true }).loose();

/** The problems zod finds in `data`, as one line (at most ten); `prefix` starts each path. */
function problemsOf(error: z.ZodError, prefix = ''): string {
  return error.issues
    .slice(0, 10)
    .map((issue) => {
      const at = [...(prefix ? [prefix] : []), ...issue.path.map(String)];
      return `${at.length ? at.join('.') : '(top level)'}: ${issue.message}`;
    })
    .join('; ');
}

/**
 * Check a record whose spec is read only when asked for: `head` is the record without `spec` (checked now, as
 * `parseReleaseRecord` checks a whole record) and `readSpec` gives the spec's data. The spec is read and checked the
 * first time the record's `spec` is read (a `ReleaseRecordError` then if it is not a spec); setting `spec` replaces
 * it. Reading a record only for its state (a preview with nothing changed, the latest revision) skips the spec.
 */
export function parseRecordWithLazySpec(
  head: Record<string, unknown>,
  where: string,
  readSpec: () => unknown,
): Release {
  let release: Record<string, unknown>;
  if (plainCheckOf(releaseHeadSchema)?.(head)) {
    release = head;
  } else {
    const result = releaseHeadSchema.safeParse(head);
    if (!result.success) throw new ReleaseRecordError(where, problemsOf(result.error));
    release = result.data;
  }
  let spec: { value: unknown } | undefined;
  Object.defineProperty(release, 'spec', {
    enumerable: true,
    configurable: true,
    get(): unknown {
      if (spec) return spec.value;
      const data = readSpec();
      if (plainCheckOf(specSchema)?.(data)) {
        spec = { value: data };
      } else {
        const result = specSchema.safeParse(data);
        if (!result.success) throw new ReleaseRecordError(where, problemsOf(result.error, 'spec'));
        spec = { value: result.data };
      }
      return spec.value;
    },
    set(value: unknown): void {
      spec = { value };
    },
  });
  return release as unknown as Release;
}

/** Whether `value` is JSON-safe data (finite numbers, no undefined, no bigint, plain objects and arrays). */
export function isJsonSafe(value: unknown): boolean {
  return jsonSafe(value, new Set());
}

function jsonSafe(value: unknown, ancestors: Set<object>): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      // A cycle has no JSON form.
      if (ancestors.has(value)) return false;
      const proto: unknown = Object.getPrototypeOf(value);
      const isArray = Array.isArray(value);
      if (!isArray && proto !== Object.prototype && proto !== null) return false;
      ancestors.add(value);
      let safe = true;
      if (isArray) {
        for (let i = 0; i < value.length && safe; i++) safe = i in value && jsonSafe(value[i], ancestors);
      } else {
        for (const key in value) {
          if (!safe) break;
          if (Object.hasOwn(value, key)) safe = jsonSafe((value as Record<string, unknown>)[key], ancestors);
        }
      }
      ancestors.delete(value);
      return safe;
    }
    default:
      return false;
  }
}
