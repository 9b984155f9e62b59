/**
 * Which releases a command works on: the project name (the stack name is given on the command line). Pure:
 * the caller passes the flag and the configuration it read.
 */
import { basename, dirname, resolve } from 'node:path';
import { UsageError } from '../diagnostics/errors.js';

/** Inputs of `resolveProject`, in precedence order. */
export interface ProjectInputs {
  /** `--project`. */
  flag?: string | undefined;
  /** `project:` in sugarkube-conf.yaml. */
  config?: string | undefined;
  /** The stack file (its folder names the project when nothing else does). */
  stackFile: string;
  /** Base for a relative stack file path. */
  cwd: string;
}

/**
 * The release project: `--project`, else `project:` in sugarkube-conf.yaml, else the name of the folder holding
 * the stack file. Empty values count as unset.
 */
export function resolveProject(inputs: ProjectInputs): { project: string; source: 'flag' | 'config' | 'folder' } {
  if (inputs.flag !== undefined && inputs.flag.trim() !== '') return { project: inputs.flag.trim(), source: 'flag' };
  if (inputs.config !== undefined && inputs.config.trim() !== '') {
    return { project: inputs.config.trim(), source: 'config' };
  }
  const folder = basename(dirname(resolve(inputs.cwd, inputs.stackFile)));
  if (folder === '') {
    throw new UsageError(`cannot name the project after the folder of ${inputs.stackFile}: pass --project`);
  }
  return { project: folder, source: 'folder' };
}
