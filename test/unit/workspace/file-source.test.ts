import {
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

describe('syncDirectory', () => {
  it('replaces a changed file instead of rewriting it, so a hard link to a file elsewhere is not modified', () => {
    const { src, dst, outside } = dirs();
    writeFileSync(path.join(src, 'f.txt'), 'v1\n');
    syncDirectory(src, dst);
    rmSync(path.join(dst, 'f.txt'));
    linkSync(path.join(outside, 'keep.txt'), path.join(dst, 'f.txt'));
    writeFileSync(path.join(src, 'f.txt'), 'version 2\n');
    expect(syncDirectory(src, dst)).toBe(1);
    expect(readFileSync(path.join(dst, 'f.txt'), 'utf8')).toBe('version 2\n');
    expect(readFileSync(path.join(outside, 'keep.txt'), 'utf8')).toBe('precious\n');
  });

  it('copies a link as the same link, and follows a changed target', () => {
    const { src, dst, outside } = dirs();
    symlinkSync(path.join(outside, 'keep.txt'), path.join(src, 'l'));
    syncDirectory(src, dst);
    expect(readlinkSync(path.join(dst, 'l'))).toBe(path.join(outside, 'keep.txt'));
    rmSync(path.join(src, 'l'));
    symlinkSync('elsewhere', path.join(src, 'l'));
    expect(syncDirectory(src, dst)).toBe(1);
    expect(readlinkSync(path.join(dst, 'l'))).toBe('elsewhere');
    expect(syncDirectory(src, dst)).toBe(0);
  });
});
