/**
 * Runs one step's process: the only place in kapps that starts processes.
 *
 * Responsibilities:
 * 1. Start `command args…` with no shell, stdin closed (or fed `input`), exactly the environment given, in `cwd`.
 * 2. Run it as the leader of a new process group, so that a timeout or a cancellation stops the step *and*
 *    everything it forked: SIGTERM to the group, then SIGKILL after a grace period.
 * 3. Capture stdout and stderr (as bytes), stream decoded chunks to a callback, and keep an interleaved tail.
 * 4. Turn every outcome (exit code, signal, timeout, cancellation, failure to start) into a `SpawnResult`.
 *
 * Not its job: deciding whether an exit code is a success (the caller knows the expected code), building the
 * environment, writing output files, or reporting.
 *
 * Why node:child_process and not execa: kapps needs exit code, signal, raw output and its own process-group
 * kill, and nothing else execa adds. Even with buffering, decoding, cleanup handlers and forced kills turned
 * off, execa 9 spends about 0.6–1 ms of the parent's CPU per spawn normalising options, wiring stream
 * promises and aborting an internal AbortController; for a stack of short steps that is 1.3–1.8× the cost of
 * the spawn itself, against about 1.0× here (bench/spawn-overhead.mjs prints all three). Its `timeout` would not
 * do either: it signals only the direct child, and with piped output its promise then waits for any grandchild
 * still holding the pipe (`sh -c 'sleep 60 & wait'` hangs for a minute).
 */
import { mkdirSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { OutputTail } from './output-tail.js';
import {
  processGroupExists,
  registerProcessGroup,
  signalProcessGroup,
  unregisterProcessGroup,
} from './process-groups.js';
import { resolveCommand } from './resolve-command.js';
import { checkStepAsync, checkStepSync, type StepRefusal } from './step-checks.js';

/** Default time between SIGTERM and SIGKILL when a step is stopped, in milliseconds. */
export const DEFAULT_KILL_GRACE_MS = 3000;

/** The longest delay setTimeout accepts, in milliseconds (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How often to look whether a signalled process group has emptied, in milliseconds. */
const GROUP_POLL_MS = 20;

/**
 * After a stopped step's group has been sent SIGKILL, how long its output may still take to close (the last bytes
 * its killed processes wrote are read in this time), in milliseconds. Past it kapps stops reading.
 */
const DRAIN_AFTER_KILL_MS = 200;

/**
 * The shortest wait for a step's output to close after its process exited by itself, in milliseconds: the wait is
 * the kill grace period, but never shorter than this (Node may report the exit before it has read the last bytes).
 */
const MIN_DRAIN_AFTER_EXIT_MS = 1000;

/** What kapps says when it stopped waiting for the output of a step that was stopped. */
export const ABANDONED_AFTER_STOP = "stopped reading output: a process outside the step's group still holds it";

/** What to run and how. */
export interface SpawnRequest {
  /** A program name (looked up on `env.PATH`) or a path (relative to `cwd`). Never interpreted by a shell. */
  readonly command: string;
  /** Arguments, passed to the program as they are. */
  readonly args: readonly string[];
  /**
   * Written to the process's stdin, which is then closed (absent: stdin is closed from the start). A process that
   * exits or closes its stdin before reading it all is not an error: the rest is dropped.
   */
  readonly input?: string;
  /** Working directory; must exist. */
  readonly cwd: string;
  /** The complete environment of the process: nothing is inherited from kapps' own environment. */
  readonly env: Readonly<Record<string, string>>;
  /** Stop the step after this many milliseconds (absent, 0 or negative: no limit). */
  readonly timeoutMs?: number;
  /** Milliseconds between SIGTERM and SIGKILL when the step is stopped; default 3000. */
  readonly killGraceMs?: number;
  /** Cancels the step: its process group is stopped as on a timeout and the result says `cancelled`. */
  readonly signal?: AbortSignal;
  /** Called with each decoded chunk of output as it arrives (UTF-8; a character is never split). */
  readonly onOutput?: (stream: 'stdout' | 'stderr', chunk: string) => void;
  /** Keep the whole stdout and stderr in the result (default true). The tail is kept either way. */
  readonly captureOutput?: boolean;
  /** Number of lines in `outputTail` (default 20). */
  readonly tailLines?: number;
  /** Called once the process has started, with its pid (also its process group id). */
  readonly onStart?: (pid: number) => void;
  /**
   * The kapp's directory: check the step first (see `step-checks.ts`): its working directory must not lead out of
   * it, and its command must be an executable file, spawned by its absolute path. A step that fails a check is not
   * started and its result says why (`refused`).
   */
  readonly confineTo?: string;
  /**
   * A directory to make (with its parents) just before the checks, if it is missing: the kapp's directory, made by
   * the step that first needs it. In the process server this is a synchronous call of microseconds there, rather
   * than a round trip through kapps' thread pool and event loop for each kapp. Should it fail, the step is not
   * started and `spawnError` says why.
   */
  readonly makeDir?: string;
}

/** What happened. `spawnStep` reports failures here and never throws for them. */
export interface SpawnResult {
  /** Exit status, or null when the process was ended by a signal or never started. */
  readonly exitCode: number | null;
  /** The signal that ended the process (`SIGTERM`, `SIGKILL`, …), or null. */
  readonly signal: string | null;
  /** The timeout fired and kapps stopped the step. */
  readonly timedOut: boolean;
  /** The abort signal fired and kapps stopped the step (or it was already aborted, and nothing started). */
  readonly cancelled: boolean;
  /** Everything written to stdout (empty when `captureOutput` is false). */
  readonly stdout: Buffer;
  /** Everything written to stderr (empty when `captureOutput` is false). */
  readonly stderr: Buffer;
  /** The last lines of stdout and stderr, interleaved in arrival order, without line ends. */
  readonly outputTail: string[];
  /** Wall time from just before the spawn until the step's output closed, in milliseconds. */
  readonly durationMs: number;
  /** The process id (also its process group id), when it started. */
  readonly pid?: number;
  /** Why the process could not be started, as a sentence naming the command (e.g. not found, not executable). */
  readonly spawnError?: string;
  /** The system error code behind `spawnError` (`ENOENT`, `EACCES`, …). */
  readonly spawnErrorCode?: string;
  /**
   * Set when kapps stopped waiting for the step's stdout/stderr to close (a process that left the step's group, or
   * a background process of a step that exited, still held them): a sentence saying so.
   */
  readonly outputAbandoned?: string;
  /** The step failed a check of `confineTo` and was not started. */
  readonly refused?: StepRefusal;
}

/** How `spawnStep` runs its checks: synchronously in the process server, which has nothing else to do meanwhile. */
export interface SpawnStepOptions {
  readonly syncChecks?: boolean;
}

/**
 * Runs a step to completion and describes the outcome. It throws only when `onOutput` throws (a bug in the
 * caller), after the process has been stopped.
 */
export async function spawnStep(req: SpawnRequest, options: SpawnStepOptions = {}): Promise<SpawnResult> {
  const started = performance.now();
  if (req.makeDir !== undefined) {
    try {
      if (options.syncChecks) mkdirSync(req.makeDir, { recursive: true });
      else await mkdir(req.makeDir, { recursive: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return notStarted(started, {
        spawnError: cannotMakeDir(req.makeDir, error),
        ...(code ? { spawnErrorCode: code } : {}),
      });
    }
  }
  if (req.confineTo !== undefined) {
    const check = { command: req.command, cwd: req.cwd, pathEnv: req.env.PATH, confineTo: req.confineTo };
    const checked = options.syncChecks ? checkStepSync(check) : await checkStepAsync(check);
    if ('refused' in checked) return notStarted(started, { refused: checked.refused });
    req = { ...req, command: checked.command };
  }
  if (req.signal?.aborted) return notStarted(started, { cancelled: true });

  const capture = req.captureOutput ?? true;
  const grace = Math.min(MAX_TIMER_MS, Math.max(0, req.killGraceMs ?? DEFAULT_KILL_GRACE_MS));
  const tail = new OutputTail(req.tailLines);
  const chunks: Record<'stdout' | 'stderr', Buffer[]> = { stdout: [], stderr: [] };
  const decoders: Partial<Record<'stdout' | 'stderr', StringDecoder>> = {};
  let callbackError: unknown;

  let child: ChildProcess;
  try {
    child = spawn(req.command, req.args, {
      cwd: req.cwd,
      env: req.env,
      shell: false,
      stdio: [req.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: true,
      windowsHide: true,
    });
  } catch (error) {
    // Node validates arguments synchronously (a NUL byte in an argument, say): a caller bug, but a step failure.
    return notStarted(started, { spawnError: `cannot run ${req.command}: ${errorMessage(error)}` });
  }

  // 'close' comes after the process has exited *and* its stdout and stderr have closed, including when it
  // failed to start ('error' first, then 'close' with a negative errno).
  // A process outside the step's group (one that called setsid, a daemon the step started) may hold the output
  // open for hours: kapps then stops waiting for it (see `abandonOutput`) once the process has exited.
  let startError: NodeJS.ErrnoException | undefined;
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let outputAbandoned: string | undefined;
  let outputClosed = false;
  let drainTimer: NodeJS.Timeout | undefined;
  let resolveClosed: (exit: { code: number | null; signal: NodeJS.Signals | null }) => void = () => undefined;
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    resolveClosed = resolve;
    child.on('error', (error: NodeJS.ErrnoException) => {
      startError ??= error;
      if (child.pid === undefined) resolve({ code: null, signal: null });
    });
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      // Exited by itself: wait for the output to close for the grace period (at least a second), no longer.
      if (!stopping) {
        const wait = Math.max(grace, MIN_DRAIN_AFTER_EXIT_MS);
        drainTimer = setTimeout(
          () =>
            abandonOutput(
              `stopped reading output ${formatSeconds(wait)} after the step's process exited: a process it started still holds it`,
            ),
          wait,
        );
      }
    });
    child.on('close', (code, signal) => {
      outputClosed = true;
      resolve({ code, signal });
    });
  });
  /** Stop reading the step's output (whoever still holds it) and end the wait, with what the exit said. */
  const abandonOutput = (note: string): void => {
    if (exited === undefined || outputClosed) return;
    outputAbandoned = note;
    child.stdout?.destroy();
    child.stderr?.destroy();
    resolveClosed(exited);
  };

  const pid = child.pid;
  if (pid !== undefined) {
    registerProcessGroup(pid);
    req.onStart?.(pid);
  }
  if (child.stdin) {
    // EPIPE when the process does not read its input (it exited, or closed stdin): what it did not read is dropped.
    child.stdin.on('error', () => undefined);
    if (pid !== undefined) child.stdin.end(req.input ?? '');
    else child.stdin.destroy();
  }

  const onData = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
    if (capture) chunks[stream].push(chunk);
    const decoder = (decoders[stream] ??= new StringDecoder('utf8'));
    const text = decoder.write(chunk);
    if (text.length === 0) return;
    tail.push(stream, text);
    if (req.onOutput && callbackError === undefined) {
      try {
        req.onOutput(stream, text);
      } catch (error) {
        callbackError = error;
        stop();
      }
    }
  };
  child.stdout?.on('data', onData('stdout'));
  child.stderr?.on('data', onData('stderr'));

  // Stopping: SIGTERM to the group now, SIGKILL after the grace period unless the group is gone by then.
  let stopping = false;
  let killDeadline = 0;
  let forceKillTimer: NodeJS.Timeout | undefined;
  const stop = (): void => {
    if (stopping || pid === undefined) return;
    stopping = true;
    killDeadline = performance.now() + grace;
    clearTimeout(drainTimer);
    signalProcessGroup(pid, 'SIGTERM');
    forceKillTimer = setTimeout(() => {
      signalProcessGroup(pid, 'SIGKILL');
      // Whatever still holds the output now is outside the group: stop waiting for it shortly after.
      drainTimer = setTimeout(() => {
        if (exited !== undefined) abandonOutput(ABANDONED_AFTER_STOP);
        else {
          // The leader itself has not been reaped yet (it cannot survive SIGKILL): stop reading once it is.
          child.once('exit', () => abandonOutput(ABANDONED_AFTER_STOP));
        }
      }, DRAIN_AFTER_KILL_MS);
    }, grace);
  };

  let timedOut = false;
  let cancelled = false;
  // setTimeout fires at once for delays above 2^31-1 ms; a limit of 25 days or more is as good as none.
  const timeoutMs = (req.timeoutMs ?? 0) > MAX_TIMER_MS ? 0 : (req.timeoutMs ?? 0);
  const timeoutTimer =
    timeoutMs > 0 && pid !== undefined
      ? setTimeout(() => {
          if (stopping) return;
          timedOut = true;
          stop();
        }, timeoutMs)
      : undefined;
  const onAbort = (): void => {
    if (stopping) return;
    cancelled = true;
    stop();
  };
  req.signal?.addEventListener('abort', onAbort, { once: true });

  const exit = await closed;
  const durationMs = performance.now() - started;
  clearTimeout(timeoutTimer);
  clearTimeout(drainTimer);
  req.signal?.removeEventListener('abort', onAbort);

  if (pid !== undefined) {
    if (stopping) await finishKill(pid, killDeadline);
    clearTimeout(forceKillTimer);
    unregisterProcessGroup(pid);
  }
  for (const stream of ['stdout', 'stderr'] as const) {
    // An incomplete UTF-8 sequence at the very end becomes U+FFFD here.
    const rest = decoders[stream]?.end();
    if (!rest) continue;
    tail.push(stream, rest);
    if (req.onOutput && callbackError === undefined) {
      try {
        req.onOutput(stream, rest);
      } catch (error) {
        callbackError = error;
      }
    }
  }
  if (callbackError !== undefined) throw asError(callbackError);

  const failedToStart = pid === undefined;
  const code = failedToStart ? startError?.code : undefined;
  return {
    exitCode: failedToStart ? null : exit.code,
    signal: failedToStart ? null : exit.signal,
    timedOut,
    cancelled,
    stdout: concat(chunks.stdout),
    stderr: concat(chunks.stderr),
    outputTail: tail.lines(),
    durationMs,
    ...(pid === undefined ? {} : { pid }),
    ...(outputAbandoned === undefined ? {} : { outputAbandoned }),
    ...(failedToStart
      ? {
          spawnError: describeSpawnError(req, code, startError?.message ?? 'unknown error'),
          ...(code === undefined ? {} : { spawnErrorCode: code }),
        }
      : {}),
  };
}

