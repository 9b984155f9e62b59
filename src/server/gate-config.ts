/**
 * The gate between a preview and its apply, as a project's entry of the server configuration declares it (and each
 * of its stacks may override under `stacks:`): `approvals:` (how many distinct tokens of which roles must approve an
 * apply, destroy or rollback, who may skip them) and `checks:` (run checks: a command or an HTTP endpoint judging
 * the preview document after the preview or before the apply).
 */
import * as z from 'zod';
import { error as errorDiag, type Diagnostic, type SourceLocation } from '../diagnostics/diagnostic.js';
import {
  CHECK_ENFORCEMENTS,
  CHECK_STAGES,
  nameSchema,
  ROLES,
  type CheckEnforcement,
  type CheckStage,
  type Role,
} from '../api/index.js';
import { durationSchema, durationSeconds, envNameSchema, pathText } from './config-values.js';

/** The default `approvals.expire_after`: a run waits 7 days at the most. */
export const DEFAULT_APPROVAL_EXPIRY_SECONDS = 7 * 86_400;
/** The default `timeout` of a check. */
export const DEFAULT_CHECK_TIMEOUT_SECONDS = 60;
/** At most this many checks per project or stack. */
export const MAX_CHECKS = 20;

export const approvalsSchema = z
  .object({
    required: z
      .number()
      .int()
      .min(0)
      .max(10)
      .describe(
        'distinct tokens that must approve each apply, destroy and rollback (0: none, for a stack that needs none)',
      ),
    from_roles: z
      .array(z.enum(ROLES))
      .min(1)
      .max(ROLES.length)
      .optional()
      .describe('the roles whose tokens may approve or reject (default [apply, admin])'),
    author_may_approve: z.boolean().optional().describe("whether a run's author may approve it (default false)"),
    expire_after: durationSchema
      .optional()
      .describe('a run waiting longer is discarded (default 7d; at least 1m, at most 90d)'),
    break_glass: z
      .array(z.enum(ROLES))
      .max(ROLES.length)
      .optional()
      .describe(
        'the roles whose tokens may skip the approvals by asking (`breakGlass: true`, `--break-glass`): recorded and notified (default: none)',
      ),
  })
  .strict();

export const checkSchema = z
  .object({
    name: nameSchema.describe('how the run and the page name the check'),
    stage: z
      .enum(CHECK_STAGES)
      .describe('after_preview: on each preview (and the preview of an apply); before_apply: just before an apply'),
    command: z
      .array(z.string().min(1).max(4096))
      .min(1)
      .max(256)
      .optional()
      .describe(
        'a program and its arguments (no shell), run in the project folder with the preview document on stdin; exit 0 passes (or `url`)',
      ),
    url: z
      .string()
      .min(1)
      .max(2048)
      .regex(/^https?:\/\/[^\s]+$/, 'an http:// or https:// URL')
      .optional()
      .describe(
        'an endpoint the preview document is POSTed to, signed as notifications are; it answers {"status": "passed"|"failed", "message"} (or `command`)',
      ),
    secret_env: envNameSchema
      .optional()
      .describe(
        "with `url`: the server's environment variable holding the HMAC-SHA256 key each request is signed with",
      ),
    enforcement: z
      .enum(CHECK_ENFORCEMENTS)
      .optional()
      .describe('mandatory: a failure stops the run; advisory: it is shown only (default mandatory)'),
    timeout: durationSchema.optional().describe('a check running longer fails (default 60s, at most 1h)'),
  })
  .strict();

/** What a project's entry (or one of its `stacks:`) may say of the gate. */
export const gateFields = {
  approvals: approvalsSchema
    .optional()
    .describe('approvals each apply, destroy and rollback needs before it applies its preview'),
  checks: z
    .array(checkSchema)
    .max(MAX_CHECKS)
    .optional()
    .describe('run checks (policy hooks) judging the preview document'),
};

