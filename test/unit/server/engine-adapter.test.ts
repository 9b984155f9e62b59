/**
 * The engine adapter on runs it must not run: each ends `failed` with the reason in its log and its `error`, and
 * nothing reaches the engine (no stack is opened): a project no longer registered, options no request may send, a
 * preview named by a run that is not an apply, an apply of a preview that is gone.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogLine } from '../../../src/api/index.js';
import { DEFAULT_LIMITS } from '../../../src/server/config.js';
import { ProjectRegistry } from '../../../src/server/projects.js';
import { FileRunStore } from '../../../src/server/queue/file-run-store.js';
import type { StoredRun } from '../../../src/server/queue/run-store.js';
import { createEngine, operationOutcome } from '../../../src/server/runs/engine-runner.js';
import { runPlan } from '../../../src/server/runs/run-plan.js';
import type { RunIO } from '../../../src/server/runs/executor.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'kapps-adapter-'));
  const stackFile = join(dir, 'stacks.yaml');
  writeFileSync(stackFile, 'dev: {}\n');
  const store = new FileRunStore(join(dir, 'backend'));
  await store.open('i1');
  cleanups.push(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const adapter = await createEngine({
    backend: { kind: 'file', root: join(dir, 'backend') },
    releases: undefined as never,
    projects: new ProjectRegistry([{ name: 'shop', stackFile, onPush: 'preview', notify: [] }]),
    workspaceOf: (project, stack) => join(dir, 'workspaces', project, stack),
    store,
    limits: DEFAULT_LIMITS,
  });
  const run = (over: Partial<StoredRun>): Promise<{ outcome: unknown; log: string[] }> => {
    const log: string[] = [];
    const io: RunIO = {
      emit: () => undefined,
      log: (line: LogLine) => log.push(line.text),
      message: (text) => log.push(text),
      signal: new AbortController().signal,
      onRelease: () => undefined,
      addChecks: () => Promise.resolve(),
    };
    const stored = {
      id: 'r-1',
      type: 'apply',
      project: 'shop',
      stack: 'dev',
      createdBy: 'ci',
      options: {},
      ...over,
    } as StoredRun;
    return adapter.execute(stored, io).then((outcome) => ({ outcome, log }));
  };
  return { run };
}

describe('engine adapter', () => {
  it('fails a run whose project is no longer registered', async () => {
    const { run } = await setup();
    expect(await run({ project: 'gone' })).toEqual({
      outcome: { status: 'failed', error: 'project gone is no longer registered' },
      log: ['kapps: project gone is no longer registered'],
    });
  });

  it('fails a run stored with options no request may send', async () => {
    const { run } = await setup();
    const { outcome } = await run({ options: { include: ['x'], shell: 'rm -rf /' } as never });
    expect(outcome).toMatchObject({ status: 'failed' });
    expect((outcome as { error: string }).error).toMatch(
      /^run r-1 has options no request may send \(.*\); nothing was run$/,
    );
  });

  it('refuses a preview named by a destroy instead of destroying without checking it', async () => {
    const { run } = await setup();
    expect(await run({ type: 'destroy', options: { previewRunId: 'p-1' } })).toEqual({
      outcome: { status: 'failed', error: 'a destroy run may not name a preview run (p-1); nothing was run' },
      log: ['kapps: a destroy run may not name a preview run (p-1); nothing was run'],
    });
  });

  it('fails an apply of a preview run that is gone as a stale preview, nothing applied', async () => {
    const { run } = await setup();
    expect(await run({ type: 'apply', options: { previewRunId: 'p-9' } })).toEqual({
      outcome: { status: 'failed', error: 'stale preview: preview run p-9 is gone' },
      log: ['kapps: stale preview: preview run p-9 is gone; nothing was applied.'],
    });
  });
});

describe('the outcome of an apply', () => {
  const run = { id: 'r-1', type: 'apply', project: 'shop', stack: 'dev', options: {} } as unknown as StoredRun;
  const plan = runPlan('apply', {});
  const result = (id: string, status: 'succeeded' | 'failed', reason?: string) =>
    [id, { id, role: 'selected', status, steps: [], ...(reason ? { reason } : {}) }] as const;

  it('says why the release could not be recorded, not "0 kapp(s) failed"', () => {
    const outcome = operationOutcome(
      run,
      plan,
      {
        status: 'failed',
        results: new Map([result('web:db', 'succeeded')]),
        recordError: 'connection terminated',
      } as never,
      3,
    );
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toBe('its release could not be recorded: connection terminated');
  });

  it('names the failed kapps first and the recording failure after them', () => {
    const outcome = operationOutcome(
      run,
      plan,
      {
        status: 'failed',
        results: new Map([result('web:db', 'failed', 'exit 1\nmore')]),
        recordError: 'disk full',
      } as never,
      3,
    );
    expect(outcome.error).toBe('1 kapp(s) failed; web:db: exit 1; its release could not be recorded: disk full');
  });
});
