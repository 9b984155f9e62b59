/**
 * `kapps serve`: put the pieces together — the backend (release store and run store), the projects, the tokens, the
 * HTTP app and the executor — and listen. The CLI's `serve` command calls `startServer` and owns the signals.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { KappsError, UsageError } from '../diagnostics/errors.js';
import { describeBackend, kappsHome, openReleaseStore, resolveBackend } from '../release/index.js';
import type { BackendSpec } from '../release/store.js';
import type { ReleaseStore } from '../release/store-types.js';
import { buildApp } from './http/app.js';
import { Authenticator } from './http/auth.js';
import {
  DEFAULT_LIMITS,
  mergeProjects,
  parseProjectFlag,
  readServerConfig,
  type ProjectEntry,
  type ServerConfig,
  type ServerLimits,
  type TokenEntry,
} from './config.js';
import { Executor, type RunEngine } from './runs/executor.js';
import { FileRunStore } from './queue/file-run-store.js';
import { closeOrphanedRelease } from './runs/orphans.js';
import { runPlan } from './runs/run-plan.js';
import { ApprovalSweep } from './runs/sweep.js';
import { ProjectRegistry } from './projects.js';
import { ProjectSources } from './sources/sources.js';
import type { RunStore, StoredRun } from './queue/run-store.js';
import { defaultWebRoot } from './http/web.js';
import { Poller } from './triggers/poller.js';
import { openTriggerStore, type TriggerStore } from './triggers/trigger-store.js';
import { Deliverer } from './notify/deliverer.js';
import { FileOutbox } from './notify/file-outbox.js';
import { NotifyingRunStore } from './notify/notifying-store.js';
import type { Outbox } from './notify/outbox.js';
import { openDriftStore, type DriftStore } from './drift/drift-store.js';
import { DriftRecordingStore } from './drift/recording-store.js';
import { DriftScheduler } from './drift/scheduler.js';

/** How often each instance looks for runs waiting for approval that became stale or expired. */
const SWEEP_EVERY_MS = 3_000;

export interface ServeOptions {
  readonly listen: string;
  readonly backend?: string;
  readonly config?: string;
  readonly projects: readonly string[];
  readonly dataDir?: string;
  readonly maxRuns?: number;
  readonly graceSeconds?: number;
  readonly leaseSeconds?: number;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** Where messages go (stderr). */
  readonly say: (text: string) => void;
  /** Builds the engine the runs use, once the stores are open. */
  readonly engine: (deps: RunEngineDeps) => Promise<RunEngine>;
}

/** What the engine of the server's runs is built from (each run's `EngineContext` is made from it). */
export interface RunEngineDeps {
  readonly backend: BackendSpec;
  readonly releases: ReleaseStore;
  readonly projects: ProjectRegistry;
  /** `<data-dir>/workspaces/<project>/<stack>`. */
  readonly workspaceOf: (project: string, stack: string) => string;
  readonly store: RunStore;
  readonly limits: ServerLimits;
  /** What the server keeps of drift checks (the noisy marks and previous reads a drift run takes). */
  readonly drift?: DriftStore;
}

export interface RunningServer {
  readonly url: string;
  readonly app: FastifyInstance;
  readonly executor: Executor;
  /** SIGTERM: stop claiming, let runs finish for the grace period, cancel the rest, close everything. */
  stop(): Promise<void>;
}

/** `HOST:PORT`, `[v6]:PORT` or `PORT`. */
export function parseListen(value: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):([0-9]{1,5})$/.exec(value) ?? /^()()([0-9]{1,5})$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || !Number.isInteger(port) || port > 65_535)
    throw new UsageError(`--listen takes HOST:PORT (e.g. 127.0.0.1:7070), got \`${value}\``);
  return { host: m[1] || m[2] || '127.0.0.1', port };
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.[0-9]+\.[0-9]+\.[0-9]+$/.test(host);
}

/** The run store of a backend. */
async function openRunStore(spec: BackendSpec): Promise<RunStore> {
  if (spec.kind === 'file') return new FileRunStore(spec.root);
  const { PgRunStore } = await import('./queue/pg-run-store.js');
  return new PgRunStore(spec.url);
}

