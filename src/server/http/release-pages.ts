/**
 * The release history by pages (`GET …/releases?limit=N&cursor=C`), newest first, without reading every record:
 * the newest revision (the one seen last time, and any created since), then the revisions below it one by one. A
 * finished release never changes, so its summary is kept (per server, bounded) and a page of them costs no read; a
 * running one is read again each time.
 */
import { releaseListEntries, type ReleaseListEntry } from '../../release/history.js';
import type { ReleaseStore } from '../../release/store-types.js';
import { isRunningPhase, summarise, type ReleaseSummary } from '../../release/types.js';

/** How many finished releases' summaries a server keeps (the oldest kept go first). */
const KEPT = 20_000;

export interface ReleasePage {
  releases: ReleaseListEntry[];
  nextCursor: string | null;
}

export class ReleasePages {
  readonly #kept = new Map<string, ReleaseSummary>();
  /** (project, stack) → the newest revision seen. */
  readonly #top = new Map<string, number>();

  constructor(private readonly store: ReleaseStore) {}

  /** Up to `limit` releases of (project, stack) below revision `before` (all when null), newest first. */
  async page(project: string, stack: string, limit: number, before: number | null): Promise<ReleasePage> {
    // A cursor above the newest revision starts at the newest: nothing is read for revisions that do not exist.
    const newest = await this.#newest(project, stack);
    let revision = before === null ? newest : Math.min(before - 1, newest);
    const out: ReleaseSummary[] = [];
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

  /**
   * The newest revision: the one seen last time, then any created since (read once each, revision by revision:
   * revisions only grow), or the store's latest the first time.
   */
  async #newest(project: string, stack: string): Promise<number> {
    const k = JSON.stringify([project, stack]);
    let top = this.#top.get(k);
    if (top === undefined) {
      const newest = await this.store.latest(project, stack);
      if (!newest) return 0;
      this.#keep(summarise(newest));
      top = newest.revision;
    }
    for (;;) {
      const next = await this.store.get(project, stack, top + 1);
      if (!next) break;
      this.#keep(summarise(next));
      top = next.revision;
    }
    if (!this.#top.has(k) && this.#top.size >= KEPT) this.#top.delete(this.#top.keys().next().value!);
    this.#top.set(k, top);
    return top;
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
