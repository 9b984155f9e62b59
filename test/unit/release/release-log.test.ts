import { chmodSync, existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FileReleaseStore } from '../../../src/release/file-store.js';
import { ReleaseLogWriter } from '../../../src/release/log-writer.js';
import { formatLogLine, type LogLine } from '../../../src/log/line.js';
import { reportOnce } from '../../../src/log/ndjson.js';
import type { ReleaseStore } from '../../../src/release/store-types.js';
import { backends, cleanupTempDirs, makeRelease, tempDir, uniqueProject } from './helpers.js';

function line(text: string, extra: Partial<LogLine> = {}): LogLine {
  return { time: '2026-01-01T12:00:00.000Z', stream: 'kapps', text, ...extra };
}

/** Every line of a log, read `maxBytes` at a time from offset 0. */
async function readAll(store: ReleaseStore, project: string, maxBytes = 1 << 20): Promise<LogLine[]> {
  const out: LogLine[] = [];
  let offset = 0;
  for (;;) {
    const chunk = await store.readLog(project, 'dev', 1, offset, maxBytes);
    if (chunk.lines.length === 0) return out;
    expect(chunk.nextOffset).toBeGreaterThan(offset);
    offset = chunk.nextOffset;
    out.push(...chunk.lines);
  }
}

