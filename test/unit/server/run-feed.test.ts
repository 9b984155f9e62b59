import { describe, expect, it } from 'vitest';
import { RunFeed } from '../../../src/server/runs/run-feed.js';
import type { FeedItem, RunStore } from '../../../src/server/queue/run-store.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A store whose appends take a few milliseconds each, and whose appends from `failFrom` on fail. */
function slowStore(failFrom = Infinity): { store: RunStore; batches: string[][] } {
  const batches: string[][] = [];
  const store = {
    appendFeed: async (_id: string, items: readonly FeedItem[]) => {
      await sleep(5);
      if (batches.length + 1 >= failFrom) {
        batches.push([]);
        throw new Error('disk full');
      }
      batches.push(items.map((item) => (item.kind === 'log' ? item.data.text : item.kind)));
      return batches.length;
    },
  } as unknown as RunStore;
  return { store, batches };
}

function feed(store: RunStore, errors: string[] = []): RunFeed {
  return new RunFeed({
    store,
    runId: 'r1',
    owner: 'test',
    flushMs: 50,
    flushItems: 10,
    logLimits: undefined,
    onWriteError: (_error, text) => errors.push(text),
  });
}

describe('a run feed', () => {
  it('while one batch is stored, what comes waits and goes in the next batch, in order', async () => {
    const { store, batches } = slowStore();
    const f = feed(store);
    const texts = Array.from({ length: 25_000 }, (_, i) => `line ${i}`);
    for (const text of texts.slice(0, 10)) f.log({ time: 't', stream: 'stdout', text });
    await sleep(1);
    for (const text of texts.slice(10)) f.log({ time: 't', stream: 'stdout', text });
    await f.close();
    expect(batches.map((b) => b.length)).toEqual([10, 10_000, 10_000, 4_990]);
    expect(batches.flat()).toEqual(texts);
  });

  it('stops writing at the first failure and tells of it once', async () => {
    const { store, batches } = slowStore(2);
    const errors: string[] = [];
    const f = feed(store, errors);
    for (let i = 0; i < 10; i++) f.log({ time: 't', stream: 'stdout', text: `a${i}` });
    await sleep(1);
    for (let i = 0; i < 10; i++) f.log({ time: 't', stream: 'stdout', text: `b${i}` });
    await sleep(20);
    for (let i = 0; i < 10; i++) f.log({ time: 't', stream: 'stdout', text: `c${i}` });
    await f.close();
    expect(errors).toEqual(['disk full']);
    expect(f.writeError).toBe('disk full');
    expect(batches.length).toBe(2);
  });
});