function limitsFrom(config: ServerConfig | undefined, options: ServeOptions): ServerLimits {
  const base = config?.limits ?? DEFAULT_LIMITS;
  return {
    ...base,
    ...(options.maxRuns !== undefined ? { maxRuns: options.maxRuns } : {}),
    ...(options.graceSeconds !== undefined ? { graceSeconds: options.graceSeconds } : {}),
    ...(options.leaseSeconds !== undefined ? { leaseSeconds: options.leaseSeconds } : {}),
  };
}

/** What the server is set up with, from its flags and its configuration file, before anything is opened. */
interface ServerSetup {
  readonly host: string;
  readonly port: number;
  readonly projects: readonly ProjectEntry[];
  readonly tokens: readonly TokenEntry[];
  readonly limits: ServerLimits;
  readonly spec: BackendSpec;
  readonly dataDir: string;
}

/**
 * The opened backend: the run store (which puts notifications in the outbox and records drift checks), the release
 * store, the outbox, the drift store.
 */
interface Backends {
  readonly store: RunStore;
  /** The backend's own run store (under `store`). */
  readonly runs: RunStore;
  readonly releases: ReleaseStore;
  readonly outbox: Outbox;
  readonly deliverer: Deliverer;
  readonly drift: DriftStore;
}

/** Read the flags and the configuration file; refuse to listen beyond loopback without tokens. Opens nothing. */
function resolveSetup(options: ServeOptions): ServerSetup {
  const { host, port } = parseListen(options.listen);
  const config =
    options.config !== undefined ? readServerConfig(resolve(options.cwd, options.config), options.env) : undefined;
  const projects = mergeProjects(
    config?.projects ?? [],
    options.projects.map((p) => parseProjectFlag(p, options.cwd)),
  );
  const tokens = config?.tokens ?? [];
  if (tokens.length === 0 && !isLoopback(host)) {
    throw new UsageError(
      `refusing to listen on ${host} without tokens: configure tokens in --config, or listen on 127.0.0.1`,
    );
  }
  const { spec } = resolveBackend({
    flag: options.backend,
    env: options.env.KAPPS_BACKEND,
    cwd: options.cwd,
    kappsHome: kappsHome(options.env.KAPPS_HOME),
  });
  const dataDir =
    options.dataDir !== undefined
      ? resolve(options.cwd, options.dataDir)
      : spec.kind === 'file'
        ? join(spec.root, 'server')
        : join(kappsHome(options.env.KAPPS_HOME), 'server');
  return { host, port, projects, tokens, limits: limitsFrom(config, options), spec, dataDir };
}

/** The outbox of notifications of a backend. */
async function openOutbox(spec: BackendSpec): Promise<Outbox> {
  if (spec.kind === 'file') return new FileOutbox(join(spec.root, 'notifications'));
  const { PgOutbox } = await import('./notify/pg-outbox.js');
  return new PgOutbox(spec.url);
}

/**
 * Open the run store (as `instance`), the outbox, the drift store and the release store; nothing is left open when
 * one fails.
 */
async function openBackends(setup: ServerSetup, options: ServeOptions, instance: string): Promise<Backends> {
  const { spec } = setup;
  const runs = await openRunStore(spec);
  await runs.open(instance);
  let outbox: Outbox | undefined;
  let drift: DriftStore | undefined;
  try {
    outbox = await openOutbox(spec);
    await outbox.open();
    const deliverer = new Deliverer({ outbox, instance, env: options.env, say: options.say });
    const projects = new Map(setup.projects.map((p) => [p.name, p]));
    const notifying = new NotifyingRunStore({
      store: runs,
      outbox,
      targets: (project) => projects.get(project)?.notify,
      enqueued: () => deliverer.wake(),
      say: options.say,
    });
    drift = await openDriftStore(spec, setup.dataDir);
    const store = new DriftRecordingStore({
      store: notifying,
      drift,
      outbox,
      project: (name) => projects.get(name),
      limits: setup.limits,
      enqueued: () => deliverer.wake(),
      say: options.say,
    });
    // A PostgreSQL store is shared by the runs (a warm server opens no pool and checks no schema per run): two
    // connections for each run, as a run's own store had, and two for the server's reads.
    const releases = await openReleaseStore(spec, {
      maxConnections: 2 + 2 * setup.limits.maxRuns,
      applicationName: 'kapps-serve-releases',
    });
    // The backend's spec key, made now when it has none: a preview keys its digests with it, so the preview an apply
    // is approved on and the preview computed again before it applies agree (with a key of their own, each preview
    // of a backend nothing was recorded in yet would differ, and every such apply would be stale).
    await releases.specKey({ create: true });
    return { store, runs, releases, outbox, deliverer, drift };
  } catch (error) {
    await drift?.close().catch(() => undefined);
    await outbox?.close().catch(() => undefined);
    await runs.close().catch(() => undefined);
    throw error;
  }
}

