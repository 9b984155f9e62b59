/**
 * The CLI as a client of a real `kapps serve` on a loopback port: `kapps runs submit|list|show|logs|cancel`, and
 * `--server` on install -y, delete -y, generate and preview showing the run's progress here with the local reporters
 * and exiting with its outcome (0, 1, 130 on cancel); bad tokens, roles, unknown runs, an unreachable server.
 */
import { createHash } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  FIXTURE_BIN,
  cleanupProjects,
  fake,
  fixtureProject,
  kapp,
  parseEvents,
  killMatching,
  processesMatching,
  survivors,
  uniqueMarker,
  waitFor,
  type FixtureProject,
} from '../support/project.js';
import { api, startServer, stopAllServers, type TestServer } from '../support/server.js';

afterEach(stopAllServers);
afterAll(cleanupProjects);

const gates: string[] = [];
afterAll(() => {
  for (const file of gates.splice(0)) rmSync(file, { force: true });
});

/** A file a step waits for (`--wait-file`), removed after the tests. */
function gateFile(name: string): string {
  const file = join(tmpdir(), name);
  gates.push(file);
  return file;
}

/** db then api; each prints a line on install; `apiArgs` replaces api's install step arguments. */
function shop(dbArgs: readonly string[] = [], apiArgs: readonly string[] = []): FixtureProject {
  return fixtureProject({
    manifests: {
      web: {
        kapps: [
          kapp('db', {
            apply_install: [fake('apply', 'apply-db', ['--stdout', 'db is up', ...dbArgs], { print: 'true' })],
            apply_delete: [fake('delete', 'delete-db', ['--stdout', 'db is gone'], { print: 'true' })],
          }),
          kapp(
            'api',
            {
              apply_install: [fake('apply', 'apply-api', ['--stdout', 'api is up', ...apiArgs], { print: 'true' })],
              apply_delete: [fake('delete', 'delete-api')],
            },
            { depends_on: [{ id: 'db' }] },
          ),
        ],
      },
    },
  });
}

/** A server with project `shop` = the project's stack file, the fakes on its PATH. */
function serve(p: FixtureProject, extra: string[] = [], env: Record<string, string> = {}): Promise<TestServer> {
  return startServer({
    args: ['--project', `shop=${p.stackFile}`, ...extra],
    env: { PATH: p.env.PATH ?? FIXTURE_BIN, FAKE_TRACE: p.traceFile, HOME: p.env.HOME ?? p.root, ...env },
  });
}

/** `kapps <args…>` in the project, against `server` (token from `token`). */
function client(p: FixtureProject, args: readonly string[], token?: string) {
  return p.run(args[0] ?? '', args.slice(1), { bare: true, env: token !== undefined ? { KAPPS_TOKEN: token } : {} });
}

function runIdOf(stderr: string): string {
  const m = /^Run (\S+): /m.exec(stderr);
  if (!m?.[1]) throw new Error(`no run id in: ${stderr}`);
  return m[1];
}

