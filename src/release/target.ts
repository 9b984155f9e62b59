/**
 * Which releases a command works on: the project name (the stack name is given on the command line). The caller
 * passes the flag and the configuration it read; the default looks at the file system (the repository root).
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from '../diagnostics/errors.js';

/** Inputs of `resolveProject`, in precedence order. */
export interface ProjectInputs {
  /** `--project`. */
  flag?: string | undefined;
  /** `project:` in sugarkube-conf.yaml. */
  config?: string | undefined;
  /** The sugarkube-conf.yaml that was found (its folder names the project when it is a project's own). */
  configFile?: string | undefined;
  /** The stack file (its repository, else its folder, names the project when nothing else does). */
  stackFile: string;
  /** Base for a relative stack file path. */
  cwd: string;
  /** For the shared configuration folder `~/.sugarkube`, which names no project. */
  homeDir?: string;
}

/** How the project was chosen (said in messages). */
export type ProjectSource = 'flag' | 'config' | 'config-folder' | 'repository' | 'folder';

export interface ResolvedProject {
  project: string;
  source: ProjectSource;
  /**
   * The project the same command used by default before (the name of the folder holding the stack file), when it
   * differs from `project` and no --project or `project:` was given: histories recorded under it are looked for.
   */
  legacy?: string;
}

/** Folder names that say where stacks are kept, not whose they are (Sugarkube's layout keeps them in `stacks/`). */
const GENERIC = new Set(['stacks', 'stack', 'config', 'configs', 'conf', 'etc']);

/** The root of the git repository holding `dir` (a `.git` directory or file), if any. */
function repositoryRoot(dir: string): string | undefined {
  for (let d = dir; ;) {
    if (existsSync(join(d, '.git'))) return d;
    const parent = dirname(d);
    if (parent === d) return undefined;
    d = parent;
  }
}

/** Describe where the project name came from, for messages. */
export function describeProjectSource(source: ProjectSource): string {
  switch (source) {
    case 'flag':
      return '--project';
    case 'config':
      return '`project:` in sugarkube-conf.yaml';
    case 'config-folder':
      return 'the folder of sugarkube-conf.yaml';
    case 'repository':
      return 'the git repository of the stack file';
    case 'folder':
      return 'the folder of the stack file';
  }
}

/**
 * The release project: `--project`, else `project:` in sugarkube-conf.yaml, else the name of the folder holding the
 * sugarkube-conf.yaml that was found (unless it is the shared `~/.sugarkube` or `/etc/sugarkube`), else the name of
 * the git repository holding the stack file, else the name of the stack file's folder — or of its parent when that
 * folder has a generic name such as `stacks`. Empty values count as unset.
 */
export function resolveProject(inputs: ProjectInputs): ResolvedProject {
  if (inputs.flag !== undefined && inputs.flag.trim() !== '') return { project: inputs.flag.trim(), source: 'flag' };
  if (inputs.config !== undefined && inputs.config.trim() !== '') {
    return { project: inputs.config.trim(), source: 'config' };
  }
  const stackDir = dirname(resolve(inputs.cwd, inputs.stackFile));
  const legacy = basename(stackDir);
  const withLegacy = (project: string, source: ProjectSource): ResolvedProject =>
    legacy !== '' && legacy !== project ? { project, source, legacy } : { project, source };
  if (inputs.configFile !== undefined) {
    const dir = dirname(resolve(inputs.cwd, inputs.configFile));
    const shared = [join(inputs.homeDir ?? homedir(), '.sugarkube'), '/etc/sugarkube'];
    const name = basename(dir);
    if (!shared.includes(dir) && name !== '' && !GENERIC.has(name)) return withLegacy(name, 'config-folder');
  }
  const repo = repositoryRoot(stackDir);
  if (repo !== undefined && basename(repo) !== '') return withLegacy(basename(repo), 'repository');
  let dir = stackDir;
  if (GENERIC.has(basename(dir)) && basename(dirname(dir)) !== '') dir = dirname(dir);
  const folder = basename(dir);
  if (folder === '') {
    throw new UsageError(`cannot name the project after the folder of ${inputs.stackFile}: pass --project`);
  }
  return withLegacy(folder, 'folder');
}

/**
 * When the project is a default and has no release of `stack` yet while the previous default (`legacy`) has: the
 * message that says so and how to go on with that history. Undefined otherwise.
 */
export async function legacyHistoryHint(
  store: { latest(project: string, stack: string): Promise<{ revision: number } | null | undefined> },
  resolved: ResolvedProject,
  stack: string,
): Promise<string | undefined> {
  if (resolved.legacy === undefined) return undefined;
  if (await store.latest(resolved.project, stack)) return undefined;
  const old = await store.latest(resolved.legacy, stack);
  if (!old) return undefined;
  return (
    `no release of ${resolved.project}/${stack} (project named after ${describeProjectSource(resolved.source)}), ` +
    `but ${old.revision} release(s) of ${resolved.legacy}/${stack}, recorded under the project kapps used to ` +
    `default to (the stack file's folder). To go on with that history pass --project ${resolved.legacy}, or set ` +
    `\`project: ${resolved.legacy}\` in sugarkube-conf.yaml`
  );
}
