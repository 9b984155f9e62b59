/**
 * Nothing a run prints can exhaust the runs server: a step printing ~200 MB and a step printing one 50 MB line
 * without a newline, on a real `kapps serve` with small configured bounds. The run's log, its feed and its release's
 * log stay within the bounds on disk; the server's peak RSS (VmHWM, read from /proc) stays far below what was
 * printed; each `logs` answer stays small; /healthz answers throughout; the log keeps its head and tail and says what
 * it dropped. Both backends (for PostgreSQL, "on disk" is the size of the kapps tables with their indexes).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freshDatabases } from '../support/pg.js';
import type { LogLine } from '../../src/api/index.js';
import { cleanupProjects, fixtureProject, kapp, type FixtureProject } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun, type TestServer } from '../support/server.js';

const MIB = 1024 * 1024;
const MAX_LOG_BYTES = 4 * MIB;
const MAX_LINE = 4096;
const ANSWER_BYTES = 64 * 1024;

const databases = freshDatabases('kapps_bounds');

afterEach(async () => {
  await stopAllServers();
});
afterAll(async () => {
  cleanupProjects();
  await databases.dropAll();
});

type Backend = 'file' | 'postgres';

interface Served {
  readonly server: TestServer;
  /** Bytes the backend holds: the files under the backend directory, or the kapps tables with their indexes. */
  readonly stored: () => Promise<number>;
}

/** A script printing `mb` MB in 100-byte lines (`lines`), or one line of `mb` MB without a newline (`one-line`). */
const PRINTER = `
const [mode, mb] = process.argv.slice(2);
const total = Number(mb) * 1024 * 1024;
const chunk = mode === 'lines'
  ? Buffer.from(Array.from({ length: 10486 }, (_, i) => 'x'.repeat(89) + String(i).padStart(10, '0')).join('\\n') + '\\n')
  : Buffer.alloc(1024 * 1024, 'y');
let written = 0;
process.stdout.write('first-line\\n');
function more() {
  while (written < total) {
    written += chunk.length;
    if (!process.stdout.write(chunk)) return process.stdout.once('drain', more);
  }
  process.stdout.write(mode === 'lines' ? 'last-line\\n' : '-end-of-the-long-line');
}
more();
`;

function project(mode: 'lines' | 'one-line', mb: number): FixtureProject {
  const p = fixtureProject({
    stacks: { dev: { provider: 'local', manifests: [{ uri: 'manifests/shop.yaml' }] } },
    files: { 'print.mjs': PRINTER },
  });
  p.write('manifests/shop.yaml', {
    kapps: [
      kapp('noisy', {
        apply_install: [{ name: 'print', command: process.execPath, args: `${p.path('print.mjs')} ${mode} ${mb}` }],
        apply_delete: [],
      }),
    ],
  });
  return p;
}

async function serve(p: FixtureProject, backend: Backend): Promise<Served> {
  const config = join(p.dir, 'kapps-server.yaml');
  writeFileSync(
    config,
    `projects:\n  - name: shop\n    stack_file: stacks.yaml\nlimits:\n` +
      `  max_log_bytes: ${MAX_LOG_BYTES}\n  max_line_length: ${MAX_LINE}\n  max_log_answer_bytes: ${ANSWER_BYTES}\n`,
  );
  const url = backend === 'postgres' ? await databases.create() : undefined;
  const server = await startServer({
    args: ['--config', config, '--backend', url ?? p.kappsHome],
    env: p.env,
    cwd: p.dir,
  });
  return {
    server,
    stored: async () => {
      if (!url) return du(p.kappsHome);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ bytes: string }>(
          `SELECT sum(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_class c
            WHERE c.relkind = 'r' AND c.relname LIKE 'kapps%'`,
        );
        return Number(rows[0]?.bytes ?? 0) + du(p.kappsHome);
      } finally {
        await client.end();
      }
    },
  };
}

