/**
 * The repositories of the projects from git, one `GitRepository` per URL and credentials in this instance's data
 * directory (`<data-dir>/sources/`): nothing in it is shared with another instance, each clones what its runs need.
 */
import { join } from 'node:path';
import { gitRunnerFor } from '../../engine/git-runner.js';
import type { CommandRunner } from '../../workspace/git-source.js';
import { serverOwnVariable, type ProjectEntry } from '../config.js';
import { GitRepository, repositoryFolder } from './repository.js';

/** Variables that would make git print what it sends (a token in a header) or read another configuration. */
const NOT_FOR_GIT = /^GIT_(TRACE|CURL_VERBOSE|CONFIG|ASKPASS$|SSH_COMMAND$|PROXY_SSL)|^SSH_ASKPASS$/;

/**
 * The environment git runs with for a repository: the server's own, less kapps' variables and what would make git
 * trace its traffic, plus the HTTPS token named by `tokenEnv` as an `Authorization` header given through git's
 * environment configuration (never a command-line argument, a file or a URL).
 */
export function gitEnvironment(serverEnv: NodeJS.ProcessEnv, tokenEnv?: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(serverEnv)) {
    if (value !== undefined && !serverOwnVariable(name) && !NOT_FOR_GIT.test(name)) env[name] = value;
  }
  const token = tokenEnv !== undefined ? serverEnv[tokenEnv] : undefined;
  if (token) {
    const basic = Buffer.from(`x-access-token:${token}`, 'utf8').toString('base64');
    env.GIT_CONFIG_COUNT = '1';
    env.GIT_CONFIG_KEY_0 = 'http.extraHeader';
    env.GIT_CONFIG_VALUE_0 = `Authorization: Basic ${basic}`;
  }
  return env;
}

export class ProjectSources {
  readonly #root: string;
  readonly #serverEnv: NodeJS.ProcessEnv;
  readonly #repositories = new Map<string, GitRepository>();
  readonly #runner: (env: Record<string, string>) => CommandRunner;

  constructor(
    dataDir: string,
    serverEnv: NodeJS.ProcessEnv,
    runner: (env: Record<string, string>) => CommandRunner = gitRunnerFor,
  ) {
    this.#root = join(dataDir, 'sources');
    this.#serverEnv = serverEnv;
    this.#runner = runner;
  }

  /** The repository of a project from git (undefined for a stack file on this server). */
  of(project: ProjectEntry): GitRepository | undefined {
    const repo = project.repo;
    if (!repo) return undefined;
    const key = `${repo.url}\0${repo.tokenEnv ?? ''}`;
    let found = this.#repositories.get(key);
    if (!found) {
      found = new GitRepository({
        url: repo.url,
        dir: join(this.#root, repositoryFolder(key)),
        git: this.#runner(gitEnvironment(this.#serverEnv, repo.tokenEnv)),
      });
      this.#repositories.set(key, found);
    }
    return found;
  }

  /** At start: remove the working trees a stopped server left. */
  async removeStaleTrees(projects: readonly ProjectEntry[]): Promise<void> {
    for (const project of projects) await this.of(project)?.removeStaleTrees();
  }
}
