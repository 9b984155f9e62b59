/**
 * What a webhook delivery says, read from GitHub's and GitLab's JSON: a push to a branch or a pull (merge) request
 * opened or updated, the repository's URLs, and the commit. Everything else kapps does not act on is `ignored` with
 * the reason; a body that is not the event it claims to be is a `MalformedPayload` (a 400).
 */

/** A push or a pull request kapps may act on. */
export interface TriggerEvent {
  readonly kind: 'push' | 'pull_request';
  /** `refs/heads/main`, or the pull request's head ref (`refs/pull/7/head`, `refs/merge-requests/7/head`). */
  readonly ref: string;
  /** The commit pushed, or the pull request's head. */
  readonly sha: string;
  /** For a push: the branch pushed to (`main`). */
  readonly branch?: string;
  /** The repository's default branch, when the payload names it. */
  readonly defaultBranch?: string;
  /** The repository's URLs as the payload gives them (clone, ssh, web). */
  readonly urls: readonly string[];
}

export type ParsedDelivery =
  { readonly kind: 'event'; readonly event: TriggerEvent } | { readonly kind: 'ignored'; readonly reason: string };

/** A payload that is not what its event header says (a 400 naming the field). */
export class MalformedPayload extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

const SHA = /^[0-9a-f]{40}$/;
const ZERO_SHA = /^0{40}$/;
const PR_ACTIONS = new Set(['opened', 'synchronize', 'reopened']);
const MR_ACTIONS = new Set(['open', 'update', 'reopen']);

type Json = Record<string, unknown>;

function object(value: unknown, field: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new MalformedPayload(field, `\`${field}\` is not an object`);
  return value as Json;
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') throw new MalformedPayload(field, `\`${field}\` is not a string`);
  return value;
}

function optionalText(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function sha(value: unknown, field: string): string {
  const s = text(value, field);
  if (!SHA.test(s)) throw new MalformedPayload(field, `\`${field}\` is not a commit SHA`);
  return s;
}

function urls(repo: Json, keys: readonly string[]): string[] {
  return keys.map((k) => optionalText(repo[k])).filter((u): u is string => u !== undefined);
}

function pushEvent(body: Json, repo: Json, keys: readonly string[], shaField: string): ParsedDelivery {
  const ref = text(body.ref, 'ref');
  const after = body[shaField];
  if (body.deleted === true || after === null || (typeof after === 'string' && ZERO_SHA.test(after)))
    return { kind: 'ignored', reason: `${ref} was deleted` };
  if (!ref.startsWith('refs/heads/')) return { kind: 'ignored', reason: `${ref} is not a branch` };
  const defaultBranch = optionalText(repo.default_branch);
  return {
    kind: 'event',
    event: {
      kind: 'push',
      ref,
      sha: sha(after, shaField),
      branch: ref.slice('refs/heads/'.length),
      ...(defaultBranch !== undefined ? { defaultBranch } : {}),
      urls: urls(repo, keys),
    },
  };
}

const GITHUB_URLS = ['clone_url', 'ssh_url', 'git_url', 'html_url'] as const;
const GITLAB_URLS = ['git_http_url', 'git_ssh_url', 'web_url'] as const;

/** A GitHub delivery of event `event` (`X-GitHub-Event`). */
export function parseGithub(event: string, payload: unknown): ParsedDelivery {
  if (event === 'ping') return { kind: 'ignored', reason: 'a ping: the webhook reaches this server' };
  if (event !== 'push' && event !== 'pull_request')
    return { kind: 'ignored', reason: `kapps does not act on \`${event}\` events (only push and pull_request)` };
  const body = object(payload, 'body');
  const repo = object(body.repository, 'repository');
  if (event === 'push') return pushEvent(body, repo, GITHUB_URLS, 'after');
  const action = text(body.action, 'action');
  if (!PR_ACTIONS.has(action))
    return { kind: 'ignored', reason: `a pull request ${action}: kapps acts on opened, synchronize and reopened` };
  const pr = object(body.pull_request, 'pull_request');
  const number = pr.number ?? body.number;
  if (typeof number !== 'number' || !Number.isSafeInteger(number) || number < 1)
    throw new MalformedPayload('pull_request.number', '`pull_request.number` is not a positive integer');
  const head = object(pr.head, 'pull_request.head');
  const defaultBranch = optionalText(repo.default_branch);
  return {
    kind: 'event',
    event: {
      kind: 'pull_request',
      ref: `refs/pull/${number}/head`,
      sha: sha(head.sha, 'pull_request.head.sha'),
      ...(defaultBranch !== undefined ? { defaultBranch } : {}),
      urls: urls(repo, GITHUB_URLS),
    },
  };
}

/** A GitLab delivery of event `event` (`X-Gitlab-Event`). */
export function parseGitlab(event: string, payload: unknown): ParsedDelivery {
  if (event !== 'Push Hook' && event !== 'Merge Request Hook')
    return {
      kind: 'ignored',
      reason: `kapps does not act on \`${event}\` events (only Push Hook and Merge Request Hook)`,
    };
  const body = object(payload, 'body');
  const repo = object(body.project, 'project');
  if (event === 'Push Hook') {
    const checkout = body.checkout_sha;
    return pushEvent(body, repo, GITLAB_URLS, checkout === undefined ? 'after' : 'checkout_sha');
  }
  const attributes = object(body.object_attributes, 'object_attributes');
  const action = text(attributes.action, 'object_attributes.action');
  if (!MR_ACTIONS.has(action))
    return { kind: 'ignored', reason: `a merge request ${action}: kapps acts on open, update and reopen` };
  const iid = attributes.iid;
  if (typeof iid !== 'number' || !Number.isSafeInteger(iid) || iid < 1)
    throw new MalformedPayload('object_attributes.iid', '`object_attributes.iid` is not a positive integer');
  const last = object(attributes.last_commit, 'object_attributes.last_commit');
  const defaultBranch = optionalText(repo.default_branch);
  return {
    kind: 'event',
    event: {
      kind: 'pull_request',
      ref: `refs/merge-requests/${iid}/head`,
      sha: sha(last.id, 'object_attributes.last_commit.id'),
      ...(defaultBranch !== undefined ? { defaultBranch } : {}),
      urls: urls(repo, GITLAB_URLS),
    },
  };
}

/**
 * A repository URL as compared: scheme and host in lower case, no credentials, no trailing `/` or `.git`; scp-like
 * `git@host:org/repo` as `ssh://host/org/repo`.
 */
export function normaliseRepoUrl(url: string): string {
  const trimmed = url.trim();
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/)(.*)$/.exec(trimmed);
  let out: string;
  if (scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) out = `ssh://${scp[1]!.toLowerCase()}/${scp[2]!}`;
  else {
    const m = /^([a-z][a-z0-9+.-]*):\/\/(?:[^@/]*@)?([^/]*)(.*)$/i.exec(trimmed);
    out = m ? `${m[1]!.toLowerCase()}://${m[2]!.toLowerCase()}${m[3]!}` : trimmed;
  }
  for (;;) {
    const next = out.replace(/\/+$/, '').replace(/\.git$/, '');
    if (next === out) return out;
    out = next;
  }
}
