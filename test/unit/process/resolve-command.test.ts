import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { clearCommandCache, resolveCommand } from '../../../src/process/resolve-command.js';

const root = mkdtempSync(path.join(tmpdir(), 'kapps-resolve-'));
const first = path.join(root, 'first');
const second = path.join(root, 'second');
const work = path.join(root, 'work');
for (const dir of [first, second, work, path.join(first, 'a-directory')]) mkdirSync(dir, { recursive: true });

function file(at: string, mode: number): string {
  writeFileSync(at, '#!/bin/sh\n');
  chmodSync(at, mode);
  return at;
}

file(path.join(first, 'tool'), 0o755);
file(path.join(second, 'tool'), 0o755);
file(path.join(first, 'not-exec'), 0o644);
file(path.join(second, 'not-exec'), 0o755);
file(path.join(second, 'only-second'), 0o755);
mkdirSync(path.join(second, 'a-directory-too'));
file(path.join(work, 'local.sh'), 0o755);
file(path.join(work, 'plain.txt'), 0o644);
symlinkSync(path.join(second, 'only-second'), path.join(first, 'linked'));

const PATH = `${first}:${second}`;

afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeEach(() => clearCommandCache());

describe('resolveCommand', () => {
  it('takes the first PATH entry that has the name', () => {
    expect(resolveCommand('tool', { cwd: work, pathEnv: PATH })).toBe(path.join(first, 'tool'));
    expect(resolveCommand('tool', { cwd: work, pathEnv: `${second}:${first}` })).toBe(path.join(second, 'tool'));
  });

  it('passes over files without an execute bit, and directories', () => {
    expect(resolveCommand('not-exec', { cwd: work, pathEnv: PATH })).toBe(path.join(second, 'not-exec'));
    expect(resolveCommand('a-directory', { cwd: work, pathEnv: PATH })).toBeUndefined();
    expect(resolveCommand('a-directory-too', { cwd: work, pathEnv: PATH })).toBeUndefined();
  });

  it('follows symlinks to executable files', () => {
    expect(resolveCommand('linked', { cwd: work, pathEnv: PATH })).toBe(path.join(first, 'linked'));
  });

  it('returns undefined for a name on no PATH entry, and for an empty name', () => {
    expect(resolveCommand('kapps-nowhere', { cwd: work, pathEnv: PATH })).toBeUndefined();
    expect(resolveCommand('', { cwd: work, pathEnv: PATH })).toBeUndefined();
  });

  it('resolves a name with a slash against cwd, ignoring PATH', () => {
    expect(resolveCommand('./local.sh', { cwd: work, pathEnv: PATH })).toBe(path.join(work, 'local.sh'));
    expect(resolveCommand('../first/tool', { cwd: work, pathEnv: '' })).toBe(path.join(first, 'tool'));
    expect(resolveCommand(path.join(second, 'tool'), { cwd: work, pathEnv: undefined })).toBe(
      path.join(second, 'tool'),
    );
    expect(resolveCommand('./plain.txt', { cwd: work, pathEnv: PATH })).toBeUndefined();
    expect(resolveCommand('./missing', { cwd: work, pathEnv: PATH })).toBeUndefined();
  });

  it('does not look in cwd for a bare name unless PATH says so (an empty entry means cwd)', () => {
    expect(resolveCommand('local.sh', { cwd: work, pathEnv: PATH })).toBeUndefined();
    expect(resolveCommand('local.sh', { cwd: work, pathEnv: `${first}::${second}` })).toBe(path.join(work, 'local.sh'));
    expect(resolveCommand('local.sh', { cwd: work, pathEnv: `.` })).toBe(path.join(work, 'local.sh'));
  });

  it('uses /usr/bin:/bin when there is no PATH', () => {
    expect(resolveCommand('sh', { cwd: work, pathEnv: undefined })).toMatch(/^\/(usr\/)?bin\/sh$/);
  });

  it('finds a command installed after an earlier lookup missed it', () => {
    const late = path.join(second, 'installed-later');
    expect(resolveCommand('installed-later', { cwd: work, pathEnv: PATH })).toBeUndefined();
    file(late, 0o755);
    expect(resolveCommand('installed-later', { cwd: work, pathEnv: PATH })).toBe(late);
  });

  it('looks again when a cached command has been removed', () => {
    const gone = file(path.join(first, 'removed-later'), 0o755);
    file(path.join(second, 'removed-later'), 0o755);
    expect(resolveCommand('removed-later', { cwd: work, pathEnv: PATH })).toBe(gone);
    rmSync(gone);
    expect(resolveCommand('removed-later', { cwd: work, pathEnv: PATH })).toBe(path.join(second, 'removed-later'));
  });

  it('keys the cache on cwd when PATH has relative entries', () => {
    const other = path.join(root, 'other');
    mkdirSync(other);
    expect(resolveCommand('local.sh', { cwd: work, pathEnv: '.' })).toBe(path.join(work, 'local.sh'));
    expect(resolveCommand('local.sh', { cwd: other, pathEnv: '.' })).toBeUndefined();
  });
});
