/**
 * Where releases are kept: the backend (`ReleaseStore`, see `store-types.ts`) resolved from flag, environment,
 * configuration and defaults, and opened. The backends (`file-store.ts`, `pg-store.ts`) are loaded only when opened.
 */
import { accessSync, constants, realpathSync, statfsSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { homedir } from 'node:os';
import { ReleaseStoreError } from './errors.js';
import { redactUrl } from '../diagnostics/redact.js';
import type { ReleaseStore } from './store-types.js';

/** Where releases are kept, resolved from flag, environment, configuration and defaults. */
export type BackendSpec = { kind: 'file'; root: string } | { kind: 'postgres'; url: string };

/** Where a backend setting came from, for messages. */
export type BackendSource = 'flag' | 'env' | 'config' | 'default';

/** Inputs of `resolveBackend`, in precedence order. */
export interface BackendInputs {
  /** `--backend`. Relative paths are taken from `cwd`. */
  flag?: string | undefined;
  /** `KAPPS_BACKEND`. Relative paths are taken from `cwd`. */
  env?: string | undefined;
  /** `backend:` in sugarkube-conf.yaml. Relative paths are taken from `configDir`. */
  config?: string | undefined;
  /** Directory of sugarkube-conf.yaml (for a relative `backend:`). */
  configDir?: string | undefined;
  /** The directory relative flag/env paths are taken from. */
  cwd: string;
  /** `$KAPPS_HOME`, the file backend's default root. */
  kappsHome: string;
}

/** `$KAPPS_HOME` if set and not empty, else `~/.kapps`. */
export function kappsHome(envValue: string | undefined): string {
  return envValue !== undefined && envValue !== '' ? resolve(envValue) : join(homedir(), '.kapps');
}

/**
 * Pick the backend: `--backend` > `KAPPS_BACKEND` > `backend:` in sugarkube-conf.yaml > files under
 * `$KAPPS_HOME`. A value is a `postgres://` / `postgresql://` URL, a `file://` URL or a directory path (the file
 * backend keeps releases in `<dir>/releases/…`). Empty values count as unset.
 */
export function resolveBackend(inputs: BackendInputs): { spec: BackendSpec; source: BackendSource } {
  const candidates: [BackendSource, string | undefined, string][] = [
    ['flag', inputs.flag, inputs.cwd],
    ['env', inputs.env, inputs.cwd],
    ['config', inputs.config, inputs.configDir ?? inputs.cwd],
  ];
  for (const [source, value, base] of candidates) {
    if (value === undefined || value.trim() === '') continue;
    return { spec: parseBackend(value.trim(), base, source), source };
  }
  return { spec: { kind: 'file', root: inputs.kappsHome }, source: 'default' };
}

/** Parse one backend value. */
export function parseBackend(value: string, base: string, source: BackendSource = 'flag'): BackendSpec {
  if (/^postgres(ql)?:\/\//i.test(value)) return { kind: 'postgres', url: value };
  if (/^file:\/\//i.test(value)) {
    const path = decodeURIComponent(value.replace(/^file:\/\//i, ''));
    if (!isAbsolute(path))
      throw new ReleaseStoreError(`the backend ${value} (${source}) must be an absolute file:// URL`);
    return { kind: 'file', root: path };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new ReleaseStoreError(
      `unsupported release backend ${redactUrl(value)} (${source}): use a directory or a postgres:// URL`,
    );
  }
  return { kind: 'file', root: resolve(base, value) };
}

/** A backend for messages: the directory, or the URL with its password masked. */
export function describeBackend(spec: BackendSpec): string {
  return spec.kind === 'file' ? spec.root : redactUrl(spec.url);
}

/** Open the store for a backend. The PostgreSQL driver is loaded only when needed. */
export async function openReleaseStore(
  spec: BackendSpec,
  options: { readonly maxConnections?: number; readonly applicationName?: string } = {},
): Promise<ReleaseStore> {
  if (spec.kind === 'file') {
    checkStoreDirectory(spec.root);
    const { FileReleaseStore } = await import('./file-store.js');
    return new FileReleaseStore(spec.root);
  }
  const { PgReleaseStore } = await import('./pg-store.js');
  return new PgReleaseStore(spec.url, options);
}

/** File systems that hold no user directories (proc, sysfs, devpts, debugfs, tracefs, securityfs, cgroup, cgroup2). */
const PSEUDO_FS = new Set([0x9fa0, 0x62656572, 0x1cd1, 0x64626720, 0x74726163, 0x73636673, 0x27e0eb, 0x63677270]);

/**
 * Check a file backend's directory before anything is created in it: its nearest existing ancestor must be a
 * directory on a normal file system (not /proc, /sys or /dev), writable when the directory is still to be created.
 * Node's recursive mkdir never returns under /proc, so this is checked, not left to mkdir.
 */
export function checkStoreDirectory(root: string): void {
  const refuse = (why: string) => new ReleaseStoreError(`the release store ${root} cannot be used: ${why}`);
  let existing = resolve(root);
  for (;;) {
    try {
      if (!statSync(existing).isDirectory()) throw refuse(`${existing} is not a directory`);
      break;
    } catch (error) {
      if (error instanceof ReleaseStoreError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      const parent = dirname(existing);
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || parent === existing) {
        throw refuse(`${existing}: ${(error as Error).message}`);
      }
      existing = parent;
    }
  }
  let real = existing;
  try {
    real = realpathSync(existing);
  } catch {
    // Checked below through statfs.
  }
  const pseudo = ['/proc', '/sys', '/dev'].find((p) => real === p || real.startsWith(`${p}/`));
  let fsType: number | undefined;
  try {
    fsType = Number(statfsSync(existing).type);
  } catch {
    fsType = undefined;
  }
  if (pseudo !== undefined || (fsType !== undefined && PSEUDO_FS.has(fsType))) {
    throw refuse(
      `${pseudo !== undefined ? `it is under ${pseudo}` : `${existing} is on a system file system`}, which cannot hold ` +
        'its directories (set KAPPS_HOME or --backend to a normal directory)',
    );
  }
  if (existing !== resolve(root)) {
    try {
      accessSync(existing, constants.W_OK);
    } catch {
      throw refuse(`${existing} is not writable, so ${root} cannot be created`);
    }
  }
}
