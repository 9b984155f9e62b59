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
  type ServerConfig,
  type ServerLimits,
} from './config.js';
import { Executor, type RunEngine } from './runs/executor.js';
import { FileRunStore } from './queue/file-run-store.js';
import { closeOrphanedRelease } from './runs/orphans.js';
import { ProjectRegistry } from './projects.js';
import type { RunStore, StoredRun } from './queue/run-store.js';
import { defaultWebRoot } from './http/web.js';

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

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const { host, port } = parseListen(options.listen);
  const config = options.config !== undefined ? readServerConfig(resolve(options.cwd, options.config)) : undefined;
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
  const limits = limitsFrom(config, options);
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
  const instance = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const store = await openRunStore(spec);
  await store.open(instance);
  let releases: ReleaseStore | undefined;
  let app: FastifyInstance | undefined;
  try {
    releases = await openReleaseStore(spec);
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const registry = new ProjectRegistry(projects);
    const workspaceOf = (project: string, stack: string): string => join(dataDir, 'workspaces', project, stack);
    const engine = await options.engine({ backend: spec, releases, projects: registry, workspaceOf, store, limits });
    const openReleases = releases;
    const executor = new Executor({
      store,
      engine,
      instance,
      maxRuns: limits.maxRuns,
      leaseMs: limits.leaseSeconds * 1000,
      logLimits: { maxBytes: limits.maxLogBytes, maxLineLength: limits.maxLineLength },
      retention: { days: limits.keepRunsDays, perStack: limits.keepRunsPerStack },
      say: options.say,
      onReaped: (run) => closeReapedRelease(openReleases, registry, run),
    });
    const auth = new Authenticator(tokens);
    const keepAlive = Number(options.env.KAPPS_SERVE_KEEPALIVE_MS);
    app = await buildApp({
      store,
      releases,
      projects: registry,
      auth,
      limits,
      listenHost: host,
      ready: async () => {
        try {
          await store.list({ limit: 1 });
          // A full disk answers reads but takes no write.
          return store instanceof FileRunStore ? await store.writable() : true;
        } catch {
          return false;
        }
      },
      stopping: () => executor.stopping,
      ...(Number.isInteger(keepAlive) && keepAlive > 0 ? { keepAliveMs: keepAlive } : {}),
      // KAPPS_SERVE_WEB_DIR: another built page (tests, development of the page).
      webRoot: options.env.KAPPS_SERVE_WEB_DIR
        ? pathToFileURL(`${resolve(options.cwd, options.env.KAPPS_SERVE_WEB_DIR)}/`)
        : defaultWebRoot(),
    });
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
      if (code !== undefined && why[code]) throw new KappsError(`cannot listen on ${options.listen}: ${why[code]}`);
      throw error;
    }
    const address = app.server.address();
    const bound = typeof address === 'object' && address ? address : { address: host, port };
    const shownHost = bound.address.includes(':') ? `[${bound.address}]` : bound.address;
    const url = `http://${shownHost}:${bound.port}`;
    if (auth.open) {
      options.say(
        `kapps serve: no tokens configured: listening on loopback only, every caller is \`anonymous\` with role admin`,
      );
    }
    const unconfined = projects.filter((p) => p.env === undefined).map((p) => p.name);
    if (unconfined.length) {
      options.say(
        `kapps serve: project(s) ${unconfined.join(', ')} have no \`env\` in the configuration: their runs see this server's environment (less KAPPS_* and PG*), cloud credentials included; list what they need under \`env: {pass: […]}\``,
      );
    }
    options.say(
      `kapps serve: backend ${describeBackend(spec)}, data ${dataDir}, ${projects.length} project(s), up to ${limits.maxRuns} run(s) at once`,
    );
    await executor.start();
    const running = app;
    let stopped: Promise<void> | undefined;
    return {
      url,
      app: running,
      executor,
      stop: () =>
        (stopped ??= (async () => {
          await executor.stop(limits.graceSeconds * 1000);
          await running.close();
          await store.close();
          await openReleases.close();
        })()),
    };
  } catch (error) {
    await app?.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    await releases?.close().catch(() => undefined);
    throw error;
  }
}

/** A run that errored under a dead server: its release, if still running, is closed as failed with the reason. */
async function closeReapedRelease(releases: ReleaseStore, projects: ProjectRegistry, run: StoredRun): Promise<void> {
  if ((run.type !== 'apply' && run.type !== 'destroy') || !projects.get(run.project)) return;
  const project = projects.releaseProject(run.project);
  await closeOrphanedRelease(releases, project, run.stack, run, run.error ?? 'its server stopped');
}
