/**
 * Kapp outputs as variables (Sugarkube §6.4–§6.5). A kapp's outputs appear under `.outputs.this.<id>`,
 * `.outputs.<kapp>.<id>` and `.outputs.<manifest>__<kapp>.<id>` (hyphens as underscores), and flow down the DAG:
 * fully-qualified keys to every descendant, short keys only along edges inside one manifest, `this` only to the kapp
 * itself. Unlike Sugarkube, a kapp sees only its ancestors' outputs (never those of unrelated kapps that happened to
 * finish earlier), and which short keys survive does not depend on the order parents are visited.
 */
import { newGoMap, type GoMap, type GoValue } from '../go-value/value.js';

/** Registry key of an id: hyphens become underscores. */
export function registryKey(id: string): string {
  return id.replaceAll('-', '_');
}

/** The fully-qualified registry key of a kapp: `<manifest>__<kapp>` with hyphens as underscores. */
export function fqRegistryKey(manifestId: string, kappId: string): string {
  return `${registryKey(manifestId)}__${registryKey(kappId)}`;
}

/** The registry entries a kapp contributes to its own view: `this`, its short key and its fq key. */
export function ownEntries(manifestId: string, kappId: string, values: GoMap): GoMap {
  return newGoMap([
    ['this', values],
    [registryKey(kappId), values],
    [fqRegistryKey(manifestId, kappId), values],
  ]);
}

function hasKeys(m: GoMap): boolean {
  for (const _ in m) return true;
  return false;
}

/** What a kapp passes down to one child: everything but `this`, and only fq keys across a manifest boundary. */
export function entriesForChild(parentView: GoMap, parentManifest: string, childManifest: string): GoMap {
  const out = newGoMap();
  const sameManifest = parentManifest === childManifest;
  for (const key in parentView) {
    if (key === 'this') continue;
    if (!sameManifest && !key.includes('__')) continue;
    out[key] = parentView[key] as GoValue;
  }
  return out;
}

/**
 * The `.outputs` view of a kapp: what its parents pass down (parents in a deterministic order; later parents win on
 * the rare key collision), then its own entries. A kapp with no output values (one that declares no outputs) adds
 * no entries of its own, so views only grow with the kapps that have outputs.
 */
export function outputsView(
  self: { manifestId: string; kappId: string; values?: GoMap },
  parents: readonly { manifestId: string; view: GoMap }[],
): GoMap {
  const view = newGoMap();
  for (const p of parents) Object.assign(view, entriesForChild(p.view, p.manifestId, self.manifestId));
  if (self.values && hasKeys(self.values)) Object.assign(view, ownEntries(self.manifestId, self.kappId, self.values));
  return view;
}

/** For plan mode: every declared output that has no value is an empty map (never nil), so `.outputs.this.x.y` renders `<no value>`. */
export function withPlaceholders(values: GoMap, declaredIds: readonly string[]): GoMap {
  const out = newGoMap();
  for (const id of declaredIds) {
    const key = registryKey(id);
    const v = values[key];
    out[key] = v === undefined || v === null ? newGoMap() : v;
  }
  for (const key in values) if (!(key in out)) out[key] = values[key] as GoValue;
  return out;
}