/**
 * After a stopped step's leader has exited: members of its group that ignored SIGTERM and do not hold the
 * output pipes may still be alive. Wait for the group to empty until the SIGKILL deadline, then SIGKILL it, so
 * that nothing of a stopped step outlives `spawnStep`.
 */
async function finishKill(pgid: number, deadline: number): Promise<void> {
  while (processGroupExists(pgid)) {
    const left = deadline - performance.now();
    if (left <= 0) {
      signalProcessGroup(pgid, 'SIGKILL');
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(GROUP_POLL_MS, left)));
  }
}

/** A result for a step whose process never started. */
function notStarted(
  started: number,
  fields: { cancelled?: boolean; spawnError?: string; spawnErrorCode?: string; refused?: StepRefusal },
): SpawnResult {
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    cancelled: fields.cancelled ?? false,
    stdout: Buffer.alloc(0),
    stderr: Buffer.alloc(0),
    outputTail: [],
    durationMs: performance.now() - started,
    ...(fields.spawnError === undefined ? {} : { spawnError: fields.spawnError }),
    ...(fields.spawnErrorCode === undefined ? {} : { spawnErrorCode: fields.spawnErrorCode }),
    ...(fields.refused === undefined ? {} : { refused: fields.refused }),
  };
}

/**
 * Start the process server (`process-server.ts`) as a Node child with an IPC channel. Forking copies the parent's
 * memory mappings, so a parent holding a large stack in memory pays more per spawn than a small process does;
 * steps are therefore spawned by this small child. Returned unreferenced: it never keeps kapps alive by itself.
 *
 * It runs with a young generation of 1 MB and without V8's helper threads: each spawn forks it, and after a fork
 * every page it writes is copied on its first write, so the fewer pages it touches between spawns (a small young
 * generation), and the fewer threads touching them on another core, the cheaper each spawn. Measured on W4 (2,000
 * steps, 64 workers, two cores): 20.0 → 17.7–18.5 s with `sleep 0.2`, 18.8 → 15.7 s with `true` (docs/running.md).
 */