describe.each(backends)('release logs ($name backend)', (backend) => {
  const opened: ReleaseStore[] = [];
  const open = (): ReleaseStore => {
    const store = backend.open(backend.location());
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  afterAll(() => cleanupTempDirs());

  it('has no lines for a release without a log', async () => {
    const store = open();
    const project = uniqueProject();
    await store.create(makeRelease(project, 'dev', 1));
    expect(await store.readLog(project, 'dev', 1, 0, 1000)).toEqual({ lines: [], nextOffset: 0 });
    expect(await store.readLog(project, 'dev', 7, 0, 1000)).toEqual({ lines: [], nextOffset: 0 });
  });

  it('appends in order and reads back by byte offset of the NDJSON form, in pieces of about maxBytes', async () => {
    const store = open();
    const project = uniqueProject();
    await store.create(makeRelease(project, 'dev', 1));
    const first = [
      line('Install dev'),
      line('héllo wörld', { stream: 'stdout', kapp: 'web:api', phase: 'apply_install', step: 'helm' }),
    ];
    const second = Array.from({ length: 50 }, (_, i) => line(`line ${i}`, { stream: 'stderr', kapp: 'web:db' }));
    await store.appendLog(project, 'dev', 1, first);
    await store.appendLog(project, 'dev', 1, second);
    await store.appendLog(project, 'dev', 1, []);

    const whole = await store.readLog(project, 'dev', 1, 0, 1 << 20);
    expect(whole.lines).toEqual([...first, ...second]);
    const ndjson = [...first, ...second].map((l) => `${JSON.stringify(l)}\n`).join('');
    expect(whole.nextOffset).toBe(Buffer.byteLength(ndjson));

    // The offset after the first line is where the second starts.
    const firstBytes = Buffer.byteLength(`${JSON.stringify(first[0])}\n`);
    const rest = await store.readLog(project, 'dev', 1, firstBytes, 1 << 20);
    expect(rest.lines[0]).toEqual(first[1]);
    expect(rest.lines).toHaveLength(51);

    // Small pieces: never empty while lines remain, together the whole log.
    expect(await readAll(store, project, 100)).toEqual([...first, ...second]);
    expect(await readAll(store, project, 1)).toEqual([...first, ...second]);
    // At the end: nothing, and the offset stays.
    expect(await store.readLog(project, 'dev', 1, whole.nextOffset, 1000)).toEqual({
      lines: [],
      nextOffset: whole.nextOffset,
    });
  });

  it('the batching writer stores every line, in order, by the time close() returns', async () => {
    const store = open();
    const project = uniqueProject();
    await store.create(makeRelease(project, 'dev', 1));
    const writer = new ReleaseLogWriter(store, project, 'dev', 1, { intervalMs: 20, maxLines: 7 });
    const lines = Array.from({ length: 45 }, (_, i) => line(`n${i}`));
    for (const [i, l] of lines.entries()) {
      writer.write(l);
      if (i % 10 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    await writer.close();
    writer.write(line('after close'));
    await writer.flush();
    expect((await readAll(store, project)).map((l) => l.text)).toEqual(lines.map((l) => l.text));
  });
});

describe('release logs in files', () => {
  afterAll(() => cleanupTempDirs());

  it('writes <revision>.log.ndjson beside the record, mode 0600, and reads from inside a line at the next line', async () => {
    const root = tempDir();
    const store = new FileReleaseStore(root);
    const project = uniqueProject();
    await store.create(makeRelease(project, 'dev', 1));
    await store.appendLog(project, 'dev', 1, [line('one'), line('two')]);
    const file = store.logFileOf(project, 'dev', 1);
    expect(file).toBe(`${store.directoryOf(project, 'dev')}/1.log.ndjson`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe(`${JSON.stringify(line('one'))}\n${JSON.stringify(line('two'))}\n`);
    expect((await store.readLog(project, 'dev', 1, 3, 1000)).lines.map((l) => l.text)).toEqual(['two']);
  });

  it("makes the stack's directory (mode 0700) when a log is written before any record", async () => {
    const root = tempDir();
    const store = new FileReleaseStore(root);
    const project = uniqueProject();
    await store.appendLog(project, 'dev', 1, [line('early')]);
    expect(statSync(store.directoryOf(project, 'dev')).mode & 0o777).toBe(0o700);
    expect(readFileSync(store.logFileOf(project, 'dev', 1), 'utf8')).toBe(`${JSON.stringify(line('early'))}\n`);
  });

  it('leaves a last line still being written for the next read', async () => {
    const root = tempDir();
    const store = new FileReleaseStore(root);
    const project = uniqueProject();
    await store.create(makeRelease(project, 'dev', 1));
    await store.appendLog(project, 'dev', 1, [line('one')]);
    const file = store.logFileOf(project, 'dev', 1);
    writeFileSync(file, '{"time":"x","stre', { flag: 'a' });
    const chunk = await store.readLog(project, 'dev', 1, 0, 1000);
    expect(chunk.lines.map((l) => l.text)).toEqual(['one']);
    expect(await store.readLog(project, 'dev', 1, chunk.nextOffset, 1000)).toEqual({
      lines: [],
      nextOffset: chunk.nextOffset,
    });
  });

  it('skips a damaged line, telling once of the file and the byte, and never writes through a symbolic link', async () => {
    const root = tempDir();
    const told: string[] = [];
    const store = new FileReleaseStore(root, { onDamagedLine: reportOnce((message) => told.push(message)) });
    const project = uniqueProject();
    await store.create(makeRelease(project, 'dev', 1));
    const file = store.logFileOf(project, 'dev', 1);
    writeFileSync(file, `${JSON.stringify(line('ok'))}\nnot json\n${JSON.stringify(line('after'))}\n`);
    chmodSync(file, 0o600);
    expect((await store.readLog(project, 'dev', 1, 0, 1000)).lines.map((l) => l.text)).toEqual(['ok', 'after']);
    expect((await store.readLog(project, 'dev', 1, 0, 1000)).lines.map((l) => l.text)).toEqual(['ok', 'after']);
    expect(told).toEqual([
      `kapps: skipped a damaged line of a log (${file} at byte ${Buffer.byteLength(JSON.stringify(line('ok'))) + 1}): a log line that is not JSON`,
    ]);

    await store.create(makeRelease(project, 'dev', 2));
    const elsewhere = `${tempDir()}/target`;
    symlinkSync(elsewhere, store.logFileOf(project, 'dev', 2));
    await expect(store.appendLog(project, 'dev', 2, [line('x')])).rejects.toThrow(/cannot write .*2\.log\.ndjson/);
    expect(existsSync(elsewhere)).toBe(false);
    expect(() => store.logFileOf(project, 'dev', 0)).toThrow('0 is not a release revision');
  });
});

describe('the batching log writer', () => {
  it('tells of a batch it could not store once, and goes on with the next batches', async () => {
    const stored: string[] = [];
    let calls = 0;
    const store = {
      appendLog: (_p: string, _s: string, _r: number, lines: readonly LogLine[]) => {
        calls++;
        if (calls <= 2) return Promise.reject(new Error(`disk full ${calls}`));
        stored.push(...lines.map((l) => l.text));
        return Promise.resolve();
      },
    } as unknown as ReleaseStore;
    const errors: string[] = [];
    const writer = new ReleaseLogWriter(store, 'p', 's', 1, {
      maxLines: 1,
      onError: (e) => errors.push((e as Error).message),
    });
    for (const text of ['a', 'b']) {
      writer.write(line(text));
      await writer.flush();
    }
    for (const text of ['c', 'd']) writer.write(line(text));
    await writer.close();
    expect(errors).toEqual(['disk full 1']);
    expect(stored).toEqual(['c', 'd']);
  });

  it('while one batch is stored, the lines that come wait and go in the next ones, at most maxBatch a batch', async () => {
    const batches: string[][] = [];
    const store = {
      appendLog: async (_p: string, _s: string, _r: number, lines: readonly LogLine[]) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        batches.push(lines.map((l) => l.text));
      },
    } as unknown as ReleaseStore;
    const writer = new ReleaseLogWriter(store, 'p', 's', 1, { maxLines: 10, maxBatch: 300 });
    const texts = Array.from({ length: 1000 }, (_, i) => `line ${i}`);
    for (const text of texts.slice(0, 10)) writer.write(line(text));
    // The first ten lines' batch is being stored: the next lines wait for it.
    await new Promise((resolve) => setTimeout(resolve, 1));
    for (const text of texts.slice(10)) writer.write(line(text));
    await writer.close();
    expect(batches.map((b) => b.length)).toEqual([10, 300, 300, 300, 90]);
    expect(batches.flat()).toEqual(texts);
  });
});

describe('log lines as text', () => {
  it('tags step lines with kapp, phase and step and escapes control characters', () => {
    expect(formatLogLine(line('Install dev'))).toBe('Install dev\n');
    expect(
      formatLogLine(
        line('\u001b[31mred\u001b[0m\tok', { stream: 'stdout', kapp: 'web:api', phase: 'apply_install', step: 'helm' }),
      ),
    ).toBe('[web:api apply_install/helm] \\x1b[31mred\\x1b[0m\tok\n');
    expect(formatLogLine(line('oops', { stream: 'stderr', kapp: 'web:db' }))).toBe('[web:db] oops\n');
  });
});
