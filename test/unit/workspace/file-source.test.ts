import {
  existsSync,
  statSync,
  linkSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  mkdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { syncDirectory } from '../../../src/workspace/file-source.js';

let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

function dirs(): { src: string; dst: string; outside: string } {
  root = mkdtempSync(path.join(tmpdir(), 'kapps-sync-'));
  const src = path.join(root, 'src');
  const outside = path.join(root, 'outside');
  mkdirSync(src);
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'keep.txt'), 'precious\n');
  return { src, dst: path.join(root, 'ws', 'k'), outside };
}

const manifest = (): string => path.join(root, 'ws', '.sugarkube', 'k.json');

describe('syncDirectory', () => {
  it('replaces a changed file instead of rewriting it, so a hard link to a file elsewhere is not modified', async () => {
    const { src, dst, outside } = dirs();
    writeFileSync(path.join(src, 'f.txt'), 'v1\n');
    await syncDirectory(src, dst, manifest());
    rmSync(path.join(dst, 'f.txt'));
    linkSync(path.join(outside, 'keep.txt'), path.join(dst, 'f.txt'));
    writeFileSync(path.join(src, 'f.txt'), 'version 2\n');
    expect((await syncDirectory(src, dst, manifest())).copied).toBe(1);
    expect(readFileSync(path.join(dst, 'f.txt'), 'utf8')).toBe('version 2\n');
    expect(readFileSync(path.join(outside, 'keep.txt'), 'utf8')).toBe('precious\n');
  });

  it('copies a link as the same link, and follows a changed target', async () => {
    const { src, dst, outside } = dirs();
    symlinkSync(path.join(outside, 'keep.txt'), path.join(src, 'l'));
    await syncDirectory(src, dst, manifest());
    expect(readlinkSync(path.join(dst, 'l'))).toBe(path.join(outside, 'keep.txt'));
    rmSync(path.join(src, 'l'));
    symlinkSync('elsewhere', path.join(src, 'l'));
    expect((await syncDirectory(src, dst, manifest())).copied).toBe(1);
    expect(readlinkSync(path.join(dst, 'l'))).toBe('elsewhere');
    expect((await syncDirectory(src, dst, manifest())).copied).toBe(0);
  });
});

describe('syncDirectory over an unchanged source', () => {
  it('copies nothing, leaves the copies untouched, and copies again only what changed', async () => {
    const { src, dst } = dirs();
    mkdirSync(path.join(src, 'sub'));
    writeFileSync(path.join(src, 'a.txt'), 'a\n');
    writeFileSync(path.join(src, 'sub', 'b.txt'), 'b\n');
    expect(await syncDirectory(src, dst, manifest())).toEqual({ copied: 2, removed: 0 });
    const inode = statSync(path.join(dst, 'a.txt')).ino;
    expect(await syncDirectory(src, dst, manifest())).toEqual({ copied: 0, removed: 0 });
    expect(statSync(path.join(dst, 'a.txt')).ino).toBe(inode);
    writeFileSync(path.join(src, 'sub', 'b.txt'), 'b, longer\n');
    expect(await syncDirectory(src, dst, manifest())).toEqual({ copied: 1, removed: 0 });
    expect(readFileSync(path.join(dst, 'sub', 'b.txt'), 'utf8')).toBe('b, longer\n');
  });

  it('copies a file again when the copy was changed in the workspace', async () => {
    const { src, dst } = dirs();
    writeFileSync(path.join(src, 'a.txt'), 'a\n');
    await syncDirectory(src, dst, manifest());
    writeFileSync(path.join(dst, 'a.txt'), 'edited by a step\n');
    expect((await syncDirectory(src, dst, manifest())).copied).toBe(1);
    expect(readFileSync(path.join(dst, 'a.txt'), 'utf8')).toBe('a\n');
  });

  it('removes what the source no longer has, never a file the kapp made', async () => {
    const { src, dst } = dirs();
    mkdirSync(path.join(src, 'sub'));
    writeFileSync(path.join(src, 'a.txt'), 'a\n');
    writeFileSync(path.join(src, 'sub', 'b.txt'), 'b\n');
    mkdirSync(path.join(src, 'gone'));
    writeFileSync(path.join(src, 'gone', 'c.txt'), 'c\n');
    await syncDirectory(src, dst, manifest());
    writeFileSync(path.join(dst, 'sub', 'state.txt'), 'made by a step\n');
    rmSync(path.join(src, 'sub'), { recursive: true });
    rmSync(path.join(src, 'gone'), { recursive: true });
    expect(await syncDirectory(src, dst, manifest())).toEqual({ copied: 0, removed: 3 });
    expect(existsSync(path.join(dst, 'sub', 'b.txt'))).toBe(false);
    expect(existsSync(path.join(dst, 'gone'))).toBe(false);
    expect(readFileSync(path.join(dst, 'sub', 'state.txt'), 'utf8')).toBe('made by a step\n');
    expect(readFileSync(path.join(dst, 'a.txt'), 'utf8')).toBe('a\n');
  });
});
