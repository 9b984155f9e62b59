import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ReleaseConflictError, ReleaseNotFoundError, RevisionTakenError } from '../../../src/release/errors.js';
import type { ReleaseStore } from '../../../src/release/store-types.js';
import { summarise } from '../../../src/release/types.js';
import { backends, cleanupTempDirs, makeRelease, uniqueProject } from './helpers.js';

describe.each(backends)('release store ($name backend)', (backend) => {
  const opened: ReleaseStore[] = [];
  const open = (location = backend.location()): ReleaseStore => {
    const store = backend.open(location);
    opened.push(store);
    return store;
  };
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });
  afterAll(() => cleanupTempDirs());

  it('has no releases for a new stack', async () => {
    const store = open();
    const project = uniqueProject();
    expect(await store.latest(project, 'dev')).toBeUndefined();
    expect(await store.get(project, 'dev', 1)).toBeUndefined();
    expect(await store.list(project, 'dev')).toEqual([]);
  });

  it('stores a release and gives it back unchanged', async () => {
    const store = open();
    const project = uniqueProject();
    const release = makeRelease(project, 'dev', 1);
    await store.create(release);
    expect(await store.get(project, 'dev', 1)).toEqual(release);
    expect(await store.latest(project, 'dev')).toEqual(release);
  });

  it('keeps the key order of outputs as written', async () => {
    const store = open();
    const project = uniqueProject();
    const release = makeRelease(project, 'dev', 1);
    release.state['web:api']!.outputs = { zeta: 1, alpha: { y: 2, b: 3 }, mid: 'x' };
    await store.create(release);
    const back = await store.get(project, 'dev', 1);
    const outputs = back?.state['web:api']?.outputs as Record<string, unknown>;
    expect(Object.keys(outputs)).toEqual(['zeta', 'alpha', 'mid']);
    expect(Object.keys(outputs.alpha as object)).toEqual(['y', 'b']);
  });

  it('returns the highest revision as the latest and lists newest first', async () => {
    const store = open();
    const project = uniqueProject();
    const releases = [1, 2, 3].map((n) => makeRelease(project, 'dev', n));
    for (const release of releases) await store.create(release);
    expect((await store.latest(project, 'dev'))?.revision).toBe(3);
    expect(await store.list(project, 'dev')).toEqual(releases.reverse().map(summarise));
  });

  it('lists a rollback with the revision it rolled back to, and the checkout of its source with its state', async () => {
    const store = open();
    const project = uniqueProject();
    const source = { repo: 'https://example.com/shop.git', commit: 'a'.repeat(40) };
    await store.create(makeRelease(project, 'dev', 1, { source: { ...source, dirty: true, path: 'stacks.yaml' } }));
    await store.create(makeRelease(project, 'dev', 2, { source: { ...source, dirty: false }, rollbackOf: 1 }));
    const [two, one] = await store.list(project, 'dev');
    expect(two).toMatchObject({ revision: 2, rollbackOf: 1, source: { ...source, dirty: false } });
    expect(one).toMatchObject({ revision: 1, source: { ...source, dirty: true, path: 'stacks.yaml' } });
    expect(one).not.toHaveProperty('rollbackOf');
    expect((await store.get(project, 'dev', 2))?.rollbackOf).toBe(1);
  });

  it('refuses to create a revision that exists, with RevisionTakenError, and keeps the first', async () => {
    const store = open();
    const project = uniqueProject();
    const first = makeRelease(project, 'dev', 1);
    await store.create(first);
    const second = makeRelease(project, 'dev', 1, { kappsVersion: '9.9.9' });
    const error = await store.create(second).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RevisionTakenError);
    expect((error as Error).message).toBe(`release 1 of ${project}/dev already exists`);
    expect((await store.get(project, 'dev', 1))?.kappsVersion).toBe('0.1.0');
  });

  it('lets exactly one of many simultaneous creates of one revision win', async () => {
    const location = backend.location();
    const stores = [open(location), open(location), open(location)];
    const project = uniqueProject();
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) =>
        stores[i % stores.length]!.create(makeRelease(project, 'dev', 1, { command: [`run-${i}`] })),
      ),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r) => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost.every((r) => r.status === 'rejected' && r.reason instanceof RevisionTakenError)).toBe(true);
    expect(await store0List(stores[0]!, project)).toEqual([1]);
  });

  it('replaces a release as a whole on update', async () => {
    const store = open();
    const project = uniqueProject();
    await store.create(makeRelease(project, 'dev', 1, { phase: 'applying', finishedAt: undefined }));
    const updated = makeRelease(project, 'dev', 1, {
      phase: 'failed',
      modifiedAt: '2026-02-01T00:00:00.000Z',
      finishedAt: '2026-02-01T00:00:00.000Z',
      state: {},
      unlocked: { by: 'bob@ops', at: '2026-02-01T00:00:00.000Z' },
    });
    await store.update(updated);
    expect(await store.get(project, 'dev', 1)).toEqual(updated);
    const [summary] = await store.list(project, 'dev');
    expect(summary).toEqual(summarise(updated));
  });

  it('refuses to update a release that does not exist', async () => {
    const store = open();
    const project = uniqueProject();
    const error = await store.update(makeRelease(project, 'dev', 4)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReleaseNotFoundError);
    expect((error as Error).message).toBe(`release 4 of ${project}/dev does not exist, so it cannot be updated`);
    expect(await store.list(project, 'dev')).toEqual([]);
  });

  it('updates only when modifiedAt still matches, if asked (compare-and-set)', async () => {
    const store = open();
    const project = uniqueProject();
    const original = makeRelease(project, 'dev', 1, { phase: 'applying' });
    await store.create(original);
    const byOther = { ...original, phase: 'failed' as const, modifiedAt: '2026-03-01T00:00:00.000Z' };
    await store.update(byOther, { ifModifiedAt: original.modifiedAt });
    const stale = { ...original, heartbeatAt: '2026-03-01T00:00:01.000Z', modifiedAt: '2026-03-01T00:00:01.000Z' };
    const error = await store.update(stale, { ifModifiedAt: original.modifiedAt }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReleaseConflictError);
    expect((error as ReleaseConflictError).current?.phase).toBe('failed');
    expect((await store.get(project, 'dev', 1))?.phase).toBe('failed');
  });

  it('keeps separate revision sequences per project and stack', async () => {
    const store = open();
    const a = uniqueProject('a');
    const b = uniqueProject('b');
    await store.create(makeRelease(a, 'dev', 1));
    await store.create(makeRelease(a, 'prod', 1));
    await store.create(makeRelease(b, 'dev', 1));
    await store.create(makeRelease(a, 'dev', 2));
    expect((await store.latest(a, 'dev'))?.revision).toBe(2);
    expect((await store.latest(a, 'prod'))?.revision).toBe(1);
    expect((await store.list(b, 'dev')).map((s) => s.revision)).toEqual([1]);
  });

  it('accepts project and stack names with slashes, spaces, dots and non-ASCII letters', async () => {
    const store = open();
    for (const [project, stack] of [
      [`${uniqueProject()}/team a`, '..'],
      [uniqueProject(), 'prod.eu-west/ä'],
    ] as const) {
      const release = makeRelease(project, stack, 1);
      await store.create(release);
      expect(await store.latest(project, stack)).toEqual(release);
    }
  });

  it('returns undefined for revisions that cannot exist', async () => {
    const store = open();
    const project = uniqueProject();
    await store.create(makeRelease(project, 'dev', 1));
    for (const revision of [0, -1, 1.5, 2 ** 40]) expect(await store.get(project, 'dev', revision)).toBeUndefined();
  });

  it('describes itself without a password', () => {
    const store = open();
    expect(store.description).not.toMatch(/:[^/@]+@/);
  });
});

async function store0List(store: ReleaseStore, project: string): Promise<number[]> {
  return (await store.list(project, 'dev')).map((s) => s.revision);
}
