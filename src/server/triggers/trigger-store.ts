/**
 * What webhooks and polling remember, shared by every instance of a backend: the delivery ids already acted on
 * (bounded: the newest `MAX_DELIVERIES`, none older than `KEEP_DELIVERY_DAYS`) and, per project, when it is next
 * polled and where its branch was at the last poll. A file backend keeps them in its instance's data directory
 * (one instance holds it); PostgreSQL in the tables of migration 0008, so several instances share them.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { appendFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KappsError } from '../../diagnostics/errors.js';

/** Delivery ids kept at the most, and for how long. */
export const MAX_DELIVERIES = 100_000;
export const KEEP_DELIVERY_DAYS = 30;
const DAY_MS = 86_400_000;

/** A claimed poll: where the branch was at the last poll (null: never polled). */
export interface PollClaim {
  readonly lastSha: string | null;
}

export interface TriggerStore {
  /** Record delivery `id`; false when it was recorded before (nothing is to be done). */
  claimDelivery(id: string): Promise<boolean>;
  /** Forget delivery `id` (acting on it failed: a redelivery may try again). */
  forgetDelivery(id: string): Promise<void>;
  /**
   * Take the poll of `project` when it is due (no instance took it in the last `intervalSeconds`): its last SHA, or
   * undefined when it is not due. The claim is held for `holdSeconds` (at least the interval) until `finishPoll`.
   */
  claimPoll(project: string, intervalSeconds: number, holdSeconds: number): Promise<PollClaim | undefined>;
  /** The poll is done: the branch is at `sha` (unchanged when undefined), the next poll in `intervalSeconds`. */
  finishPoll(project: string, sha: string | undefined, intervalSeconds: number): Promise<void>;
  close(): Promise<void>;
}

/** A failure of the trigger store; `unavailable`: the backend is down for now (a 503). */
export class TriggerStoreError extends KappsError {
  readonly unavailable: boolean;
  constructor(message: string, unavailable = false) {
    super(message);
    this.unavailable = unavailable;
  }
}

type Polls = Record<string, { nextAt: number; lastSha: string | null }>;

/** The file backend's: `<data-dir>/triggers/deliveries.ndjson` (appended, compacted) and `polls.json`. */
export class FileTriggerStore implements TriggerStore {
  readonly #deliveriesFile: string;
  readonly #pollsFile: string;
  /** id → when it was received (ms), oldest first. */
  readonly #deliveries = new Map<string, number>();
  readonly #polls: Polls;
  #lines = 0;
  #chain: Promise<unknown> = Promise.resolve();

  constructor(dataDir: string) {
    const dir = join(dataDir, 'triggers');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.#deliveriesFile = join(dir, 'deliveries.ndjson');
    this.#pollsFile = join(dir, 'polls.json');
    if (existsSync(this.#deliveriesFile)) {
      for (const line of readFileSync(this.#deliveriesFile, 'utf8').split('\n')) {
        this.#lines++;
        try {
          const entry = JSON.parse(line) as { id?: unknown; at?: unknown; forget?: unknown };
          if (typeof entry.id !== 'string') continue;
          this.#deliveries.delete(entry.id);
          if (entry.forget !== true && typeof entry.at === 'number') this.#deliveries.set(entry.id, entry.at);
        } catch {
          // A line cut short by a crash: skipped.
        }
      }
    }
    let polls: Polls = {};
    try {
      polls = JSON.parse(readFileSync(this.#pollsFile, 'utf8')) as Polls;
    } catch {
      // None yet.
    }
    this.#polls = Object.assign(Object.create(null) as Polls, polls);
  }

  claimDelivery(id: string): Promise<boolean> {
    return this.#serial(async () => {
      if (this.#deliveries.has(id)) return false;
      const at = Date.now();
      this.#deliveries.set(id, at);
      await this.#append({ id, at });
      return true;
    });
  }

  forgetDelivery(id: string): Promise<void> {
    return this.#serial(async () => {
      if (!this.#deliveries.delete(id)) return;
      await this.#append({ id, forget: true });
    });
  }

  claimPoll(project: string, _intervalSeconds: number, holdSeconds: number): Promise<PollClaim | undefined> {
    return this.#serial(() => {
      const now = Date.now();
      const poll = this.#polls[project] ?? { nextAt: 0, lastSha: null };
      if (poll.nextAt > now) return Promise.resolve(undefined);
      this.#polls[project] = { ...poll, nextAt: now + holdSeconds * 1000 };
      return Promise.resolve({ lastSha: poll.lastSha });
    });
  }

  finishPoll(project: string, sha: string | undefined, intervalSeconds: number): Promise<void> {
    return this.#serial(async () => {
      const poll = this.#polls[project] ?? { nextAt: 0, lastSha: null };
      this.#polls[project] = { nextAt: Date.now() + intervalSeconds * 1000, lastSha: sha ?? poll.lastSha };
      const temp = `${this.#pollsFile}.tmp`;
      await writeFile(temp, JSON.stringify(this.#polls), { mode: 0o600 });
      await rename(temp, this.#pollsFile);
    });
  }

  close(): Promise<void> {
    return this.#serial(() => Promise.resolve());
  }

  /** Append one line; past twice the bound, rewrite the file with what is kept (the newest, the recent). */
  async #append(entry: object): Promise<void> {
    this.#prune();
    if (this.#lines >= 2 * MAX_DELIVERIES) {
      const temp = `${this.#deliveriesFile}.tmp`;
      const kept = [...this.#deliveries].map(([id, at]) => JSON.stringify({ id, at }));
      await writeFile(temp, kept.length ? `${kept.join('\n')}\n` : '', { mode: 0o600 });
      await rename(temp, this.#deliveriesFile);
      this.#lines = kept.length;
      if ('forget' in entry) return;
    }
    await appendFile(this.#deliveriesFile, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
    this.#lines++;
  }

  #prune(): void {
    const oldest = Date.now() - KEEP_DELIVERY_DAYS * DAY_MS;
    for (const [id, at] of this.#deliveries) {
      if (this.#deliveries.size <= MAX_DELIVERIES && at >= oldest) break;
      this.#deliveries.delete(id);
    }
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(work, work);
    this.#chain = next.catch(() => undefined);
    return next;
  }
}

/** Open the trigger store of a backend. */
export async function openTriggerStore(
  spec: { kind: 'file' } | { kind: 'postgres'; url: string },
  dataDir: string,
): Promise<TriggerStore> {
  if (spec.kind === 'file') return new FileTriggerStore(dataDir);
  const { PgTriggerStore } = await import('./pg-trigger-store.js');
  return new PgTriggerStore(spec.url);
}
