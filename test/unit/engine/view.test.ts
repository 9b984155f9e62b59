/**
 * The engine reports through its context's view, as typed events, and formats no text: a view of its own receives
 * the events (the text streams stay silent); the text view says each as the CLI prints it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { EngineContext } from '../../../src/engine/context.js';
import { openStackFor } from '../../../src/engine/open.js';
import { beginRun, type RecordParams } from '../../../src/engine/release-run.js';
import type { EngineView } from '../../../src/engine/view.js';
import { TextEngineView } from '../../../src/report/engine-text.js';
import { cleanupProjects, fake, fixtureProject, kapp } from '../../support/project.js';

afterAll(cleanupProjects);

/** A view that keeps every event it is given, by name. */
function collectingView(): { view: EngineView; seen: [string, unknown][] } {
  const seen: [string, unknown][] = [];
  const keep =
    (name: string) =>
    (event: unknown): void => {
      seen.push([name, event]);
    };
  const view: EngineView = {
    stackWarnings: keep('stackWarnings'),
    sourceFetching: keep('sourceFetching'),
    legacyHistory: keep('legacyHistory'),
    outputsRefreshed: keep('outputsRefreshed'),
    previewShown: keep('previewShown'),
    previewUnavailable: keep('previewUnavailable'),
    releaseLogFailed: keep('releaseLogFailed'),
    releaseRecorded: keep('releaseRecorded'),
    rollbackPlanned: keep('rollbackPlanned'),
  };
  return { view, seen };
}

describe("the engine's view", () => {
  it('receives releaseRecorded as data when a run is recorded; nothing is written as text', async () => {
    const p = fixtureProject({
      manifests: { web: { kapps: [kapp('api', { apply_install: [fake('deploy', 'deploy-api')] })] } },
    });
    const text: string[] = [];
    const { view, seen } = collectingView();
    const ctx: EngineContext = {
      cwd: p.dir,
      env: { ...p.env, KAPPS_BACKEND: undefined },
      argv: ['kapps', 'install', '-y'],
      message: (t) => text.push(t),
      result: (t) => text.push(t),
      view,
    };
    const params: RecordParams & { parents: boolean; strictVars: boolean } = {
      stackFile: p.stackFile,
      stackName: 'dev',
      include: [],
      exclude: [],
      parents: false,
      strictVars: false,
    };
    const stack = await openStackFor(params, {}, ctx);
    const recorder = await beginRun(stack, params, 'install', undefined, ctx);
    await recorder.finish({ status: 'succeeded', results: new Map() });
    await recorder.close('failed');

    expect(seen).toEqual([
      [
        'releaseRecorded',
        {
          revision: 1,
          project: expect.any(String) as string,
          stack: 'dev',
          projectSource: expect.any(String) as string,
          where: expect.stringContaining(p.kappsHome) as string,
        },
      ],
    ]);
    expect(text).toEqual([]);
  });

  it('the text view says the events as the CLI prints them', () => {
    const out: string[][] = [[], []];
    const view: EngineView = new TextEngineView({
      message: (t) => out[0]!.push(t),
      result: (t) => out[1]!.push(t),
    });
    view.sourceFetching({ kapp: 'web:api', source: 'repo', missing: true });
    view.outputsRefreshed({ kapps: [] });
    view.releaseRecorded({ revision: 3, project: 'shop', stack: 'dev', projectSource: 'the flag', where: '/tmp/x' });
    expect(out).toEqual([
      [
        'Fetching repo for web:api (not in the workspace)...\n',
        'Refresh: no installed, unchanged kapp declares outputs; nothing was read.\n',
      ],
      ['Recorded as release 3 of shop/dev (project from the flag) in /tmp/x\n'],
    ]);
  });
});
