/**
 * The drift schedule (`drift:`): each stack of a project with a drift policy (its `stacks`, else the stacks of its
 * stack file — at the head of its branch for a project from git) is checked every `everySeconds` by a `drift` run
 * (`createdBy: schedule`, trigger `schedule`). The first check of a stack comes a stable share of the interval after
 * it is first seen (a hash of project and stack), so stacks do not all start at once. The drift store hands each due
 * check to one instance (with PostgreSQL by the database's clock), so with several instances each check runs once. A
 * check is skipped while a drift run of the stack is queued or running. Stops cleanly: no check starts after `stop`.
 */
import { createHash } from 'node:crypto';
import { redactCredentials } from '../../diagnostics/redact.js';
import type { RunCommit, RunTrigger } from '../../api/index.js';
import type { ServerLimits } from '../config.js';
import type { ProjectRegistry } from '../projects.js';
import type { RunStore } from '../queue/run-store.js';
import { runCommit } from '../sources/repository.js';
import type { DriftStore, ScheduledStack, StackKey } from './drift-store.js';

/** How often due checks are looked for. */
const TICK_MS = 1000;
/** How often the stacks of each project are listed again (a stack file, or a branch, may have changed). */
const LIST_EVERY_MS = 60_000;

/** What started a scheduled drift run. */
export const SCHEDULE_TRIGGER: RunTrigger = { kind: 'schedule', delivery: null, ref: null };

/** Where in its interval a stack's first check comes: a stable share of the interval, by project and stack. */
export function offsetSeconds(project: string, stack: string, everySeconds: number): number {
  const hash = createHash('sha256').update(`${project}/${stack}`).digest();
  return hash.readUInt32BE(0) % Math.max(1, everySeconds);
}

export interface DriftSchedulerOptions {
  readonly projects: ProjectRegistry;
  readonly store: RunStore;
  readonly drift: DriftStore;
  readonly limits: ServerLimits;
  readonly say: (text: string) => void;
}

export class DriftScheduler {
  readonly #o: DriftSchedulerOptions;
  readonly #stopping = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> | undefined;
  #stacks: ScheduledStack[] = [];
  #listedAt = 0;
  /** What failed and was said, until it works again (said once per outage, not per tick). */
  #failing = false;

  constructor(options: DriftSchedulerOptions) {
    this.#o = options;
  }

  /** Start, when a project has a drift policy. */
  start(): void {
    if (!this.#o.projects.list().some((p) => p.drift)) return;
    this.#next(0);
  }

  /** Stop: no check is queued after this resolves. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    if (this.#timer) clearTimeout(this.#timer);
    await this.#tick;
  }

  #next(delayMs: number): void {
    if (this.#stopping.signal.aborted) return;
    this.#timer = setTimeout(() => {
      this.#tick = this.#once().finally(() => this.#next(TICK_MS));
    }, delayMs);
    this.#timer.unref();
  }

  async #once(): Promise<void> {
    try {
      if (Date.now() - this.#listedAt >= LIST_EVERY_MS) {
        this.#stacks = await this.#scheduledStacks();
        await this.#o.drift.schedule(this.#stacks);
        this.#listedAt = Date.now();
      }
      if (this.#stopping.signal.aborted) return;
      for (const due of await this.#o.drift.claimDue(this.#stacks)) {
        if (this.#stopping.signal.aborted) return;
        await this.#check(due);
      }
      this.#failing = false;
    } catch (error) {
      if (!this.#failing)
        this.#o.say(`kapps serve: drift schedule: ${redactCredentials((error as Error).message)} (tried again)`);
      this.#failing = true;
    }
  }

  /** Every scheduled stack of every project with a drift policy. */
  async #scheduledStacks(): Promise<ScheduledStack[]> {
    const out: ScheduledStack[] = [];
    for (const project of this.#o.projects.list()) {
      const policy = project.drift;
      if (!policy) continue;
      const stacks = policy.stacks ?? (await this.#o.projects.stacks(project.name));
      for (const stack of stacks) {
        out.push({
          project: project.name,
          stack,
          everySeconds: policy.everySeconds,
          offsetSeconds: offsetSeconds(project.name, stack, policy.everySeconds),
        });
      }
    }
    return out;
  }

  /** Queue the drift run of a due stack, unless one is queued or running. */
  async #check({ project, stack }: StackKey): Promise<void> {
    const { store, limits, say } = this.#o;
    const active = await store.active(project, stack);
    if (active.some((r) => r.type === 'drift')) return;
    let commit: RunCommit | undefined;
    const entry = this.#o.projects.get(project);
    if (!entry) return;
    if (entry.repo) {
      try {
        const head = await this.#o.projects.resolve(project, undefined, this.#stopping.signal);
        commit = runCommit(entry.repo.url, head);
      } catch (error) {
        say(
          `kapps serve: drift check of ${project}/${stack} not queued: ${redactCredentials((error as Error).message)}`,
        );
        return;
      }
    }
    const outcome = await store.submit(
      {
        type: 'drift',
        project,
        stack,
        createdBy: 'schedule',
        options: {},
        ...(commit ? { commit } : {}),
        trigger: SCHEDULE_TRIGGER,
      },
      { maxQueuedPerStack: limits.maxQueuedPerStack, maxQueuedTotal: limits.maxQueuedTotal },
    );
    if (outcome.kind === 'full') say(`kapps serve: drift check of ${project}/${stack} not queued: the queue is full`);
  }
}
