/**
 * What is checked of a step just before it is spawned, where it is spawned (in the process server, with synchronous
 * calls that take microseconds there; in kapps itself with asynchronous ones): that its working directory does not
 * lead out of the kapp's directory through a symbolic link, and that its command is an executable file (found on
 * the step's PATH for a bare name). The caller words the refusal.
 */
import { realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { resolveCommand, resolveCommandAsync } from './resolve-command.js';

/** Why a step was not spawned. */
export type StepRefusal =
  /** Its working directory `real` (resolved) is not inside the kapp's directory `root` (resolved). */
  | { readonly kind: 'escape'; readonly dir: string; readonly real: string; readonly root: string }
  /** Its command is not an executable file (not on PATH for a bare name, relative to its cwd for a path). */
  | { readonly kind: 'not-found' };

/** What to check: the request's command, cwd and PATH, and the directory the cwd must stay inside. */
export interface StepCheck {
  readonly command: string;
  readonly cwd: string;
  readonly pathEnv: string | undefined;
  /** The kapp's directory: the working directory, symbolic links resolved, must lie inside it. */
  readonly confineTo: string;
}

/** The command to spawn (its absolute path), or why not to. */
export type StepCheckResult = { readonly command: string } | { readonly refused: StepRefusal };

/** Whether `p` is `root` or below it, comparing the paths as written (both absolute). */
function isWithin(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

function escapeOf(check: StepCheck, real: string, root: string): StepCheckResult | undefined {
  return isWithin(root, real) ? undefined : { refused: { kind: 'escape', dir: check.cwd, real, root } };
}

/** The checks with synchronous calls (in the process server, which does nothing else meanwhile). */
export function checkStepSync(check: StepCheck): StepCheckResult {
  let paths: [string, string] | undefined;
  try {
    paths = [realpathSync(check.cwd), realpathSync(check.confineTo)];
  } catch {
    // A directory that does not exist yet is left to the spawn to report.
  }
  const escape = paths && escapeOf(check, ...paths);
  if (escape) return escape;
  const resolved = resolveCommand(check.command, { cwd: check.cwd, pathEnv: check.pathEnv });
  return resolved === undefined ? { refused: { kind: 'not-found' } } : { command: resolved };
}

/** The same checks with asynchronous calls (in kapps' own process, while other steps are reported). */
export async function checkStepAsync(check: StepCheck): Promise<StepCheckResult> {
  let paths: [string, string] | undefined;
  try {
    paths = await Promise.all([realpath(check.cwd), realpath(check.confineTo)]);
  } catch {
    // A directory that does not exist yet is left to the spawn to report.
  }
  const escape = paths && escapeOf(check, ...paths);
  if (escape) return escape;
  const resolved = await resolveCommandAsync(check.command, { cwd: check.cwd, pathEnv: check.pathEnv });
  return resolved === undefined ? { refused: { kind: 'not-found' } } : { command: resolved };
}