/** The executor of this instance's runs, with the engine built for them. */
async function createExecutor(
  options: ServeOptions,
  setup: ServerSetup,
  backends: Backends,
  registry: ProjectRegistry,
  instance: string,
): Promise<Executor> {
  const { limits, spec, dataDir } = setup;
  const { store, releases, drift } = backends;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const workspaceOf = (project: string, stack: string): string => join(dataDir, 'workspaces', project, stack);
  const engine = await options.engine({
    backend: spec,
    releases,
    projects: registry,
    workspaceOf,
    store,
    limits,
    drift,
  });
  return new Executor({
    store,
    engine,
    instance,
    maxRuns: limits.maxRuns,
    leaseMs: limits.leaseSeconds * 1000,
    logLimits: { maxBytes: limits.maxLogBytes, maxLineLength: limits.maxLineLength },
    retention: { days: limits.keepRunsDays, perStack: limits.keepRunsPerStack },
    say: options.say,
    onReaped: (run) => closeReapedRelease(releases, registry, run),
  });
}

/** The HTTP app over the stores and the executor (not listening yet). */
function createApp(
  options: ServeOptions,
  setup: ServerSetup,
  backends: Backends,
  registry: ProjectRegistry,
  executor: Executor,
  triggers: TriggerStore,
): Promise<FastifyInstance> {
  const { store, runs, releases, outbox, drift } = backends;
  const keepAlive = Number(options.env.KAPPS_SERVE_KEEPALIVE_MS);
  return buildApp({
    store,
    releases,
    projects: registry,
    auth: new Authenticator(setup.tokens),
    limits: setup.limits,
    listenHost: setup.host,
    outbox,
    drift,
    ready: () => storeReady(runs),
    stopping: () => executor.stopping,
    triggers: { store: triggers, secrets: webhookSecrets(setup.projects, options.env) },
    ...(Number.isInteger(keepAlive) && keepAlive > 0 ? { keepAliveMs: keepAlive } : {}),
    // KAPPS_SERVE_WEB_DIR: another built page (tests, development of the page).
    webRoot: options.env.KAPPS_SERVE_WEB_DIR
      ? pathToFileURL(`${resolve(options.cwd, options.env.KAPPS_SERVE_WEB_DIR)}/`)
      : defaultWebRoot(),
  });
}

/** Whether the run store answers, and takes writes (a full disk answers reads but takes no write). */
async function storeReady(store: RunStore): Promise<boolean> {
  try {
    await store.list({ limit: 1 });
    return store instanceof FileRunStore ? await store.writable() : true;
  } catch {
    return false;
  }
}