/** `stacks:` of a project's entry: per stack, an `approvals` and `checks` that replace the project's. */
export const stackGatesSchema = z
  .record(nameSchema, z.object(gateFields).strict())
  .describe("per stack: `approvals` and `checks` replacing the project's (`dev: {approvals: {required: 0}}`)");

export interface ApprovalPolicy {
  /** 0: none required. */
  readonly required: number;
  readonly fromRoles: readonly Role[];
  readonly authorMayApprove: boolean;
  readonly expireAfterSeconds: number;
  readonly breakGlass: readonly Role[];
}

export interface RunCheck {
  readonly name: string;
  readonly stage: CheckStage;
  readonly enforcement: CheckEnforcement;
  readonly timeoutSeconds: number;
  /** A program and its arguments (exactly one of `command`, `url`). */
  readonly command?: readonly string[];
  readonly url?: string;
  /** With `url`: the server's environment variable holding the signing key. */
  readonly secretEnv?: string;
}

/** The gate of a project or stack: undefined fields are not set there (a stack's replace its project's). */
export interface Gate {
  readonly approvals?: ApprovalPolicy;
  readonly checks?: readonly RunCheck[];
}

/** The gate of one stack: its own fields over its project's. */
export interface StackGate {
  /** Undefined: no approvals required. */
  readonly approvals?: ApprovalPolicy;
  readonly checks: readonly RunCheck[];
}

/** A project's gate and its stacks' overrides, as the server uses them. */
export interface ProjectGate extends Gate {
  readonly stacks: Readonly<Record<string, Gate>>;
}

/** The gate of `stack` in a project whose gate is `gate`. */
export function stackGate(gate: ProjectGate | undefined, stack: string): StackGate {
  const own = gate?.stacks[stack];
  const approvals = own?.approvals ?? gate?.approvals;
  return {
    ...(approvals && approvals.required > 0 ? { approvals } : {}),
    checks: own?.checks ?? gate?.checks ?? [],
  };
}

/** The server's variables the checks of a project and its stacks sign with (`secret_env`): never a run's to see. */
export function gateSecretEnvs(gate: ProjectGate | undefined): string[] {
  const checks = [...(gate?.checks ?? []), ...Object.values(gate?.stacks ?? {}).flatMap((g) => g.checks ?? [])];
  return checks.flatMap((c) => (c.secretEnv !== undefined ? [c.secretEnv] : []));
}

type WrittenGate = { approvals?: z.infer<typeof approvalsSchema>; checks?: z.infer<typeof checkSchema>[] };

/**
 * The gate a project's entry declares (`at`: its path in the file), with its stacks' overrides; each mistake the
 * schema cannot see (a check with both or neither of `command` and `url`, a `url` without `secret_env`, a variable
 * the server's environment does not hold, a name used twice, a duration out of bounds, a stack `knownStacks` — the
 * stacks of the project's stack file, when it is on this server's disk — does not list) is added to `diagnostics`.
 */
export function resolveGate(
  written: WrittenGate & { stacks?: Record<string, WrittenGate> },
  at: readonly (string | number)[],
  locate: (path: readonly (string | number)[]) => SourceLocation,
  diagnostics: Diagnostic[],
  serverEnv: NodeJS.ProcessEnv,
  knownStacks?: { readonly file: string; readonly names: readonly string[] },
): ProjectGate {
  const problem = (message: string, path: readonly (string | number)[], hint?: string) =>
    diagnostics.push(
      errorDiag(message, locate([...at, ...path]), {
        path: pathText([...at, ...path]),
        ...(hint !== undefined ? { hint } : {}),
      }),
    );
  const one = (w: WrittenGate, base: readonly (string | number)[]): Gate => ({
    ...(w.approvals ? { approvals: resolveApprovals(w.approvals, base, problem) } : {}),
    ...(w.checks ? { checks: resolveChecks(w.checks, base, problem, serverEnv) } : {}),
  });
  const own = one(written, []);
  const stacks: Record<string, Gate> = {};
  for (const [name, g] of Object.entries(written.stacks ?? {})) {
    // A misspelt stack would silently keep the project's gate (or none): say so while the server starts.
    if (knownStacks && !knownStacks.names.includes(name))
      problem(
        `\`${name}\` is not a stack of ${knownStacks.file}`,
        ['stacks', name],
        `its stacks: ${knownStacks.names.join(', ')}`,
      );
    stacks[name] = one(g, ['stacks', name]);
  }
  return { ...own, stacks };
}

