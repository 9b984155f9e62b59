/**
 * The outbox in files, beside the file run store (one instance holds the backend directory):
 * `<backend dir>/notifications/<run id>/<n>-<delivery id>.json`, one file per delivery, replaced atomically and
 * durably on every change. The pending deliveries are also kept in memory (read at `open`), with their leases; a
 * run's folder goes when its run is pruned. Writes are made one at a time.
 */
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { NotificationAttempt } from '../../api/index.js';
import { replaceDurably } from '../../log/durable.js';
import { isRunId } from '../queue/policy.js';
import { MAX_DELIVERIES_PER_RUN, type AttemptOutcome, type Delivery, type NewDelivery, type Outbox } from './outbox.js';

interface Held {
  delivery: Delivery;
  file: string;
  instance: string | null;
  leaseUntil: number;
}

export class FileOutbox implements Outbox {
  readonly #dir: string;
  /** The pending deliveries, by id. */
  readonly #pending = new Map<string, Held>();
  /** Writes, one after the other. */
  #chain: Promise<unknown> = Promise.resolve();

  /** `dir`: the folder of the outbox (`<backend dir>/notifications`). */
  constructor(dir: string) {
    this.#dir = dir;
  }

  async open(): Promise<void> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    for (const runId of await this.#runs()) {
      for (const { delivery, file } of await this.#readRun(runId)) {
        if (delivery.state === 'pending')
          this.#pending.set(delivery.id, { delivery, file, instance: null, leaseUntil: 0 });
      }
    }
  }

  async close(): Promise<void> {
    await this.#chain.catch(() => undefined);
  }

  enqueue(deliveries: readonly NewDelivery[]): Promise<void> {
    return this.#serial(async () => {
      const counts = new Map<string, number>();
      for (const d of deliveries) {
        const runDir = join(this.#dir, d.runId);
        let count = counts.get(d.runId);
        if (count === undefined) {
          await mkdir(runDir, { recursive: true, mode: 0o700 });
          count = (await readdir(runDir)).filter((n) => n.endsWith('.json')).length;
        }
        if (count >= MAX_DELIVERIES_PER_RUN) continue;
        counts.set(d.runId, count + 1);
        const now = new Date().toISOString();
        const delivery: Delivery = { ...d, state: 'pending', attempts: [], nextAttemptAt: now, createdAt: now };
        const file = join(runDir, `${String(count).padStart(4, '0')}-${d.id}.json`);
        await replaceDurably(file, JSON.stringify(delivery));
        this.#pending.set(d.id, { delivery, file, instance: null, leaseUntil: 0 });
      }
    });
  }

  claim(instance: string, leaseMs: number, limit: number): Promise<Delivery[]> {
    const now = Date.now();
    const due = [...this.#pending.values()]
      .filter((h) => h.leaseUntil <= now && Date.parse(h.delivery.nextAttemptAt ?? '') <= now)
      .sort((a, b) => (a.delivery.nextAttemptAt ?? '').localeCompare(b.delivery.nextAttemptAt ?? ''))
      .slice(0, Math.max(0, limit));
    for (const h of due) {
      h.instance = instance;
      h.leaseUntil = now + leaseMs;
    }
    return Promise.resolve(due.map((h) => h.delivery));
  }

  record(id: string, instance: string, attempt: NotificationAttempt, outcome: AttemptOutcome): Promise<boolean> {
    return this.#serial(async () => {
      const held = this.#pending.get(id);
      if (!held || held.instance !== instance) return false;
      const delivery: Delivery = {
        ...held.delivery,
        state: outcome.state,
        attempts: [...held.delivery.attempts, attempt],
        nextAttemptAt: outcome.state === 'pending' ? new Date(Date.now() + outcome.retryInMs).toISOString() : null,
      };
      await replaceDurably(held.file, JSON.stringify(delivery));
      if (delivery.state === 'pending') this.#pending.set(id, { ...held, delivery, instance: null, leaseUntil: 0 });
      else this.#pending.delete(id);
      return true;
    });
  }

  async listForRun(runId: string): Promise<Delivery[]> {
    if (!isRunId(runId)) return [];
    return (await this.#readRun(runId)).map((r) => r.delivery);
  }

  prune(runExists: (runId: string) => Promise<boolean>): Promise<number> {
    return this.#serial(async () => {
      let removed = 0;
      for (const runId of await this.#runs()) {
        if (await runExists(runId)) continue;
        for (const [id, held] of this.#pending) if (held.delivery.runId === runId) this.#pending.delete(id);
        await rm(join(this.#dir, runId), { recursive: true, force: true });
        removed++;
      }
      return removed;
    });
  }

  async #runs(): Promise<string[]> {
    const entries = await readdir(this.#dir, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    return entries.filter((e) => e.isDirectory() && isRunId(e.name)).map((e) => e.name);
  }

  /** A run's deliveries in order; a damaged file (a kill in the middle of its first write) is skipped. */
  async #readRun(runId: string): Promise<{ delivery: Delivery; file: string }[]> {
    const runDir = join(this.#dir, runId);
    const names = await readdir(runDir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw error;
    });
    const found: { delivery: Delivery; file: string }[] = [];
    for (const name of names.filter((n) => /^[0-9]{4}-[A-Za-z0-9_-]+\.json$/.test(n)).sort()) {
      const file = join(runDir, name);
      try {
        found.push({ delivery: JSON.parse(await readFile(file, 'utf8')) as Delivery, file });
      } catch {
        // skipped
      }
    }
    return found;
  }

  #serial<T>(action: () => Promise<T>): Promise<T> {
    const next = this.#chain.then(action, action);
    this.#chain = next.catch(() => undefined);
    return next;
  }
}
