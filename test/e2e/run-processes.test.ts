/**
 * Processes that outlive what kapps controls, on the built CLI: a step's descendant that left its process group
 * (setsid) but holds the step's output open, in both spawn modes (the process server and KAPPS_INPROCESS_SPAWN=1).
 * kapps stops waiting for that output within the kill grace period and says so. Nothing here asserts a duration:
 * the holders sleep 30 s and each test's own limit is 20 s, so a run that waits for them fails the test.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupProjects, eventsOf, fake, fixtureProject, kapp, kappStatuses } from '../support/project.js';
import { markersKilledAfterEach } from '../support/processes.js';

afterAll(cleanupProjects);
const newMarker = markersKilledAfterEach();

const MODES = [
  ['the process server', {}],
  ['KAPPS_INPROCESS_SPAWN=1', { KAPPS_INPROCESS_SPAWN: '1' }],
] as const;

describe.each(MODES)('a process that left the step group holds its output (%s)', (_name, env) => {
  it('a step with timeout 1 ends as timed out, without waiting for the holder', { timeout: 20_000 }, async () => {
    const marker = newMarker();
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp('k', {
              apply_install: [fake('apply', 'k', ['--setsid-sleep', '30', marker, '--hang'], { timeout: 1 })],
            }),
          ],
        },
      },
    });
    const r = await p.runJson('install', ['-y', '--kill-grace', '1'], { env });
    expect(r.code, r.stderr).toBe(1);
    const step = eventsOf(r.events, 'step-finished')[0];
    expect(step).toMatchObject({ status: 'failed', timedOut: true, reason: 'timed out after 1 s' });
    expect(kappStatuses(r.events)['web:k']).toBe("failed: apply_install step 'apply' timed out after 1 s");
    const warnings = eventsOf(r.events, 'log').map((e) => e.message);
    expect(warnings).toContain(
      "apply_install step 'apply': stopped reading output: a process outside the step's group still holds it",
    );
  });

  it(
    'a step whose process exits 0 succeeds once the grace period after its exit is over',
    { timeout: 20_000 },
    async () => {
      const marker = newMarker();
      const p = fixtureProject({
        manifests: {
          web: {
            kapps: [
              kapp('k', {
                apply_install: [
                  fake('apply', 'k', ['--stdout', 'before', '--setsid-sleep', '30', marker, '--stdout', 'after'], {
                    print: 'always',
                  }),
                ],
              }),
              kapp('next', { apply_install: [fake('apply', 'next')] }, { depends_on: [{ id: 'k' }] }),
            ],
          },
        },
      });
      const r = await p.run('install', ['-y', '--kill-grace', '1', '--reporter', 'plain'], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('[web:k] before\n');
      expect(r.stdout).toContain('[web:k] after\n');
      expect(r.stdout).toContain(
        "[web:k] warning: apply_install step 'apply': stopped reading output 1 s after the step's process exited: a process it started still holds it\n",
      );
      expect(r.stdout).toMatch(/install succeeded in \S+: 2 succeeded, 0 failed/);
    },
  );
});
