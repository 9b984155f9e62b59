/**
 * `KAPPS_TIMINGS=<file>`: a run command writes where its time went, as NDJSON — the command's phases and one visit
 * record per kapp with the parts of its visit — and writes nothing without the variable. No time is asserted.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanup, fakeKapp, fileBackend, makeProject, tempDir } from '../fixtures/release/harness.js';

afterAll(cleanup);

const anyNumber: unknown = expect.any(Number);

const kapps = [
  { id: 'db', descriptor: fakeKapp({ plan: '--tag plan-db', apply: '--tag apply-db' }) },
  { id: 'api', dependsOn: ['db'], descriptor: fakeKapp({ plan: '--tag plan-api', apply: '--tag apply-api' }) },
  { id: 'web', dependsOn: ['api'], descriptor: fakeKapp({ plan: '--tag plan-web', apply: '--tag apply-web' }) },
];

type TimingRecord = Record<string, unknown> & { span: string };

function records(file: string): TimingRecord[] {
  return readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as TimingRecord);
}

describe('KAPPS_TIMINGS', () => {
  it('writes the phases of an install and one visit record per kapp, with the parts of each visit', async () => {
    const p = makeProject('timed', fileBackend(tempDir('kapps-timings-home-')), kapps);
    const file = join(tempDir('kapps-timings-'), 'timings.ndjson');
    const r = await p.run(['install', '-y', p.stackFile, 'dev', '--reporter', 'plain'], { KAPPS_TIMINGS: file });
    expect(r.code, r.stderr).toBe(0);

    const all = records(file);
    for (const rec of all) {
      if (rec.span === 'kapp') continue;
      expect(rec).toEqual(expect.objectContaining({ start: anyNumber, ms: anyNumber }));
    }
    const phases = all.filter((rec) => rec.span !== 'visit' && rec.span !== 'kapp').map((rec) => rec.span);
    for (const phase of [
      'startup',
      'open',
      'lock',
      'workspace',
      'begin',
      'release-start',
      'walk',
      'run-log-close',
      'release-finish',
      'finish',
    ]) {
      expect(phases, phase).toContain(phase);
    }
    // In the order the command goes through them.
    const order = ['startup', 'open', 'lock', 'release-start', 'walk', 'release-finish', 'finish'];
    expect(phases.filter((name) => order.includes(name))).toEqual(order);
    // Starting the release, part by part, each inside it and in this order.
    const parts = ['spec-plan', 'spec-key', 'spec-inputs', 'spec-complete', 'spec-write'];
    expect(phases.filter((name) => parts.includes(name))).toEqual(parts);
    const whole = all.find((rec) => rec.span === 'release-start') as unknown as { start: number; ms: number };
    for (const rec of all.filter((r) => parts.includes(r.span)) as unknown as {
      span: string;
      start: number;
      ms: number;
    }[]) {
      expect(rec.start, rec.span).toBeGreaterThanOrEqual(whole.start);
      expect(rec.start + rec.ms, rec.span).toBeLessThanOrEqual(whole.start + whole.ms + 0.01);
    }

    const visits = all.filter((rec) => rec.span === 'visit');
    expect(visits.map((v) => v.kapp)).toEqual(['web:db', 'web:api', 'web:web']);
    for (const v of visits) {
      // These kapps have no templates: each one's directory is made by its first step's spawn (in `child`).
      expect(v).not.toHaveProperty('workspace');
      expect(v).toEqual(
        expect.objectContaining({
          status: 'succeeded',
          render: anyNumber,
          plan: anyNumber,
          step: anyNumber,
          child: anyNumber,
          steps: 1,
          show: anyNumber,
          log: anyNumber,
          record: anyNumber,
          recordWall: anyNumber,
        }),
      );
    }
  });

  it('writes nothing without the variable', async () => {
    const p = makeProject('untimed', fileBackend(tempDir('kapps-timings-home-')), kapps);
    const dir = tempDir('kapps-timings-');
    const before = readdirSync(p.dir);
    const r = await p.run(['install', '-y', p.stackFile, 'dev', '--reporter', 'plain'], { KAPPS_TIMINGS: '' });
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
    expect(readdirSync(p.dir).filter((f) => !before.includes(f) && /timings/i.test(f))).toEqual([]);
    expect(existsSync(join(p.dir, 'timings.ndjson'))).toBe(false);
  });
});
