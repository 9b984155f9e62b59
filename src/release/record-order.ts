/**
 * The field order of a stored release: identity and phase first, then times, owner and command, then the state
 * and finally the (large) spec, so the top of a release file or `kapps release show` answers "what, when, who".
 * Fields this version does not know are kept, after the known ones.
 */
import type { KappState, Release } from './types.js';

const RELEASE_KEYS = [
  'project',
  'stack',
  'revision',
  'operation',
  'phase',
  'createdAt',
  'modifiedAt',
  'finishedAt',
  'heartbeatAt',
  'owner',
  'command',
  'selectors',
  'kappsVersion',
  'unlocked',
  'source',
  'rollbackOf',
  'approvals',
  'breakGlass',
  'error',
  'state',
  'spec',
] as const;

const KAPP_STATE_KEYS = [
  'status',
  'error',
  'specDigest',
  'specFormat',
  'revision',
  'updatedAt',
  'outputs',
  'steps',
] as const;

/** A copy of a state entry with its fields in the stored order. */
export function orderKappState(entry: KappState): KappState {
  return orderKeys(entry, KAPP_STATE_KEYS);
}

/** A copy of the release with its fields (and each state entry's fields) in the stored order. */
export function orderRelease(release: Release): Release {
  const state: Record<string, KappState> = {};
  for (const [id, entry] of Object.entries(release.state)) state[id] = orderKeys(entry, KAPP_STATE_KEYS);
  return orderKeys({ ...release, state }, RELEASE_KEYS);
}

function orderKeys<T extends object>(value: T, keys: readonly string[]): T {
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of keys) if (source[key] !== undefined) out[key] = source[key];
  for (const key of Object.keys(source)) if (!(key in out) && source[key] !== undefined) out[key] = source[key];
  return out as T;
}
