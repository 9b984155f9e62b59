/**
 * The release history by pages (`GET …/releases?limit=N&cursor=C`), newest first, without reading every record:
 * the newest release, then the revisions below it one by one. A finished release never changes, so its summary is
 * kept (per server, bounded) and a page of them costs no read; a running one is read again each time.
 */
import { releaseListEntries, type ReleaseListEntry } from '../release/history.js';
import type { ReleaseStore } from '../release/store-types.js';
import { isRunningPhase, summarise, type ReleaseSummary } from '../release/types.js';

/** How many finished releases' summaries a server keeps (the oldest kept go first). */
const KEPT = 20_000;

export interface ReleasePage {
  releases: ReleaseListEntry[];
  nextCursor: string | null;
}

export class ReleasePages {
  readonly #kept = new Map<string, ReleaseSummary>();

  constructor(private readonly store: ReleaseStore) {}

  /** Up to `limit` releases of (project, stack) below revision `before` (all when null), newest first. */
  async page(project: string, stack: string, limit: number, before: number | null): Promise<ReleasePage> {
    let top: number;
    const out: ReleaseSummary[] = [];
    if (before === null) {
      const newest = await this.store.latest(project, stack);
      if (!newest) return { releases: [], nextCursor: null };
      out.push(this.#keep(summarise(newest)));
      top = newest.revision - 1;
    } else top = before - 1;
    let revision = top;
    for (; revision >= 1 && out.length < limit; revision--) {
      const summary = await this.#summary(project, stack, revision);
      if (summary) out.push(summary);
    }
    const last = out.at(-1);
    return {
      releases: releaseListEntries(out),
      nextCursor: last && revision >= 1 ? String(last.revision) : null,
    };
  }

  async #summary(project: string, stack: string, revision: number): Promise<ReleaseSummary | undefined> {
    const kept = this.#kept.get(key(project, stack, revision));
    if (kept) return kept;
    const release = await this.store.get(project, stack, revision);
    return release ? this.#keep(summarise(release)) : undefined;
  }

  #keep(summary: ReleaseSummary): ReleaseSummary {
    if (isRunningPhase(summary.phase)) return summary;
    const k = key(summary.project, summary.stack, summary.revision);
    if (!this.#kept.has(k)) {
      if (this.#kept.size >= KEPT) this.#kept.delete(this.#kept.keys().next().value!);
      this.#kept.set(k, summary);
    }
    return summary;
  }
}

function key(project: string, stack: string, revision: number): string {
  return JSON.stringify([project, stack, revision]);
}
