/**
 * The owner of a running release (user, host, pid) and whether it still looks alive. A lock whose owner looks
 * dead is still a lock — kapps never takes it over by itself, since a process on another host or a paused one may
 * come back — but the message says so and tells the user how to unlock it.
 */
import { readFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import type { Release, ReleaseOwner } from './types.js';

/** A heartbeat older than this (milliseconds) makes the owner look dead. */
export const STALE_HEARTBEAT_MS = 60_000;

/** The owner record of this process. */
export function currentOwner(): ReleaseOwner {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry for the uid (common in containers): name it by the number.
    user = `uid ${process.getuid?.() ?? 'unknown'}`;
  }
  return { user, host: hostname(), pid: process.pid };
}

/** Whether a process with this pid runs on this host (a zombie counts as gone). */
export function processIsAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return typeof error === 'object' && error !== null && 'code' in error && error.code === 'EPERM';
  }
  try {
    // `kill(pid, 0)` succeeds for a zombie, which is dead for our purposes. Linux only; elsewhere assume alive.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true;
  }
}

/** How the owner of a running release looks. */
export interface OwnerHealth {
  /** Whether the owner looks dead. */
  looksDead: boolean;
  /** Why, in words, e.g. `process 123 is not running on web-1` or `last heartbeat 10 s ago`. */
  reason: string;
}

/**
 * Judge the owner of `release`: dead when it ran on this host and its pid is gone, or when its heartbeat is older
 * than `STALE_HEARTBEAT_MS`. `now` and `host` are parameters so the judgement can be tested.
 */
export function ownerHealth(
  release: Pick<Release, 'owner' | 'heartbeatAt'>,
  now: Date,
  host: string = hostname(),
  isAlive: (pid: number) => boolean = processIsAlive,
): OwnerHealth {
  const { owner } = release;
  const age = now.getTime() - Date.parse(release.heartbeatAt);
  const ageText = Number.isFinite(age) ? formatAge(Math.max(0, age)) : 'unknown';
  if (owner.host === host && !isAlive(owner.pid)) {
    return { looksDead: true, reason: `process ${owner.pid} is not running on ${host}` };
  }
  if (!Number.isFinite(age) || age > STALE_HEARTBEAT_MS) {
    return { looksDead: true, reason: `its last heartbeat was ${ageText} ago` };
  }
  return { looksDead: false, reason: `its last heartbeat was ${ageText} ago` };
}

/** A duration for messages: `42 s`, `3 min 5 s`, `2 h 10 min`. */
export function formatAge(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** `user@host (pid N)`; a runs server run: `token via user@host (pid N)`. */
export function formatOwner(owner: ReleaseOwner): string {
  const via = owner.machineUser === undefined ? '' : `${owner.machineUser}@`;
  return via
    ? `${owner.user} via ${via}${owner.host} (pid ${owner.pid})`
    : `${owner.user}@${owner.host} (pid ${owner.pid})`;
}

/** The owner of a run made on behalf of `runBy` (a runs server's token name): this process, named after them. */
export function ownerFor(runBy: string | undefined): ReleaseOwner {
  const self = currentOwner();
  return runBy === undefined ? self : { ...self, user: runBy, machineUser: self.user };
}