/** Listen on `host:port`; the URL it answers on. A user's mistake (the address in use, …) is said as such. */
async function listen(app: FastifyInstance, setup: ServerSetup, shown: string): Promise<string> {
  const { host, port } = setup;
  try {
    await app.listen({ host, port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why: Record<string, string> = {
      EADDRINUSE: 'the address is in use (another server listens there)',
      EACCES: 'permission denied',
      EADDRNOTAVAIL: 'the address is not one of this machine',
      ENOTFOUND: 'the host name is unknown',
    };
    if (code !== undefined && why[code]) throw new KappsError(`cannot listen on ${shown}: ${why[code]}`);
    throw error;
  }
  const address = app.server.address();
  const bound = typeof address === 'object' && address ? address : { address: host, port };
  const shownHost = bound.address.includes(':') ? `[${bound.address}]` : bound.address;
  return `http://${shownHost}:${bound.port}`;
}

/** What the server says as it starts: open access, projects that see the server's environment, what it serves. */
function announce(say: (text: string) => void, setup: ServerSetup): void {
  const { projects, limits, spec, dataDir } = setup;
  if (setup.tokens.length === 0) {
    say(`kapps serve: no tokens configured: listening on loopback only, every caller is \`anonymous\` with role admin`);
  }
  const unconfined = projects.filter((p) => p.env === undefined).map((p) => p.name);
  if (unconfined.length) {
    say(
      `kapps serve: project(s) ${unconfined.join(', ')} have no \`env\` in the configuration: their runs see this server's environment (less KAPPS_* and PG*), cloud credentials included; list what they need under \`env: {pass: […]}\``,
    );
  }
  say(
    `kapps serve: backend ${describeBackend(spec)}, data ${dataDir}, ${projects.length} project(s), up to ${limits.maxRuns} run(s) at once`,
  );
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const setup = resolveSetup(options);
  const instance = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const backends = await openBackends(setup, options, instance);
  const { store, releases, outbox, deliverer, drift } = backends;
  let app: FastifyInstance | undefined;
  let triggers: TriggerStore | undefined;
  try {
    const sources = new ProjectSources(setup.dataDir, options.env);
    // One instance holds a file backend's data directory: what a stopped one left there is nobody's.
    if (setup.spec.kind === 'file') await sources.removeStaleTrees(setup.projects);
    const registry = new ProjectRegistry(setup.projects, sources);
    const executor = await createExecutor(options, setup, backends, registry, instance);
    triggers = await openTriggerStore(setup.spec, setup.dataDir);
    app = await createApp(options, setup, backends, registry, executor, triggers);
    const url = await listen(app, setup, options.listen);
    announce(options.say, setup);
    await executor.start();
    const sweep = new ApprovalSweep({
      store,
      releases,
      projects: registry,
      intervalMs: SWEEP_EVERY_MS,
      say: options.say,
    });
    sweep.start();
    const poller = new Poller({ projects: registry, store, limits: setup.limits, triggers, say: options.say });
    poller.start();
    const scheduler = new DriftScheduler({ projects: registry, store, drift, limits: setup.limits, say: options.say });
    scheduler.start();
    deliverer.start();
    const running = app;
    const triggerStore = triggers;
    let stopped: Promise<void> | undefined;
    return {
      url,
      app: running,
      executor,
      stop: () =>
        (stopped ??= (async () => {
          await poller.stop();
          await scheduler.stop();
          await sweep.stop();
          await executor.stop(setup.limits.graceSeconds * 1000);
          await deliverer.stop();
          await running.close();
          await triggerStore.close();
          await store.close();
          await outbox.close();
          await drift.close();
          await releases.close();
        })()),
    };
  } catch (error) {
    await app?.close().catch(() => undefined);
    await triggers?.close().catch(() => undefined);
    await deliverer.stop().catch(() => undefined);
    await store.close().catch(() => undefined);
    await outbox.close().catch(() => undefined);
    await drift.close().catch(() => undefined);
    await releases.close().catch(() => undefined);
    throw error;
  }
}

/** Each project's webhook secret, from the server's environment (the configuration made sure it is there). */
function webhookSecrets(projects: readonly ProjectEntry[], env: NodeJS.ProcessEnv): Map<string, string> {
  const secrets = new Map<string, string>();
  for (const project of projects) {
    const secret = project.webhook ? env[project.webhook.secretEnv] : undefined;
    if (secret) secrets.set(project.name, secret);
  }
  return secrets;
}

/** A run that errored under a dead server: its release, if still running, is closed as failed with the reason. */
async function closeReapedRelease(releases: ReleaseStore, projects: ProjectRegistry, run: StoredRun): Promise<void> {
  if (!runPlan(run.type).records || !projects.get(run.project)) return;
  const project = projects.releaseProject(run.project);
  await closeOrphanedRelease(releases, project, run.stack, run, run.error ?? 'its server stopped');
}
