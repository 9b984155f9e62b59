/**
 * The engine driven in-process, as the runs server drives it: two runs at once in one process, each with its own
 * context, abort signal and log, neither touching the process's stdout, stderr or signal handlers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { EngineContext } from '../../src/engine/context.js';
import type * as Engine from '../../src/engine/index.js';
import type { LogLine, RunParams } from '../../src/engine/index.js';
import type { RunEvent } from '../../src/report/events.js';
import { cleanupProjects, fake, fixtureProject, kapp, waitFor } from '../support/project.js';

afterAll(cleanupProjects);

// The built engine, as the server runs it (its steps go through the built process server).
const { createRunLog, runOperation } = (await import(
  new URL('../../dist/engine/index.js', import.meta.url).href
)) as typeof Engine;

function params(stackFile: string): RunParams {
  return {
    stackFile,
    stackName: 'dev',
    include: [],
    exclude: [],
    parents: false,
    strictVars: false,
    dryRun: false,
    keepGoing: false,
    verbose: true,
    validate: true,
    killGraceMs: 1000,
    yes: true,
    allOutput: true,
  };
}

describe('the engine in-process', () => {
  it('runs two stacks at once with their own context, log and abort signal', { timeout: 60_000 }, async () => {
    const projects = ['one', 'two'].map((name) =>
      fixtureProject({
        manifests: {
          web: {
            kapps: [
              kapp(`${name}-api`, {
                apply_install: [
                  fake('deploy', `deploy-${name}`, [
                    '--stdout',
                    `hello from ${name}`,
                    '--sleep',
                    name === 'two' ? '20000' : '200',
                  ]),
                ],
              }),
            ],
          },
        },
      }),
    );
    const messages: string[][] = [[], []];
    const logs: LogLine[][] = [[], []];
    const events: RunEvent[][] = [[], []];
    const controllers = [new AbortController(), new AbortController()];
    const runs = projects.map((p, i) => {
      const ctx: EngineContext = {
        cwd: p.dir,
        env: { ...process.env, ...p.env, KAPPS_BACKEND: undefined },
        argv: ['kapps', 'serve'],
        message: (t) => messages[i]!.push(t),
        result: (t) => messages[i]!.push(t),
      };
      const log = createRunLog((l) => logs[i]!.push(l), { verbose: true, command: 'install' });
      return runOperation('install', params(p.stackFile), {
        ctx,
        signal: controllers[i]!.signal,
        begin: () => (e) => {
          events[i]!.push(e);
          log.onEvent(e);
        },
        afterRun: () => log.close(),
      });
    });
    await waitFor('the second run to start its step', () => events[1]!.some((e) => e.type === 'step-started'), 20_000);
    const first = await runs[0]!;
    controllers[1]!.abort();
    const second = await runs[1]!;

    expect(first.summary.status).toBe('succeeded');
    expect(second.summary.status).toBe('cancelled');
    expect(first.revision).toBe(1);
    expect(second.revision).toBe(1);
    // Each run's log holds its own step's lines, tagged, and none of the other's.
    expect(logs[0]!.filter((l) => l.stream === 'stdout').map((l) => [l.kapp, l.step, l.text])).toEqual([
      ['web:one-api', 'deploy', 'hello from one'],
    ]);
    expect(logs[1]!.some((l) => l.text.includes('hello from one'))).toBe(false);
    expect(logs[0]!.some((l) => l.stream === 'kapps' && /succeeded/.test(l.text))).toBe(true);
    // The step prints without `print`: its output is in the log, marked hidden in the events (displays skip it).
    expect(events[0]!.filter((e) => e.type === 'step-output').every((e) => e.type === 'step-output' && e.hidden)).toBe(
      true,
    );
    // The recorded releases: one succeeded, one cancelled, each in its own project's store.
    const phases = projects.map((p) => {
      const dir = path.join(p.kappsHome, 'releases');
      const [project] = readdirSync(dir);
      const record = parse(readFileSync(path.join(dir, project!, 'dev', '1.yaml'), 'utf8')) as {
        phase: string;
        command: string[];
      };
      return [record.phase, record.command];
    });
    expect(phases).toEqual([
      ['succeeded', ['kapps', 'serve']],
      ['cancelled', ['kapps', 'serve']],
    ]);
    expect(messages[0]!.join('')).toMatch(/^Recorded as release 1 of /m);
  });

  it('records in the release the approvals that let a run apply, and a break glass', { timeout: 60_000 }, async () => {
    const p = fixtureProject({
      manifests: { web: { kapps: [kapp('api', { apply_install: [fake('deploy', 'deploy-api')] })] } },
    });
    const ctx: EngineContext = {
      cwd: p.dir,
      env: { ...process.env, ...p.env, KAPPS_BACKEND: undefined },
      argv: ['kapps', 'serve'],
      message: () => undefined,
      result: () => undefined,
    };
    const run = (extra: Partial<RunParams>) =>
      runOperation(
        'install',
        { ...params(p.stackFile), ...extra },
        {
          ctx,
          signal: new AbortController().signal,
          begin: () => () => undefined,
        },
      );
    const approvals = [
      { by: 'alice', at: '2026-11-25T10:05:00.000Z', comment: 'looks fine' },
      { by: 'bob', at: '2026-11-25T10:06:00.000Z', comment: null },
    ];
    const breakGlass = { by: 'ops', role: 'admin', at: '2026-11-25T11:00:00.000Z' };
    expect((await run({ approvals })).summary.status).toBe('succeeded');
    expect((await run({ breakGlass })).summary.status).toBe('succeeded');
    expect((await run({})).summary.status).toBe('succeeded');
    const dir = path.join(p.kappsHome, 'releases');
    const [project] = readdirSync(dir);
    const record = (n: number) =>
      parse(readFileSync(path.join(dir, project!, 'dev', `${n}.yaml`), 'utf8')) as Record<string, unknown>;
    expect([1, 2, 3].map((n) => [record(n).approvals ?? null, record(n).breakGlass ?? null])).toEqual([
      [approvals, null],
      [null, breakGlass],
      [null, null],
    ]);
  });
});
