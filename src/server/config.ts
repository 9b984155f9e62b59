/**
 * The server's configuration file (`kapps serve --config kapps-server.yaml`): the registered projects, the tokens
 * and the limits. Read like kapps' other files: every problem reported at once with its file, line and field.
 * Its JSON Schema is `kapps schema server`.
 */
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import * as z from 'zod';
import { error as errorDiag, type Diagnostic, type SourceLocation } from '../diagnostics/diagnostic.js';
import { UsageError } from '../diagnostics/errors.js';
import { readConfigText, throwIfErrors } from '../config/read-file.js';
import { gitPathProblem, gitRefProblem, gitRepoProblem } from '../config/source-uri.js';
import { redactCredentials } from '../diagnostics/redact.js';
import { sortByLocation, validateTree } from '../config/validate.js';
import { parseYamlTree, type YamlNode } from '../yaml/read.js';
import { stackNames } from '../config/stack.js';
import { DEFAULT_MAX_LINE_LENGTH } from '../log/line-cut.js';
import { durationSchema, durationSeconds, envNameSchema } from './config-values.js';
import { gateFields, resolveGate, stackGatesSchema, type ProjectGate } from './gate-config.js';
import { NOTIFICATION_EVENTS, nameSchema, ROLES, type NotificationEvent, type Role } from '../api/index.js';

const tokenSchema = z
  .object({
    name: z.string().min(1).max(128).describe('who the token is: becomes the createdBy of the runs it submits'),
    role: z.enum(ROLES).describe('read < plan (generate, preview) < apply (apply, destroy, cancel) < admin (unlock)'),
    sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'the hex SHA-256 of the token (64 hex digits; `kapps serve hash-token` prints it)')
      .describe('the hex SHA-256 of the token; `kapps serve hash-token` reads a token on stdin and prints it'),
    projects: z
      .array(
        z
          .string()
          .min(1)
          .max(128)
          .regex(/^[A-Za-z0-9*][A-Za-z0-9._*-]*$/, 'a project name, `*` standing for any text (`team-*`)'),
      )
      .min(1)
      .max(1000)
      .optional()
      .describe('the projects the token may reach (`shop`, `team-*`); every project when absent'),
  })
  .strict();

const limitsSchema = z
  .object({
    max_runs: z.number().int().min(1).max(64).describe('runs executed at once (default 2)'),
    max_queued_per_stack: z.number().int().min(1).max(100_000).describe('queued runs per stack (default 20)'),
    max_queued_total: z.number().int().min(1).max(1_000_000).describe('queued runs in total (default 200)'),
    grace_seconds: z.number().min(0).max(86_400).describe('on SIGTERM, how long running runs may finish (default 30)'),
    lease_seconds: z.number().min(1).max(3600).describe('the lease of a running run (default 30)'),
    max_log_bytes: z
      .number()
      .int()
      .min(64 * 1024)
      .max(2 ** 40)
      .describe("bytes of log kept per run: its first and last halves (default 64 MiB); also each release's log"),
    max_line_length: z
      .number()
      .int()
      .min(80)
      .max(16 * 1024 * 1024)
      .describe('characters per log line: longer lines are cut into pieces (default 16384)'),
    max_log_answer_bytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .describe('bytes of log lines in one `logs` answer, one line more at most (default 262144)'),
    max_selectors: z.number().int().min(1).max(1000).describe('include plus exclude selectors per run (default 100)'),
    max_selector_length: z.number().int().min(1).max(300).describe('characters per selector (default 200)'),
    requests_per_minute: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .describe('API requests per token (or per anonymous caller) and minute; beyond, 429 (default 1200)'),
    keep_runs_days: z
      .number()
      .min(0)
      .max(36_500)
      .describe('finished runs older than this are deleted, releases kept (default 90; 0: kept by count only)'),
    keep_runs_per_stack: z
      .number()
      .int()
      .min(1)
      .max(10_000_000)
      .describe('finished runs kept per stack, the newest (default 1000)'),
    max_list_bytes: z
      .number()
      .int()
      .min(64 * 1024)
      .max(1024 * 1024 * 1024)
      .describe(
        'bytes of one `GET /runs` answer: a longer page is cut, nextCursor says where it goes on (default 4 MiB)',
      ),
  })
  .partial()
  .strict();

