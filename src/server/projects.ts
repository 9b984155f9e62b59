/**
 * The registered projects: a name clients use, and the stack file it stands for. The stacks of a project are the
 * top-level keys of its stack file (read again when the file changes). The release project (the key of its
 * releases, shared with the CLI) is found as the CLI finds it: `project:` in sugarkube-conf.yaml, else the
 * repository or folder of the stack file.
 */
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { loadProjectConfig } from '../config/index.js';
import { readConfigText } from '../config/read-file.js';
import { stackNames } from '../config/stack.js';
import { resolveProject } from '../release/target.js';
import { parseYamlTree } from '../yaml/read.js';
import type { ProjectEntry } from './config.js';

interface Cached {
  readonly mtimeMs: number;
  readonly size: number;
  readonly stacks: string[];
}

export class ProjectRegistry {
  readonly #projects: Map<string, ProjectEntry>;
  readonly #stacks = new Map<string, Cached>();
  readonly #releaseProjects = new Map<string, string>();

  constructor(projects: readonly ProjectEntry[]) {
    this.#projects = new Map(projects.map((p) => [p.name, p]));
  }

  list(): ProjectEntry[] {
    return [...this.#projects.values()];
  }

  get(name: string): ProjectEntry | undefined {
    return this.#projects.get(name);
  }

  /** The stack names of a project's stack file (empty when it cannot be read). */
  stacks(name: string): string[] {
    const project = this.#projects.get(name);
    if (!project) return [];
    let mtimeMs: number;
    let size: number;
    try {
      const s = statSync(project.stackFile);
      mtimeMs = s.mtimeMs;
      size = s.size;
    } catch {
      return [];
    }
    const cached = this.#stacks.get(name);
    if (cached && cached.mtimeMs === mtimeMs && cached.size === size) return cached.stacks;
    let stacks: string[] = [];
    try {
      const root = parseYamlTree(readConfigText(project.stackFile, 'stack file'), { file: project.stackFile });
      stacks = stackNames(root);
    } catch {
      // A broken stack file lists no stacks; a run on it reports why.
    }
    this.#stacks.set(name, { mtimeMs, size, stacks });
    return stacks;
  }

  /** The project name its releases are kept under (as the CLI names it for the same stack file). */
  releaseProject(name: string): string {
    const project = this.#projects.get(name);
    if (!project) throw new Error(`no project ${name}`);
    const known = this.#releaseProjects.get(name);
    if (known !== undefined) return known;
    const cwd = dirname(project.stackFile);
    const { config } = loadProjectConfig({ cwd, stackFile: project.stackFile });
    const resolved = resolveProject({
      config: config.project,
      configFile: config.file,
      stackFile: project.stackFile,
      cwd,
    });
    this.#releaseProjects.set(name, resolved.project);
    return resolved.project;
  }
}
