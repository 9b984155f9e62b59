/**
 * The release API the run commands call (`src/cli/release-run.ts`), on a real stack on disk and both backends:
 * taking the lock before the stack is complete (`lockRun`), then recording the spec, the kapps and the outcome.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cliContext } from '../../src/cli/context.js';
import { beginRun, lockRun } from '../../src/engine/release-run.js';
import type { ApplyArgs } from '../../src/cli/run-args.js';
import { openStackFromArgs } from '../../src/cli/stack-open.js';
import type { KappResult } from '../../src/execute/types.js';
import { ReleaseLockedError } from '../../src/release/errors.js';
import { specDigest } from '../../src/release/canonical-json.js';
import {
  BACKENDS,
  allReleases,
  cleanup,
  fakeKapp,
  freshBackend,
  makeProject,
  type TestProject,
} from '../fixtures/release/harness.js';

afterAll(cleanup);

function applyArgs(p: TestProject, backend: string, include: string[] = []): ApplyArgs {
  return {
    stackFile: p.stackFile,
    stackName: 'dev',
    include,
    exclude: [],
    parents: false,
    strictVars: false,
    dryRun: false,
    keepGoing: false,
    reporter: 'plain',
    verbose: false,
    color: false,
    validate: true,
    killGrace: 3,
    yes: true,
    oneShot: false,
    backend,
  };
}

function succeeded(id: string): KappResult {
  return { id, status: 'succeeded', role: 'selected', steps: [] };
}

describe.each(BACKENDS)('lockRun and beginRun (%s backend)', (kind) => {
  it('takes the lock with an empty spec, refuses a second run, then records the spec, the kapps and the phase', async () => {
    const backend = await freshBackend(kind);
    const p = makeProject('shop', backend, [
      { id: 'db', descriptor: fakeKapp({ apply: '--tag apply-db' }) },
      { id: 'api', dependsOn: ['db'], descriptor: fakeKapp({ apply: '--tag apply-api' }) },
    ]);
    const args = applyArgs(p, backend.value);
    const stack = await openStackFromArgs(args);

    const lock = await lockRun(stack, args, 'install', cliContext);
    expect(lock.revision).toBe(1);
    let [release] = await allReleases(backend, 'shop');
    expect(release).toMatchObject({ revision: 1, phase: 'applying', spec: { stack: 'dev', kapps: [] }, state: {} });

    const refused = await lockRun(stack, args, 'install', cliContext).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ReleaseLockedError);
    expect((refused as ReleaseLockedError).message).toMatch(
      new RegExp(
        `^shop/dev is locked by release 1 \\(install, applying\\) .* \\(pid ${process.pid}\\); the owner looks alive`,
      ),
    );
    expect(await allReleases(backend, 'shop')).toHaveLength(1);

    expect([...(await lock.changedKapps(stack))]).toEqual(['web:db', 'web:api']);
    const recorder = await lock.start(stack, new Set(['web:db']));
    [release] = await allReleases(backend, 'shop');
    const spec = stack.spec({ onlyIds: new Set(['web:db']), checkNoValue: false });
    // The complete spec: the planned steps, made portable, with the kapp's sources, templates and variables.
    expect(release?.spec).toMatchObject({ stack: spec.stack, format: 2, kapps: [{ id: 'web:db' }] });
    expect(release?.spec.kapps[0]?.sources).toHaveLength(1);
    await recorder.record(succeeded('web:db'));
    await recorder.record({ id: 'web:api', status: 'skipped', role: 'selected', steps: [] });
    await recorder.finish({ status: 'succeeded', results: new Map() });
    await recorder.close('failed');
    [release] = await allReleases(backend, 'shop');
    expect(release?.phase).toBe('succeeded');
    expect(Object.keys(release?.state ?? {})).toEqual(['web:db']);
    expect(release?.state['web:db']).toMatchObject({
      status: 'installed',
      revision: 1,
      specDigest: specDigest(release!.spec.kapps[0]!),
      specFormat: 2,
    });

    // The next run sees db unchanged; a run that ends before it starts is closed failed, with an empty spec.
    const second = await lockRun(stack, args, 'install', cliContext);
    expect(second.revision).toBe(2);
    expect([...(await second.changedKapps(stack))]).toEqual(['web:api']);
    await second.close('failed');
    const releases = await allReleases(backend, 'shop');
    expect(releases.map((r) => [r.revision, r.phase, r.spec.kapps.length])).toEqual([
      [1, 'succeeded', 1],
      [2, 'failed', 0],
    ]);
    expect(releases[1]?.state).toEqual(releases[0]?.state);

    // beginRun records the spec at once; a kapp that failed makes the release failed whatever the run said.
    const third = await beginRun(stack, args, 'install', undefined, cliContext);
    await third.record({ ...succeeded('web:api'), status: 'failed' });
    await third.finish({ status: 'succeeded', results: new Map() });
    await third.close('failed');
    const last = (await allReleases(backend, 'shop'))[2];
    expect(last?.spec.kapps.map((k) => k.id)).toEqual(['web:db', 'web:api']);
    expect(last?.phase).toBe('failed');
    expect(last?.state['web:api']?.status).toBe('failed');
  });
});
