/**
 * Outbound notifications of a run: `GET /api/v1/runs/{id}/notifications` lists the deliveries its status changes
 * made (one per event and `notify:` target of its project) with every attempt's answer.
 */
import * as z from 'zod';

/** The events a `notify:` target subscribes to. */
export const NOTIFICATION_EVENTS = [
  'run.queued',
  'run.started',
  'run.finished',
  'run.succeeded',
  'run.failed',
  'run.cancelled',
  /** An apply, destroy or rollback waits for approvals (its preview done, its after_preview checks passed). */
  'run.needs_approval',
  /** It got the approvals it needed and is queued to apply. */
  'run.approved',
  /** A token rejected it: it ends `rejected`. */
  'run.rejected',
  /** A `break_glass` token skipped the approvals it needed. */
  'run.break_glass',
  /** A drift check found a stack drifted where it was not before: once per drift episode. */
  'drift.detected',
  /** A drift check found a drifted stack in sync again: the episode is closed. */
  'drift.resolved',
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/** `pending` (an attempt is due at `nextAttemptAt`), `delivered` (a 2xx answer), `failed` (no attempt left). */
export const NOTIFICATION_STATES = ['pending', 'delivered', 'failed'] as const;
export type NotificationState = (typeof NOTIFICATION_STATES)[number];

/** Bytes of a receiver's answer kept per attempt at the most. */
export const MAX_ATTEMPT_BODY_BYTES = 1024;

/** One attempt: when, the receiver's answer (status, the start of its body) or why there was none, how long. */
export const notificationAttemptSchema = z.object({
  at: z.string(),
  /** The HTTP status answered; null when there was no answer (timeout, connection error). */
  status: z.number().int().nullable(),
  /** Why the attempt failed without an answer, or null. */
  error: z.string().nullable(),
  durationMs: z.number().int().min(0),
  /** The start of the answer's body (at most 1 KiB). */
  body: z.string(),
});
export type NotificationAttempt = z.infer<typeof notificationAttemptSchema>;

export const notificationSchema = z.object({
  /** The delivery's id, as sent in `X-Kapps-Delivery` and the body's `deliveryId`. */
  id: z.string(),
  event: z.enum(NOTIFICATION_EVENTS),
  /** The receiver (without credentials). */
  url: z.string(),
  state: z.enum(NOTIFICATION_STATES),
  attempts: z.array(notificationAttemptSchema),
  /** When the next attempt is due, while pending. */
  nextAttemptAt: z.string().nullable(),
});
export type Notification = z.infer<typeof notificationSchema>;

/** `GET /api/v1/runs/{id}/notifications`: the run's deliveries in the order of the run's life (queued, started, then as stored). */
export const notificationListSchema = z.object({ notifications: z.array(notificationSchema) });
export type NotificationList = z.infer<typeof notificationListSchema>;
