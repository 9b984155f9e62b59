/**
 * `kapps release unlock -y` racing a live `install -y`, on both backends, with the built CLI. An unlock that reports
 * success wins: the release ends `failed` with the unlock recorded, and the run says it lost its release. Otherwise
 * the unlock fails with a conflict, or finds the run already finished. Rounds: KAPPS_RACE_REPEAT (default 10) per
 * backend; the moments are seeded (KAPPS_E2E_SEED replays one).
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  BACKENDS,
  allReleases,
  cleanup,
  fakeKapp,
  freshBackend,
  makeProject,
  seededRandom,
  waitFor,
} from '../fixtures/release/harness.js';

afterAll(cleanup);

const ROUNDS = Number(process.env.KAPPS_RACE_REPEAT ?? 10);
const SEED = Number(process.env.KAPPS_E2E_SEED ?? 20_261_125);

describe.each(BACKENDS)('unlock racing a live run (%s backend)', (kind) => {
  it(
    `never reports an unlock that the run then overwrites (${ROUNDS} rounds)`,
    { timeout: 120_000 + ROUNDS * 30_000 },
    async () => {
      const backend = await freshBackend(kind);
      const random = seededRandom(SEED + (kind === 'file' ? 0 : 1));
      const p = makeProject('shop', backend, []);
      const tally = { unlocked: 0, conflict: 0, finished: 0 };
      let unlockMs = 600;
      for (let round = 0; round < ROUNDS; round++) {
        // Ten independent kapps finish one after another over the step time, so the run saves its release every
        // 100 ms until it ends; the unlock starts as the steps start and lands anywhere from the middle of that stream
        // of saves to after the run's last one.
        // The step time follows how long the last unlock took to start and run (the machine's load sets it), so that
        // the unlock keeps landing around the run's last saves whatever the load.
        const stepMs = Math.round(unlockMs * (0.3 + random() * 1.2));
        p.writeKapps(
          Array.from({ length: 10 }, (_, i) => ({
            id: `k${i}`,
            descriptor: fakeKapp({ apply: `--tag apply-k${i} --sleep ${Math.round((stepMs * (i + 1)) / 10)}` }),
          })),
        );
        const before = p.traceLines().length;
        const run = p.start(['install', 'stacks.yaml', 'dev', '-y', '--workers', '10']);
        await waitFor('the steps to start', () => run.exited() || p.traceLines().length > before, 60_000);
        const unlockStart = Date.now();
        const unlock = await p.run(['release', 'unlock', 'stacks.yaml', 'dev', '-y']);
        unlockMs = Date.now() - unlockStart;
        const ran = await run.done;
        const releases = await allReleases(backend, 'shop');
        const last = releases.at(-1);
        const context = `seed ${SEED}, round ${round}, step ${stepMs} ms\nunlock (${unlock.code}): ${unlock.stdout}${unlock.stderr}\nrun (${ran.code}): ${ran.stderr}`;
        expect(releases.length, context).toBe(round + 1);
        if (unlock.code === 0 && unlock.stdout.startsWith('Unlocked shop/dev:')) {
          tally.unlocked++;
          expect(unlock.stdout, context).toContain(`release ${last?.revision} (was applying) is now failed`);
          expect(last?.phase, context).toBe('failed');
          expect(last?.unlocked, context).toBeDefined();
          expect(ran.code, context).not.toBe(0);
          expect(ran.stderr, context).toMatch(
            /was changed by another process \(unlocked by [^)]+\) while this run was recording it; this run no longer writes it/,
          );
        } else if (unlock.code === 0) {
          // The run had finished before the unlock looked: nothing to unlock, and the run's outcome stands.
          tally.finished++;
          expect(unlock.stdout, context).toBe(
            `Nothing to unlock: the latest release of shop/dev, revision ${last?.revision}, is succeeded.\n`,
          );
          expect(ran.code, context).toBe(0);
          expect(last?.phase, context).toBe('succeeded');
          expect(last?.unlocked, context).toBeUndefined();
        } else {
          tally.conflict++;
          expect(unlock.code, context).toBe(1);
          expect(unlock.stderr, context).toContain('was changed by another process');
          expect(last?.unlocked, context).toBeUndefined();
        }
      }
      // The figures, for the record of how often each outcome came up.
      console.log(`unlock race, ${kind} backend, ${ROUNDS} rounds, seed ${SEED}: ${JSON.stringify(tally)}`);
      expect(tally.unlocked + tally.conflict + tally.finished).toBe(ROUNDS);
    },
  );
});
