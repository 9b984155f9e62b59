/**
 * What a run reports, on the built CLI: NDJSON events alone on stdout with `--reporter json`, one consistent pair
 * of kapp events per reported kapp whatever the command, and plain lines (no terminal codes) when stdout is not a
 * terminal.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/report/events.js';
import { cleanupProjects, eventsOf, fake, fixtureProject, kapp } from '../support/project.js';

afterAll(cleanupProjects);

/**
 * ```
 *   web:base (no outputs) ──► web:db (outputs) ──► web:api ──► web:web
 * ```
 */
function chain() {
  const all = (id: string) => ({
    plan_install: [fake('plan', `${id}-plan`)],
    apply_install: [fake('apply', `${id}-apply`, ['--stdout', `${id} applied`], { print: 'true' })],
    apply_delete: [fake('delete', `${id}-delete`)],
    output: [fake('output', `${id}-output`, ['--write-file', 'o.json', '{"v":1}'])],
  });
  return fixtureProject({
    manifests: {
      web: {
        kapps: [
          kapp('base', all('base')),
          kapp('db', all('db'), {
            depends_on: [{ id: 'base' }],
            outputs: [{ id: 'o', path: 'o.json', format: 'json' }],
          }),
          kapp('api', all('api'), { depends_on: [{ id: 'db' }] }),
          kapp('web', all('web'), { depends_on: [{ id: 'api' }] }),
        ],
      },
    },
  });
}

/**
 * The stream's shape: run-started first and run-finished last; each kapp listed in run-started has exactly one
 * kapp-finished, at most one kapp-started before it, and all its step events in between; no other kapp appears.
 */
function expectConsistent(events: readonly RunEvent[]): void {
  expect(events[0]?.type).toBe('run-started');
  expect(events.at(-1)?.type).toBe('run-finished');
  const listed = eventsOf(events, 'run-started')[0]?.kapps ?? [];
  const finished = eventsOf(events, 'kapp-finished').map((e) => e.kapp);
  expect([...finished].sort()).toEqual([...listed].sort());
  for (const id of listed) {
    const own = events.filter((e) => 'kapp' in e && e.kapp === id && e.type !== 'log');
    const starts = own.filter((e) => e.type === 'kapp-started').length;
    expect(starts, id).toBeLessThanOrEqual(1);
    if (own.some((e) => e.type.startsWith('step-'))) expect(own[0]?.type, id).toBe('kapp-started');
    expect(own.at(-1)?.type, id).toBe('kapp-finished');
  }
  const counts = eventsOf(events, 'run-finished')[0]?.counts;
  expect((counts?.succeeded ?? 0) + (counts?.failed ?? 0) + (counts?.skipped ?? 0) + (counts?.cancelled ?? 0)).toBe(
    listed.length,
  );
}

describe('--reporter json', () => {
  it('prints only NDJSON events on stdout, with the fields consumers read', async () => {
    const p = chain();
    const r = await p.run('install', ['-y', '--reporter', 'json']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    expect(r.events.map((e) => e.type)).toEqual(
      expect.arrayContaining([
        'run-started',
        'kapp-started',
        'step-started',
        'step-output',
        'step-finished',
        'kapp-finished',
        'run-finished',
      ]),
    );
    for (const e of eventsOf(r.events, 'step-finished')) {
      expect(e).toMatchObject({ status: 'succeeded', exitCode: 0 });
      expect(typeof e.durationMs).toBe('number');
    }
    // Human text goes to stderr.
    expect(r.stderr).toContain('install succeeded');
    expectConsistent(r.events);
  });

  it('gives failed kapps their reason and skipped kapps why they were skipped', async () => {
    const p = chain();
    p.write(
      'manifests/web.yaml',
      p.read('manifests/web.yaml').replace('api-apply --stdout', 'api-apply --exit 5 --stdout'),
    );
    const r = await p.runJson('install', ['-y']);
    expect(r.code).toBe(1);
    const finished = Object.fromEntries(eventsOf(r.events, 'kapp-finished').map((e) => [e.kapp, e]));
    expect(finished['web:api']).toMatchObject({
      status: 'failed',
      reason: "apply_install step 'apply' exited with code 5",
    });
    expect(finished['web:web']).toMatchObject({ status: 'skipped', reason: 'dependency web:api failed' });
    expect(eventsOf(r.events, 'step-finished').find((e) => e.kapp === 'web:api')).toMatchObject({
      status: 'failed',
      exitCode: 5,
    });
    expectConsistent(r.events);
  });

  const commands: [string, string[]][] = [
    ['install', []],
    ['install', ['-y']],
    ['install', ['-y', '-i', 'web:api']],
    ['install', ['--one-shot', '-i', 'web:web', '-n']],
    ['delete', ['-y']],
    ['delete', ['--one-shot', '-i', 'web:api']],
    ['delete', ['-y', '-n']],
    ['template', ['-i', 'web:web']],
    ['output', []],
    ['clean', ['-i', 'web:api']],
  ];
  it.each(commands)(
    '%s %j: one kapp-started/kapp-finished pair per reported kapp, steps in between',
    async (command, args) => {
      const p = chain();
      const r = await p.runJson(command, args);
      expect(r.code, r.stderr).toBe(0);
      expectConsistent(r.events);
    },
  );

  it('lists only the kapps the run does something with', async () => {
    const p = chain();
    // base has no outputs and is not selected: it provides nothing and is not reported; db provides its outputs.
    const r = await p.runJson('install', ['-y', '-i', 'web:api']);
    expect(eventsOf(r.events, 'run-started')[0]?.kapps).toEqual(['web:db', 'web:api']);
    expect(eventsOf(r.events, 'kapp-started').map((e) => `${e.kapp} ${e.role}`)).toEqual([
      'web:db outputs',
      'web:api selected',
    ]);
  });

  it('in a delete, a kapp with outputs starts when its outputs are loaded and finishes once deleted', async () => {
    const p = chain();
    const r = await p.runJson('delete', ['-y']);
    expect(r.code).toBe(0);
    const db = r.events
      .filter((e) => 'kapp' in e && e.kapp === 'web:db')
      .map((e) => (e.type === 'step-finished' ? `${e.type} ${e.phase}` : e.type));
    expect(db).toEqual([
      'kapp-started',
      'step-started',
      'step-finished output',
      'step-started',
      'step-finished apply_delete',
      'kapp-finished',
    ]);
  });
});

describe('plain output', () => {
  it('is used when stdout is not a terminal: one line per event, no terminal codes', async () => {
    const p = chain();
    const r = await p.run('install', ['-y', '-i', 'web:db'], { env: { NO_COLOR: undefined } });
    expect(r.code).toBe(0);
    // eslint-disable-next-line no-control-regex
    expect(r.stdout).not.toMatch(/\u001b/);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('install stack dev: 1 kapp (apply_install), 5 workers');
    expect(lines).toEqual(
      expect.arrayContaining([
        '[web:db] started',
        "[web:db] apply_install/apply: kapps-fake --tag db-apply --stdout 'db applied' (started)",
        '[web:db] db applied',
      ]),
    );
    expect(r.stdout).toMatch(/\ninstall succeeded in \d+\.\ds: 1 succeeded, 0 failed, 0 skipped, 0 cancelled\n/);
  });
});
