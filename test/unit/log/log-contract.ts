/**
 * The one behaviour of every log of kapps (src/log/ndjson.ts), as one suite each implementation runs: a release's log
 * and a run's log, in files and in PostgreSQL.
 *
 * ```ts
 * describeLog('release log in files', async () => ({ append, appendDamaged, read, told, cleanup }));
 * ```
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { LogLine } from '../../../src/log/line.js';
import type { LogChunk } from '../../../src/log/ndjson.js';
import type { RunStore } from '../../../src/server/queue/run-store.js';

export interface LogFixture {
  /** Append well-formed lines to the log, in order. */
  append(lines: readonly LogLine[]): Promise<void>;
  /** Append one stored line that is not a log line (`{"no":"text"}` in the log's NDJSON form). */
  appendDamaged(): Promise<void>;
  read(offset: number, maxBytes: number): Promise<LogChunk>;
  /** What the store said of damaged lines so far. */
  readonly told: string[];
  cleanup(): Promise<void>;
}

/** A run submitted to `store` (opened), and how to append log lines to its feed. */
export async function runLog(store: RunStore): Promise<{ id: string; append: LogFixture['append'] }> {
  const outcome = await store.submit(
    { type: 'apply', project: 'shop', stack: 'dev', createdBy: 'ci', options: {} },
    { maxQueuedPerStack: 5, maxQueuedTotal: 5 },
  );
  if (outcome.kind === 'full') throw new Error('full');
  const id = outcome.run.id;
  return {
    id,
    append: async (lines) =>
      void (await store.appendFeed(
        id,
        lines.map((data) => ({ kind: 'log', data })),
      )),
  };
}

/** The damaged line's JSON, as `appendDamaged` stores it. */
export const DAMAGED_JSON = '{"no":"text"}';

function line(text: string, extra: Partial<LogLine> = {}): LogLine {
  return {
    time: '2026-11-25T10:00:00.000Z',
    stream: 'stdout',
    kapp: 'web:db',
    phase: 'install',
    step: 'apply',
    text,
    ...extra,
  };
}

const bytes = (lines: readonly LogLine[]): number =>
  Buffer.byteLength(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));

/** Every line, read `maxBytes` at a time from `offset`. */
async function readAll(log: LogFixture, maxBytes: number, offset = 0): Promise<LogLine[]> {
  const out: LogLine[] = [];
  for (;;) {
    const chunk = await log.read(offset, maxBytes);
    if (chunk.nextOffset === offset) return out;
    offset = chunk.nextOffset;
    out.push(...chunk.lines);
  }
}

export function describeLog(name: string, make: () => Promise<LogFixture>): void {
  describe(`log contract: ${name}`, () => {
    const made: LogFixture[] = [];
    afterEach(async () => {
      for (const f of made.splice(0)) await f.cleanup();
    });
    async function fresh(): Promise<LogFixture> {
      const f = await make();
      made.push(f);
      return f;
    }

    it('reads back what was appended, by byte offset of the NDJSON form', async () => {
      const log = await fresh();
      const first = [line('Install dev', { stream: 'kapps', kapp: undefined, phase: undefined, step: undefined })];
      const second = [line('zweite Zeile — ünïcødé ✓'), line('third', { stream: 'stderr' })];
      await log.append(first);
      await log.append(second);
      const clean = [...first, ...second].map((l) => JSON.parse(JSON.stringify(l)) as LogLine);
      expect(await log.read(0, 1 << 20)).toEqual({ lines: clean, nextOffset: bytes(clean) });
      expect(await log.read(bytes(first), 1 << 20)).toEqual({ lines: clean.slice(1), nextOffset: bytes(clean) });
      expect(await log.read(bytes(clean), 1 << 20)).toEqual({ lines: [], nextOffset: bytes(clean) });
      expect(await log.read(bytes(clean) + 100, 1 << 20)).toEqual({ lines: [], nextOffset: bytes(clean) + 100 });
    });

    it('starts a read from inside a line at the next line', async () => {
      const log = await fresh();
      await log.append([line('one'), line('two'), line('three')]);
      const oneEnd = bytes([line('one')]);
      expect((await log.read(1, 1 << 20)).lines.map((l) => l.text)).toEqual(['two', 'three']);
      expect((await log.read(oneEnd - 1, 1 << 20)).lines.map((l) => l.text)).toEqual(['two', 'three']);
      expect((await log.read(oneEnd + 1, 1 << 20)).lines.map((l) => l.text)).toEqual(['three']);
      // Inside the last line: nothing, and the offset stays.
      const all = bytes([line('one'), line('two'), line('three')]);
      expect(await log.read(all - 2, 1 << 20)).toEqual({ lines: [], nextOffset: all - 2 });
    });

    it('returns the whole lines that end within maxBytes, and always at least one', async () => {
      const log = await fresh();
      const lines = Array.from({ length: 30 }, (_, n) => line(`line ${n}`));
      await log.append(lines);
      const one = bytes([lines[0]!]);
      expect(await log.read(0, one)).toEqual({ lines: [lines[0]], nextOffset: one });
      expect(await log.read(0, one - 1)).toEqual({ lines: [lines[0]], nextOffset: one });
      expect(await log.read(0, 2 * one + 5)).toEqual({ lines: lines.slice(0, 2), nextOffset: 2 * one });
      expect(await log.read(one, 1)).toEqual({ lines: [lines[1]], nextOffset: 2 * one });
      expect(await readAll(log, 1)).toEqual(lines);
      expect(await readAll(log, 100)).toEqual(lines);
      expect(await readAll(log, 7 * one)).toEqual(lines);
    });

    it('skips a damaged line, counts it as read, and tells of it once', async () => {
      const log = await fresh();
      await log.append([line('before')]);
      await log.appendDamaged();
      await log.append([line('after')]);
      const damagedAt = bytes([line('before')]);
      const end = damagedAt + Buffer.byteLength(`${DAMAGED_JSON}\n`) + bytes([line('after')]);
      expect(await log.read(0, 1 << 20)).toEqual({ lines: [line('before'), line('after')], nextOffset: end });
      // From the damaged line: it is skipped, and the one after it is the first line returned.
      expect(await log.read(damagedAt, 1)).toEqual({ lines: [line('after')], nextOffset: end });
      expect(await readAll(log, 1)).toEqual([line('before'), line('after')]);
      expect(log.told).toHaveLength(1);
      expect(log.told[0]).toMatch(
        /^kapps: skipped a damaged line of a log \(.+\): a log line without its time, stream and text$/,
      );
      expect(log.told[0]).toContain(String(damagedAt));
    });

    it('keeps NUL and lone surrogates as U+FFFD, offsets counted in that form', async () => {
      const log = await fresh();
      await log.append([line('a\u0000b'), line('c\uD800d'), line('next')]);
      const read = await log.read(0, 1 << 20);
      expect(read.lines.map((l) => l.text)).toEqual(['a\uFFFDb', 'c\uFFFDd', 'next']);
      expect(read.nextOffset).toBe(bytes(read.lines));
    });
  });
}
