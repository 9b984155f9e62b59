/**
 * The process server as kapps talks to it: the built server (dist/bin/process-server.js, what users run) driven
 * through the typed functions of server-protocol.ts.
 */
import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { onServerMessage, sendRequest, type ServerMessage } from '../../../src/process/server-protocol.js';
import { forkProcessServer } from '../../../src/process/spawn.js';

const SERVER = fileURLToPath(new URL('../../../dist/bin/process-server.js', import.meta.url));
const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const servers: ChildProcess[] = [];

afterEach(() => {
  for (const s of servers.splice(0)) if (s.connected) s.disconnect();
});

/** A server and every message it has sent, with a wait for the first message that matches. */
function start(): { server: ChildProcess; messages: ServerMessage[]; next: (type: string) => Promise<ServerMessage> } {
  const server = forkProcessServer(SERVER);
  servers.push(server);
  const messages: ServerMessage[] = [];
  const waiting: { type: string; resolve: (m: ServerMessage) => void }[] = [];
  onServerMessage(server, (m) => {
    messages.push(m);
    const i = waiting.findIndex((w) => w.type === m.type);
    if (i >= 0) waiting.splice(i, 1)[0]?.resolve(m);
  });
  const next = (type: string): Promise<ServerMessage> => {
    const seen = messages.find((m) => m.type === type);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => waiting.push({ type, resolve }));
  };
  return { server, messages, next };
}

describe('the process server protocol', () => {
  it('says ready, then answers a run with started, the output asked for, and the result', async () => {
    const { server, messages, next } = start();
    await next('ready');
    sendRequest(server, {
      type: 'run',
      id: 7,
      req: { command: 'sh', args: ['-c', 'echo out; echo err >&2; exit 3'], cwd: tmpdir(), env },
      stream: true,
    });
    const result = await next('result');
    const started = messages.find((m) => m.type === 'started');
    expect(started).toMatchObject({ type: 'started', id: 7, pid: expect.any(Number) as number });
    const output = messages.filter((m) => m.type === 'output');
    expect(output).toEqual(
      expect.arrayContaining([
        { type: 'output', id: 7, stream: 'stdout', text: 'out\n' },
        { type: 'output', id: 7, stream: 'stderr', text: 'err\n' },
      ]),
    );
    if (result.type !== 'result') throw new Error('not a result');
    expect(result.id).toBe(7);
    expect(result.result).toMatchObject({ exitCode: 3, signal: null, timedOut: false, cancelled: false });
    expect(Buffer.from(result.result.stdout).toString()).toBe('out\n');
    expect(Buffer.from(result.result.stderr).toString()).toBe('err\n');
    expect(messages.map((m) => m.type)).toEqual(['ready', 'started', ...output.map(() => 'output'), 'result']);
  });

  it('checks a step of a kapp before starting it: a command not found is refused and nothing starts', async () => {
    const { server, messages, next } = start();
    await next('ready');
    sendRequest(server, {
      type: 'run',
      id: 3,
      req: { command: 'kapps-no-such-command', args: [], cwd: tmpdir(), env, confineTo: tmpdir() },
      stream: true,
    });
    const result = await next('result');
    if (result.type !== 'result') throw new Error('not a result');
    expect(result.result).toMatchObject({ refused: { kind: 'not-found' }, exitCode: null, cancelled: false });
    expect(messages.map((m) => m.type)).toEqual(['ready', 'result']);
  });

  it('sends no output unless asked, and stops a step on cancel', async () => {
    const { server, messages, next } = start();
    await next('ready');
    sendRequest(server, {
      type: 'run',
      id: 1,
      req: { command: 'sh', args: ['-c', 'echo before; exec sleep 30'], cwd: tmpdir(), env, killGraceMs: 100 },
      stream: false,
    });
    await next('started');
    sendRequest(server, { type: 'cancel', id: 1 });
    const result = await next('result');
    if (result.type !== 'result') throw new Error('not a result');
    expect(result.result).toMatchObject({ cancelled: true, exitCode: null, signal: 'SIGTERM' });
    expect(messages.filter((m) => m.type === 'output')).toEqual([]);
  });
});
