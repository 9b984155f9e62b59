/**
 * A running release's journal: what recording costs grows with the kapps recorded, not with kapps × record size;
 * a writer killed mid-run leaves a release that reads back with every kapp whose journal line was complete, and
 * the unlock folds the journal into the record.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { FileReleaseStore } from '../../../src/release/file-store.js';
import { beginRelease, unlockRelease } from '../../../src/release/recorder.js';
import type { ReleaseStore } from '../../../src/release/store-types.js';
import { backends, cleanupTempDirs, stackSpec, uniqueProject } from './helpers.js';

const DIST = fileURLToPath(new URL('../../../dist', import.meta.url));
const WRITER = fileURLToPath(new URL('./fixtures/journal-writer.mjs', import.meta.url));

afterAll(() => cleanupTempDirs());

/** `store`, counting the bytes of what is handed to it to write (records whole, or journal entries). */
function counting(store: ReleaseStore): { store: ReleaseStore; bytes: () => number } {
  let bytes = 0;
  const count = (value: unknown): void => {
    bytes += Buffer.byteLength(JSON.stringify(value));
  };
  const wrapped: ReleaseStore = {
    description: store.description,
    latest: (p, s) => store.latest(p, s),
    get: (p, s, r) => store.get(p, s, r),
    list: (p, s) => store.list(p, s),
    create: (r) => {
      count(r);
      return store.create(r);
    },
    update: (r, o) => {
      count(r);
      return store.update(r, o);
    },
    appendLog: (p, s, r, l) => store.appendLog(p, s, r, l),
    readLog: (p, s, r, o, m) => store.readLog(p, s, r, o, m),
    specKey: (o) => store.specKey(o),
    close: () => store.close(),
  };
  const append = store.appendState?.bind(store);
  if (append) {
    wrapped.appendState = (r, c, o) => {
      count(c);
      return append(r, c, o);
    };
  }
  return { store: wrapped, bytes: () => bytes };
}

/** `n` kapp ids spread over manifests of 100. */
function kappIds(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `m${Math.floor(i / 100)}:k${i}`);
}

/** Begin an install of the kapps `ids` in a new project. */
function beginInstall(store: ReleaseStore, project: string, ids: readonly string[]) {
  return beginRelease({
    store,
    project: uniqueProject(project),
    stack: 'dev',
    operation: 'install',
    spec: stackSpec(ids),
    command: ['kapps', 'install', '-y'],
    selectors: { include: [], exclude: [] },
    kappsVersion: 'test',
  });
}

/** Record `n` kapps the way a run does (batches finishing together, each batch saved before the next), then finish. */
async function recordRun(store: ReleaseStore, n: number): Promise<void> {
  const ids = kappIds(n);
  const recorder = await beginInstall(store, 'bytes', ids);
  for (let i = 0; i < n; i += 50) {
    await Promise.all(
      ids.slice(i, i + 50).map((id, j) => recorder.recordKapp(id, { status: 'installed', outputs: { n: i + j } })),
    );
  }
  await recorder.finish('succeeded');
}

describe.each(backends)('release journal ($name backend)', (backend) => {
  it('writes bytes linear in the kapps recorded: 2,000 kapps cost at most 15 × what 200 cost', async () => {
    const inner = backend.open(backend.location());
    try {
      const small = counting(inner);
      await recordRun(small.store, 200);
      const large = counting(inner);
      await recordRun(large.store, 2000);
      expect(small.bytes()).toBeGreaterThan(0);
      expect(large.bytes()).toBeLessThanOrEqual(15 * small.bytes());
    } finally {
      await inner.close();
    }
  }, 60_000);
});

