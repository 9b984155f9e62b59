/**
 * The release lock under stress, with the built CLI on both backends: many runs starting at once, and runs killed
 * with SIGKILL at random moments (seeded: set KAPPS_E2E_SEED to replay one).
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BACKENDS,
  PG_PASSWORD,
  allReleases,
  cleanup,
  fakeKapp,
  freshBackend,
  killLeftovers,
  makeProject,
  seededRandom,
  startedTags,
  tempDir,
  waitFor,
  type BackendPlace,
  type RunningCli,
} from '../fixtures/release/harness.js';
import { markersKilledAfterEach } from '../support/processes.js';
import { sleep } from '../support/wait.js';
import type { CliResult } from '../support/cli.js';

afterAll(cleanup);
const newMarker = markersKilledAfterEach();

const SEED = Number(process.env.KAPPS_E2E_SEED ?? 20_260_122);

describe.each(BACKENDS)('the release lock (%s backend)', (kind) => {
  it(
    'lets exactly one of 20 concurrent install -y run; the 19 others are refused naming it',
    { timeout: 300_000 },
    async () => {
      const backend = await freshBackend(kind);
      const gate = join(tempDir(), 'gate');
      const p = makeProject('shop', backend, [
        { id: 'db', descriptor: fakeKapp({ apply: `--tag apply-db --wait-file ${gate} 240000` }) },
        { id: 'api', dependsOn: ['db'], descriptor: fakeKapp({ apply: '--tag apply-api' }) },
      ]);
      writeFileSync(gate, '');
      const first = await p.run(['install', 'stacks.yaml', 'dev', '-y']);
      expect(first.code, first.stderr).toBe(0);
      rmSync(gate);
      const before = p.traceLines().length;

      const runs: RunningCli[] = [];
      for (let i = 0; i < 20; i++) runs.push(p.start(['install', 'stacks.yaml', 'dev', '-y']));
      // Open the gate only when every run has either ended or reached db's step, so a second winner would show.
      await waitFor(
        'the 20 runs to end or reach their first step',
        () =>
          runs.filter((r) => r.exited()).length +
            startedTags(p.traceLines().slice(before)).filter((t) => t === 'apply-db').length >=
          20,
        240_000,
      );
      writeFileSync(gate, '');
      const results: CliResult[] = await Promise.all(runs.map((r) => r.done));

      const winners = runs.filter((_, i) => results[i]?.code === 0);
      expect(winners.length, results.map((r) => r.stderr).join('\n')).toBe(1);
      const winner = winners[0] as RunningCli;
      const releases = await allReleases(backend, 'shop');
      expect(releases.map((r) => [r.revision, r.phase])).toEqual([
        [1, 'succeeded'],
        [2, 'succeeded'],
      ]);
      const user: unknown = expect.any(String);
      expect(releases[1]?.owner).toEqual({ user, host: hostname(), pid: winner.pid });
      const started = releases[1]?.createdAt ?? '';
      for (const [i, r] of results.entries()) {
        expect(r.stdout + r.stderr).not.toContain(PG_PASSWORD);
        if (runs[i] === winner) continue;
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(
          `kapps: shop/dev is locked by release 2 (install, applying) started ${started} by ` +
            `${releases[1]?.owner.user}@${hostname()} (pid ${winner.pid}); the owner looks alive: `,
        );
        expect(r.stderr).toContain('unlock it with: kapps release unlock stacks.yaml dev\n');
      }
      // Only the winner ran steps.
      expect(startedTags(p.traceLines().slice(before))).toEqual(['apply-db', 'apply-api']);
    },
  );

  it(
    'survives kill -9 at random moments: records stay readable, the dead owner is named, unlock frees the stack',
    { timeout: 600_000 },
    async () => {
      const backend = await freshBackend(kind);
      const random = seededRandom(SEED + (kind === 'file' ? 0 : 1));
      const marker = newMarker();
      const p = makeProject('shop', backend, [
        { id: 'db', descriptor: fakeKapp({ apply: `--tag apply-db --sleep 250 --stdout ${marker}` }) },
        {
          id: 'api',
          dependsOn: ['db'],
          descriptor: fakeKapp({ apply: `--tag apply-api --sleep 250 --stdout ${marker}` }),
        },
        {
          id: 'web',
          dependsOn: ['api'],
          descriptor: fakeKapp({ apply: `--tag apply-web --sleep 250 --stdout ${marker}` }),
        },
      ]);
      const moments: string[] = [];
      let locked = 0;
      for (let round = 0; round < 10; round++) {
        const traceBefore = p.traceLines().length;
        const run = p.start(['install', 'stacks.yaml', 'dev', '-y']);
        // A moment: some time after the start (anywhere, also before the lock is taken), or just after the n-th
        // event of the steps (a kapp's state is being written then).
        let moment: string;
        if (random() < 0.3) {
          const ms = Math.floor(random() * 1500);
          moment = `${ms} ms after start`;
          await sleep(ms);
        } else {
          const events = 1 + Math.floor(random() * 5);
          const extra = Math.floor(random() * 40);
          moment = `${extra} ms after step event ${events}`;
          await waitFor(moment, () => run.exited() || p.traceLines().length - traceBefore >= events);
          await sleep(extra);
        }
        moments.push(moment);
        run.child.kill('SIGKILL');
        const killed = await run.done;
        await killLeftovers(marker);
        const context = `seed ${SEED}, round ${round} (${moments.join('; ')}): ${killed.stderr}`;

        const releases = await checkRecords(backend, context);
        const latest = releases.at(-1);
        if (latest && (latest.phase === 'applying' || latest.phase === 'deleting')) {
          locked++;
          expect(latest.owner.pid, context).toBe(run.pid);
          const refused = await p.run(['install', 'stacks.yaml', 'dev', '-y']);
          expect(refused.code, context).toBe(1);
          expect(refused.stderr, context).toContain(
            `is locked by release ${latest.revision} (install, applying) started ${latest.createdAt} by ` +
              `${latest.owner.user}@${hostname()} (pid ${run.pid}); the owner looks dead: process ${run.pid} is not running on ${hostname()}.\n` +
              'If no kapps run is working on this stack any more, unlock it with: kapps release unlock stacks.yaml dev\n',
          );
          expect((await allReleases(backend, 'shop')).length, context).toBe(releases.length);
          const unlocked = await p.run(['release', 'unlock', 'stacks.yaml', 'dev', '-y']);
          expect(unlocked.stdout, context).toBe(
            `Unlocked shop/dev: release ${latest.revision} (was applying) is now failed; the next run can begin.\n`,
          );
          expect(unlocked.stdout + unlocked.stderr).not.toContain(PG_PASSWORD);
        }
      }
      // The trace-based moments always fall after the release was created, so some rounds must have left a lock.
      expect(locked, moments.join('; ')).toBeGreaterThan(0);

      const last = await p.run(['install', 'stacks.yaml', 'dev', '-y']);
      expect(last.code, last.stdout + last.stderr).toBe(0);
      const releases = await checkRecords(backend, `seed ${SEED}, final run`);
      const final = releases.at(-1);
      expect(final?.phase).toBe('succeeded');
      expect(Object.values(final?.state ?? {}).map((s) => s.status)).toEqual(['installed', 'installed', 'installed']);
      expect(releases.slice(0, -1).every((r) => r.phase === 'failed' || r.phase === 'succeeded')).toBe(true);
    },
  );
});

describe('a refused run', () => {
  it('leaves the workspace of the running release alone', { timeout: 300_000 }, async () => {
    const backend = await freshBackend('file');
    const gate = join(tempDir(), 'gate');
    const p = makeProject('shop', backend, [
      { id: 'db', descriptor: fakeKapp({ apply: `--tag apply-db --wait-file ${gate} 240000` }) },
    ]);
    const running = p.start(['install', 'stacks.yaml', 'dev', '-y']);
    try {
      await waitFor('the first run to reach its step', () => startedTags(p.traceLines()).includes('apply-db'));
      // The user edits the kapp while it is being installed; a second run must not copy that under the first.
      writeFileSync(join(p.dir, 'kapps', 'db', 'notes.txt'), 'edited during the run\n');
      const refused = await p.run(['install', 'stacks.yaml', 'dev', '-y']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('shop/dev is locked by release 1');
      expect(existsSync(join(p.dir, '.kapps-workspace', 'dev', 'web', 'db', 'db', 'notes.txt'))).toBe(false);
    } finally {
      writeFileSync(gate, '');
      await running.done;
    }
  });
});

/** Every record of shop/dev parses and validates; revisions are 1..n; returns them oldest first. */
async function checkRecords(backend: BackendPlace, context: string) {
  const releases = await allReleases(backend, 'shop');
  expect(
    releases.map((r) => r.revision),
    context,
  ).toEqual(releases.map((_, i) => i + 1));
  const raw = await backend.rawRecords('shop', 'dev');
  expect(raw.size, context).toBe(releases.length);
  for (const text of raw.values()) {
    const data = (backend.kind === 'file' ? parse(text) : JSON.parse(text)) as { phase?: unknown };
    expect(typeof data.phase, context).toBe('string');
  }
  if (backend.kind === 'file') {
    // Besides the records and their logs, only what a killed writer may leave: temp files (ignored by readers), a record lock
    // whose owner is dead (taken over by the next writer; the rounds after this one prove it) and its release's journal.
    const dir = join(backend.value, 'releases', 'shop', 'dev');
    const names = existsSync(dir) ? readdirSync(dir) : [];
    for (const name of names)
      expect(name, context).toMatch(
        /^(?:[1-9]\d*\.yaml|[1-9]\d*\.(?:log|journal)\.ndjson|\.[1-9]\d*\.yaml\.\d+\.[0-9a-f]+\.tmp|\.[1-9]\d*\.yaml\.lock)$/,
      );
    for (const name of names.filter((n) => n.endsWith('.yaml'))) {
      expect(readFileSync(join(dir, name), 'utf8').startsWith('# A kapps release record.'), context).toBe(true);
    }
  }
  return releases;
}