const projectEnvSchema = z
  .object({
    pass: z.array(envNameSchema).describe("variables of the server's environment a run sees (PATH is always passed)"),
    set: z.record(envNameSchema, z.string()).describe('variables a run sees with these values (over pass)'),
  })
  .partial()
  .strict();

/** The events an outbound notification may be sent for: the API's (src/api/notifications.ts). */
export const NOTIFY_EVENTS = NOTIFICATION_EVENTS;
export type NotifyEvent = NotificationEvent;

const repoSchema = z
  .object({
    url: z
      .string()
      .min(1)
      .max(2048)
      .describe(
        'any URL git accepts (https, ssh, git, file, scp-like `git@host:org/repo.git`); credentials never in it',
      ),
    branch: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe("the branch runs take by default, and pushes to which start runs (default: the remote's default)"),
    path: z.string().min(1).max(1024).describe('the stack file inside the repository (`stacks/web.yaml`)'),
    token_env: envNameSchema
      .optional()
      .describe("an HTTPS token for the repository: the name of the server's environment variable that holds it"),
  })
  .strict();

const notifySchema = z
  .object({
    url: z
      .string()
      .min(1)
      .max(2048)
      .regex(/^https?:\/\/[^\s]+$/, 'an http:// or https:// URL')
      .describe('where the JSON POST goes'),
    events: z
      .array(z.enum(NOTIFY_EVENTS))
      .min(1)
      .max(NOTIFY_EVENTS.length)
      .describe(
        'which run events are sent (run.queued, run.started, run.finished, run.succeeded, run.failed, run.cancelled)',
      ),
    secret_env: envNameSchema.describe(
      "the server's environment variable holding the HMAC-SHA256 key each delivery is signed with",
    ),
  })
  .strict();

/** `drift:`, for every project (top level) or one (a project's own, which replaces the top level's). */
const driftSchema = z
  .object({
    every: durationSchema.describe(
      'how often each stack is checked (`6h`; at least 5s, at most 30d); checks are spread over the interval',
    ),
    stacks: z
      .array(nameSchema)
      .min(1)
      .max(10_000)
      .optional()
      .describe('the stacks checked (default: every stack of the project)'),
    ignore: z
      .array(
        z
          .object({
            kapp: z.string().min(1).max(300).describe('`manifest:kapp`, `*` standing for any text (`infra:*`)'),
            outputs: z
              .array(z.string().min(1).max(300))
              .min(1)
              .max(100)
              .describe(
                'output paths, dotted (`endpoint`, `info.last_seen`); `*` stands for one segment or part of one, `**` for any number',
              ),
          })
          .strict(),
      )
      .max(200)
      .optional()
      .describe('output changes that are not drift'),
    remediate: z
      .enum(['none', 'preview', 'apply'])
      .optional()
      .describe('what a drift queues: nothing (default), a preview, or an apply of the drifted kapps'),
  })
  .strict();

/** The file as written. */
export const serverConfigFile = z
  .object({
    projects: z
      .array(
        z
          .object({
            name: nameSchema.describe('the name clients use'),
            stack_file: z
              .string()
              .min(1)
              .optional()
              .describe("a stack file on this server's disk, relative to this file (or `repo`)"),
            repo: repoSchema
              .optional()
              .describe('a git repository the stack file is read from, each run at one commit (or `stack_file`)'),
            webhook: z
              .object({
                secret_env: envNameSchema.describe(
                  "the server's environment variable holding the webhook secret (GitHub's secret, GitLab's token)",
                ),
              })
              .strict()
              .optional()
              .describe('runs started by pushes and pull requests (`POST /api/v1/hooks/github`, `/hooks/gitlab`)'),
            on_push: z
              .enum(['preview', 'apply'])
              .optional()
              .describe('what a push to the branch queues for each stack (default preview)'),
            poll_seconds: z
              .number()
              .int()
              .min(1)
              .max(86_400)
              .optional()
              .describe('fetch the branch this often and queue runs when it moved (for servers no webhook reaches)'),
            notify: z
              .array(notifySchema)
              .max(20)
              .optional()
              .describe('where signed JSON notifications of run events are POSTed'),
            drift: driftSchema
              .optional()
              .describe("scheduled drift checks of the project's stacks (replaces the top-level `drift`)"),
            ...gateFields,
            stacks: stackGatesSchema.optional(),
            env: projectEnvSchema
              .optional()
              .describe(
                "what the project's runs see of the environment (templates' env, the steps'): without it, the server's own minus kapps' variables (KAPPS_*, PG*)",
              ),
          })
          .strict(),
      )
      .describe('the projects clients may name'),
    tokens: z.array(tokenSchema).describe('bearer tokens; without any, the server listens on loopback only'),
    limits: limitsSchema,
    drift: driftSchema.describe('scheduled drift checks of every project without a `drift` of its own'),
  })
  .partial()
  .strict();