describe('install -y / delete -y --server', () => {
  it('runs on the server, shows the progress with the plain reporter, records a release and exits 0', async () => {
    const p = shop();
    const server = await serve(p);
    const r = await p.run('install', ['-y', '--server', server.url, '--project', 'shop', '--reporter', 'plain']);
    expect(r.code, r.stderr).toBe(0);
    const id = runIdOf(r.stderr);
    expect(r.stderr).toContain(`Run ${id}: apply of shop/dev on ${server.url}`);
    // The same lines a local plain run prints, the steps' output included.
    expect(r.stdout).toContain('db is up');
    expect(r.stdout).toContain('api is up');
    expect(r.stdout.indexOf('db is up')).toBeLessThan(r.stdout.indexOf('api is up'));
    expect(r.stdout).toContain(`Recorded as release 1 of stack dev by run ${id} on ${server.url}`);
    // It ran there, once: the steps' trace.
    expect(
      p
        .traceLines()
        .filter((l) => l.event === 'start')
        .map((l) => l.tag),
    ).toEqual(['apply-db', 'apply-api']);
    // The release is in the server's backend, with its log.
    // Recorded under the project the CLI would use for that stack file: both share one history.
    const logs = await p.run('release', ['logs', p.stackFile, 'dev', '--backend', server.backend ?? ''], {
      bare: true,
    });
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain('[web:db apply_install/apply] db is up');

    const d = await p.run('delete', ['-y', '--server', server.url, '--project', 'shop', '--reporter', 'json']);
    expect(d.code, d.stderr).toBe(0);
    const events = parseEvents(d.stdout);
    expect(events[0]?.type).toBe('run-started');
    expect(events.at(-1)).toMatchObject({ type: 'run-finished', status: 'succeeded' });
    expect(
      p
        .traceLines()
        .filter((l) => l.event === 'start')
        .map((l) => l.tag),
    ).toEqual(['apply-db', 'apply-api', 'delete-api', 'delete-db']);
  });

  it('exits 1 when the run fails, with the failure shown as a local run shows it', async () => {
    const p = shop([], ['--stderr', 'api broke', '--exit', '3']);
    const server = await serve(p);
    const r = await p.run('install', ['-y', '--server', server.url, '--project', 'shop', '--reporter', 'plain']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain('api broke');
    expect(r.stdout).toMatch(/failed/);
    const show = await client(p, ['runs', 'show', runIdOf(r.stderr), '--server', server.url, '-o', 'json']);
    expect(JSON.parse(show.stdout)).toMatchObject({ status: 'failed', releaseRevision: 1 });
  });

  it('Ctrl-C cancels the run on the server, waits for it to end, and exits 130; no step is left running', async () => {
    const marker = uniqueMarker('kapps-remote-cancel');
    const p = shop(['--fork-sleep', '60', marker, '--hang']);
    const server = await serve(p);
    const started = p.start('install', ['-y', '--server', server.url, '--project', 'shop', '--reporter', 'plain']);
    // The step and the grandchild it forks after printing are running.
    await waitFor('the step to start', () => processesMatching(marker).length >= 2, 20_000);
    started.child.kill('SIGINT');
    const r = await started.done;
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toContain('cancelling run');
    expect(r.stdout).toContain('db is up');
    expect(r.stdout).toMatch(/install cancelled in/);
    expect(await survivors(marker, 5000)).toEqual([]);
    const show = await client(p, ['runs', 'show', runIdOf(r.stderr), '--server', server.url, '-o', 'json']);
    expect(JSON.parse(show.stdout)).toMatchObject({ status: 'cancelled' });
    expect(
      p
        .traceLines()
        .filter((l) => l.event === 'start')
        .map((l) => l.tag),
    ).toEqual(['apply-db']);
  });

  it('reopens a dropped event stream where it stopped: a server killed and restarted, the run errored, exit 1', async () => {
    const marker = uniqueMarker('kapps-remote-restart');
    const p = shop(['--fork-sleep', '60', marker, '--hang']);
    const first = await serve(p);
    const started = p.start('install', ['-y', '--server', first.url, '--project', 'shop', '--reporter', 'plain']);
    try {
      await waitFor('the step to start', () => processesMatching(marker).length >= 2, 20_000);
      await waitFor('the step start to be shown', () => started.stdout().includes('(started)'), 20_000);
      first.kill9();
      await first.exited;
      killMatching(marker);
      const port = new URL(first.url).port;
      const second = await startServer({
        args: ['--project', `shop=${p.stackFile}`, '--listen', `127.0.0.1:${port}`, '--backend', first.backend ?? ''],
        env: { PATH: p.env.PATH ?? FIXTURE_BIN, FAKE_TRACE: p.traceFile, HOME: p.env.HOME ?? p.root },
      });
      const r = await started.done;
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain('the event stream dropped');
      expect(r.stderr).toMatch(/run \S+ on http:\/\/127\.0\.0\.1:\d+ errored/);
      // Shown once: nothing repeated after the stream was reopened.
      expect(r.stdout.split('[web:db] started').length).toBe(2);
      expect(r.stdout.split('\n').filter((l) => l.endsWith('(started)'))).toHaveLength(1);
      await second.stop();
    } finally {
      killMatching(marker);
    }
  });

  it('refuses what cannot run on a server as usage errors, and names the project it needs', async () => {
    const p = shop();
    for (const args of [
      ['install', '--server', 'http://127.0.0.1:7070', '--project', 'shop'],
      ['install', '-y', '--server', 'http://127.0.0.1:7070'],
      ['install', '--one-shot', '--server', 'http://127.0.0.1:7070', '--project', 'shop'],
      ['delete', '-y', '--server', 'http://127.0.0.1:7070', '--project', 'shop', '--backend', '/tmp/x'],
      ['delete', '-y', '--server', 'http://127.0.0.1:7070', '--project', '../etc'],
      ['generate', '--server', 'ftp://127.0.0.1:7070', '--project', 'shop'],
    ]) {
      const r = await p.run(args[0] ?? '', args.slice(1));
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(p.traceLines()).toEqual([]);
  });
});

describe('generate and preview --server', () => {
  it('prints the spec and the preview as the local commands do; the stack file argument is not read', async () => {
    const p = shop();
    const server = await serve(p);
    // The stack file named here does not exist: with --server only the stack name and --project count.
    const remote = (command: string, ...args: string[]) =>
      p.run(command, ['nowhere.yaml', 'dev', '--server', server.url, '--project', 'shop', ...args], { bare: true });
    const local = await p.run('generate');
    expect(local.code, local.stderr).toBe(0);
    const g = await remote('generate');
    expect(g.code, g.stderr).toBe(0);
    expect(g.stderr).toMatch(/^Run \S+: generate of shop\/dev on http/m);
    const spec = parse(g.stdout) as { stack: string; kapps: { id: string; dependsOn: string[] }[] };
    const localSpec = parse(local.stdout) as typeof spec;
    expect(spec.stack).toBe('dev');
    expect(spec.kapps.map((k) => [k.id, k.dependsOn])).toEqual(localSpec.kapps.map((k) => [k.id, k.dependsOn]));
    const gj = await remote('generate', '-o', 'json');
    expect(JSON.parse(gj.stdout)).toEqual(spec);

    const before = await remote('preview');
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toMatch(
      /^Preview against no previous release:\nID\s+ACTION\nweb:db\s+Create\nweb:api\s+Create\n/,
    );
    const detailed = await remote('preview', '--detailed-exitcode', '-o', 'json');
    expect(detailed.code).toBe(2);
    expect(JSON.parse(detailed.stdout)).toMatchObject({ stack: 'dev', basedOnRevision: null, hasChanges: true });
    const runs = await client(p, ['runs', 'list', '--server', server.url, '-o', 'json']);
    const types = (JSON.parse(runs.stdout) as { runs: { type: string; status: string }[] }).runs;
    expect(types.map((r) => `${r.type} ${r.status}`)).toEqual([
      'preview succeeded',
      'preview succeeded',
      'generate succeeded',
      'generate succeeded',
    ]);
  });
});

describe('kapps runs', () => {
  it('submit, list, show, logs and cancel a queued run', async () => {
    const gate = uniqueMarker('gate');
    const p = shop(['--wait-file', gateFile(gate), '--stdout', 'db done']);
    const server = await serve(p);
    const s = ['--server', server.url];
    const first = await client(p, ['runs', 'submit', 'apply', 'dev', '--project', 'shop', ...s, '-o', 'json']);
    expect(first.code, first.stderr).toBe(0);
    const a = JSON.parse(first.stdout) as { id: string; status: string; type: string };
    expect(a).toMatchObject({ type: 'apply', status: expect.stringMatching(/^(queued|running)$/) as unknown });
    await waitFor('the first run to start', () => p.traceLines().some((l) => l.tag === 'apply-db'), 20_000);

    const second = await client(p, ['runs', 'submit', 'apply', 'dev', '--project', 'shop', ...s]);
    expect(second.code, second.stderr).toBe(0);
    const b = /^id:\s+(\S+)$/m.exec(second.stdout)?.[1] ?? '';
    expect(second.stdout).toMatch(/^status:\s+queued$/m);
    expect(second.stdout).toContain(`blockedBy:       ${a.id}`);

    const list = await client(p, ['runs', 'list', ...s]);
    expect(list.code, list.stderr).toBe(0);
    const lines = list.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+TYPE\s+STACK\s+STATUS\s+BY\s+TRIGGER\s+CREATED\s+RELEASE\s+COMMIT$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual([b, a.id]);
    const queued = await client(p, ['runs', 'list', '--status', 'queued', ...s, '-o', 'json']);
    expect((JSON.parse(queued.stdout) as { runs: { id: string }[] }).runs.map((r) => r.id)).toEqual([b]);

    const cancel = await client(p, ['runs', 'cancel', b, ...s]);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toBe(`Run ${b}: cancelled\n`);

    // A remote install now waits behind the running apply, and says so.
    const queuedInstall = p.start('install', ['-y', ...s, '--project', 'shop', '--reporter', 'plain']);
    await waitFor('the install to be queued', () => queuedInstall.stderr().includes('Queued behind'), 20_000);
    expect(queuedInstall.stderr()).toContain(`Queued behind run ${a.id} (position 1)`);

    writeFileSync(gateFile(gate), 'go');
    const follow = await client(p, ['runs', 'logs', a.id, '--follow', ...s]);
    expect(follow.code, follow.stderr).toBe(0);
    expect(follow.stdout).toContain('[web:db apply_install/apply] db is up');
    expect(follow.stdout).toContain('[web:api apply_install/apply] api is up');
    expect(follow.stderr).toContain(`Run ${a.id} succeeded`);
    const logs = await client(p, ['runs', 'logs', a.id, '--kapp', 'web:api', ...s]);
    expect(logs.stdout.trimEnd().split('\n')).toEqual(['[web:api apply_install/apply] api is up']);
    const ndjson = await client(p, ['runs', 'logs', a.id, '-o', 'json', ...s]);
    const logLines = ndjson.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { stream: string; kapp?: string; text: string });
    expect(logLines).toContainEqual(expect.objectContaining({ stream: 'stdout', kapp: 'web:db', text: 'db is up' }));
    expect(logLines.some((l) => l.stream === 'kapps')).toBe(true);
    // Paging: one run per page, the next page's cursor on stderr.
    const page1 = await client(p, ['runs', 'list', '--limit', '1', ...s]);
    const cursor = /^More: kapps runs list --cursor (\S+)$/m.exec(page1.stderr)?.[1];
    expect(cursor, page1.stderr).toBeDefined();
    const page2 = await client(p, ['runs', 'list', '--limit', '1', '--cursor', cursor ?? '', ...s, '-o', 'json']);
    expect(page2.code, page2.stderr).toBe(0);
    const firstId = page1.stdout.trimEnd().split('\n')[1]?.split(/\s+/)[0];
    const secondId = (JSON.parse(page2.stdout) as { runs: { id: string }[] }).runs[0]?.id;
    expect(secondId).toBeDefined();
    expect(secondId).not.toBe(firstId);
    const shown = await client(p, ['runs', 'show', a.id, ...s, '-o', 'json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: a.id, status: 'succeeded', releaseRevision: 1 });
    const queuedDone = await queuedInstall.done;
    expect(queuedDone.code, queuedDone.stderr).toBe(0);
    expect(queuedDone.stdout).toMatch(/Recorded as release 2 of stack dev by run/);
    expect(
      p
        .traceLines()
        .filter((l) => l.event === 'start')
        .map((l) => l.tag),
    ).toEqual(['apply-db', 'apply-api', 'apply-db', 'apply-api']);
  });

  it('a full queue is one line with its Retry-After (429), a finished run cannot be cancelled (409): exit 1', async () => {
    const gate = uniqueMarker('gate429');
    const p = shop(['--wait-file', gateFile(gate)]);
    const config = p.write('kapps-server.yaml', {
      projects: [{ name: 'shop', stack_file: 'stacks.yaml' }],
      limits: { max_queued_per_stack: 1 },
    });
    const server = await startServer({
      args: ['--config', config],
      env: { PATH: p.env.PATH ?? FIXTURE_BIN, FAKE_TRACE: p.traceFile, HOME: p.env.HOME ?? p.root },
    });
    const s = ['--server', server.url];
    try {
      const a = await client(p, ['runs', 'submit', 'apply', 'dev', '--project', 'shop', ...s, '-o', 'json']);
      expect(a.code, a.stderr).toBe(0);
      await waitFor('the first run to start', () => p.traceLines().some((l) => l.tag === 'apply-db'), 20_000);
      const b = await client(p, ['runs', 'submit', 'generate', 'dev', '--project', 'shop', ...s]);
      expect(b.code, b.stderr).toBe(0);
      const full = await p.run('generate', ['--server', server.url, '--project', 'shop']);
      expect(full.code).toBe(1);
      expect(full.stderr).toMatch(
        /^kapps: http:\/\/127\.0\.0\.1:\d+ refused the generate run of shop\/dev: 429 .*; retry after \d+ s\n$/,
      );
    } finally {
      writeFileSync(gateFile(gate), 'go');
    }
    const first = await client(p, ['runs', 'list', '--type', 'apply', ...s, '-o', 'json']);
    const id = (JSON.parse(first.stdout) as { runs: { id: string }[] }).runs[0]?.id ?? '';
    await client(p, ['runs', 'logs', id, '--follow', ...s]);
    const late = await client(p, ['runs', 'cancel', id, ...s]);
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(new RegExp(`refused the cancel of run ${id}: 409 `));
    expect(late.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('refuses overrides the server would not take before sending anything: usage error, exit 2', async () => {
    const p = shop();
    const server = await startServer({
      args: ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome],
      env: p.env,
      cwd: p.dir,
    });
    const s = ['--server', server.url];
    for (const [flag, value] of [
      ['--region', '{{ env "KAPPS_TOKEN" }}'],
      ['--cluster', 'eu-west-1; id > PWNED'],
      ['--account', 'x --post-renderer /x/evil.sh'],
    ] as const) {
      const submit = await client(p, ['runs', 'submit', 'generate', 'dev', '--project', 'shop', ...s, flag, value]);
      const install = await p.run('install', ['-y', ...s, '--project', 'shop', flag, value]);
      for (const r of [submit, install]) {
        expect(r.code).toBe(2);
        expect(r.stderr).toContain(`${flag} ${JSON.stringify(value)} is not a value the server takes`);
      }
    }
    const runs = await api(server.url).get('/api/v1/runs');
    expect(runs.body.runs).toEqual([]);
  });

  it('one clear line and exit 1 for a bad token, a role that may not, an unknown run, a server that is not there', async () => {
    const p = shop();
    const hash = (t: string) => createHash('sha256').update(t).digest('hex');
    const config = p.write('kapps-server.yaml', {
      projects: [{ name: 'shop', stack_file: 'stacks.yaml' }],
      tokens: [
        { name: 'reader', role: 'read', sha256: hash('read-token-1') },
        { name: 'ci', role: 'apply', sha256: hash('apply-token-1') },
      ],
    });
    const server = await startServer({ args: ['--config', config], env: { PATH: p.env.PATH ?? '' } });
    const s = ['--server', server.url];
    const noToken = await client(p, ['runs', 'list', ...s]);
    const badToken = await client(p, ['runs', 'list', ...s], 'wrong-token');
    for (const r of [noToken, badToken]) {
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`^kapps: ${server.url}/? refused the list of runs: 401 .*KAPPS_TOKEN`));
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stderr).not.toContain('wrong-token');
    }
    const forbidden = await client(p, ['runs', 'submit', 'apply', 'dev', '--project', 'shop', ...s], 'read-token-1');
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toMatch(/refused the apply run of shop\/dev: 403 /);
    const remote = await p.run('install', ['-y', ...s, '--project', 'shop'], { env: { KAPPS_TOKEN: 'read-token-1' } });
    expect(remote.code).toBe(1);
    expect(remote.stderr).toMatch(/403/);

    const missing = await client(p, ['runs', 'show', 'no-such-run', ...s], 'apply-token-1');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/refused run no-such-run: 404 /);
    const ok = await client(p, ['runs', 'list', ...s], 'apply-token-1');
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe('No runs.\n');

    await server.stop();
    const gone = await client(p, ['runs', 'list', ...s], 'apply-token-1');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(`kapps: cannot reach the runs server ${server.url}: connection refused\n`);
    const usage = await client(p, ['runs', 'list']);
    expect(usage.code).toBe(2);
  });
});
