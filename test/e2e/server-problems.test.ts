/**
 * Every error answer of `kapps serve` is a problem document (`application/problem+json`, with `type`, `title`,
 * `status` and `detail`), fastify's own answers included: an unknown route, a body too large, a request that is not
 * HTTP, and a request that arrives while the server is closing.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupProjects, fixtureProject } from '../support/project.js';
import { startServer, stopAllServers } from '../support/server.js';
import { sleep, waitFor } from '../support/wait.js';

afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});

function project() {
  return fixtureProject({ stacks: { dev: { provider: 'local', manifests: [] } } });
}

/** One HTTP/1.1 answer as read off a socket: status, lower-case headers, body. */
interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Split what a socket received into its answers (each with a Content-Length). */
function answers(text: string): RawAnswer[] {
  const out: RawAnswer[] = [];
  let rest = text;
  while (rest.includes('\r\n\r\n')) {
    const end = rest.indexOf('\r\n\r\n');
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const bodyBytes = Buffer.from(rest.slice(end + 4));
    out.push({
      status: Number(statusLine.split(' ')[1]),
      headers,
      body: bodyBytes.subarray(0, length).toString(),
    });
    rest = bodyBytes.subarray(length).toString();
  }
  return out;
}

function open(url: string): Promise<{ socket: Socket; received: () => string; ended: Promise<void> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect({ host: hostname, port: Number(port) }, () =>
      resolve({ socket, received: () => received, ended }),
    );
    const ended = new Promise<void>((done) => socket.on('close', () => done()));
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
  });
}

/** Whether a new connection to `url` is refused (the server stopped listening). */
async function refused(url: string): Promise<boolean> {
  try {
    const { socket } = await open(url);
    socket.destroy();
    return false;
  } catch {
    return true;
  }
}

function expectProblem(answer: RawAnswer | { status: number; type: string; body: string }, status: number): void {
  const type = 'headers' in answer ? (answer.headers['content-type'] ?? '') : answer.type;
  expect({ status: answer.status, type: type.split(';')[0] }).toEqual({ status, type: 'application/problem+json' });
  const problem = JSON.parse(answer.body) as Record<string, unknown>;
  expect(problem.type).toMatch(/^https:\/\/kapps\.dev\/problems\/[a-z-]+$/);
  expect(typeof problem.title).toBe('string');
  expect(problem.status).toBe(status);
  expect(typeof problem.detail).toBe('string');
  expect(answer.body).not.toMatch(/\n\s+at |\.ts:|\.js:|statusCode/);
}

describe('kapps serve: every error is a problem document', () => {
  it('answers an unknown route, a body too large and a request that is not HTTP as problem+json', async () => {
    const p = project();
    const server = await startServer({ args: ['--project', `shop=${p.stackFile}`] });
    const unknown = await fetch(`${server.url}/api/v1/nothing-here`, { method: 'DELETE' });
    expectProblem(
      { status: unknown.status, type: unknown.headers.get('content-type') ?? '', body: await unknown.text() },
      404,
    );

    const large = await fetch(`${server.url}/api/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'generate', project: 'shop', stack: 'dev', pad: 'x'.repeat(2 << 20) }),
    });
    const largeBody = await large.text();
    expectProblem({ status: large.status, type: large.headers.get('content-type') ?? '', body: largeBody }, 413);
    expect(JSON.parse(largeBody)).toMatchObject({
      type: 'https://kapps.dev/problems/too-large',
      title: 'The request is too large',
    });

    const garbage = await open(server.url);
    garbage.socket.write('NOT HTTP AT ALL\r\n\r\n');
    await garbage.ended;
    const [answer] = answers(garbage.received());
    expect(answer).toBeDefined();
    expectProblem(answer!, 400);
    expect(JSON.parse(answer!.body)).toMatchObject({ type: 'https://kapps.dev/problems/invalid-request' });
  });

  it('answers a request that arrives while the server is closing 503 problem+json, with Retry-After', async () => {
    const p = project();
    const server = await startServer({ args: ['--project', `shop=${p.stackFile}`] });
    const { host } = new URL(server.url);
    // A request in flight (its body not sent yet; the server's `100 Continue` says it has it) keeps the connection
    // open while the server closes.
    const conn = await open(server.url);
    conn.socket.write(
      `POST /api/v1/runs HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n` +
        'Expect: 100-continue\r\n\r\n',
    );
    await waitFor('100 Continue', () => conn.received().startsWith('HTTP/1.1 100 Continue\r\n\r\n'));
    const stopped = server.stop();
    await waitFor('the server to stop listening', () => refused(server.url));
    // The rest of the first request, and a second one on the same connection, now that the server is closing.
    conn.socket.write(`{}GET /api/v1/whoami HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    const final = (): RawAnswer[] => answers(conn.received()).filter((a) => a.status !== 100);
    await waitFor('two answers', () => final().length >= 2);
    const [, closing] = final();
    expectProblem(closing!, 503);
    expect(JSON.parse(closing!.body)).toMatchObject({
      type: 'https://kapps.dev/problems/unavailable',
      detail: 'the server is stopping',
    });
    expect(closing!.headers['retry-after']).toMatch(/^[0-9]+$/);
    conn.socket.destroy();
    expect(await stopped).toEqual({ code: 0 });
  });

  it('reads the rest of a body it refused before closing: a client still sending gets its 413, not a reset', async () => {
    const p = project();
    const server = await startServer({ args: ['--project', `shop=${p.stackFile}`] });
    const { hostname, port, host } = new URL(server.url);
    const size = 6 << 20;
    const chunk = Buffer.alloc(64 << 10, 'x');
    const head = `POST /api/v1/runs HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`;

    /** Send `head` and `bytes` of the body, a piece at a time, without waiting for the answer; then end. */
    async function send(bytes: number) {
      // Half-open, as an HTTP client that goes on sending its body after the server has answered and shut its side.
      const socket = connect({ host: hostname, port: Number(port), allowHalfOpen: true });
      let received = '';
      let error: string | undefined;
      socket.setEncoding('utf8').on('data', (text: string) => (received += text));
      socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
      const closed = new Promise<void>((done) => socket.on('close', () => done()));
      const write = (data: string | Buffer) =>
        new Promise<void>((done) => socket.write(data, () => setTimeout(done, 2)));
      await write(head);
      let sent = 0;
      while (sent < bytes && !socket.destroyed) {
        await write(chunk);
        sent += chunk.length;
      }
      return { socket, sent, closed, answer: () => answers(received)[0], error: () => error };
    }

    // All of it: the server reads what it will not use, so every byte is taken and the answer arrives whole.
    const whole = await send(size);
    whole.socket.end();
    await whole.closed;
    expect({ error: whole.error(), sent: whole.sent }).toEqual({ error: undefined, sent: size });
    expectProblem(whole.answer()!, 413);
    expect(whole.answer()!.headers.connection).toBe('close');

    // A client that trickles the rest forever: the server stops reading it after a while (LINGER_MAX_MS, 10 s) and
    // closes; the client's next write then meets a reset.
    const trickle = await send(1 << 20);
    await waitFor(
      'the server to close the connection',
      async () => {
        if (!trickle.socket.destroyed) trickle.socket.write('x'.repeat(1024));
        await sleep(500);
        return trickle.error() !== undefined;
      },
      30_000,
    );
    expect(trickle.error()).toMatch(/^(EPIPE|ECONNRESET)$/);
    expectProblem(trickle.answer()!, 413);
  });
});