export interface ServerLimits {
  readonly maxRuns: number;
  readonly maxQueuedPerStack: number;
  readonly maxQueuedTotal: number;
  readonly graceSeconds: number;
  readonly leaseSeconds: number;
  readonly maxLogBytes: number;
  readonly maxLineLength: number;
  readonly maxLogAnswerBytes: number;
  readonly maxSelectors: number;
  readonly maxSelectorLength: number;
  readonly requestsPerMinute: number;
  readonly keepRunsDays: number;
  readonly keepRunsPerStack: number;
  readonly maxListBytes: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  maxRuns: 2,
  maxQueuedPerStack: 20,
  maxQueuedTotal: 200,
  graceSeconds: 30,
  leaseSeconds: 30,
  maxLogBytes: 64 * 1024 * 1024,
  maxLineLength: DEFAULT_MAX_LINE_LENGTH,
  maxLogAnswerBytes: 256 * 1024,
  maxSelectors: 100,
  maxSelectorLength: 200,
  requestsPerMinute: 1200,
  keepRunsDays: 90,
  keepRunsPerStack: 1000,
  maxListBytes: 4 * 1024 * 1024,
};

export interface TokenEntry {
  readonly name: string;
  readonly role: Role;
  /** The SHA-256 of the token. */
  readonly digest: Buffer;
  /** The project patterns it is limited to; every project when undefined. */
  readonly projects?: readonly string[];
}

/** A project's repository (`repo:`). */
export interface RepoSource {
  readonly url: string;
  /** The branch runs take by default; undefined: the remote's default branch. */
  readonly branch?: string;
  /** The stack file inside the repository, relative to its root. */
  readonly path: string;
  /** The server's environment variable holding an HTTPS token for it. */
  readonly tokenEnv?: string;
}

/** One outbound notification target (`notify:`). */
export interface NotifyTarget {
  readonly url: string;
  readonly events: readonly NotifyEvent[];
  /** The server's environment variable holding the HMAC key. */
  readonly secretEnv: string;
}

/** An output change that is not drift: in the kapps matching `kapp`, the outputs matching one of `outputs`. */
export interface DriftIgnoreRule {
  /** `manifest:kapp`, `*` standing for any text. */
  readonly kapp: string;
  /** Dotted output paths; `*` one segment or part of one, `**` any number of segments. */
  readonly outputs: readonly string[];
}

/** A project's drift checks (`drift:`). */
export interface DriftPolicy {
  readonly everySeconds: number;
  /** The stacks checked; undefined: every stack of the project. */
  readonly stacks?: readonly string[];
  readonly ignore: readonly DriftIgnoreRule[];
  readonly remediate: 'none' | 'preview' | 'apply';
}

/** The shortest and longest drift interval. */
export const MIN_DRIFT_SECONDS = 5;
export const MAX_DRIFT_SECONDS = 30 * 86_400;