type Problem = (message: string, path: readonly (string | number)[], hint?: string) => void;

function resolveApprovals(
  w: z.infer<typeof approvalsSchema>,
  base: readonly (string | number)[],
  problem: Problem,
): ApprovalPolicy {
  const expireAfterSeconds = w.expire_after ? durationSeconds(w.expire_after) : DEFAULT_APPROVAL_EXPIRY_SECONDS;
  if (expireAfterSeconds < 60 || expireAfterSeconds > 90 * 86_400)
    problem(`\`expire_after: ${w.expire_after ?? ''}\` is out of bounds: at least 1m, at most 90d`, [
      ...base,
      'approvals',
      'expire_after',
    ]);
  const fromRoles = w.from_roles ?? ['apply', 'admin'];
  if (fromRoles.includes('read'))
    problem('`read` may not approve: a read token sees runs, it changes nothing', [...base, 'approvals', 'from_roles']);
  for (const role of ['read', 'plan'] as const)
    if (w.break_glass?.includes(role))
      problem(`\`${role}\` may not break glass: its tokens cannot start an apply, destroy or rollback`, [
        ...base,
        'approvals',
        'break_glass',
      ]);
  return {
    required: w.required,
    fromRoles,
    authorMayApprove: w.author_may_approve ?? false,
    expireAfterSeconds,
    breakGlass: w.break_glass ?? [],
  };
}

function resolveChecks(
  written: readonly z.infer<typeof checkSchema>[],
  base: readonly (string | number)[],
  problem: Problem,
  serverEnv: NodeJS.ProcessEnv,
): RunCheck[] {
  const seen = new Set<string>();
  return written.map((c, j) => {
    const at = [...base, 'checks', j];
    if (seen.has(c.name)) problem(`check \`${c.name}\` is declared twice`, [...at, 'name']);
    seen.add(c.name);
    if (c.command !== undefined && c.url !== undefined)
      problem('a check takes `command` or `url`, not both', [...at, 'url']);
    else if (c.command === undefined && c.url === undefined)
      problem('a check needs `command` (a program and its arguments) or `url` (an endpoint)', [...at, 'name']);
    if (c.url !== undefined) {
      if (c.secret_env === undefined)
        problem('a check with `url` needs `secret_env`: its requests are signed as notifications are', [...at, 'url']);
      else if (!serverEnv[c.secret_env])
        problem(`\`${c.secret_env}\` is not set in the server's environment`, [...at, 'secret_env']);
      if (/^https?:\/\/[^/]*@/.test(c.url))
        problem('the URL holds credentials: the endpoint is authenticated by the signature', [...at, 'url']);
    } else if (c.secret_env !== undefined) {
      problem('`secret_env` signs the requests of a `url` check; a command check has none', [...at, 'secret_env']);
    }
    const timeoutSeconds = c.timeout ? durationSeconds(c.timeout) : DEFAULT_CHECK_TIMEOUT_SECONDS;
    if (timeoutSeconds > 3600)
      problem(`\`timeout: ${c.timeout ?? ''}\` is out of bounds: at most 1h`, [...at, 'timeout']);
    return {
      name: c.name,
      stage: c.stage,
      enforcement: c.enforcement ?? 'mandatory',
      timeoutSeconds,
      ...(c.command ? { command: c.command } : {}),
      ...(c.url !== undefined ? { url: c.url } : {}),
      ...(c.secret_env !== undefined ? { secretEnv: c.secret_env } : {}),
    };
  });
}
