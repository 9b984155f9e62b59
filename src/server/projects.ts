/**
 * The registered projects: a name clients use, and the stack file it stands for — a file on this server's disk, or a
 * file of a git repository read at one commit. The stacks of a project are the top-level keys of its stack file
 * (read again when the file changes; at a commit, once per commit). The release project (the key of its releases,
 * shared with the CLI) is found as the CLI finds it: `project:` in sugarkube-conf.yaml, else the repository or folder
 * of the stack file.
 */
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadProjectConfig } from '../config/index.js';
import { readConfigText } from '../config/read-file.js';
import { stackNames } from '../config/stack.js';
import { resolveProject } from '../release/target.js';
import { parseYamlTree } from '../yaml/read.js';
import type { ProjectEntry } from './config.js';
import { repositoryName, type ResolvedCommit } from './sources/repository.js';
import type { ProjectSources } from './sources/sources.js';

interface Cached {
  readonly mtimeMs: number;
  readonly size: number;
  readonly stacks: string[];
}

/** At most this many commits' stack lists are remembered per project. */
const MAX_CACHED_COMMITS = 64;

export class ProjectRegistry {
  readonly #projects: Map<string, ProjectEntry>;
  readonly #sources: ProjectSources | undefined;
  readonly #stacks = new Map<string, Cached>();
  readonly #releaseProjects = new Map<string, string>();
  /** Per project from git: the stacks of each commit read (newest last). */
  readonly #commitStacks = new Map<string, Map<string, string[]>>();
  /** Per project from git: the newest commit of its branch this instance resolved. */
  readonly #heads = new Map<string, ResolvedCommit>();

  constructor(projects: readonly ProjectEntry[], sources?: ProjectSources) {
    this.#projects = new Map(projects.map((p) => [p.name, p]));
    this.#sources = sources;
  }

  list(): ProjectEntry[] {
    return [...this.#projects.values()];
  }

  get(name: string): ProjectEntry | undefined {
    return this.#projects.get(name);
  }

  /** The repositories of the projects from git (undefined when the server was made without them). */
  get sources(): ProjectSources | undefined {
    return this.#sources;
  }

  /**
   * The stack names of a project's stack file (empty when it cannot be read): of the file on disk, or of the stack
   * file at commit `sha` (default: the newest commit of the branch this instance knows, fetched when it knows none).
   */
  async stacks(name: string, sha?: string): Promise<string[]> {
    const project = this.#projects.get(name);
    if (!project) return [];
    if (project.stackFile !== undefined) return this.#fileStacks(name, project.stackFile);
    const repository = this.#sources?.of(project);
    if (!project.repo || !repository) return [];
    let at = sha ?? this.#heads.get(name)?.sha;
    if (at === undefined) {
      try {
        at = (await this.resolve(name, undefined)).sha;
      } catch {
        return [];
      }
    }
    const known = this.#commitStacks.get(name) ?? new Map<string, string[]>();
    this.#commitStacks.set(name, known);
    const cached = known.get(at);
    if (cached) return cached;
    let stacks: string[] = [];
    try {
      const text = await repository.readFile(at, project.repo.path);
      if (text !== undefined) stacks = stackNames(parseYamlTree(text, { file: project.repo.path }));
    } catch {
      // A broken stack file lists no stacks; a run on it reports why.
    }
    known.set(at, stacks);
    if (known.size > MAX_CACHED_COMMITS) known.delete(known.keys().next().value!);
    return stacks;
  }

  /** Resolve `ref` (default: the project's branch) of a project from git to a commit, fetching its repository. */
  async resolve(name: string, ref: string | undefined, signal?: AbortSignal): Promise<ResolvedCommit> {
    const project = this.#projects.get(name);
    const repository = project ? this.#sources?.of(project) : undefined;
    if (!project?.repo || !repository) throw new Error(`project ${name} is not from a repository`);
    const resolved = await repository.resolve(ref ?? project.repo.branch, signal);
    if (ref === undefined || ref === project.repo.branch) this.#heads.set(name, resolved);
    return resolved;
  }

  /** The newest commit of a project's branch this instance resolved, if any. */
  head(name: string): ResolvedCommit | undefined {
    return this.#heads.get(name);
  }

  #fileStacks(name: string, stackFile: string): string[] {
    let mtimeMs: number;
    let size: number;
    try {
      const s = statSync(stackFile);
      mtimeMs = s.mtimeMs;
      size = s.size;
    } catch {
      return [];
    }
    const cached = this.#stacks.get(name);
    if (cached && cached.mtimeMs === mtimeMs && cached.size === size) return cached.stacks;
    let stacks: string[] = [];
    try {
      const root = parseYamlTree(readConfigText(stackFile, 'stack file'), { file: stackFile });
      stacks = stackNames(root);
    } catch {
      // A broken stack file lists no stacks; a run on it reports why.
    }
    this.#stacks.set(name, { mtimeMs, size, stacks });
    return stacks;
  }

  /**
   * The project name its releases are kept under, as the CLI names it for the same stack file. For a project from
   * git: `project:` in the sugarkube-conf.yaml of the checkout a run works in (`checkoutDir`), else the repository's
   * name (as a clone of it is named); without a checkout, the name its last run used.
   */
  releaseProject(name: string, checkoutDir?: string): string {
    const project = this.#projects.get(name);
    if (!project) throw new Error(`no project ${name}`);
    if (project.repo) {
      let resolved = this.#releaseProjects.get(name);
      if (checkoutDir !== undefined) {
        const stackFile = join(checkoutDir, project.repo.path);
        const { config } = loadProjectConfig({ cwd: dirname(stackFile), stackFile });
        resolved = config.project?.trim() || repositoryName(project.repo.url);
        this.#releaseProjects.set(name, resolved);
      }
      return resolved ?? repositoryName(project.repo.url);
    }
    const known = this.#releaseProjects.get(name);
    if (known !== undefined) return known;
    const stackFile = project.stackFile!;
    const cwd = dirname(stackFile);
    const { config } = loadProjectConfig({ cwd, stackFile });
    const resolved = resolveProject({ config: config.project, configFile: config.file, stackFile, cwd });
    this.#releaseProjects.set(name, resolved.project);
    return resolved.project;
  }
}