export interface ProjectEntry {
  readonly name: string;
  /** A stack file on this server's disk (absolute); undefined for a project from a repository. */
  readonly stackFile?: string;
  /** The repository its stack file is read from; undefined for a stack file on this server's disk. */
  readonly repo?: RepoSource;
  /** The server's environment variable holding its webhook secret. */
  readonly webhook?: { readonly secretEnv: string };
  /** What a push to its branch (or a poll that saw it move) queues for each stack. */
  readonly onPush: 'preview' | 'apply';
  /** How often the server fetches its branch (seconds); undefined: never. */
  readonly pollSeconds?: number;
  readonly notify: readonly NotifyTarget[];
  /** Its scheduled drift checks (its own `drift:`, else the top level's); undefined: none. */
  readonly drift?: DriftPolicy;
  /** Its approvals and run checks (`approvals:`, `checks:`, `stacks:`); undefined: none (`stackGate` reads it). */
  readonly gate?: ProjectGate;
  /** What its runs see of the environment (`env:`); unset: the server's own minus kapps' variables. */
  readonly env?: { readonly pass: readonly string[]; readonly set: Readonly<Record<string, string>> };
}

/** Names a project's `env` may not pass or set: the server's own configuration and credentials. */
export function serverOwnVariable(name: string): boolean {
  return name.startsWith('KAPPS_') || name.startsWith('PG');
}

/**
 * The environment a run of `project` sees (templates and steps): the `env` its entry gives (PATH, what `pass`
 * names, what `set` sets), or without one the server's own; never the server's own configuration and credentials
 * (`KAPPS_*`, the PostgreSQL driver's `PG*`).
 */
export function projectRunEnv(project: ProjectEntry, serverEnv: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  const names = project.env ? ['PATH', ...project.env.pass] : Object.keys(serverEnv);
  for (const name of names) {
    const value = serverEnv[name];
    if (value !== undefined && !serverOwnVariable(name)) out[name] = value;
  }
  for (const [name, value] of Object.entries(project.env?.set ?? {})) if (!serverOwnVariable(name)) out[name] = value;
  return out;
}

export interface ServerConfig {
  readonly projects: readonly ProjectEntry[];
  readonly tokens: readonly TokenEntry[];
  readonly limits: ServerLimits;
}

/** The JSON Schema of the server configuration file. */
export function serverConfigJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(serverConfigFile, { io: 'input' });
}

/** The hex SHA-256 of a token, as `tokens[].sha256` holds it. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function nodeAt(node: YamlNode | null, path: readonly (string | number)[]): YamlNode | undefined {
  let at: YamlNode | undefined = node ?? undefined;
  for (const p of path) {
    if (!at) return undefined;
    if (at.kind === 'map') at = at.entries.find((e) => e.key.text === p)?.value;
    else if (at.kind === 'seq' && typeof p === 'number') at = at.items[p];
    else return undefined;
  }
  return at;
}

/** The file as the schema parsed it. */
type WrittenConfig = z.infer<typeof serverConfigFile>;

/** Where a path of the file is (its start when the path is not in it), for a diagnostic. */
type Locate = (path: readonly (string | number)[]) => SourceLocation;

/** Read and check the configuration file. Throws `ConfigError` with every problem found. */
export function readServerConfig(file: string, serverEnv: NodeJS.ProcessEnv = process.env): ServerConfig {
  const text = readConfigText(file, 'server configuration');
  const root = parseYamlTree(text, { file });
  throwIfErrors(sortByLocation(validateTree(serverConfigFile, root, { file, unknownKeys: 'error' })));
  const parsed = serverConfigFile.parse(root ? plain(root) : {});
  const locate: Locate = (path) => nodeAt(root, path)?.loc ?? { file, line: 1, column: 1 };
  const diagnostics: Diagnostic[] = [];
  const topDrift = parsed.drift ? resolveDrift(parsed.drift, ['drift'], locate, diagnostics) : undefined;
  const projects = resolveProjects(parsed.projects ?? [], dirname(resolve(file)), locate, diagnostics, serverEnv).map(
    (p, i): ProjectEntry => {
      const written = parsed.projects?.[i];
      const own = written?.drift;
      const drift = own ? resolveDrift(own, ['projects', i, 'drift'], locate, diagnostics) : topDrift;
      const gated =
        written && (written.approvals || written.checks || written.stacks)
          ? {
              gate: resolveGate(
                written,
                ['projects', i],
                locate,
                diagnostics,
                serverEnv,
                written.stacks ? stacksOfFile(p.stackFile) : undefined,
              ),
            }
          : {};
      return { ...p, ...gated, ...(drift ? { drift } : {}) };
    },
  );
  const tokens = resolveTokens(parsed.tokens ?? [], locate, diagnostics);
  throwIfErrors(sortByLocation(diagnostics));
  return { projects, tokens, limits: resolveLimits(parsed.limits ?? {}) };
}

