/**
 * Where a run or release comes from, for a project from git: the commit (short SHA, the full one in its title), its
 * subject, what started the run, and the repository. A project from a stack file on the server shows none of this.
 */
import type { ProjectList, RunCommit, RunTrigger } from '../../src/api/index';

export type ProjectRepo = NonNullable<ProjectList['projects'][number]['repo']>;

const SHORT = 10;

export function shortSha(sha: string): string {
  return sha.slice(0, SHORT);
}

/** The short SHA in `<code>`, the full SHA in its title; a link when `href` is given. */
export function Sha(props: { sha: string; href?: string; label?: string }) {
  const code = (
    <code class="sha" title={props.sha}>
      {shortSha(props.sha)}
    </code>
  );
  return props.href ? (
    <a href={props.href} title={props.sha} aria-label={props.label ?? `commit ${props.sha}`}>
      {code}
    </a>
  ) : (
    code
  );
}

/** `push of refs/heads/main`, `api`, `poll of main`…: what started a run. */
export function triggerText(trigger: RunTrigger): string {
  const kind = trigger.kind === 'pull_request' ? 'pull request' : trigger.kind;
  return trigger.ref ? `${kind}, ${trigger.ref}` : kind;
}

/** One line of a run list: short SHA (a link to the run), subject, trigger. Nothing without a commit. */
export function RunCommitLine(props: { commit: RunCommit | null; trigger: RunTrigger; runHref: string }) {
  const { commit } = props;
  if (!commit) return null;
  return (
    <span class="commit-line" data-testid="run-commit">
      <Sha sha={commit.sha} href={props.runHref} label={`run at commit ${commit.sha}`} />{' '}
      <span class="subject">{commit.subject}</span>{' '}
      <span class="trigger" data-testid="run-trigger">
        ({triggerText(props.trigger)})
      </span>
    </span>
  );
}

/** A run's commit and trigger as `<dt>`/`<dd>` pairs of a facts list; nothing without a commit. */
export function RunCommitFacts(props: { commit: RunCommit | null; trigger: RunTrigger }) {
  const { commit, trigger } = props;
  if (!commit) return null;
  return (
    <>
      <dt>Commit</dt>
      <dd data-testid="run-commit">
        <Sha sha={commit.sha} /> <span class="subject">{commit.subject}</span>
        <span class="commit-meta">
          {' '}
          — {commit.author}, from {commit.ref}
        </span>
      </dd>
      <dt>Repository</dt>
      <dd>
        <code>{commit.repo}</code>
      </dd>
      <dt>Started by</dt>
      <dd data-testid="run-trigger">{triggerText(trigger)}</dd>
    </>
  );
}

/**
 * A release's source: short SHA and repository (and the stack file's path in it), and whether its checkout had local
 * changes (then its commit alone does not reproduce it); nothing when the release has none.
 */
export function ReleaseSource(props: {
  source: { repo: string; commit: string; dirty?: boolean; path?: string } | undefined;
}) {
  const { source } = props;
  if (!source) return null;
  return (
    <span class="commit-line" data-testid="release-source">
      <Sha sha={source.commit} /> <code class="repo">{source.repo}</code>
      {source.path && (
        <>
          {' '}
          <code class="path">{source.path}</code>
        </>
      )}
      {source.dirty && <strong class="dirty"> with local changes not committed</strong>}
    </span>
  );
}

/** A project's repository, its branch and the newest commit of it the server knows (`repo.head`). */
export function ProjectRepoLine(props: { repo: ProjectRepo }) {
  const { repo } = props;
  return (
    <span class="commit-line" data-testid="project-repo">
      <code class="repo">{repo.url}</code> {repo.branch ?? 'default branch'}
      {repo.head ? (
        <>
          {' '}
          at <Sha sha={repo.head.sha} /> <span class="subject">{repo.head.subject}</span>
        </>
      ) : (
        ' (not fetched yet)'
      )}
    </span>
  );
}