describe('a save of kapp states (file backend)', () => {
  it("hands the store the release's key and the batch's entries only, not the record so far", async () => {
    const inner = new FileReleaseStore(backends[0]?.location() ?? '');
    const calls: { release: string[]; kapps: string[] }[] = [];
    const store: ReleaseStore = {
      ...counting(inner).store,
      appendState: (release, change, options) => {
        calls.push({ release: Object.keys(release).sort(), kapps: Object.keys(change.state) });
        return inner.appendState(release, change, options);
      },
    };
    const ids = kappIds(300);
    const recorder = await beginInstall(store, 'scope', ids);
    const batches = [];
    for (let i = 0; i < ids.length; i += 50) batches.push(ids.slice(i, i + 50));
    for (const batch of batches) await Promise.all(batch.map((id) => recorder.recordKapp(id, { status: 'installed' })));
    const release = await recorder.finish('succeeded');
    expect(calls.map((c) => c.release)).toEqual(batches.map(() => ['project', 'revision', 'stack']));
    expect(calls.map((c) => c.kapps)).toEqual(batches);
    expect(Object.keys(release.state)).toHaveLength(300);
    await inner.close();
  });
});

describe('heartbeats (file backend)', () => {
  it('move the heartbeat through the journal, leaving the record file as it was written', async () => {
    const store = new FileReleaseStore(backends[0]?.location() ?? '');
    const project = uniqueProject('heartbeat');
    const recorder = await beginRelease({
      store,
      project,
      stack: 'dev',
      operation: 'install',
      spec: stackSpec(['web:api']),
      command: ['kapps', 'install', '-y'],
      selectors: { include: [], exclude: [] },
      kappsVersion: 'test',
      heartbeatMs: 5,
    });
    const record = store.fileOf(project, 'dev', 1);
    const written = readFileSync(record, 'utf8');
    const first = recorder.release.heartbeatAt;
    let latest: string | undefined = first;
    for (let i = 0; i < 200 && latest === first; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      latest = (await store.latest(project, 'dev'))?.heartbeatAt;
    }
    expect(latest).not.toBe(first);
    expect(readFileSync(record, 'utf8')).toBe(written);
    expect(readFileSync(join(store.directoryOf(project, 'dev'), '1.journal.ndjson'), 'utf8')).toContain(
      `"heartbeatAt":"${latest}"`,
    );
    await recorder.finish('succeeded');
    await store.close();
  });
});

describe('a writer killed mid-journal (file backend)', () => {
  it('leaves a release that reads back with every kapp saved before the kill; unlock folds the journal', async () => {
    const root = backends[0]?.location() ?? '';
    const project = uniqueProject('killed');
    const store = new FileReleaseStore(root);
    const saved: string[] = [];
    const child = spawn(process.execPath, [WRITER, DIST, root, project, 'dev', '400'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    let buffer = '';
    const killed = new Promise<void>((resolve) => {
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        buffer += chunk;
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          if (line.startsWith('saved ')) saved.push(line.slice('saved '.length));
          // Kill it while it is still recording, part-way through.
          if (saved.length === 120) {
            child.kill('SIGKILL');
            resolve();
          }
        }
      });
    });
    const exited = new Promise<{ signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (_code, signal) => resolve({ signal })),
    );
    await Promise.race([killed, exited]);
    expect((await exited).signal, stderr).toBe('SIGKILL');

    const journal = join(store.directoryOf(project, 'dev'), '1.journal.ndjson');
    expect(existsSync(journal)).toBe(true);
    // A write cut short by the crash: a last line without its newline, which readers ignore.
    appendFileSync(journal, '{"base":"2026-01-01T00:00:00.000Z","modifiedAt":"2026-01-01T00:00:0');

    const read = await store.get(project, 'dev', 1);
    expect(read?.phase).toBe('applying');
    for (const id of saved) expect(read?.state[id]?.status, id).toBe('installed');
    expect((await store.latest(project, 'dev'))?.state).toEqual(read?.state);

    const unlocked = await unlockRelease({ store, project, stack: 'dev', by: 'test@here' });
    expect(unlocked.unlocked).toBe(true);
    expect(existsSync(journal)).toBe(false);
    // The record alone now holds every saved kapp.
    const record = parse(readFileSync(store.fileOf(project, 'dev', 1), 'utf8')) as {
      phase: string;
      state: Record<string, { status: string }>;
    };
    expect(record.phase).toBe('failed');
    for (const id of saved) expect(record.state[id]?.status, id).toBe('installed');
    expect(Object.keys(record.state).sort()).toEqual(Object.keys(read?.state ?? {}).sort());
    await store.close();
  }, 60_000);
});