/** The stacks a stack file on this server's disk defines (its name as the file says it); undefined when unreadable. */
function stacksOfFile(stackFile: string | undefined): { file: string; names: string[] } | undefined {
  if (stackFile === undefined) return undefined;
  try {
    const names = stackNames(parseYamlTree(readConfigText(stackFile, 'stack file'), { file: stackFile }));
    return names.length > 0 ? { file: basename(stackFile), names } : undefined;
  } catch {
    return undefined; // a stack file that cannot be read is reported by the runs on it
  }
}

/**
 * The projects of the file, their stack files relative to its folder (`base`); a name registered twice, a stack file
 * that does not exist, a repository git could misread, a variable `env` of the server does not hold and an `env`
 * naming the server's own variables are added to `diagnostics`.
 */
function resolveProjects(
  written: NonNullable<WrittenConfig['projects']>,
  base: string,
  locate: Locate,
  diagnostics: Diagnostic[],
  serverEnv: NodeJS.ProcessEnv,
): ProjectEntry[] {
  const seen = new Set<string>();
  return written.map((p, i) => {
    const problem = (message: string, path: (string | number)[], hint?: string) =>
      diagnostics.push(
        errorDiag(message, locate(['projects', i, ...path]), {
          path: `projects[${i}]${path.map((x) => (typeof x === 'number' ? `[${x}]` : `.${x}`)).join('')}`,
          ...(hint !== undefined ? { hint } : {}),
        }),
      );
    if (seen.has(p.name)) problem(`project \`${p.name}\` is registered twice`, ['name']);
    seen.add(p.name);
    let stackFile: string | undefined;
    if (p.stack_file !== undefined && p.repo !== undefined) {
      problem('a project takes `stack_file` or `repo`, not both', ['repo']);
    } else if (p.stack_file === undefined && p.repo === undefined) {
      problem('a project needs `stack_file` (a file on this server) or `repo` (a git repository)', ['name']);
    } else if (p.stack_file !== undefined) {
      stackFile = resolve(base, p.stack_file);
      if (!existsSync(stackFile) || !statSync(stackFile).isFile()) {
        problem(
          `stack file \`${p.stack_file}\` does not exist`,
          ['stack_file'],
          'the path is relative to the server configuration file',
        );
      }
    }
    if (p.repo) repoProblems(p.repo, serverEnv).forEach(([m, at, hint]) => problem(m, ['repo', ...at], hint));
    if (!p.repo) {
      for (const key of ['webhook', 'on_push', 'poll_seconds'] as const)
        if (p[key] !== undefined)
          problem(`\`${key}\` needs \`repo\`: only a project from a repository has pushes`, [key]);
    }
    const secretEnv = p.webhook?.secret_env;
    if (secretEnv !== undefined && !serverEnv[secretEnv])
      problem(`\`${secretEnv}\` is not set in the server's environment`, ['webhook', 'secret_env']);
    (p.notify ?? []).forEach((n, j) => {
      if (!serverEnv[n.secret_env])
        problem(`\`${n.secret_env}\` is not set in the server's environment`, ['notify', j, 'secret_env']);
      if (/^https?:\/\/[^/]*@/.test(n.url))
        problem('the URL holds credentials: a receiver is authenticated by the signature', ['notify', j, 'url']);
    });
    const env = p.env;
    if (env) diagnostics.push(...serverOwnInEnv(env, i, locate));
    return {
      name: p.name,
      ...(stackFile !== undefined ? { stackFile } : {}),
      ...(p.repo
        ? {
            repo: {
              url: p.repo.url,
              path: p.repo.path.replace(/^\.\//, ''),
              ...(p.repo.branch !== undefined ? { branch: p.repo.branch } : {}),
              ...(p.repo.token_env !== undefined ? { tokenEnv: p.repo.token_env } : {}),
            },
          }
        : {}),
      ...(p.webhook ? { webhook: { secretEnv: p.webhook.secret_env } } : {}),
      onPush: p.on_push ?? 'preview',
      ...(p.poll_seconds !== undefined ? { pollSeconds: p.poll_seconds } : {}),
      notify: (p.notify ?? []).map((n) => ({ url: n.url, events: n.events, secretEnv: n.secret_env })),
      ...(env ? { env: { pass: env.pass ?? [], set: env.set ?? {} } } : {}),
    };
  });
}

/** A `drift:` as the server uses it; an interval out of bounds is added to `diagnostics`. */
function resolveDrift(
  written: z.infer<typeof driftSchema>,
  at: (string | number)[],
  locate: Locate,
  diagnostics: Diagnostic[],
): DriftPolicy {
  const everySeconds = durationSeconds(written.every);
  if (everySeconds < MIN_DRIFT_SECONDS || everySeconds > MAX_DRIFT_SECONDS) {
    diagnostics.push(
      errorDiag(`\`every: ${written.every}\` is out of bounds: at least 5s, at most 30d`, locate([...at, 'every']), {
        path: `${at.map((x, k) => (typeof x === 'number' ? `[${x}]` : k === 0 ? x : `.${x}`)).join('')}.every`,
      }),
    );
  }
  return {
    everySeconds,
    ...(written.stacks ? { stacks: written.stacks } : {}),
    ignore: (written.ignore ?? []).map((r) => ({ kapp: r.kapp, outputs: r.outputs })),
    remediate: written.remediate ?? 'none',
  };
}

/** What is wrong with a project's `repo:`: each problem's message, its path under `repo` and a hint. */
function repoProblems(
  repo: NonNullable<NonNullable<WrittenConfig['projects']>[number]['repo']>,
  serverEnv: NodeJS.ProcessEnv,
): [string, string[], string?][] {
  const out: [string, string[], string?][] = [];
  const urlProblem = gitRepoProblem(repo.url);
  if (urlProblem) out.push([`repository \`${redactCredentials(repo.url)}\` is refused: ${urlProblem}`, ['url']]);
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/@]*:[^/@]*@/.test(repo.url))
    out.push([
      'the URL holds a password or token: it would be written in clear',
      ['url'],
      'put the token in an environment variable and name it in `token_env`',
    ]);
  const refProblem = repo.branch !== undefined ? gitRefProblem(repo.branch) : undefined;
  if (refProblem) out.push([`branch \`${repo.branch ?? ''}\` is refused: ${refProblem}`, ['branch']]);
  const pathProblem =
    gitPathProblem(repo.path) ??
    (repo.path.startsWith('/') || repo.path.split('/').includes('..')
      ? 'it must be relative to the repository root, without `..`'
      : undefined);
  if (pathProblem) out.push([`path \`${repo.path}\` is refused: ${pathProblem}`, ['path']]);
  if (repo.token_env !== undefined && !serverEnv[repo.token_env])
    out.push([`\`${repo.token_env}\` is not set in the server's environment`, ['token_env']]);
  return out;
}

