/**
 * Outbound notifications through a real `kapps serve`: a receiver (a Node HTTP server on loopback in the test) is
 * sent signed JSON POSTs of the run events it subscribed to; a failing receiver is retried and never holds runs up;
 * a run's deliveries and their attempts are seen in `GET /runs/{id}/notifications`.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { NotificationList, Run } from '../../src/api/index.js';
import { freshDatabases } from '../support/pg.js';
import { cleanupProjects, fake, fixtureProject, kapp, waitFor } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun, type ApiClient } from '../support/server.js';

const SECRET = 'receiver-key-3b9f1c';

interface Received {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly raw: string;
  readonly body: { event: string; deliveryId: string; run: Run };
}

interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** Requests held without an answer. */
  readonly held: ServerResponse[];
  close(): Promise<void>;
}

const receivers: Receiver[] = [];
const databases = freshDatabases('kapps_notify_e2e');
afterAll(() => databases.dropAll());

/** A receiver on loopback; `answer` says what each request gets: a status and body, or `hold` (never answered). */
async function receiver(answer: (r: Received) => { status: number; body?: string } | 'hold'): Promise<Receiver> {
  const received: Received[] = [];
  const held: ServerResponse[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const r: Received = {
        path: request.url ?? '',
        headers: request.headers,
        raw,
        body: JSON.parse(raw) as Received['body'],
      };
      received.push(r);
      const a = answer(r);
      if (a === 'hold') {
        held.push(response);
        return;
      }
      response.writeHead(a.status, { 'content-type': 'text/plain' }).end(a.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const r: Receiver = {
    url: `http://127.0.0.1:${port}`,
    received,
    held,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  receivers.push(r);
  return r;
}

afterEach(async () => {
  await stopAllServers();
  for (const r of receivers.splice(0)) await r.close();
  cleanupProjects();
});

/** A project whose runs succeed at once, and a server with `notify` targets (YAML of the list's items). */
async function serve(notify: string, backend?: string, instances = 1, extra = '', stepArgs: string[] = []) {
  const p = fixtureProject({
    manifests: { shop: { kapps: [kapp('web', { apply_install: [fake('deploy', 'web', stepArgs)] })] } },
  });
  const config = p.write(
    '../server.yaml',
    `projects:\n  - name: shop\n    stack_file: project/stacks.yaml\n    notify:\n${notify}${extra}`,
  );
  const [server, ...others] = await Promise.all(
    Array.from({ length: instances }, () =>
      startServer({
        args: ['--config', config, ...(backend ? ['--backend', backend] : [])],
        env: { ...p.env, HOOK_SECRET: SECRET },
        cwd: p.root,
      }),
    ),
  );
  if (!server) throw new Error('no server');
  return { server, others, c: api(server.url) };
}

function target(url: string, events: string[]): string {
  return `      - url: ${url}\n        events: [${events.join(', ')}]\n        secret_env: HOOK_SECRET\n`;
}

async function submit(c: ApiClient): Promise<string> {
  const r = await c.post<Run>('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
  expect(r.status).toBe(202);
  return r.body.id;
}

async function notifications(c: ApiClient, runId: string): Promise<NotificationList['notifications']> {
  const r = await c.get<NotificationList>(`/api/v1/runs/${runId}/notifications`);
  expect(r.status).toBe(200);
  return r.body.notifications;
}

describe('kapps serve: notifications', () => {
  it('sends a finished run’s events to the receiver, signed, with the run; events not subscribed are not sent', async () => {
    const rx = await receiver(() => ({ status: 200, body: 'thanks' }));
    const { server, c } = await serve(
      target(`${rx.url}/all-ends`, ['run.finished', 'run.succeeded']) + target(`${rx.url}/failures`, ['run.failed']),
    );
    const id = await submit(c);
    const done = await waitForRun(c, id);
    expect(done.status).toBe('succeeded');
    await waitFor('both deliveries delivered', async () => {
      const list = await notifications(c, id);
      return list.length === 2 && list.every((n) => n.state === 'delivered');
    });

    // Exactly the subscribed events, to the subscribed target.
    expect(rx.received.map((r) => [r.path, r.body.event]).sort()).toEqual([
      ['/all-ends', 'run.finished'],
      ['/all-ends', 'run.succeeded'],
    ]);
    const shown = await c.get<Run>(`/api/v1/runs/${id}`);
    const { queuePosition, blockedBy, ...runAsShown } = shown.body;
    expect([queuePosition, blockedBy]).toEqual([null, null]);
    for (const r of rx.received) {
      const expected = `sha256=${createHmac('sha256', SECRET).update(r.raw).digest('hex')}`;
      expect(r.headers['x-kapps-signature-256']).toBe(expected);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['x-kapps-event']).toBe(r.body.event);
      expect(r.headers['x-kapps-delivery']).toBe(r.body.deliveryId);
      expect(Object.keys(r.body)).toEqual(['event', 'deliveryId', 'run']);
      expect(r.body.run).toEqual(runAsShown);
      // Signed with this secret and no other.
      expect(r.headers['x-kapps-signature-256']).not.toBe(
        `sha256=${createHmac('sha256', 'another').update(r.raw).digest('hex')}`,
      );
    }

    const list = await notifications(c, id);
    expect(list.map((n) => [n.event, n.url, n.state, n.nextAttemptAt])).toEqual([
      ['run.finished', `${rx.url}/all-ends`, 'delivered', null],
      ['run.succeeded', `${rx.url}/all-ends`, 'delivered', null],
    ]);
    expect(new Set(list.map((n) => n.id))).toEqual(new Set(rx.received.map((r) => r.body.deliveryId)));
    for (const n of list) expect(n.attempts).toMatchObject([{ status: 200, error: null, body: 'thanks' }]);

    // The secret is never shown.
    const answer = await fetch(`${server.url}/api/v1/runs/${id}/notifications`).then((r) => r.text());
    expect(answer).not.toContain(SECRET);
    expect(server.stdout() + server.stderr()).not.toContain(SECRET);
    expect((await c.get(`/api/v1/runs/nosuchrun/notifications`)).status).toBe(404);
    const openapi = await c.get<{ paths: Record<string, unknown> }>('/api/v1/openapi.json');
    expect(Object.keys(openapi.body.paths)).toContain('/api/v1/runs/{id}/notifications');
  });

  it('retries a receiver that answers 500 until it answers 200, while runs keep finishing', async () => {
    const facts: string[] = [];
    let healed = false;
    const rx = await receiver((r) => {
      const status = healed ? 200 : 500;
      facts.push(`receiver ${r.body.run.id} ${status}`);
      return { status, body: status === 500 ? 'the receiver is down' : 'ok' };
    });
    const { c } = await serve(target(`${rx.url}/hook`, ['run.finished']));
    const first = await submit(c);
    await waitForRun(c, first);
    await waitFor('a failed attempt', () => rx.received.length >= 1);

    // Another run finishes while the first one's delivery still fails.
    const second = await submit(c);
    const secondDone = await waitForRun(c, second);
    expect(secondDone.status).toBe('succeeded');
    facts.push(`finished ${second}`);
    const pending = await notifications(c, first);
    expect(pending).toHaveLength(1);
    expect(pending[0]?.state).toBe('pending');
    expect(pending[0]?.nextAttemptAt).not.toBeNull();
    expect(pending[0]?.attempts.length).toBeGreaterThanOrEqual(1);
    for (const a of pending[0]?.attempts ?? []) {
      expect(a).toMatchObject({ status: 500, error: null, body: 'the receiver is down' });
    }

    healed = true;
    await waitFor(
      'the first run’s delivery delivered',
      async () => (await notifications(c, first))[0]?.state === 'delivered',
    );
    const [delivered] = await notifications(c, first);
    const statuses = delivered?.attempts.map((a) => a.status) ?? [];
    expect(statuses.length).toBeGreaterThanOrEqual(2);
    expect(statuses.slice(0, -1).every((s) => s === 500)).toBe(true);
    expect(statuses.at(-1)).toBe(200);
    expect(delivered?.nextAttemptAt).toBeNull();

    // In order: the first run's delivery failed, the second run finished, then the first run's delivery went through.
    const firstFailure = facts.indexOf(`receiver ${first} 500`);
    const secondFinished = facts.indexOf(`finished ${second}`);
    const firstDelivered = facts.indexOf(`receiver ${first} 200`);
    expect(firstFailure).toBeGreaterThanOrEqual(0);
    expect(secondFinished).toBeGreaterThan(firstFailure);
    expect(firstDelivered).toBeGreaterThan(secondFinished);
  });

  it('does not hold a run up when the receiver never answers; the attempt times out and is kept', async () => {
    const rx = await receiver(() => 'hold');
    const { c } = await serve(target(`${rx.url}/slow`, ['run.queued', 'run.started', 'run.finished']));
    const id = await submit(c);
    await waitFor('the receiver holding a request', () => rx.held.length >= 1);
    const done = await waitForRun(c, id);
    expect(done.status).toBe('succeeded');
    // The run finished while the receiver still held a request.
    expect(rx.held.some((response) => !response.writableEnded)).toBe(true);
    // The finish is enqueued just after the run's status changes: wait for it rather than race it.
    await waitFor('three deliveries', async () => (await notifications(c, id)).length === 3);
    const list = await notifications(c, id);
    expect(list.map((n) => n.event)).toEqual(['run.queued', 'run.started', 'run.finished']);
    expect(list.every((n) => n.state === 'pending')).toBe(true);
    await waitFor('an attempt timed out', async () => (await notifications(c, id)).some((n) => n.attempts.length > 0));
    const attempt = (await notifications(c, id)).flatMap((n) => n.attempts)[0];
    expect(attempt).toMatchObject({ status: null, error: 'no answer within 10 s', body: '' });
  });

  it('with PostgreSQL and two instances, sends each delivery once', async () => {
    const rx = await receiver(() => ({ status: 200 }));
    const { server, others, c } = await serve(
      target(`${rx.url}/hook`, ['run.queued', 'run.started', 'run.finished']),
      await databases.create(),
      2,
    );
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await submit(c));
    for (const id of ids) await waitForRun(c, id);
    await waitFor('every delivery delivered', async () => {
      for (const id of ids) {
        const list = await notifications(c, id);
        if (list.length !== 3 || list.some((n) => n.state !== 'delivered')) return false;
      }
      return true;
    });
    const sent = rx.received.map((r) => r.body.deliveryId);
    expect(sent).toHaveLength(12);
    expect(new Set(sent).size).toBe(12);
    // The other instance shows the same deliveries.
    const other = api(others[0]?.url ?? server.url);
    for (const id of ids) {
      expect((await notifications(other, id)).map((n) => [n.event, n.state, n.attempts.length])).toEqual([
        ['run.queued', 'delivered', 1],
        ['run.started', 'delivered', 1],
        ['run.finished', 'delivered', 1],
      ]);
    }
  });

  it('shows a run’s notifications only to a token that reaches its project', async () => {
    const rx = await receiver(() => ({ status: 200 }));
    const sha = (t: string): string => createHash('sha256').update(t).digest('hex');
    const tokens =
      'tokens:\n' +
      `  - {name: ci, role: apply, sha256: ${sha('ci-secret')}}\n` +
      `  - {name: shop-reader, role: read, sha256: ${sha('shop-secret')}, projects: [shop]}\n` +
      `  - {name: other-reader, role: read, sha256: ${sha('other-secret')}, projects: [other]}\n`;
    const { server } = await serve(target(`${rx.url}/hook`, ['run.queued']), undefined, 1, tokens);
    const id = await submit(api(server.url, 'ci-secret'));
    await waitFor('the delivery', () => rx.received.length === 1);
    const reader = await api(server.url, 'shop-secret').get<NotificationList>(`/api/v1/runs/${id}/notifications`);
    expect(reader.status).toBe(200);
    expect(reader.body.notifications.map((n) => n.event)).toEqual(['run.queued']);
    const other = await api(server.url, 'other-secret').get(`/api/v1/runs/${id}/notifications`);
    expect(other.status).toBe(404);
    expect(other.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await api(server.url).get(`/api/v1/runs/${id}/notifications`)).status).toBe(401);
  });

  it('lets a run’s notifications go with the run when the history retention deletes it', async () => {
    const rx = await receiver(() => ({ status: 200 }));
    const { server, c } = await serve(
      target(`${rx.url}/hook`, ['run.finished']),
      undefined,
      1,
      'limits:\n  keep_runs_per_stack: 1\n',
    );
    const folder = join(server.backend ?? '', 'notifications');
    const first = await submit(c);
    await waitForRun(c, first);
    await waitFor('the first run’s delivery', () => rx.received.length === 1);
    expect(existsSync(join(folder, first))).toBe(true);
    // A run that ends prunes the history: with one run kept per stack, the second run's end deletes the first.
    const second = await submit(c);
    await waitForRun(c, second);
    await waitFor('the first run deleted', async () => (await c.get(`/api/v1/runs/${first}`)).status === 404);
    await waitFor('its notifications deleted', () => !existsSync(join(folder, first)));
    expect((await c.get(`/api/v1/runs/${first}/notifications`)).status).toBe(404);
    await waitFor('the second run’s delivery', async () => (await notifications(c, second))[0]?.state === 'delivered');
    expect(existsSync(join(folder, second))).toBe(true);
  }, 180_000);

  it('sends run.cancelled and run.finished for a queued run that is cancelled', async () => {
    const rx = await receiver(() => ({ status: 200 }));
    const go = join(tmpdir(), `kapps-notify-go-${process.pid}-${Date.now()}`);
    const { c } = await serve(
      target(`${rx.url}/hook`, ['run.cancelled', 'run.failed', 'run.finished']),
      undefined,
      1,
      '',
      ['--wait-file', go],
    );
    const running = await submit(c);
    await waitForRun(c, running, (r) => r.status === 'running');
    const queued = await submit(c);
    const cancelled = await c.post<Run>(`/api/v1/runs/${queued}/cancel`);
    expect(cancelled.body.status).toBe('cancelled');
    writeFileSync(go, '');
    expect((await waitForRun(c, running)).status).toBe('succeeded');
    await waitFor('three deliveries', () => rx.received.length === 3);
    expect((await notifications(c, queued)).map((n) => n.event)).toEqual(['run.finished', 'run.cancelled']);
    expect((await notifications(c, running)).map((n) => n.event)).toEqual(['run.finished']);
    const forQueued = rx.received.filter((r) => r.body.run.id === queued);
    expect(forQueued.map((r) => [r.body.event, r.body.run.status]).sort()).toEqual([
      ['run.cancelled', 'cancelled'],
      ['run.finished', 'cancelled'],
    ]);
    rmSync(go, { force: true });
  });
});
