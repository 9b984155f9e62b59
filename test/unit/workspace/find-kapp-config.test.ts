/**
 * Where a kapp's `sugarkube.yaml` is found in its workspace directory when no source holds one at its top: anywhere
 * below, without following symbolic links and leaving `.git` out; none for a directory that is missing or a file;
 * two of them an error naming both.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findKappConfig } from '../../../src/workspace/workspace.js';

const root = mkdtempSync(path.join(tmpdir(), 'kapps-find-config-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A kapp directory holding `files` (paths relative to it; `->target` makes a symbolic link). */
function kappDir(name: string, files: Record<string, string>): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(dir, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    if (content.startsWith('->')) symlinkSync(content.slice(2), file);
    else writeFileSync(file, content);
  }
  return dir;
}

describe('findKappConfig without sources', () => {
  it('finds the one sugarkube.yaml below the directory, whatever its depth', () => {
    const dir = kappDir('nested', { 'a/b/sugarkube.yaml': 'x', 'a/other.yaml': 'y', 'z.txt': '' });
    expect(findKappConfig(dir, [], 'm:k')).toBe(path.join(dir, 'a', 'b', 'sugarkube.yaml'));
  });

  it('does not follow symbolic links nor look in .git', () => {
    const elsewhere = kappDir('elsewhere', { 'sugarkube.yaml': 'x' });
    const dir = kappDir('links', {
      linked: `->${elsewhere}`,
      'file.yaml': `->${path.join(elsewhere, 'sugarkube.yaml')}`,
      '.git/sugarkube.yaml': 'x',
    });
    expect(findKappConfig(dir, [], 'm:k')).toBeUndefined();
  });

  it('finds none in a directory that is missing, empty or a file', () => {
    expect(findKappConfig(path.join(root, 'missing'), [], 'm:k')).toBeUndefined();
    expect(findKappConfig(kappDir('empty', {}), [], 'm:k')).toBeUndefined();
    const file = path.join(kappDir('holder', { 'plain-file': 'x' }), 'plain-file');
    expect(findKappConfig(file, [], 'm:k')).toBeUndefined();
  });

  it('refuses two of them, naming both in the order found', () => {
    const dir = kappDir('two', { 'b/sugarkube.yaml': 'x', 'a/sugarkube.yaml': 'x' });
    expect(() => findKappConfig(dir, [], 'm:k')).toThrow(
      `kapp m:k: several sugarkube.yaml files in its workspace directory: ${path.join(dir, 'a', 'sugarkube.yaml')}, ${path.join(dir, 'b', 'sugarkube.yaml')}`,
    );
  });
});