/** The server's own variables (`KAPPS_*`, `PG*`) the `env` of project `i` passes or sets: one error each. */
function serverOwnInEnv(
  env: { readonly pass?: readonly string[]; readonly set?: Readonly<Record<string, string>> },
  i: number,
  locate: Locate,
): Diagnostic[] {
  const named = [
    ...(env.pass ?? []).map((n, j) => ({ n, path: ['projects', i, 'env', 'pass', j] as (string | number)[] })),
    ...Object.keys(env.set ?? {}).map((n) => ({ n, path: ['projects', i, 'env', 'set', n] as (string | number)[] })),
  ];
  return named
    .filter((e) => serverOwnVariable(e.n))
    .map((e) =>
      errorDiag(`\`${e.n}\` is the server's own (KAPPS_*, PG*): a run never sees it`, locate(e.path), {
        path: e.path.map((x, k) => (typeof x === 'number' ? `[${x}]` : k === 0 ? x : `.${x}`)).join(''),
      }),
    );
}

/** The tokens of the file, their digests as bytes; a name used twice is added to `diagnostics`. */
function resolveTokens(
  written: NonNullable<WrittenConfig['tokens']>,
  locate: Locate,
  diagnostics: Diagnostic[],
): TokenEntry[] {
  const seen = new Set<string>();
  return written.map((t, i) => {
    if (seen.has(t.name)) {
      diagnostics.push(
        errorDiag(`token name \`${t.name}\` is used twice`, locate(['tokens', i, 'name']), {
          path: `tokens[${i}].name`,
        }),
      );
    }
    seen.add(t.name);
    return {
      name: t.name,
      role: t.role,
      digest: Buffer.from(t.sha256.toLowerCase(), 'hex'),
      ...(t.projects ? { projects: t.projects } : {}),
    };
  });
}

