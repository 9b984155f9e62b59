// Lifecycle of the static site's server, for the run steps of the `node-service` program:
//
//   node service.mjs check-port   --host H --port P   fail clearly when another program holds the port
//   node service.mjs start        --host H --port P   start server.mjs in the background (idempotent)
//   node service.mjs wait-healthy --url U [--within S] poll U/healthz until it answers 200
//   node service.mjs stop                             stop the server (SIGTERM, then SIGKILL) and forget it
//   node service.mjs describe     --host H --port P   print {url, host, port, pid, running} as JSON
//
// State lives in .run/ next to this file: server.pid (written by the server once it listens), state.json (host and
// port it was started with) and server.log (its output).
/* global fetch, AbortSignal, setTimeout */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const runDir = path.join(here, '.run');
const pidFile = path.join(runDir, 'server.pid');
const stateFile = path.join(runDir, 'state.json');
const logFile = path.join(runDir, 'server.log');
const serverScript = path.join(here, 'server.mjs');

const [command, ...rest] = process.argv.slice(2);
const { values } = parseArgs({
  args: rest,
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '18080' },
    url: { type: 'string' },
    within: { type: 'string', default: '60' },
    root: { type: 'string', default: 'public' },
  },
});
const host = values.host;
const port = Number(values.port);
if (!Number.isInteger(port) || port < 1 || port > 65535)
  fail(`the port must be a number from 1 to 65535, got '${values.port}'`);

function fail(message) {
  console.error(`error: ${message}`);
  process.exit(1);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function readJson(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function readPid() {
  try {
    return Number(readFileSync(pidFile, 'utf8').trim()) || 0;
  } catch {
    return 0;
  }
}

/** True while `pid` runs; an exited process its parent has not reaped yet (a zombie, seen on /proc) is not running. */
function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if (e.code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return !existsSync('/proc/self');
  }
}

/** True when `pid` is a live process running this kapp's server (checked on /proc where there is one). */
function isOurServer(pid) {
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return false;
  const cmdline = `/proc/${pid}/cmdline`;
  if (!existsSync('/proc/self')) return true;
  try {
    return readFileSync(cmdline, 'utf8').split('\0').includes(serverScript);
  } catch {
    return false;
  }
}

/** The running server: {pid, host, port}, or undefined. Stale files are removed. */
function running() {
  const pid = readPid();
  const state = readJson(stateFile) ?? {};
  if (pid && isOurServer(pid)) return { pid, host: state.host, port: state.port };
  rmSync(pidFile, { force: true });
  rmSync(stateFile, { force: true });
  return undefined;
}

/** Resolves when host:port can be bound; rejects with a sentence otherwise. */
function portFree() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (e) => {
      const why =
        e.code === 'EADDRINUSE'
          ? 'is already in use by another program'
          : e.code === 'EACCES'
            ? 'needs privileges this user does not have'
            : `cannot be used (${e.message})`;
      reject(
        new Error(
          `port ${port} on ${host} ${why}. Stop that program, or choose another port ` +
            `(DEMO_PORT=<port> in the environment, or web_port in the sample's providers/values.yaml).`,
        ),
      );
    });
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

async function checkPort() {
  const current = running();
  if (current && current.port === port && current.host === host) {
    console.log(`port ${port} on ${host} is held by this site's own server (pid ${current.pid}): it will be kept`);
    return;
  }
  await portFree().catch((e) => fail(e.message));
  console.log(`port ${port} on ${host} is free`);
}

async function stop() {
  const current = running();
  if (!current) {
    console.log('the server is not running');
    return;
  }
  process.kill(current.pid, 'SIGTERM');
  for (let waited = 0; waited < 5000 && alive(current.pid); waited += 100) await sleep(100);
  if (alive(current.pid)) process.kill(current.pid, 'SIGKILL');
  for (let waited = 0; waited < 2000 && alive(current.pid); waited += 100) await sleep(100);
  rmSync(pidFile, { force: true });
  rmSync(stateFile, { force: true });
  console.log(`stopped the server (pid ${current.pid})`);
}

async function start() {
  const current = running();
  if (current) {
    if (current.port === port && current.host === host) {
      console.log(`already running at http://${host}:${port}/ (pid ${current.pid})`);
      return;
    }
    console.log(`running on ${current.host}:${current.port}, restarting on ${host}:${port}`);
    await stop();
  }
  await portFree().catch((e) => fail(e.message));
  mkdirSync(runDir, { recursive: true });
  const log = openSync(logFile, 'a');
  // detached: its own process group, so it outlives the step; stdio to the log, so the step's output closes.
  const child = spawn(
    process.execPath,
    [
      serverScript,
      '--host',
      host,
      '--port',
      String(port),
      '--root',
      path.resolve(here, values.root),
      '--pid-file',
      pidFile,
    ],
    { cwd: here, detached: true, stdio: ['ignore', log, log] },
  );
  let exited;
  child.on('exit', (code) => (exited = code ?? 1));
  for (let waited = 0; waited < 10_000; waited += 50) {
    if (exited !== undefined) break;
    const pid = readPid();
    if (pid === child.pid) {
      writeFileSync(stateFile, `${JSON.stringify({ pid, host, port })}\n`);
      child.unref();
      console.log(`started the server at http://${host}:${port}/ (pid ${pid}, log ${path.relative(here, logFile)})`);
      return;
    }
    await sleep(50);
  }
  const tail = readFileSync(logFile, 'utf8').trim().split('\n').slice(-5).join('\n');
  if (exited === undefined) child.kill('SIGKILL');
  fail(`the server did not start${exited !== undefined ? ` (exit code ${exited})` : ' within 10 s'}:\n${tail}`);
}

async function waitHealthy() {
  const url = new URL('healthz', values.url ?? `http://${host}:${port}/`);
  const deadline = Date.now() + Number(values.within) * 1000;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) {
        console.log(`${url} answered 200`);
        return;
      }
      last = `status ${res.status}`;
    } catch (e) {
      last = e.cause?.code ?? e.message;
    }
    await sleep(250);
  }
  fail(`${url} did not answer 200 within ${values.within} s (last: ${last})`);
}

function describe() {
  const current = running();
  const info = {
    url: `http://${host}:${port}/`,
    host,
    port,
    running: current !== undefined,
    pid: current?.pid ?? null,
  };
  console.log(JSON.stringify(info, null, 2));
}

const commands = { 'check-port': checkPort, start, 'wait-healthy': waitHealthy, stop, describe };
const run = commands[command];
if (!run) fail(`usage: node service.mjs ${Object.keys(commands).join('|')} [--host H] [--port P] [--url U]`);
await run();
