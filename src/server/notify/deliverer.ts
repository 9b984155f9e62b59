/**
 * The deliverer of one instance: it claims due deliveries from the outbox (a few at a time) and POSTs each to its
 * receiver, signed with the target's secret read from the server's environment at that moment (never stored, said
 * or returned): `X-Kapps-Signature-256: sha256=<hex HMAC-SHA256 of the exact body>`. An attempt has `timeoutMs`; a
 * non-2xx answer, a timeout or a connection error is tried again after 1 s, 2 s, 4 s … (at most `MAX_BACKOFF_MS`)
 * until `MAX_ATTEMPTS`, then the delivery is `failed`. Every attempt's answer (status, the start of its body, the
 * error, how long) is recorded. Runs never wait for it.
 */
import { createHmac } from 'node:crypto';
import { MAX_ATTEMPT_BODY_BYTES, type NotificationAttempt } from '../../api/index.js';
import type { AttemptOutcome, Delivery, Outbox } from './outbox.js';

/** Attempts of a delivery at the most. */
export const MAX_ATTEMPTS = 8;
/** The first retry's delay; each next one doubles, up to `MAX_BACKOFF_MS`. */
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;
/** How long one attempt may take. */
const ATTEMPT_TIMEOUT_MS = 10_000;
/** Deliveries in flight per instance. */
const IN_FLIGHT = 4;
/** How often the outbox is looked at when nobody said anything was added (other instances, retries). */
const POLL_MS = 500;
/** A claim holds a delivery this long (well past an attempt's timeout). */
const LEASE_MS = 60_000;

export interface DelivererOptions {
  readonly outbox: Outbox;
  readonly instance: string;
  /** The server's environment (the targets' secrets are read from it at each attempt). */
  readonly env: NodeJS.ProcessEnv;
  readonly say: (text: string) => void;
}

/** The delay before attempt `n + 1` after `n` attempts failed. */
export function backoffMs(attempts: number): number {
  return Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, attempts - 1));
}

/** `sha256=<hex>`: the signature of `body` with `secret`. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/**
 * The headers of a signed POST of `body` (a notification's, or a run check's request): the JSON type, what it is
 * (`event`), a delivery id the receiver may use to see a request twice, and the signature of the exact body with
 * `secret`.
 */
export function signedHeaders(
  secret: string,
  event: string,
  deliveryId: string,
  body: string,
  userAgent: string,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': userAgent,
    'x-kapps-event': event,
    'x-kapps-delivery': deliveryId,
    'x-kapps-signature-256': signature(secret, body),
  };
}

/** A URL without the user and password it may hold. */
export function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url.replace(/\/\/[^/@]*@/, '//');
  }
}

export class Deliverer {
  readonly #o: DelivererOptions;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #stopping = new AbortController();
  #wake: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  #warned = false;

  constructor(options: DelivererOptions) {
    this.#o = options;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Something was added: look now. */
  wake(): void {
    this.#wake?.();
  }

  /** Stop claiming, abort the attempts in flight (they are tried again later), and wait for them. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    this.wake();
    await this.#loop;
    await Promise.allSettled([...this.#inFlight]);
  }

  async #run(): Promise<void> {
    const signal = this.#stopping.signal;
    while (!signal.aborted) {
      let claimed: Delivery[] = [];
      const room = IN_FLIGHT - this.#inFlight.size;
      if (room > 0) {
        try {
          claimed = await this.#o.outbox.claim(this.#o.instance, LEASE_MS, room);
          this.#warned = false;
        } catch (error) {
          if (!this.#warned) this.#o.say(`kapps serve: notifications: ${(error as Error).message}`);
          this.#warned = true;
        }
      }
      for (const delivery of claimed) {
        const sending: Promise<void> = this.#send(delivery).finally(() => {
          this.#inFlight.delete(sending);
          this.wake();
        });
        this.#inFlight.add(sending);
      }
      if (claimed.length === 0 || this.#inFlight.size >= IN_FLIGHT) await this.#sleep(POLL_MS);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }

  async #send(delivery: Delivery): Promise<void> {
    const attempt = await this.#attempt(delivery);
    if (this.#stopping.signal.aborted && attempt.status === null) return; // cut short by the stop: tried again later
    const ok = attempt.status !== null && attempt.status >= 200 && attempt.status < 300;
    const count = delivery.attempts.length + 1;
    const outcome: AttemptOutcome = ok
      ? { state: 'delivered' }
      : count >= MAX_ATTEMPTS
        ? { state: 'failed' }
        : { state: 'pending', retryInMs: backoffMs(count) };
    try {
      await this.#o.outbox.record(delivery.id, this.#o.instance, attempt, outcome);
    } catch (error) {
      this.#o.say(
        `kapps serve: notification ${delivery.id}: its attempt was not recorded: ${(error as Error).message}`,
      );
    }
  }

  /** One POST of the delivery; never throws. */
  async #attempt(delivery: Delivery): Promise<NotificationAttempt> {
    const at = new Date();
    const started = performance.now();
    const took = (): number => Math.max(0, Math.round(performance.now() - started));
    const secret = this.#o.env[delivery.secretEnv];
    if (!secret) {
      return {
        at: at.toISOString(),
        status: null,
        error: `\`${delivery.secretEnv}\` is not set in the server's environment`,
        durationMs: 0,
        body: '',
      };
    }
    const signal = AbortSignal.any([this.#stopping.signal, AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)]);
    try {
      const response = await fetch(delivery.url, {
        method: 'POST',
        redirect: 'manual',
        signal,
        headers: signedHeaders(secret, delivery.event, delivery.id, delivery.body, 'kapps-notify'),
        body: delivery.body,
      });
      const body = await readStart(response, MAX_ATTEMPT_BODY_BYTES);
      return { at: at.toISOString(), status: response.status, error: null, durationMs: took(), body };
    } catch (error) {
      return {
        at: at.toISOString(),
        status: null,
        error: describeFailure(error, signal),
        durationMs: took(),
        body: '',
      };
    }
  }
}

/** The start of an answer's body (at most `max` bytes, on a character boundary); the rest is not read. */
async function readStart(response: Response, max: number): Promise<string> {
  const { bytes } = await readBodyStart(response, max);
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes).replace(/\uFFFD+$/, '');
}

/**
 * The first `max` bytes of an answer's body, and whether it held more (one more chunk is read to tell); the rest is
 * not read: a receiver or a check's endpoint cannot make the server hold more than that.
 */
export async function readBodyStart(response: Response, max: number): Promise<{ bytes: Buffer; overflow: boolean }> {
  if (!response.body) return { bytes: Buffer.alloc(0), overflow: false };
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size <= max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return { bytes: Buffer.concat(chunks).subarray(0, max), overflow: size > max };
}

/** Why an attempt got no answer, in words (no URL credentials: the configuration refuses them). */
function describeFailure(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    if (reason instanceof DOMException && reason.name === 'TimeoutError')
      return `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`;
    return 'the server stopped';
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `${cause.code}${cause.message ? `: ${cause.message}` : ''}`;
  return error instanceof Error ? error.message : String(error);
}
