/** Runs git for the workspace through the run layer (the only place that spawns processes). */
import type { CommandRunner } from '../workspace/git-source.js';
import { GIT_PROTOCOLS } from '../config/source-uri.js';

const REPOSITORY_VARIABLES = new Set([
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
]);

/** Runs git with the environment `base` (kapps' own), less what would point git at another repository. */
export const gitRunnerFor =
  (base: Readonly<Record<string, string | undefined>>): CommandRunner =>
  async (command, args, options) => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(base)) {
      // Variables that would point git at another repository than the checkout it runs in (set, e.g., inside a hook).
      if (v !== undefined && !REPOSITORY_VARIABLES.has(k)) env[k] = v;
    }
    // Never prompt for credentials: a fetch that needs them fails with git's message instead of hanging.
    env.GIT_TERMINAL_PROMPT = '0';
    // Only these transports: no `ext::` (which runs a command) nor any other remote helper, whatever git's config says.
    env.GIT_ALLOW_PROTOCOL = GIT_PROTOCOLS;
    // Loaded when git first runs: opening a stack or previewing one whose checkouts are in place runs none.
    const { runProcess } = await import('../process/process-runner.js');
    const r = await runProcess({
      command,
      args,
      cwd: options.cwd,
      env,
      timeoutMs: options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return {
      exitCode: r.exitCode,
      stdout: r.stdout.toString('utf8'),
      stderr: r.stderr.toString('utf8'),
      ...(r.spawnError
        ? { error: r.spawnError }
        : r.cancelled
          ? { error: 'cancelled' }
          : r.timedOut
            ? { error: `timed out after ${options.timeoutMs / 1000} s` }
            : {}),
    };
  };
