/** Runs git for the workspace through the run layer (the only place that spawns processes). */
import { runProcess } from '../run/process-runner.js';
import type { CommandRunner } from '../workspace/git-source.js';

export const gitRunner: CommandRunner = async (command, args, options) => {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  // Never prompt for credentials: a fetch that needs them fails with git's message instead of hanging.
  env.GIT_TERMINAL_PROMPT = '0';
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
