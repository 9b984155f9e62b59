/**
 * Fixture projects for end-to-end tests of the run commands: a stack file, manifests and any other files written
 * into a fresh temp directory, the fake commands (`test/fixtures/bin`) first on PATH, a trace file the fakes append
 * to, and a private HOME and KAPPS_HOME so nothing outside the temp directory is read or written.
 *
 * ```ts
 * const p = fixtureProject({ manifests: { web: { kapps: [kapp('db', { apply_install: [fake('apply', '--tag', 'db')] })] } } });
 * const r = await p.run('install', ['-y']);
 * expect(r.events.filter(e => e.type === 'kapp-finished')).toHaveLength(1);
 * ```
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import type { RunEvent } from '../../src/report/events.js';
import { CLI, cliEnv, runCli, type CliResult } from './cli.js';

export { killLeftovers, killMatching, processesMatching, survivors, uniqueMarker } from './processes.js';
export { waitFor } from './wait.js';

/** The folder of fake commands (`kapps-fake`). */
export const FIXTURE_BIN = fileURLToPath(new URL('../fixtures/bin', import.meta.url));

/** The checked-in fixture projects. */
export const FIXTURE_PROJECTS = fileURLToPath(new URL('../fixtures/projects', import.meta.url));

/** What to write. Objects are written as YAML; strings as they are. */
export interface ProjectSpec {
  /** The project directory's name (the default release project name); default `project`. */
  readonly name?: string;
  /**
   * Stack file content; default: stack `dev` (provider local) listing every manifest in `manifests` in order.
   * `null`: write no `stacks.yaml`.
   */
  readonly stacks?: Record<string, unknown> | string | null;
  /** Manifest id → manifest content, written to `manifests/<id>.yaml`. */
  readonly manifests?: Record<string, unknown>;
  /** Any other files, by path relative to the project directory; a path ending in `*` is made executable (without the `*`). */
  readonly files?: Record<string, unknown>;
  /** `sugarkube-conf.yaml` (none by default). */
  readonly config?: unknown;
  /** Copy this folder of `test/fixtures/projects/` first. */
  readonly from?: string;
  /** More environment for every run, over the defaults (e.g. a release backend's). */
  readonly env?: Record<string, string>;
}

/** A line of the fakes' trace: `<ns> <pid> start|end <args…>`. */
export interface TraceLine {
  /** The wall clock in nanoseconds (`date +%s%N`). */
  readonly ns: bigint;
  readonly pid: number;
  readonly event: 'start' | 'end';
  /** The value of the first `--tag`, or '' when there is none. */
  readonly tag: string;
  readonly args: readonly string[];
}

/** The outcome of a run of the CLI on the project. */
export interface ProjectRun extends CliResult {
  /** The NDJSON events on stdout (empty unless `--reporter json`). */
  readonly events: RunEvent[];
  /** The trace lines written during this run. */
  readonly trace: TraceLine[];
}

/** A fixture project on disk. */
export interface FixtureProject {
  /** The temp directory holding everything (removed by `cleanupProjects`). */
  readonly root: string;
  /** The project directory (the stack file's folder; the CLI runs here). */
  readonly dir: string;
  readonly stackFile: string;
  /** The default workspace of stack `dev`. */
  readonly workspace: string;
  /** The file the fakes append their trace to. */
  readonly traceFile: string;
  /** The directory releases are recorded in. */
  readonly kappsHome: string;
  /** The environment runs get (on top of the test process's, minus KAPPS_*). */
  readonly env: Record<string, string>;
  /** Absolute path of a file of the project. */
  path(...parts: string[]): string;
  /** Write a file (objects as YAML), creating folders. */
  write(rel: string, content: unknown): string;
  read(rel: string): string;
  exists(rel: string): boolean;
  /** Run `kapps <command> <stack file> dev <args…>` in the project directory. */
  run(command: string, args?: readonly string[], options?: RunOptions): Promise<ProjectRun>;
  /** Same, with `--reporter json` added and the events parsed. */
  runJson(command: string, args?: readonly string[], options?: RunOptions): Promise<ProjectRun>;
  /** Start `kapps …` without waiting (for signal tests); args as for `run`. */
  start(command: string, args?: readonly string[], options?: RunOptions): StartedCli;
  /** Every trace line so far. */
  traceLines(): TraceLine[];
}