export function forkProcessServer(modulePath: string): ChildProcess {
  const child = fork(modulePath, [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
    execArgv: ['--max-semi-space-size=1', '--single-threaded'],
  });
  child.unref();
  return child;
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

function concat(chunks: Buffer[]): Buffer {
  return chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks);
}

/** A sentence saying why `req.command` did not start, naming the likely cause. */
function describeSpawnError(req: SpawnRequest, code: string | undefined, message: string): string {
  const command = req.command;
  if (!isDirectory(req.cwd)) return `cannot run ${command}: the working directory ${req.cwd} does not exist`;
  switch (code) {
    case 'ENOENT':
      if (command.includes('/')) {
        return resolveCommand(command, { cwd: req.cwd, pathEnv: req.env.PATH }) === undefined
          ? `cannot run ${command}: no such file`
          : `cannot run ${command}: the interpreter named on its #! line was not found`;
      }
      return resolveCommand(command, { cwd: req.cwd, pathEnv: req.env.PATH }) === undefined
        ? `cannot run ${command}: command not found on PATH (${req.env.PATH ?? '(PATH is not set)'})`
        : `cannot run ${command}: the interpreter named on its #! line was not found`;
    case 'EACCES':
      return `cannot run ${command}: permission denied (it is not an executable file, or a directory on its path is not searchable)`;
    case 'ENOEXEC':
      return `cannot run ${command}: not an executable format`;
    case 'ENOTDIR':
      return `cannot run ${command}: a component of its path is not a directory`;
    case 'E2BIG':
      return `cannot run ${command}: the arguments and environment are too large`;
    default:
      return `cannot run ${command}: ${firstLine(message)}`;
  }
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** Why `dir` could not be made, in a sentence: `cannot make the directory <dir>: <why> (<code>)`. */
export function cannotMakeDir(dir: string, error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  const why =
    code === 'EEXIST' || code === 'ENOTDIR'
      ? 'a file that is not a directory is in the way'
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : code === 'ENOSPC'
          ? 'no space left on the device'
          : code === 'EROFS'
            ? 'the file system is read-only'
            : undefined;
  return `cannot make the directory ${dir}: ${why ? `${why} (${code})` : errorMessage(error)}`;
}

function errorMessage(error: unknown): string {
  return asError(error).message;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(typeof error === 'string' ? error : JSON.stringify(error));
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? text;
}
