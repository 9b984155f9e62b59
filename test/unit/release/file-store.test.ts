import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { ReleaseConflictError, ReleaseRecordError } from '../../../src/release/errors.js';
import { encodeSegment, FileReleaseStore } from '../../../src/release/file-store.js';
import { orderRelease } from '../../../src/release/record-order.js';
import { cleanupTempDirs, makeRelease, tempDir } from './helpers.js';

afterAll(() => cleanupTempDirs());

describe('file release store', () => {
  it('makes its spec key once: callers at the same time get the one key, a read that may not create finds it', async () => {
    const root = tempDir();
    const store = new FileReleaseStore(root);
    expect(await store.specKey({ create: false })).toBeUndefined();
    expect(readdirSync(root)).toEqual([]);
    const keys = await Promise.all([store.specKey({ create: true }), store.specKey({ create: true }), store.specKey()]);
    const hex = keys.map((k) => k?.toString('hex'));
    expect(hex[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(hex).size).toBe(1);
    expect(readdirSync(root)).toEqual(['spec-key']);
    expect(readFileSync(join(root, 'spec-key'), 'utf8')).toBe(`${hex[0]}\n`);
    // Kept once read: a copy each time, and another store reads the same.
    (keys[0] as Buffer).fill(0);
    expect((await store.specKey({ create: false }))?.toString('hex')).toBe(hex[0]);
    expect((await new FileReleaseStore(root).specKey({ create: false }))?.toString('hex')).toBe(hex[0]);
  });

  it('keeps each release as readable YAML in releases/<project>/<stack>/<revision>.yaml', async () => {
    const root = tempDir();
    const store = new FileReleaseStore(root);
    const release = makeRelease('shop', 'dev', 1);
    await store.create(release);
    const file = join(root, 'releases', 'shop', 'dev', '1.yaml');
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n').slice(0, 6)).toEqual([
      '# A kapps release record. Written by kapps; see `kapps release show`.',
      'project: shop',
      'stack: dev',
      'revision: 1',
      'operation: install',
      'phase: succeeded',
    ]);
    expect(parse(text)).toEqual(release);
    // Strings that YAML 1.2 would read as other types are quoted, so they come back as strings.
    expect(text).toContain('- "0x10"');
  });

  it('makes files readable by the owner only (0600) and directories 0700', async () => {
    const root = tempDir();
    const store = new FileReleaseStore(root);
    await store.create(makeRelease('shop', 'dev', 1));
    await store.update(makeRelease('shop', 'dev', 1, { phase: 'failed' }));
    expect(statSync(join(root, 'releases', 'shop', 'dev', '1.yaml')).mode & 0o777).toBe(0o600);
    for (const dir of ['releases', 'releases/shop', 'releases/shop/dev']) {
      expect(statSync(join(root, dir)).mode & 0o777).toBe(0o700);
    }
  });

  it('leaves no temp files behind after create, a lost create and update', async () => {
    const root = tempDir();
    const store = new FileReleaseStore(root);
    await store.create(makeRelease('shop', 'dev', 1));
    await store.create(makeRelease('shop', 'dev', 1)).catch(() => undefined);
    await store.update(makeRelease('shop', 'dev', 1, { phase: 'failed' }));
    expect(readdirSync(join(root, 'releases', 'shop', 'dev'))).toEqual(['1.yaml']);
  });

  it('ignores temp files and other names when reading', async () => {
    const root = tempDir();
    const store = new FileReleaseStore(root);
    await store.create(makeRelease('shop', 'dev', 1));
    const dir = join(root, 'releases', 'shop', 'dev');
    writeFileSync(join(dir, '.2.yaml.123.abcdef.tmp'), 'project: [half writ');
    writeFileSync(join(dir, 'notes.txt'), 'hello');
    writeFileSync(join(dir, '02.yaml'), 'not: a release');
    expect((await store.latest('shop', 'dev'))?.revision).toBe(1);
    expect((await store.list('shop', 'dev')).map((s) => s.revision)).toEqual([1]);
  });

  it('reports an unparsable release file with its path instead of skipping it', async () => {
    const root = tempDir();
    const store = new FileReleaseStore(root);
    await store.create(makeRelease('shop', 'dev', 1));
    const file = join(root, 'releases', 'shop', 'dev', '2.yaml');
    writeFileSync(file, 'project: shop\nstack: [dev\n');
    for (const read of [() => store.latest('shop', 'dev'), () => store.list('shop', 'dev')]) {
      const error = await read().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReleaseRecordError);
      expect((error as Error).message).toMatch(
        new RegExp(`^${escape(file)} is not a valid release record: unparsable YAML`),
      );
    }
  });

  it('reports a release file that is not a release record, naming the fields', async () => {
    const root = tempDir();
    const store = new FileReleaseStore(root);
    const file = join(root, 'releases', 'shop', 'dev', '1.yaml');
    await store.create(makeRelease('shop', 'dev', 1));
    const broken = makeRelease('shop', 'dev', 1) as unknown as Record<string, unknown>;
    broken.phase = 'done';
    delete broken.owner;
    writeFileSync(file, JSON.stringify(broken));
    const error = await store.get('shop', 'dev', 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReleaseRecordError);
    expect((error as Error).message).toContain(`${file} is not a valid release record: `);
    expect((error as Error).message).toContain('phase: ');
    expect((error as Error).message).toContain('owner: ');
  });

  it('reports an empty release file', async () => {
    const root = tempDir();
    const store = new FileReleaseStore(root);
    await store.create(makeRelease('shop', 'dev', 1));
    writeFileSync(join(root, 'releases', 'shop', 'dev', '1.yaml'), '');
    await expect(store.latest('shop', 'dev')).rejects.toThrow(/1\.yaml is not a valid release record: \(top level\)/);
  });

  it("reads a record's spec when it is first asked for: the same release, keys in the same order", async () => {
    const root = tempDir();
    const store = new FileReleaseStore(root);
    const release = makeRelease('shop', 'dev', 1, { error: 'x' });
    await store.create(release);
    await store.appendState?.(
      release,
      { modifiedAt: new Date(Date.parse(release.modifiedAt) + 1).toISOString(), state: {} },
      { ifModifiedAt: release.modifiedAt },
    );
    for (const read of [await store.get('shop', 'dev', 1), await store.latest('shop', 'dev')]) {
      // As written: the record's order, the spec last.
      expect(Object.keys(read ?? {})).toEqual(Object.keys(orderRelease(release)));
      expect(Object.keys(read ?? {}).at(-1)).toBe('spec');
      expect(read?.spec).toEqual(release.spec);
      expect(JSON.parse(JSON.stringify(read))).toEqual({ ...release, modifiedAt: read?.modifiedAt });
      expect(structuredClone(read)?.spec).toEqual(release.spec);
    }
  });

  it('reports a damaged spec with the path and the field once the spec is read; the rest reads as before', async () => {
    const root = tempDir();
    const store = new FileReleaseStore(root);
    await store.create(makeRelease('shop', 'dev', 1));
    const file = join(root, 'releases', 'shop', 'dev', '1.yaml');
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(/\nspec:\n {2}stack: dev\n/);
    for (const [damaged, detail] of [
      [text.replace(/\nspec:\n {2}stack: dev\n/, '\nspec:\n  stack: [dev\n'), /unparsable YAML/],
      [text.replace(/\nspec:\n {2}stack: dev\n/, '\nspec:\n  stack: 7\n'), /spec\.stack: /],
    ] as const) {
      writeFileSync(file, damaged);
      const read = await store.get('shop', 'dev', 1);
      expect(read?.state['web:api']?.status).toBe('installed');
      let error: unknown;
      try {
        void read?.spec.kapps;
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ReleaseRecordError);
      expect((error as Error).message).toContain(`${file} is not a valid release record: `);
      expect((error as Error).message).toMatch(detail);
    }
  });

  it('reports a release file stored under another revision', async () => {
    const root = tempDir();
    const store = new FileReleaseStore(root);
    await store.create(makeRelease('shop', 'dev', 1));
    const dir = join(root, 'releases', 'shop', 'dev');
    writeFileSync(join(dir, '2.yaml'), readFileSync(join(dir, '1.yaml')));
    await expect(store.latest('shop', 'dev')).rejects.toThrow(
      'it records release 1 of shop/dev, not release 2 of shop/dev',
    );
  });

  it('encodes names so they stay one path segment', () => {
    expect(encodeSegment('shop', 'project')).toBe('shop');
    expect(encodeSegment('team/a b', 'project')).toBe('team%2Fa%20b');
    expect(encodeSegment('..', 'stack')).toBe('%2E%2E');
    expect(encodeSegment('.', 'stack')).toBe('%2E');
    expect(encodeSegment('prod.eu_1-x', 'stack')).toBe('prod.eu_1-x');
    expect(encodeSegment('ä', 'stack')).toBe('%C3%A4');
    expect(() => encodeSegment('', 'stack')).toThrow('the stack name is empty');
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('the compare-and-set of update', () => {
  it('loses no update when writers race: every update that succeeded is in the final record', async () => {
    const root = tempDir();
    const stores = [0, 1, 2, 3].map(() => new FileReleaseStore(root));
    const first = makeRelease('p', 's', 1, { state: {} });
    await stores[0]?.create(first);
    const succeeded: string[] = [];
    let conflicts = 0;
    let clock = Date.parse(first.modifiedAt);
    // Each writer reads, adds one state entry and writes it back if nobody wrote in between (retrying otherwise).
    const writer = async (store: FileReleaseStore, w: number) => {
      for (let i = 0; i < 25; i++) {
        for (;;) {
          const current = await store.get('p', 's', 1);
          if (!current) throw new Error('the record disappeared');
          const id = `w${w}:k${i}`;
          const entry = makeRelease('p', 's', 1).state['web:api'];
          if (!entry) throw new Error('no entry');
          const next = {
            ...current,
            modifiedAt: new Date(++clock).toISOString(),
            state: { ...current.state, [id]: entry },
          };
          try {
            await store.update(next, { ifModifiedAt: current.modifiedAt });
            succeeded.push(id);
            break;
          } catch (error) {
            if (!(error instanceof ReleaseConflictError)) throw error;
            conflicts++;
          }
        }
      }
    };
    await Promise.all(stores.map((store, w) => writer(store, w)));
    const final = await new FileReleaseStore(root).get('p', 's', 1);
    expect(Object.keys(final?.state ?? {}).sort()).toEqual([...succeeded].sort());
    expect(succeeded).toHaveLength(100);
    // The writers did race (else the test shows nothing).
    expect(conflicts).toBeGreaterThan(0);
    expect(readdirSync(join(root, 'releases', 'p', 's'))).toEqual(['1.yaml']);
  });

  it('takes over a lock file left empty by a writer killed between creating and filling it', async () => {
    const root = tempDir();
    const store = new FileReleaseStore(root);
    await store.create(makeRelease('shop', 'dev', 1));
    const lock = join(root, 'releases', 'shop', 'dev', '.1.yaml.lock');
    writeFileSync(lock, '');
    // Left 5 s ago: well within the 30 s after which any lock file counts as stale.
    const fiveSecondsAgo = new Date(Date.now() - 5_000);
    utimesSync(lock, fiveSecondsAgo, fiveSecondsAgo);
    await store.update(makeRelease('shop', 'dev', 1, { phase: 'failed' }));
    expect((await store.get('shop', 'dev', 1))?.phase).toBe('failed');
    expect(readdirSync(join(root, 'releases', 'shop', 'dev'))).toEqual(['1.yaml']);
  });
});