/** Bytes of every file under `dir`. */
function du(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

function peakRss(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmHWM:\s+([0-9]+) kB$/m.exec(status)?.[1];
  if (!kb) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(kb) * 1024;
}

/** Run an apply while /healthz is asked every 200 ms; every answer must come, 200, within 10 s. */
async function applyWatchingHealth(server: TestServer): Promise<{ id: string; health: number[] }> {
  const c = api(server.url);
  const run = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
  expect(run.status).toBe(202);
  const health: number[] = [];
  let done = false;
  const watcher = (async () => {
    while (!done) {
      const r = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
      health.push(r.status);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  })();
  try {
    await waitForRun(c, run.body.id!, undefined, 240_000);
  } finally {
    done = true;
    await watcher;
  }
  return { id: run.body.id!, health };
}

/** Every line of a run's log through the API, and the largest answer (bytes). */
async function readWholeLog(server: TestServer, id: string): Promise<{ lines: LogLine[]; largest: number }> {
  const lines: LogLine[] = [];
  let largest = 0;
  let offset = 0;
  for (;;) {
    const r = await fetch(`${server.url}/api/v1/runs/${id}/logs?offset=${offset}`);
    const text = await r.text();
    largest = Math.max(largest, Buffer.byteLength(text));
    const chunk = JSON.parse(text) as { lines: LogLine[]; nextOffset: number; complete: boolean };
    lines.push(...chunk.lines);
    if (chunk.complete) return { lines, largest };
    offset = chunk.nextOffset;
  }
}

describe.each(['file', 'postgres'] as const)('kapps serve (%s backend): a run cannot exhaust the server', (backend) => {
  it('a step printing 200 MB: the log keeps its head and tail within max_log_bytes, on disk and in memory', async () => {
    const p = project('lines', 200);
    const { server, stored } = await serve(p, backend);
    const { id, health } = await applyWatchingHealth(server);
    const ended = (await api(server.url).get(`/api/v1/runs/${id}`)).body;
    expect(ended.status, JSON.stringify(ended)).toBe('succeeded');
    expect(health.length).toBeGreaterThan(0);
    expect(health.every((s) => s === 200)).toBe(true);
    // The feed, the run's log and the release's log: each within its bound (the feed holds the log and the head
    // of the step's output events).
    const disk = await stored();
    expect(disk).toBeLessThan(5 * MAX_LOG_BYTES);
    expect(peakRss(server.pid)).toBeLessThan(400 * MIB);
    const { lines, largest } = await readWholeLog(server, id);
    expect(largest).toBeLessThan(ANSWER_BYTES + 2 * MAX_LINE + 4096);
    const texts = lines.map((l) => l.text);
    expect(texts).toContain('first-line');
    expect(texts).toContain('last-line');
    expect(texts.some((t) => /^kapps: the log reached its limit \(4\.0 MiB\)/.test(t))).toBe(true);
    const dropped = texts.find((t) => /^kapps: [0-9]+ line\(s\) \([0-9.]+ MiB\) of this log were dropped here/.test(t));
    expect(dropped).toBeDefined();
    // The end of the run is in the tail.
    expect(texts.at(-1)).toMatch(/succeeded|Recorded|release/i);
  }, 300_000);

  it('one 50 MB line without a newline is cut into pieces; each logs answer stays small', async () => {
    const p = project('one-line', 50);
    const { server, stored } = await serve(p, backend);
    const { id, health } = await applyWatchingHealth(server);
    expect((await api(server.url).get(`/api/v1/runs/${id}`)).body.status).toBe('succeeded');
    expect(health.every((s) => s === 200)).toBe(true);
    expect(await stored()).toBeLessThan(5 * MAX_LOG_BYTES);
    expect(peakRss(server.pid)).toBeLessThan(400 * MIB);
    const { lines, largest } = await readWholeLog(server, id);
    expect(largest).toBeLessThan(ANSWER_BYTES + 2 * MAX_LINE + 4096);
    const printed = lines.filter((l) => l.step === 'print');
    expect(printed.length).toBeGreaterThan(2);
    expect(printed.every((l) => l.text.length <= MAX_LINE)).toBe(true);
    expect(printed.at(-1)?.text).toMatch(/-end-of-the-long-line$/);
  }, 300_000);
});
