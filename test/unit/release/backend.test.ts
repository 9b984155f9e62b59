import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/diagnostics/errors.js';
import { ReleaseStoreError } from '../../../src/release/errors.js';
import { redactText, redactUrl } from '../../../src/diagnostics/redact.js';
import { describeBackend, kappsHome, resolveBackend } from '../../../src/release/store.js';
import { resolveProject } from '../../../src/release/target.js';

describe('backend resolution', () => {
  const base = { cwd: '/work/here', kappsHome: '/home/u/.kapps', configDir: '/proj' };

  it('prefers the flag, then KAPPS_BACKEND, then backend: in the configuration, then $KAPPS_HOME', () => {
    const pgA = 'postgres://a@db/a';
    expect(resolveBackend({ ...base, flag: pgA, env: '/env', config: 'conf' })).toEqual({
      spec: { kind: 'postgres', url: pgA },
      source: 'flag',
    });
    expect(resolveBackend({ ...base, env: 'rel/env', config: 'conf' })).toEqual({
      spec: { kind: 'file', root: '/work/here/rel/env' },
      source: 'env',
    });
    expect(resolveBackend({ ...base, flag: '', env: ' ', config: 'state' })).toEqual({
      spec: { kind: 'file', root: '/proj/state' },
      source: 'config',
    });
    expect(resolveBackend(base)).toEqual({ spec: { kind: 'file', root: '/home/u/.kapps' }, source: 'default' });
  });

  it('accepts postgresql:// and file:// URLs', () => {
    expect(resolveBackend({ ...base, flag: 'postgresql://u@h/d' }).spec).toEqual({
      kind: 'postgres',
      url: 'postgresql://u@h/d',
    });
    expect(resolveBackend({ ...base, flag: 'file:///var/lib/kapps' }).spec).toEqual({
      kind: 'file',
      root: '/var/lib/kapps',
    });
  });

  it('refuses other URL schemes without printing their password', () => {
    const error = (() => {
      try {
        resolveBackend({ ...base, env: 'mysql://root:hunter22@db/kapps' });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ReleaseStoreError);
    expect((error as Error).message).toBe(
      'unsupported release backend mysql://root:***@db/kapps (env): use a directory or a postgres:// URL',
    );
  });

  it('defaults $KAPPS_HOME to ~/.kapps', () => {
    expect(kappsHome(undefined)).toBe(join(homedir(), '.kapps'));
    expect(kappsHome('')).toBe(join(homedir(), '.kapps'));
    expect(kappsHome('/srv/kapps')).toBe('/srv/kapps');
  });

  it('describes a backend without its password', () => {
    expect(describeBackend({ kind: 'postgres', url: 'postgres://u:pw@h:5432/d' })).toBe('postgres://u:***@h:5432/d');
    expect(describeBackend({ kind: 'file', root: '/x' })).toBe('/x');
  });
});

describe('redaction', () => {
  it.each([
    ['postgres://kapps:s3cret@db.example:5432/releases', 'postgres://kapps:***@db.example:5432/releases'],
    ['postgres://kapps:p%40ss@db/r?sslmode=require', 'postgres://kapps:***@db/r?sslmode=require'],
    ['postgres://kapps:p@ss@db/r', 'postgres://kapps:***@db/r'],
    ['postgres://kapps@db/r?password=abc&sslmode=disable', 'postgres://kapps@db/r?password=***&sslmode=disable'],
    ['postgres://db/r', 'postgres://db/r'],
    ['postgres://db:5432/r', 'postgres://db:5432/r'],
  ])('%s → %s', (url, redacted) => {
    expect(redactUrl(url)).toBe(redacted);
  });

  it('scrubs the URL and the password, raw or decoded, from any text', () => {
    const url = 'postgres://kapps:p%40ss-word@db/r';
    expect(redactText(`could not connect to ${url}: bad password p@ss-word or p%40ss-word`, url)).toBe(
      'could not connect to postgres://kapps:***@db/r: bad password *** or ***',
    );
  });
});

describe('project resolution', () => {
  it('prefers --project, then project: in the configuration, then the stack file folder', () => {
    expect(resolveProject({ flag: 'p1', config: 'p2', stackFile: 'stacks/s.yaml', cwd: '/w' })).toEqual({
      project: 'p1',
      source: 'flag',
    });
    expect(resolveProject({ flag: '', config: 'p2', stackFile: 'stacks/s.yaml', cwd: '/w' })).toEqual({
      project: 'p2',
      source: 'config',
    });
    // A folder named `stacks` (Sugarkube's layout) names no project: its parent does.
    expect(resolveProject({ stackFile: 'stacks/s.yaml', cwd: '/w/shop' })).toEqual({
      project: 'shop',
      source: 'folder',
      legacy: 'stacks',
    });
    expect(resolveProject({ stackFile: 's.yaml', cwd: '/w/shop' })).toEqual({ project: 'shop', source: 'folder' });
  });

  it('asks for --project when the stack file sits at the file system root', () => {
    expect(() => resolveProject({ stackFile: '/s.yaml', cwd: '/' })).toThrow(UsageError);
  });
});