/** The limits of the file, each defaulted. */
function resolveLimits(l: NonNullable<WrittenConfig['limits']>): ServerLimits {
  return {
    maxRuns: l.max_runs ?? DEFAULT_LIMITS.maxRuns,
    maxQueuedPerStack: l.max_queued_per_stack ?? DEFAULT_LIMITS.maxQueuedPerStack,
    maxQueuedTotal: l.max_queued_total ?? DEFAULT_LIMITS.maxQueuedTotal,
    graceSeconds: l.grace_seconds ?? DEFAULT_LIMITS.graceSeconds,
    leaseSeconds: l.lease_seconds ?? DEFAULT_LIMITS.leaseSeconds,
    maxLogBytes: l.max_log_bytes ?? DEFAULT_LIMITS.maxLogBytes,
    maxLineLength: l.max_line_length ?? DEFAULT_LIMITS.maxLineLength,
    maxLogAnswerBytes: l.max_log_answer_bytes ?? DEFAULT_LIMITS.maxLogAnswerBytes,
    maxSelectors: l.max_selectors ?? DEFAULT_LIMITS.maxSelectors,
    maxSelectorLength: l.max_selector_length ?? DEFAULT_LIMITS.maxSelectorLength,
    requestsPerMinute: l.requests_per_minute ?? DEFAULT_LIMITS.requestsPerMinute,
    keepRunsDays: l.keep_runs_days ?? DEFAULT_LIMITS.keepRunsDays,
    keepRunsPerStack: l.keep_runs_per_stack ?? DEFAULT_LIMITS.keepRunsPerStack,
    maxListBytes: l.max_list_bytes ?? DEFAULT_LIMITS.maxListBytes,
  };
}

/** The plain value of a validated tree (strings stay as written; numbers and booleans as resolved). */
function plain(node: YamlNode): unknown {
  if (node.kind === 'map') return Object.fromEntries(node.entries.map((e) => [e.key.text, plain(e.value)]));
  if (node.kind === 'seq') return node.items.map(plain);
  const v = node.value;
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return v;
  if (typeof v === 'bigint') return Number(v);
  return node.text;
}

/** `--project NAME=STACK_FILE` (relative to `cwd`). */
export function parseProjectFlag(value: string, cwd: string): ProjectEntry {
  const eq = value.indexOf('=');
  const name = eq > 0 ? value.slice(0, eq) : '';
  const file = eq > 0 ? value.slice(eq + 1) : '';
  if (!name || !file) throw new UsageError(`--project takes NAME=STACK_FILE, got \`${value}\``);
  const checked = nameSchema.safeParse(name);
  if (!checked.success)
    throw new UsageError(`--project ${value}: \`${name}\` is not ${checked.error.issues[0]?.message ?? 'a name'}`);
  const stackFile = resolve(cwd, file);
  if (!existsSync(stackFile) || !statSync(stackFile).isFile())
    throw new UsageError(`--project ${value}: the stack file \`${file}\` does not exist`);
  return { name, stackFile, onPush: 'preview', notify: [] };
}

/** Merge the projects of the flags over those of the file (a flag's name replaces the file's). */
export function mergeProjects(fromFile: readonly ProjectEntry[], fromFlags: readonly ProjectEntry[]): ProjectEntry[] {
  const out = new Map<string, ProjectEntry>();
  for (const p of fromFile) out.set(p.name, p);
  const flagged = new Set<string>();
  for (const p of fromFlags) {
    if (flagged.has(p.name)) throw new UsageError(`--project ${p.name} is given twice`);
    flagged.add(p.name);
    out.set(p.name, p);
  }
  return [...out.values()];
}
