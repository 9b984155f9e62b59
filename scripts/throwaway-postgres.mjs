// A throwaway PostgreSQL server on loopback, for the tests (test/support/postgres.ts) and the benchmarks
// (bench/server.mjs): initdb into a new temp directory, start on a free port with its socket in that directory, stop
// by pid and remove that directory (the only thing it ever removes). As root, initdb and pg_ctl run as the `postgres`
// user (initdb refuses root).
//
// `durable: false` (the tests) turns fsync, synchronous commit and full-page writes off: test data only.
// `durable: true` (the benchmarks) keeps PostgreSQL's defaults, so a commit waits for its WAL to reach the disk as it
// would in production.
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The newest `<installRoot>/<N>/bin` (default `/usr/lib/postgresql`) holding initdb and pg_ctl, or undefined.
 * @param {string} [installRoot]
 * @returns {string | undefined}
 */
export function findPgBin(installRoot = '/usr/lib/postgresql') {
  if (!existsSync(installRoot)) return undefined;
  const versions = readdirSync(installRoot)
    .filter((name) => /^\d+(\.\d+)?$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = join(installRoot, version, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
  }
  return undefined;
}

/**
 * A TCP port that was free on 127.0.0.1 a moment ago.
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * @param {string} command
 * @param {string[]} args
 * @returns {Promise<void>}
 */
function run(command, args) {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
      else resolve();
    });
  });
}

/** @param {number} pid */
function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * @typedef {object} ThrowawayPostgres
 * @property {string} url `postgres://postgres@127.0.0.1:<port>/postgres`
 * @property {number} pid The postmaster's pid when it was started (a `ctl('restart')` gives it another).
 * @property {() => Promise<void>} stop Stop it for good and remove its directory.
 * @property {(action: 'stop' | 'start' | 'restart') => Promise<void>} ctl `pg_ctl stop -m fast` (every connection is
 *   terminated; then connections are refused), `start`, or `restart -m fast`, each waiting until done. The data and
 *   the port stay the same.
 */

/**
 * Start a server from the binaries under `installRoot`; throws with a clear message when they are missing or the
 * server does not start.
 * @param {{ installRoot?: string, durable?: boolean }} [options]
 * @returns {Promise<ThrowawayPostgres>}
 */
export async function startThrowawayPostgres({ installRoot = '/usr/lib/postgresql', durable = false } = {}) {
  const bin = findPgBin(installRoot);
  if (!bin) {
    throw new Error(
      `PostgreSQL is not installed (no ${installRoot}/<N>/bin/initdb): install it with ` +
        '`apt-get install -y postgresql`',
    );
  }
  const asRoot = process.getuid?.() === 0;
  /** @type {(tool: string, args: string[]) => [string, string[]]} */
  const wrap = (tool, args) =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
  const dir = mkdtempSync(join(tmpdir(), 'kapps-pg-'));
  if (asRoot) {
    const passwd = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((line) => line.startsWith('postgres:'));
    const [, , uid, gid] = passwd?.split(':') ?? [];
    if (uid === undefined || gid === undefined) throw new Error('no `postgres` user to run the server as');
    chownSync(dir, Number(uid), Number(gid));
  }
  const data = join(dir, 'data');
  try {
    await run(
      ...wrap('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']),
    );
    const port = await freePort();
    const settings = [
      `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c max_connections=200`,
      ...(durable ? [] : ['-c fsync=off -c synchronous_commit=off -c full_page_writes=off']),
    ].join(' ');
    const log = join(dir, 'server.log');
    await run(...wrap('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '60', '-o', settings, 'start']));
    const postmaster = () => {
      try {
        return Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      } catch {
        return undefined;
      }
    };
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      pid: postmaster() ?? -1,
      stop: async () => {
        const current = postmaster();
        if (current !== undefined) {
          try {
            process.kill(current, 'SIGINT'); // fast shutdown
          } catch {
            // already gone
          }
          for (let i = 0; i < 600 && isAlive(current); i++) await sleep(50);
        }
        rmSync(dir, { recursive: true, force: true });
      },
      ctl: async (action) => {
        const args =
          action === 'stop'
            ? ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop']
            : ['-D', data, '-l', log, '-m', 'fast', '-w', '-t', '60', '-o', settings, action];
        await run(...wrap('pg_ctl', args));
      },
    };
  } catch (error) {
    let log = '';
    try {
      log = readFileSync(join(dir, 'server.log'), 'utf8');
    } catch {
      // no log yet
    }
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${error instanceof Error ? error.message : String(error)}${log ? `\nserver log:\n${log}` : ''}`, {
      cause: error,
    });
  }
}
