/**
 * The guarantees of the notification outbox (src/server/notify/outbox.ts), one suite run against both backends: the
 * files beside the run store and PostgreSQL (where a delivery's run is a row of `kapps_runs`).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { NotificationAttempt } from '../../../src/api/index.js';
import { FileOutbox } from '../../../src/server/notify/file-outbox.js';
import { MAX_DELIVERIES_PER_RUN, type NewDelivery, type Outbox } from '../../../src/server/notify/outbox.js';
import { PgOutbox } from '../../../src/server/notify/pg-outbox.js';
import { PgRunStore } from '../../../src/server/queue/pg-run-store.js';
import { freshDatabases, sql } from '../../support/pg.js';
import { waitFor } from '../../support/wait.js';

interface OutboxFixture {
  /** A new outbox on the fixture's data (not opened); each call is another instance or a restart. */
  outbox(): Outbox;
  /** A run the deliveries may belong to. */
  newRun(): Promise<string>;
  /** The run store's retention deleting a run. */
  deleteRun(id: string): Promise<void>;
  runExists(id: string): Promise<boolean>;
  cleanup(): Promise<void>;
}

const databases = freshDatabases('kapps_outbox_t');
afterAll(() => databases.dropAll());

function fileFixture(): Promise<OutboxFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'kapps-outbox-'));
  const runs = new Set<string>();
  let n = 0;
  return Promise.resolve({
    outbox: () => new FileOutbox(join(dir, 'notifications')),
    newRun: () => {
      const id = `r${++n}-${randomBytes(6).toString('hex')}`;
      runs.add(id);
      return Promise.resolve(id);
    },
    deleteRun: (id) => Promise.resolve(void runs.delete(id)),
    runExists: (id) => Promise.resolve(runs.has(id)),
    cleanup: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
  });
}

async function pgFixture(): Promise<OutboxFixture> {
  const url = await databases.create();
  const store = new PgRunStore(url);
  await store.open('t');
  return {
    outbox: () => new PgOutbox(url),
    newRun: async () => {
      const outcome = await store.submit(
        { type: 'apply', project: 'shop', stack: 'dev', createdBy: 'ci', options: {} },
        { maxQueuedPerStack: 1000, maxQueuedTotal: 1000 },
      );
      if (outcome.kind === 'full') throw new Error('full');
      return outcome.run.id;
    },
    deleteRun: async (id) => void (await sql(url, 'DELETE FROM kapps_runs WHERE id = $1', [id])),
    runExists: async (id) => (await store.get(id)) !== undefined,
    cleanup: () => store.close(),
  };
}

function attempt(status: number | null, error: string | null = null): NotificationAttempt {
  return { at: new Date().toISOString(), status, error, durationMs: 3, body: status ? 'ok' : '' };
}

let counter = 0;
function delivery(runId: string, extra: Partial<NewDelivery> = {}): NewDelivery {
  const id = `d${++counter}-${Math.random().toString(36).slice(2, 10)}`;
  return {
    id,
    runId,
    event: 'run.finished',
    url: 'http://127.0.0.1:9/hook',
    secretEnv: 'HOOK_SECRET',
    body: JSON.stringify({ event: 'run.finished', deliveryId: id }),
    ...extra,
  };
}

