/**
 * The runs server's durable writer (src/log/durable-writer.ts): the built `durable.ts` with its worker threads
 * started, as `kapps serve` starts them, against the same module's writes made on the calling thread. The same
 * files, the same modes, and the same errors (code, syscall, path) for the same mistakes.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type * as Durable from '../../src/log/durable.js';

const built = new URL('../../dist/log/durable.js', import.meta.url).href;
const root = mkdtempSync(join(tmpdir(), 'kapps-durable-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `text` with the directory and the temporary files' random names taken out. */
function plain(text: string, dir: string): string {
  return text.replaceAll(dir, '<dir>').replace(/\.(\w+\.\w+)\.\d+\.[0-9a-f]+\.tmp/g, '.$1.<pid>.<random>.tmp');
}

/** What a write left, or the error it threw, as plain data. */
async function outcome(dir: string, write: () => Promise<void>): Promise<unknown> {
  try {
    await write();
  } catch (e) {
    const error = e as NodeJS.ErrnoException;
    return {
      error: plain(error.message, dir),
      code: error.code,
      syscall: error.syscall,
      path: error.path === undefined ? undefined : plain(error.path, dir),
    };
  }
  return Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((name) => {
        const file = join(dir, name);
        const st = statSync(file);
        return [name, st.isFile() ? { text: readFileSync(file, 'utf8'), mode: st.mode & 0o777 } : 'dir'];
      }),
  );
}

/** Each case in a fresh directory: the same steps through `durable`. */
async function cases(durable: typeof Durable, base: string): Promise<Record<string, unknown>> {
  const dir = (name: string): string => {
    const d = join(base, name);
    mkdirSync(d, { recursive: true });
    return d;
  };
  const out: Record<string, unknown> = {};
  let d = dir('replace');
  writeFileSync(join(d, 'run.json'), 'old');
  out.replace = await outcome(d, () => durable.replaceDurably(join(d, 'run.json'), '{"status":"running"}\n'));
  d = dir('append');
  out.append = await outcome(d, async () => {
    await durable.appendSynced(join(d, 'journal.ndjson'), 'a\n');
    await durable.appendNdjson(join(d, 'journal.ndjson'), 'b\n');
    await durable.appendSynced(join(d, 'journal.ndjson'), '€ c\n');
  });
  d = dir('create');
  out.create = await outcome(d, () => durable.writeSynced(join(d, 'key'), 'k\n'));
  out.createTaken = await outcome(d, () => durable.writeSynced(join(d, 'key'), 'again\n'));
  d = dir('missing');
  out.replaceMissingDir = await outcome(d, () => durable.replaceDurably(join(d, 'gone', 'run.json'), 'x'));
  d = dir('link');
  writeFileSync(join(d, 'target'), 'kept');
  symlinkSync(join(d, 'target'), join(d, 'feed.ndjson'));
  out.appendThroughLink = await outcome(d, () => durable.appendNdjson(join(d, 'feed.ndjson'), 'x\n'));
  d = dir('dir-in-the-way');
  mkdirSync(join(d, 'run.json'));
  out.replaceOntoDirectory = await outcome(d, () => durable.replaceDurably(join(d, 'run.json'), 'x'));
  d = dir('sync');
  out.syncDirectory = await outcome(d, () => durable.syncDirectory(d));
  out.syncMissingDirectory = await outcome(d, () => durable.syncDirectory(join(d, 'none')));
  return out;
}

describe('the durable writer', () => {
  it('writes what the calls on the thread write, and fails as they fail', async () => {
    const durable = (await import(built)) as typeof Durable;
    const onThread = await cases(durable, join(root, 'thread'));
    expect(durable.durableWriterCount()).toBe(0);
    await durable.startDurableWriters();
    expect(durable.durableWriterCount()).toBe(2);
    const inWorker = await cases(durable, join(root, 'worker'));
    expect(inWorker).toEqual(onThread);
    expect(onThread.replace).toEqual({ 'run.json': { text: '{"status":"running"}\n', mode: 0o600 } });
    expect(onThread.append).toEqual({ 'journal.ndjson': { text: 'a\nb\n€ c\n', mode: 0o600 } });
    expect(onThread.createTaken).toMatchObject({ code: 'EEXIST', syscall: 'open', path: '<dir>/key' });
    expect(onThread.appendThroughLink).toMatchObject({ code: 'ELOOP', syscall: 'open' });
    expect(onThread.replaceOntoDirectory).toMatchObject({ code: 'EISDIR', syscall: 'rename' });
    // Nothing left behind by the writes that failed: no temporary file beside the directory in the way.
    expect(readdirSync(join(root, 'worker', 'dir-in-the-way'))).toEqual(['run.json']);
  });
});