/** Options of a run. */
export interface RunOptions {
  /** Extra environment (undefined removes a variable). */
  readonly env?: Record<string, string | undefined>;
  /** Stack name (default `dev`). */
  readonly stack?: string;
  /** Leave out the stack file and name (for commands that take none). */
  readonly bare?: boolean;
}

/** A CLI started in the background. */
export interface StartedCli {
  readonly child: ChildProcessWithoutNullStreams;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the CLI exits. */
  readonly done: Promise<ProjectRun>;
}

const roots: string[] = [];

/** A new temp directory, removed by `cleanupProjects`. */
export function tempDir(prefix = 'kapps-test-'): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  roots.push(dir);
  return dir;
}

/** Remove every project and temp directory made by this test file (call in `afterAll`). */
export function cleanupProjects(): void {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
}

function toText(content: unknown): string {
  return typeof content === 'string' ? content : stringify(content, { lineWidth: 0 });
}

function copyTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, entry.name);
    const dst = path.join(to, entry.name);
    if (entry.isDirectory()) copyTree(src, dst);
    else writeFileSync(dst, readFileSync(src));
  }
}

/** Parse the trace file's lines. */
export function parseTrace(text: string): TraceLine[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      const [ns = '0', pid = '0', event = 'start', ...args] = line.split(' ');
      const at = args.indexOf('--tag');
      return {
        ns: BigInt(ns),
        pid: Number(pid),
        event: event as 'start' | 'end',
        tag: at >= 0 ? (args[at + 1] ?? '') : '',
        args,
      };
    });
}

/** Parse NDJSON lines; throws on a line that is not JSON (stdout must hold nothing else). */
export function parseEvents(stdout: string): RunEvent[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as RunEvent);
}

