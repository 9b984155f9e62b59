/**
 * The outbox of outbound notifications: one delivery per (run event, matching `notify:` target), put here when the
 * run's status changes and sent later by a deliverer (./deliverer.ts). Two implementations share this interface —
 * files under the backend directory (one instance) and PostgreSQL (`kapps_notifications`, any number of instances,
 * each delivery claimed by one of them with a lease):
 *
 * - a delivery holds the exact body it sends and the name of the environment variable of its secret, never the
 *   secret;
 * - `claim` hands a pending delivery whose next attempt is due to one instance at a time, for `leaseMs`; an instance
 *   that stops before recording its attempt leaves it to be claimed again once the lease ran out;
 * - each attempt is recorded with its answer; a delivery ends `delivered` or, after its last attempt, `failed`;
 * - bounded: at most `MAX_DELIVERIES_PER_RUN` per run, and a run's deliveries go when the run is pruned.
 */
import type { NotificationAttempt, NotificationEvent, NotificationState } from '../../api/index.js';

/** Deliveries a run may have at the most (further ones are dropped). */
export const MAX_DELIVERIES_PER_RUN = 100;

/** What is put in the outbox. */
export interface NewDelivery {
  readonly id: string;
  readonly runId: string;
  readonly event: NotificationEvent;
  readonly url: string;
  /** The server's environment variable holding the HMAC key (read at each attempt). */
  readonly secretEnv: string;
  /** The exact JSON body sent (and signed). */
  readonly body: string;
}

/** A delivery as stored. */
export interface Delivery extends NewDelivery {
  readonly state: NotificationState;
  readonly attempts: readonly NotificationAttempt[];
  /** When the next attempt is due (ISO), while pending. */
  readonly nextAttemptAt: string | null;
  readonly createdAt: string;
}

/** What an attempt leads to: the end, or another attempt in `retryInMs`. */
export type AttemptOutcome =
  { readonly state: 'delivered' | 'failed' } | { readonly state: 'pending'; readonly retryInMs: number };

export interface Outbox {
  open(): Promise<void>;
  close(): Promise<void>;
  /** Store new deliveries, pending and due now; beyond the cap of their run they are dropped. */
  enqueue(deliveries: readonly NewDelivery[]): Promise<void>;
  /** Up to `limit` pending deliveries whose attempt is due, leased to `instance` for `leaseMs`. */
  claim(instance: string, leaseMs: number, limit: number): Promise<Delivery[]>;
  /** Record an attempt of a delivery `instance` holds; false when it holds it no more (nothing recorded). */
  record(id: string, instance: string, attempt: NotificationAttempt, outcome: AttemptOutcome): Promise<boolean>;
  /** A run's deliveries, oldest first. */
  listForRun(runId: string): Promise<Delivery[]>;
  /** Remove the deliveries of runs that no longer exist (after the run store's retention); how many runs. */
  prune(runExists: (runId: string) => Promise<boolean>): Promise<number>;
}
