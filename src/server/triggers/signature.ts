/**
 * How a webhook delivery proves it comes from the repository's host: GitHub signs the raw body with the shared secret
 * (`X-Hub-Signature-256: sha256=<hex HMAC-SHA256>`), GitLab sends the secret token itself (`X-Gitlab-Token`). Both
 * are compared in constant time; the secret is never printed or returned.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Whether `header` is GitHub's signature of exactly these bytes with `secret`. */
export function githubSignatureValid(secret: string, body: Buffer, header: string | undefined): boolean {
  if (header === undefined) return false;
  const m = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!m?.[1]) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(m[1], 'hex'));
}

/** Whether `header` is GitLab's token `secret` (compared as digests, so lengths tell nothing either). */
export function gitlabTokenValid(secret: string, header: string | undefined): boolean {
  if (header === undefined) return false;
  const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(secret), digest(header));
}
