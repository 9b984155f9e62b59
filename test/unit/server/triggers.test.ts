/** The pure parts of webhooks: signatures, tokens, payloads and how repository URLs are compared. */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MalformedPayload, normaliseRepoUrl, parseGithub, parseGitlab } from '../../../src/server/triggers/payload.js';
import { githubSignatureValid, gitlabTokenValid } from '../../../src/server/triggers/signature.js';

const SHA = 'a'.repeat(40);

describe('webhook signatures', () => {
  const body = Buffer.from('{"ref": "refs/heads/main"}');
  const signature = `sha256=${createHmac('sha256', 'secret').update(body).digest('hex')}`;

  it('takes the HMAC of the exact bytes, and nothing else', () => {
    expect(githubSignatureValid('secret', body, signature)).toBe(true);
    expect(githubSignatureValid('secret', body, signature.toUpperCase().replace('SHA256', 'sha256'))).toBe(true);
    expect(githubSignatureValid('secret', Buffer.from('{"ref":"refs/heads/main"}'), signature)).toBe(false);
    expect(githubSignatureValid('other', body, signature)).toBe(false);
    expect(githubSignatureValid('secret', body, signature.replace('sha256=', 'sha1='))).toBe(false);
    expect(githubSignatureValid('secret', body, 'sha256=abc')).toBe(false);
    expect(githubSignatureValid('secret', body, undefined)).toBe(false);
  });

  it("compares GitLab's token whole", () => {
    expect(gitlabTokenValid('secret', 'secret')).toBe(true);
    expect(gitlabTokenValid('secret', 'secre')).toBe(false);
    expect(gitlabTokenValid('secret', 'secret ')).toBe(false);
    expect(gitlabTokenValid('secret', undefined)).toBe(false);
  });
});

describe('webhook payloads', () => {
  it('reads a push, ignores a deleted branch and a tag, refuses a push without a commit', () => {
    const repository = { clone_url: 'https://github.com/acme/infra.git', default_branch: 'main' };
    expect(parseGithub('push', { ref: 'refs/heads/main', after: SHA, repository })).toEqual({
      kind: 'event',
      event: {
        kind: 'push',
        ref: 'refs/heads/main',
        sha: SHA,
        branch: 'main',
        defaultBranch: 'main',
        urls: ['https://github.com/acme/infra.git'],
      },
    });
    expect(parseGithub('push', { ref: 'refs/heads/main', after: '0'.repeat(40), deleted: true, repository }).kind).toBe(
      'ignored',
    );
    expect(parseGithub('push', { ref: 'refs/tags/v1', after: SHA, repository })).toMatchObject({ kind: 'ignored' });
    expect(() => parseGithub('push', { ref: 'refs/heads/main', after: 'HEAD', repository })).toThrow(MalformedPayload);
    expect(() => parseGithub('push', [])).toThrow(MalformedPayload);
    expect(parseGithub('issues', {})).toMatchObject({ kind: 'ignored' });
  });

  it("reads a merge request's head and ref", () => {
    const parsed = parseGitlab('Merge Request Hook', {
      project: { git_http_url: 'https://gitlab.com/acme/infra.git' },
      object_attributes: { action: 'update', iid: 12, last_commit: { id: SHA } },
    });
    expect(parsed).toMatchObject({
      kind: 'event',
      event: { kind: 'pull_request', ref: 'refs/merge-requests/12/head', sha: SHA },
    });
    expect(
      parseGitlab('Merge Request Hook', {
        project: {},
        object_attributes: { action: 'merge', iid: 12, last_commit: { id: SHA } },
      }),
    ).toMatchObject({ kind: 'ignored' });
  });
});

describe('repository URLs as compared', () => {
  it('ignores credentials, scheme and host case, a trailing slash and .git', () => {
    const same = [
      'https://github.com/acme/infra.git',
      'HTTPS://GitHub.com/acme/infra',
      'https://x-access-token:abc@github.com/acme/infra.git/',
    ];
    expect(new Set(same.map(normaliseRepoUrl))).toEqual(new Set(['https://github.com/acme/infra']));
    expect(normaliseRepoUrl('git@github.com:acme/infra.git')).toBe(normaliseRepoUrl('ssh://git@github.com/acme/infra'));
    expect(normaliseRepoUrl('https://github.com/acme/Infra')).not.toBe(
      normaliseRepoUrl('https://github.com/acme/infra'),
    );
    expect(normaliseRepoUrl('https://github.com/acme/infra')).not.toBe(
      normaliseRepoUrl('https://github.com/acme/infra2'),
    );
  });
});
