/**
 * Builders and backends shared by the release tests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pgUrl } from '../../support/pg.js';
import type { SpecKapp, StackSpec } from '../../../src/plan/spec.js';
import { FileReleaseStore } from '../../../src/release/file-store.js';
import { PgReleaseStore } from '../../../src/release/pg-store.js';
import type { ReleaseStore } from '../../../src/release/store-types.js';
import type { Release } from '../../../src/release/types.js';

/** A kapp of a spec with one install step whose args carry `version`. */
export function specKapp(id: string, version = '1', selected = true): SpecKapp {
  const step = {
    name: 'helm',
    command: 'helm',
    args: ['upgrade', id, `--version=${version}`],
    env: {},
    workingDir: '/w',
  };
  return {
    id,
    dependsOn: [],
    selected,
    conditionsOk: true,
    phases: { plan_install: [], apply_install: [step], plan_delete: [], apply_delete: [], output: [], clean: [] },
  };
}

/** A spec with one kapp per id. */
export function stackSpec(ids: readonly string[], stack = 'dev'): StackSpec {
  return { stack, kapps: ids.map((id) => specKapp(id)) };
}

/** A complete release record, for store tests. */
export function makeRelease(project: string, stack: string, revision: number, extra: Partial<Release> = {}): Release {
  const t = new Date(Date.UTC(2026, 0, 1, 12, 0, revision)).toISOString();
  return {
    project,
    stack,
    revision,
    operation: 'install',
    phase: 'succeeded',
    createdAt: t,
    modifiedAt: t,
    finishedAt: t,
    heartbeatAt: t,
    owner: { user: 'alice', host: 'build-1', pid: 4242 },
    command: ['kapps', 'install', 'stacks.yaml', stack, '-y'],
    selectors: { include: ['web:*'], exclude: [] },
    kappsVersion: '0.1.0',
    state: {
      'web:api': {
        status: 'installed',
        specDigest: 'd'.repeat(64),
        revision,
        updatedAt: t,
        outputs: { endpoint: 'https://api', replicas: 3, tags: ['yes', '0x10', null], nested: { 'a.b': true } },
        steps: [
          {
            phase: 'apply_install',
            name: 'helm',
            status: 'succeeded',
            exitCode: 0,
            startedAt: t,
            endedAt: t,
            durationMs: 1250,
            timedOut: false,
          },
        ],
      },
    },
    spec: stackSpec(['web:api'], stack),
    ...extra,
  };
}

/** A backend under test: how to open a fresh store (isolated from the other tests). */
export interface Backend {
  name: 'file' | 'postgres';
  /** A fresh place for releases: a temp directory, or the test database's URL. */
  location(): string;
  /** Open a store on a place from `location()`. */
  open(location: string): ReleaseStore;
}

let counter = 0;

/** A project name no other test uses (the PostgreSQL database is shared by the whole run). */
export function uniqueProject(prefix = 'proj'): string {
  counter++;
  return `${prefix}-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
}

const tempDirs: string[] = [];

/** A temp directory removed by `cleanupTempDirs`. */
export function tempDir(prefix = 'kapps-release-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** Remove the temp directories made by `tempDir`. */
export function cleanupTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Both backends, for `describe.each`. */
export const backends: Backend[] = [
  { name: 'file', location: () => tempDir(), open: (root) => new FileReleaseStore(root) },
  { name: 'postgres', location: () => pgUrl(), open: (url) => new PgReleaseStore(url) },
];
