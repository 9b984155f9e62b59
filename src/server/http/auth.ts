/**
 * Bearer tokens: each configured token is kept as its SHA-256; a presented token is hashed and compared with every
 * configured one in constant time. Without tokens, everyone is `anonymous` with role `admin` (the server then
 * listens on loopback only).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ROLES, type Role } from '../../api/index.js';
import type { TokenEntry } from '../config.js';
import { projectMatches } from '../queue/run-store.js';

export interface Caller {
  readonly name: string;
  readonly role: Role;
  /** The project patterns its token is limited to (`shop`, `team-*`); every project when undefined. */
  readonly projects?: readonly string[];
}

/** Whether the caller may reach the runs, stacks and releases of `project`. */
export function reaches(caller: Caller, project: string): boolean {
  return caller.projects === undefined || projectMatches(caller.projects, project);
}

export const ANONYMOUS: Caller = { name: 'anonymous', role: 'admin' };

/** Whether `role` includes `needed` (read < plan < apply < admin). */
export function allows(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

export class Authenticator {
  readonly #tokens: readonly TokenEntry[];
  constructor(tokens: readonly TokenEntry[]) {
    this.#tokens = tokens;
  }

  get open(): boolean {
    return this.#tokens.length === 0;
  }

  /** The caller of an `Authorization` header value; undefined when the token is missing or unknown. */
  identify(header: string | undefined): Caller | undefined {
    if (this.open) return ANONYMOUS;
    const match = header === undefined ? null : /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
    if (!match?.[1]) return undefined;
    const digest = createHash('sha256').update(match[1], 'utf8').digest();
    let found: TokenEntry | undefined;
    // Every entry is compared, found or not, so the time taken says nothing about which one matched.
    for (const entry of this.#tokens) {
      if (entry.digest.length === digest.length && timingSafeEqual(entry.digest, digest)) found ??= entry;
    }
    if (!found) return undefined;
    return { name: found.name, role: found.role, ...(found.projects ? { projects: found.projects } : {}) };
  }
}