describe.each([
  ['files', fileFixture],
  ['postgres', pgFixture],
] as const)('notification outbox (%s)', (_name, makeFixture) => {
  let fixture: OutboxFixture;
  const opened: Outbox[] = [];
  async function open(): Promise<Outbox> {
    const outbox = fixture.outbox();
    opened.push(outbox);
    await outbox.open();
    return outbox;
  }
  afterEach(async () => {
    for (const o of opened.splice(0)) await o.close();
    await fixture?.cleanup();
  });

  it('keeps a run’s deliveries pending, in order, with their body and no attempt', async () => {
    fixture = await makeFixture();
    const outbox = await open();
    const [a, b] = [await fixture.newRun(), await fixture.newRun()];
    const first = delivery(a, { event: 'run.queued' });
    const second = delivery(a, { event: 'run.started' });
    await outbox.enqueue([first, delivery(b)]);
    await outbox.enqueue([second]);
    const listed = await outbox.listForRun(a);
    expect(listed.map((d) => [d.id, d.event, d.state, d.attempts.length])).toEqual([
      [first.id, 'run.queued', 'pending', 0],
      [second.id, 'run.started', 'pending', 0],
    ]);
    expect(listed[0]?.body).toBe(first.body);
    expect(listed[0]?.secretEnv).toBe('HOOK_SECRET');
    expect(listed[0]?.nextAttemptAt).not.toBeNull();
    expect(await outbox.listForRun(b)).toHaveLength(1);
  });

  it('gives a due delivery to one instance at a time, and records its attempts until delivered', async () => {
    fixture = await makeFixture();
    const one = await open();
    const two = fixture.outbox();
    opened.push(two);
    await two.open();
    const run = await fixture.newRun();
    const d = delivery(run);
    await one.enqueue([d]);
    const claimed = await one.claim('i1', 60_000, 10);
    expect(claimed.map((c) => c.id)).toEqual([d.id]);
    // Held by i1: nobody else gets it, and nobody else may record it.
    expect(await one.claim('i2', 60_000, 10)).toEqual([]);
    expect(await one.record(d.id, 'i2', attempt(200), { state: 'delivered' })).toBe(false);
    expect(await one.record(d.id, 'i1', attempt(500), { state: 'pending', retryInMs: 60_000 })).toBe(true);
    // Not due before its retry.
    expect(await one.claim('i1', 60_000, 10)).toEqual([]);
    let listed = await one.listForRun(run);
    expect(listed[0]?.state).toBe('pending');
    expect(listed[0]?.attempts.map((a) => a.status)).toEqual([500]);
    expect(Date.parse(listed[0]?.nextAttemptAt ?? '')).toBeGreaterThan(Date.now() + 30_000);

    const other = await fixture.newRun();
    const e = delivery(other);
    await one.enqueue([e]);
    await one.claim('i1', 60_000, 10);
    expect(await one.record(e.id, 'i1', attempt(null, 'ECONNREFUSED'), { state: 'pending', retryInMs: 0 })).toBe(true);
    const again = await one.claim('i1', 60_000, 10);
    expect(again.map((c) => [c.id, c.attempts.length])).toEqual([[e.id, 1]]);
    expect(await one.record(e.id, 'i1', attempt(204), { state: 'delivered' })).toBe(true);
    listed = await one.listForRun(other);
    expect(listed[0]?.state).toBe('delivered');
    expect(listed[0]?.nextAttemptAt).toBeNull();
    expect(listed[0]?.attempts.map((a) => [a.status, a.error])).toEqual([
      [null, 'ECONNREFUSED'],
      [204, null],
    ]);
    expect(await one.claim('i1', 60_000, 10)).toEqual([]);
    expect(await one.record(e.id, 'i1', attempt(200), { state: 'delivered' })).toBe(false);
  });

  it('hands a delivery whose lease ran out to another instance; the first one may not record it then', async () => {
    fixture = await makeFixture();
    const outbox = await open();
    const run = await fixture.newRun();
    const d = delivery(run);
    await outbox.enqueue([d]);
    expect(await outbox.claim('i1', 1, 10)).toHaveLength(1);
    await waitFor('the lease to run out', async () => (await outbox.claim('i2', 60_000, 10)).length === 1);
    expect(await outbox.record(d.id, 'i1', attempt(200), { state: 'delivered' })).toBe(false);
    expect(await outbox.record(d.id, 'i2', attempt(500), { state: 'failed' })).toBe(true);
    const [listed] = await outbox.listForRun(run);
    expect(listed?.state).toBe('failed');
    expect(listed?.attempts.map((a) => a.status)).toEqual([500]);
  });

  it('keeps pending deliveries across a restart', async () => {
    fixture = await makeFixture();
    const before = await open();
    const run = await fixture.newRun();
    const d = delivery(run);
    await before.enqueue([d]);
    await before.close();
    const after = await open();
    expect((await after.claim('i1', 60_000, 10)).map((c) => c.id)).toEqual([d.id]);
  });

  it('keeps at most MAX_DELIVERIES_PER_RUN deliveries of a run', async () => {
    fixture = await makeFixture();
    const outbox = await open();
    const run = await fixture.newRun();
    await outbox.enqueue(Array.from({ length: MAX_DELIVERIES_PER_RUN - 2 }, () => delivery(run)));
    await outbox.enqueue(Array.from({ length: 5 }, () => delivery(run)));
    expect(await outbox.listForRun(run)).toHaveLength(MAX_DELIVERIES_PER_RUN);
  });

  it('lets a run’s deliveries go with the run', async () => {
    fixture = await makeFixture();
    const outbox = await open();
    const [gone, kept] = [await fixture.newRun(), await fixture.newRun()];
    await outbox.enqueue([delivery(gone), delivery(kept)]);
    await fixture.deleteRun(gone);
    await outbox.prune((id) => fixture.runExists(id));
    expect(await outbox.listForRun(gone)).toEqual([]);
    expect(await outbox.listForRun(kept)).toHaveLength(1);
    const claimed = await outbox.claim('i1', 60_000, 10);
    expect(claimed.map((c) => c.runId)).toEqual([kept]);
  });
});
