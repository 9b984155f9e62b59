/**
 * The process server as kapps talks to it: the built server (dist/bin/process-server.js, what users run) driven
 * through the typed functions of server-protocol.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  onServerMessage,
  sendRequest,
  sendRequests,
  type ServerMessage,
} from '../../../src/process/server-protocol.js';
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

async function waitFor(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 10));
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

  it('runs each request of a batch, in order, and its answers come back one by one', async () => {
    const { server, messages, next } = start();
    await next('ready');
    const dir = mkdtempSync(path.join(tmpdir(), 'kapps-batch-'));
    sendRequests(
      server,
      [1, 2, 3].map((id) => ({
        type: 'run' as const,
        id,
        req: { command: 'sh', args: ['-c', `echo ${id} >> order; echo out${id}`], cwd: dir, env },
        stream: true,
      })),
    );
    await waitFor(() => messages.filter((m) => m.type === 'result').length === 3);
    // Spawned in the order sent (each appends its id), and every answer unpacked (no batch reaches the listener).
    expect(readFileSync(path.join(dir, 'order'), 'utf8')).toBe('1\n2\n3\n');
    expect(messages.some((m) => (m as { type: string }).type === 'batch')).toBe(false);
    for (const id of [1, 2, 3]) {
      expect(messages.filter((m) => 'id' in m && m.id === id).map((m) => m.type)).toEqual([
        'started',
        'output',
        'result',
      ]);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes the directory a run asks for before the spawn, or says why it cannot', async () => {
    const { server, messages, next } = start();
    await next('ready');
    const dir = mkdtempSync(path.join(tmpdir(), 'kapps-makedir-'));
    const kappDir = path.join(dir, 'ws', 'kapp');
    writeFileSync(path.join(dir, 'file'), '');
    sendRequests(server, [
      { type: 'run', id: 1, req: { command: 'pwd', args: [], cwd: kappDir, env, makeDir: kappDir }, stream: false },
      {
        type: 'run',
        id: 2,
        req: { command: 'pwd', args: [], cwd: path.join(dir, 'file', 'x'), env, makeDir: path.join(dir, 'file', 'x') },
        stream: false,
      },
    ]);
    await waitFor(() => messages.filter((m) => m.type === 'result').length === 2);
    const result = (id: number): Record<string, unknown> => {
      const m = messages.find((x) => x.type === 'result' && x.id === id);
      if (m?.type !== 'result') throw new Error('no result');
      return m.result;
    };
    expect(result(1)).toMatchObject({ exitCode: 0 });
    expect(Buffer.from(result(1).stdout as Uint8Array).toString()).toBe(`${kappDir}\n`);
    expect(result(2)).toMatchObject({ exitCode: null, spawnErrorCode: 'ENOTDIR' });
    expect(result(2).spawnError).toBe(
      `cannot make the directory ${path.join(dir, 'file', 'x')}: a file that is not a directory is in the way (ENOTDIR)`,
    );
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("the server's side of the channel when kapps has gone", () => {
  it('drops a message sent after kapps exited, before the server noticed: no EPIPE, no stack trace, exit 0', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'kapps-orphan-'));
    const protocol = pathToFileURL(fileURLToPath(new URL('../../../dist/process/server-protocol.js', import.meta.url)));
    // The server's stand-in: it says it is waiting, then blocks (its event loop cannot notice the channel closing)
    // until kapps has exited, and sends a message on the channel kapps' end of which is closed.
    const server = path.join(dir, 'server.mjs');
    writeFileSync(
      server,
      `import { sendMessage } from ${JSON.stringify(protocol.href)};\n` +
        "process.on('exit', (code) => process.stdout.write(`exit ${code}\\n`));\n" +
        'const parent = process.ppid;\n' +
        "process.send({ type: 'waiting' });\n" +
        'const cell = new Int32Array(new SharedArrayBuffer(4));\n' +
        'for (let i = 0; i < 500 && process.ppid === parent; i++) Atomics.wait(cell, 0, 0, 10);\n' +
        "sendMessage({ type: 'ready' });\n",
    );
    // kapps' stand-in: it forks the server (its output is ours) and exits as soon as the server waits.
    const kapps = path.join(dir, 'kapps.mjs');
    writeFileSync(
      kapps,
      "import { fork } from 'node:child_process';\n" +
        `const child = fork(${JSON.stringify(server)}, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced', execArgv: [] });\n` +
        "child.on('message', () => process.exit(0));\n",
    );
    const out = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      const p = spawn(process.execPath, [kapps], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      p.on('error', reject);
      // The pipes close when the last process holding them (the server) has exited.
      p.on('close', () => resolve({ stdout, stderr }));
    });
    rmSync(dir, { recursive: true, force: true });
    expect(out.stderr).toBe('');
    expect(out.stdout).toBe('exit 0\n');
  });
});