/** Write a fixture project into a new temp directory. */
export function fixtureProject(spec: ProjectSpec = {}): FixtureProject {
  const root = tempDir('kapps-run-e2e-');
  const dir = path.join(root, spec.name ?? 'project');
  mkdirSync(dir);
  if (spec.from) copyTree(path.join(FIXTURE_PROJECTS, spec.from), dir);
  const home = path.join(root, 'home');
  const kappsHome = path.join(root, 'kapps-home');
  mkdirSync(home);
  const traceFile = path.join(root, 'trace');
  const stackFile = path.join(dir, 'stacks.yaml');

  const write = (rel: string, content: unknown): string => {
    const file = path.resolve(dir, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, toText(content));
    return file;
  };
  const writeFile = (rel: string, content: unknown): void => {
    if (rel.endsWith('*')) chmodSync(write(rel.slice(0, -1), content), 0o755);
    else write(rel, content);
  };
  const manifests = spec.manifests ?? {};
  for (const [id, content] of Object.entries(manifests)) write(`manifests/${id}.yaml`, content);
  const defaultStacks = {
    dev: {
      provider: 'local',
      cluster: 'c',
      manifests: Object.keys(manifests).map((id) => ({ uri: `manifests/${id}.yaml` })),
    },
  };
  const stacks = spec.stacks === undefined ? defaultStacks : spec.stacks;
  if (stacks !== null && (spec.stacks !== undefined || !spec.from || !existsSync(stackFile))) {
    write('stacks.yaml', stacks);
  }
  if (spec.config !== undefined) write('sugarkube-conf.yaml', spec.config);
  for (const [rel, content] of Object.entries(spec.files ?? {})) writeFile(rel, content);

  const env: Record<string, string> = {
    PATH: `${FIXTURE_BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: home,
    KAPPS_HOME: kappsHome,
    FAKE_TRACE: traceFile,
    ...spec.env,
  };
  const readTrace = (): TraceLine[] => (existsSync(traceFile) ? parseTrace(readFileSync(traceFile, 'utf8')) : []);
  const argv = (command: string, args: readonly string[], options: RunOptions): string[] =>
    options.bare ? [command, ...args] : [command, stackFile, options.stack ?? 'dev', ...args];

  const project: FixtureProject = {
    root,
    dir,
    stackFile,
    workspace: path.join(dir, '.kapps-workspace', 'dev'),
    traceFile,
    kappsHome,
    env,
    path: (...parts) => path.join(dir, ...parts),
    write,
    read: (rel) => readFileSync(path.resolve(dir, rel), 'utf8'),
    exists: (rel) => existsSync(path.resolve(dir, rel)),
    traceLines: readTrace,
    async run(command, args = [], options = {}) {
      const before = readTrace().length;
      const r = await runCli(argv(command, args, options), {
        cwd: dir,
        env: { ...env, ...options.env },
        killAfterMs: 30_000,
      });
      const json = args.includes('--reporter') && args[args.indexOf('--reporter') + 1] === 'json';
      return { ...r, events: json ? parseEvents(r.stdout) : [], trace: readTrace().slice(before) };
    },
    runJson(command, args = [], options = {}) {
      return project.run(command, [...args, '--reporter', 'json'], options);
    },
    start(command, args = [], options = {}) {
      const before = readTrace().length;
      const child = spawn(process.execPath, [CLI, ...argv(command, args, options)], {
        cwd: dir,
        env: cliEnv({ ...env, ...options.env }),
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      child.stdin.end();
      // A safety net for a CLI that never ends, not a limit on its speed: a loaded machine may take long to start.
      const safety = setTimeout(() => child.kill('SIGKILL'), 120_000);
      const done = new Promise<ProjectRun>((resolve, reject) => {
        child.on('error', reject);
        child.on('close', (code, signal) => {
          clearTimeout(safety);
          const json = args.includes('--reporter') && args[args.indexOf('--reporter') + 1] === 'json';
          resolve({
            code,
            signal,
            stdout,
            stderr,
            events: json ? parseEvents(stdout) : [],
            trace: readTrace().slice(before),
          });
        });
      });
      return { child, stdout: () => stdout, stderr: () => stderr, done };
    },
  };
  return project;
}

/** A run step running `kapps-fake --tag <tag> <args…>` (extra step fields in `fields`). */
export function fake(
  name: string,
  tag: string,
  args: readonly string[] = [],
  fields: Record<string, unknown> = {},
): Record<string, unknown> {
  const quoted = ['--tag', tag, ...args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'"'"'`)}'`));
  return { name, command: 'kapps-fake', args: quoted.join(' '), ...fields };
}

/** A manifest kapp entry with one run unit `main` holding the given phases. */
export function kapp(
  id: string,
  phases: Record<string, unknown[]>,
  fields: Record<string, unknown> = {},
): Record<string, unknown> {
  return { id, ...fields, run_units: { main: phases } };
}

/** The events of one type. */
export function eventsOf<T extends RunEvent['type']>(
  events: readonly RunEvent[],
  type: T,
): Extract<RunEvent, { type: T }>[] {
  return events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
}

/** `kapp-finished` status (and reason) per kapp. */
export function kappStatuses(events: readonly RunEvent[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of eventsOf(events, 'kapp-finished')) out[e.kapp] = e.reason ? `${e.status}: ${e.reason}` : e.status;
  return out;
}

/** `<kapp> <phase>/<step> <status>` per finished step, in event order. */
export function stepLog(events: readonly RunEvent[]): string[] {
  return eventsOf(events, 'step-finished').map((e) => `${e.kapp} ${e.phase}/${e.step} ${e.status}`);
}
