/**
 * Polling (`poll_seconds`): every interval the branch of each such project is fetched, and when it moved since the
 * last poll, the runs of a push are queued (`trigger.kind: poll`). The first poll only records where the branch is.
 * Instances sharing a backend share the claims: one poll per project per interval, whichever instance takes it. A
 * project has one poll in flight at the most; a failed fetch is said on stderr (without credentials) and tried again
 * at the next interval.
 */
import { redactCredentials } from '../../diagnostics/redact.js';
import type { ProjectEntry } from '../config.js';
import { queueRuns, type TriggerDeps } from './queue-runs.js';
import type { TriggerStore } from './trigger-store.js';

/** How long a claimed poll is held before another instance may take it (its fetch hung, its instance died). */
const HOLD_SECONDS = 180;
/** How long one poll's fetch may take. */
const POLL_FETCH_MS = 120_000;

export interface PollerOptions extends TriggerDeps {
  readonly triggers: TriggerStore;
  readonly say: (text: string) => void;
}

export class Poller {
  readonly #options: PollerOptions;
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #inFlight = new Map<string, Promise<void>>();
  readonly #stopping = new AbortController();

  constructor(options: PollerOptions) {
    this.#options = options;
  }

  /** Start polling each project that has `poll_seconds` (and a repository). */
  start(): void {
    for (const project of this.#options.projects.list()) {
      if (project.repo && project.pollSeconds !== undefined) this.#schedule(project, 0);
    }
  }

  /** Stop: no new poll starts; the ones in flight are aborted and awaited. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    await Promise.all(this.#inFlight.values());
  }

  #schedule(project: ProjectEntry, delayMs: number): void {
    if (this.#stopping.signal.aborted) return;
    const timer = setTimeout(() => {
      this.#timers.delete(project.name);
      const poll = this.#poll(project).finally(() => {
        this.#inFlight.delete(project.name);
        this.#schedule(project, project.pollSeconds! * 1000);
      });
      this.#inFlight.set(project.name, poll);
    }, delayMs);
    timer.unref();
    this.#timers.set(project.name, timer);
  }

  async #poll(project: ProjectEntry): Promise<void> {
    const { triggers, say } = this.#options;
    const interval = project.pollSeconds!;
    try {
      const claim = await triggers.claimPoll(project.name, interval, Math.max(interval, HOLD_SECONDS));
      if (!claim) return;
      let sha: string | undefined;
      try {
        const signal = AbortSignal.any([this.#stopping.signal, AbortSignal.timeout(POLL_FETCH_MS)]);
        const head = await this.#options.projects.resolve(project.name, undefined, signal);
        if (claim.lastSha !== null && claim.lastSha !== head.sha) {
          const branch = head.ref;
          const queued = await queueRuns(
            this.#options,
            project,
            {
              kind: 'poll',
              ref: `refs/heads/${branch}`,
              sha: head.sha,
              shownRef: branch,
              delivery: null,
              createdBy: 'poll',
            },
            signal,
          );
          for (const refused of queued.refused)
            say(`kapps serve: polling ${project.name}: ${refused.stack} not queued: ${refused.reason}`);
        }
        // Recorded once its runs are queued: a poll that failed before sees the change again next time.
        sha = head.sha;
      } finally {
        await triggers.finishPoll(project.name, sha, interval);
      }
    } catch (error) {
      if (this.#stopping.signal.aborted) return;
      const message = error instanceof Error ? error.message : String(error);
      say(`kapps serve: polling ${project.name} failed (tried again in ${interval} s): ${redactCredentials(message)}`);
    }
  }
}
