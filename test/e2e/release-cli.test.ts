import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { FileReleaseStore } from '../../src/release/file-store.js';
import { PgReleaseStore } from '../../src/release/pg-store.js';
import type { ReleaseStore } from '../../src/release/store-types.js';
import type { KappState, Release } from '../../src/release/types.js';
import { CLI, cliEnv, runCli } from '../support/cli.js';
import { cleanupProjects, fixtureProject } from '../support/project.js';

afterAll(cleanupProjects);

/** A project folder `<tmp>/<name>/stacks.yaml`, and an empty $KAPPS_HOME and $HOME. */
function project(name = 'shop') {
  const p = fixtureProject({ name, stacks: 'dev:\n  provider: local\n  manifests: []\n' });
  return { root: p.root, dir: p.dir, stackFile: p.stackFile, home: p.kappsHome, env: p.env };
}

function entry(status: KappState['status'], digest: string, outputs: KappState['outputs'] = {}): KappState {
  return { status, specDigest: digest, revision: 1, updatedAt: '2026-01-01T10:00:00.000Z', outputs, steps: [] };
}

function release(revision: number, extra: Partial<Release> = {}, project = 'shop'): Release {
  const t = new Date(Date.UTC(2026, 0, 1, 10, revision, 0)).toISOString();
  const end = new Date(Date.UTC(2026, 0, 1, 10, revision, 30)).toISOString();
  return {
    project,
    stack: 'dev',
    revision,
    operation: 'install',
    phase: 'succeeded',
    createdAt: t,
    modifiedAt: end,
    finishedAt: end,
    heartbeatAt: end,
    owner: { user: 'alice', host: 'build-1', pid: 100 + revision },
    command: ['kapps', 'install', 'stacks.yaml', 'dev', '-y'],
    selectors: { include: [], exclude: [] },
    kappsVersion: '0.1.0',
    state: {},
    spec: { stack: 'dev', kapps: [] },
    ...extra,
  };
}

/** Three releases: 1 installs api+db, 2 fails on cache, 3 updates api and deletes db. */
async function seed(store: ReleaseStore, projectName = 'shop', running = false): Promise<void> {
  await store.create(
    release(
      1,
      { state: { 'web:api': entry('installed', 'A1', { url: 'http://a' }), 'web:db': entry('installed', 'D1') } },
      projectName,
    ),
  );
  await store.create(
    release(
      2,
      {
        phase: 'failed',
        state: {
          'web:api': entry('installed', 'A1', { url: 'http://a' }),
          'web:db': entry('installed', 'D1'),
          'web:cache': entry('failed', 'C1'),
        },
      },
      projectName,
    ),
  );
  await store.create(
    release(
      3,
      {
        operation: running ? 'delete' : 'install',
        phase: running ? 'deleting' : 'succeeded',
        ...(running ? { finishedAt: undefined, owner: { user: 'ci', host: hostname(), pid: deadPid() } } : {}),
        state: {
          'web:api': entry('installed', 'A2', { url: 'http://b', port: 80 }),
          'web:db': entry('deleted', 'D1'),
          'web:cache': entry('failed', 'C1'),
        },
      },
      projectName,
    ),
  );
}

/** Run the CLI on a pseudo-terminal (util-linux `script`), typing `input`; the terminal's output. */
function runOnTerminal(
  args: string[],
  input: string,
  env: Record<string, string>,
): { code: number | null; output: string } {
  const command = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = spawnSync('script', ['-qec', command, '/dev/null'], { input, env: cliEnv(env), encoding: 'utf8' });
  return { code: r.status, output: r.stdout.replace(/\r/g, '') };
}

function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid ?? 999_999;
}

describe('kapps release (file backend)', () => {
  it('lists nothing for a stack without releases', async () => {
    const p = project();
    const table = await runCli(['release', 'list', p.stackFile, 'dev'], { env: p.env, cwd: p.root });
    expect(table).toMatchObject({ code: 0, stderr: '' });
    expect(table.stdout).toBe(`No releases of shop/dev in ${p.home}.\n`);
    const json = await runCli(['release', 'list', p.stackFile, 'dev', '-o', 'json'], { env: p.env, cwd: p.root });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([]);
  });

  it('lists releases newest first, as a table and as JSON; the project is the stack file folder', async () => {
    const p = project();
    await seed(new FileReleaseStore(p.home));
    const table = await runCli(['release', 'list', p.stackFile, 'dev'], { env: p.env, cwd: p.root });
    expect(table.code).toBe(0);
    expect(table.stdout).toBe(
      [
        'REVISION  OPERATION  PHASE      KAPPS  OWNER                    STARTED               DURATION',
        '3         install    succeeded  0      alice@build-1 (pid 103)  2026-01-01T10:03:00Z  30.0 s',
        '2         install    failed     0      alice@build-1 (pid 102)  2026-01-01T10:02:00Z  30.0 s',
        '1         install    succeeded  0      alice@build-1 (pid 101)  2026-01-01T10:01:00Z  30.0 s',
        '',
      ].join('\n'),
    );
    const json = await runCli(['release', 'list', p.stackFile, 'dev', '-o', 'json'], { env: p.env, cwd: p.root });
    const rows = JSON.parse(json.stdout) as { revision: number; phase: string; durationMs: number }[];
    expect(rows.map((r) => [r.revision, r.phase, r.durationMs])).toEqual([
      [3, 'succeeded', 30_000],
      [2, 'failed', 30_000],
      [1, 'succeeded', 30_000],
    ]);
    const other = await runCli(['release', 'list', p.stackFile, 'dev', '--project', 'other'], { env: p.env });
    expect(other.stdout).toBe(`No releases of other/dev in ${p.home}.\n`);
  });

  it('takes project and backend from sugarkube-conf.yaml (backend relative to that file)', async () => {
    const p = project();
    writeFileSync(join(p.dir, 'sugarkube-conf.yaml'), 'project: webshop\nbackend: ./state\n');
    await seed(new FileReleaseStore(join(p.dir, 'state')), 'webshop');
    const r = await runCli(['release', 'list', p.stackFile, 'dev', '-o', 'json'], { env: p.env, cwd: p.dir });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { project: string }[]).map((x) => x.project)).toEqual([
      'webshop',
      'webshop',
      'webshop',
    ]);
    // --backend beats the configuration, KAPPS_BACKEND too.
    const flag = await runCli(['release', 'list', p.stackFile, 'dev', '--backend', p.home], { env: p.env, cwd: p.dir });
    expect(flag.stdout).toBe(`No releases of webshop/dev in ${p.home}.\n`);
    const env = await runCli(['release', 'list', p.stackFile, 'dev'], {
      env: { ...p.env, KAPPS_BACKEND: p.home },
      cwd: p.dir,
    });
    expect(env.stdout).toBe(`No releases of webshop/dev in ${p.home}.\n`);
  });

  it('shows the latest release as YAML, or a given revision as JSON', async () => {
    const p = project();
    const store = new FileReleaseStore(p.home);
    await seed(store);
    const latest = await runCli(['release', 'show', p.stackFile, 'dev'], { env: p.env });
    expect(latest.code).toBe(0);
    expect(
      latest.stdout.startsWith('project: shop\nstack: dev\nrevision: 3\noperation: install\nphase: succeeded\n'),
    ).toBe(true);
    expect(parse(latest.stdout)).toEqual(await store.get('shop', 'dev', 3));
    const first = await runCli(['release', 'show', p.stackFile, 'dev', '--revision', '1', '-o', 'json'], {
      env: p.env,
    });
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual(await store.get('shop', 'dev', 1));
  });

  it('shows who approved a release and who skipped the approvals by break glass, as text and in the record', async () => {
    const p = project();
    const store = new FileReleaseStore(p.home);
    const approvals = [
      { by: 'alice', at: '2026-01-01T10:00:40.000Z', comment: 'looks fine' },
      { by: 'bob', at: '2026-01-01T10:00:50.000Z', comment: null },
    ];
    await store.create(release(1, { approvals }));
    await store.create(
      release(2, { rollbackOf: 1, breakGlass: { by: 'ops', role: 'admin', at: '2026-01-01T10:02:00.000Z' } }),
    );
    await store.create(release(3));
    const first = await runCli(['release', 'show', p.stackFile, 'dev', '--revision', '1'], { env: p.env });
    expect(first.code).toBe(0);
    expect(first.stderr).toBe(
      'Release 1 of shop/dev:\n' +
        '  approved by alice at 2026-01-01T10:00:40.000Z: looks fine\n' +
        '  approved by bob at 2026-01-01T10:00:50.000Z\n',
    );
    expect(first.stdout).toMatch(/\napprovals:\n {2}- by: alice\n/);
    expect((parse(first.stdout) as Release).approvals).toEqual(approvals);
    const second = await runCli(['release', 'show', p.stackFile, 'dev', '--revision', '2', '-o', 'json'], {
      env: p.env,
    });
    expect(second.stderr).toBe(
      'Release 2 of shop/dev: rollback of 1\n' +
        '  approvals skipped by break glass: ops (admin) at 2026-01-01T10:02:00.000Z\n',
    );
    const record = JSON.parse(second.stdout) as Record<string, unknown>;
    expect(record.breakGlass).toEqual({ by: 'ops', role: 'admin', at: '2026-01-01T10:02:00.000Z' });
    expect(Object.keys(record).slice(Object.keys(record).indexOf('rollbackOf'), -2)).toEqual([
      'rollbackOf',
      'breakGlass',
    ]);
    // A release no approval applied to says nothing of them.
    const third = await runCli(['release', 'show', p.stackFile, 'dev', '-o', 'json'], { env: p.env });
    expect(third.stderr).toBe('');
    expect(JSON.parse(third.stdout)).not.toHaveProperty('approvals');
    const list = await runCli(['release', 'list', p.stackFile, 'dev', '-o', 'json'], { env: p.env });
    const rows = JSON.parse(list.stdout) as { revision: number; approvals?: unknown; breakGlass?: unknown }[];
    expect(rows.map((r) => [r.revision, r.approvals ?? null, r.breakGlass ?? null])).toEqual([
      [3, null, null],
      [2, null, { by: 'ops', role: 'admin', at: '2026-01-01T10:02:00.000Z' }],
      [1, approvals, null],
    ]);
  });

  it('fails with a clear message for a revision or a stack that does not exist', async () => {
    const p = project();
    await seed(new FileReleaseStore(p.home));
    const missing = await runCli(['release', 'show', p.stackFile, 'dev', '--revision', '9'], { env: p.env });
    expect(missing).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'kapps: release 9 of shop/dev not found (revisions are 1 to 3)\n',
    });
    const none = await runCli(['release', 'show', p.stackFile, 'prod'], { env: p.env });
    expect(none).toMatchObject({ code: 1, stderr: `kapps: shop/prod has no releases in ${p.home}\n` });
    const bad = await runCli(['release', 'show', p.stackFile, 'dev', '--revision', '0'], { env: p.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("kapps: --revision must be a whole number ≥ 1, got '0'");
    const noFile = await runCli(['release', 'list', join(p.dir, 'nope.yaml'), 'dev'], { env: p.env });
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain(`kapps: stack file ${join(p.dir, 'nope.yaml')} not found`);
    const noCommand = await runCli(['release'], { env: p.env });
    expect(noCommand.code).toBe(2);
    expect(noCommand.stderr).toContain('Name a release command: list, show, diff, logs, unlock or rollback.');
  });

  it('reports a damaged release file with its path and exit 1', async () => {
    const p = project();
    const store = new FileReleaseStore(p.home);
    await seed(store);
    const file = store.fileOf('shop', 'dev', 2);
    writeFileSync(file, 'project: shop\nrevision: [2\n');
    const r = await runCli(['release', 'list', p.stackFile, 'dev'], { env: p.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`^kapps: ${file.replace(/[.]/g, '\\.')} is not a valid release record: unparsable YAML`),
    );
  });

  it('diffs two releases, readably and as JSON', async () => {
    const p = project();
    await seed(new FileReleaseStore(p.home));
    const text = await runCli(['release', 'diff', p.stackFile, 'dev', '1', '3'], { env: p.env });
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toBe(
      [
        'Release 1 → 3 of shop/dev',
        '+ web:cache (added, failed)',
        '- web:db (removed; was installed, now deleted)',
        '~ web:api: spec changed; outputs changed (+port, ~url)',
        '    + outputs.port: (none) → 80',
        '    ~ outputs.url: "http://a" → "http://b"',
        '3 changed, 0 unchanged',
        '',
      ].join('\n'),
    );
    const json = await runCli(['release', 'diff', p.stackFile, 'dev', '2', '3', '-o', 'json'], { env: p.env });
    expect(JSON.parse(json.stdout)).toMatchObject({
      from: 2,
      to: 3,
      added: [],
      removed: [{ id: 'web:db', status: 'installed', now: 'deleted' }],
      changed: [{ id: 'web:api', spec: true }],
      unchanged: ['web:cache'],
    });
    const missing = await runCli(['release', 'diff', p.stackFile, 'dev', '1', '7'], { env: p.env });
    expect(missing).toMatchObject({
      code: 1,
      stderr: 'kapps: release 7 of shop/dev not found (revisions are 1 to 3)\n',
    });
  });

  it('has nothing to unlock when the latest release finished', async () => {
    const p = project();
    await seed(new FileReleaseStore(p.home));
    const r = await runCli(['release', 'unlock', p.stackFile, 'dev'], { env: p.env });
    expect(r).toMatchObject({
      code: 0,
      stdout: 'Nothing to unlock: the latest release of shop/dev, revision 3, is succeeded.\n',
    });
  });

  it('refuses to unlock without -y when stdin is not a terminal, then unlocks with -y', async () => {
    const p = project();
    const store = new FileReleaseStore(p.home);
    await seed(store, 'shop', true);
    const holder = await store.latest('shop', 'dev');
    const refused = await runCli(['release', 'unlock', p.stackFile, 'dev'], { env: p.env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      'kapps: refusing to unlock shop/dev without confirmation: stdin is not a terminal. It is locked by ' +
        `release 3 (delete, deleting) started 2026-01-01T10:03:00.000Z by ci@${hostname()} (pid ${holder?.owner.pid}); ` +
        `the owner looks dead: process ${holder?.owner.pid} is not running on ${hostname()}. Pass -y to unlock it.`,
    );
    expect((await store.latest('shop', 'dev'))?.phase).toBe('deleting');

    const unlocked = await runCli(['release', 'unlock', p.stackFile, 'dev', '-y'], { env: p.env });
    expect(unlocked).toMatchObject({
      code: 0,
      stderr: '',
      stdout: 'Unlocked shop/dev: release 3 (was deleting) is now failed; the next run can begin.\n',
    });
    const after = parse(readFileSync(store.fileOf('shop', 'dev', 3), 'utf8')) as Release;
    expect(after.phase).toBe('failed');
    expect(after.unlocked?.by).toMatch(new RegExp(`@${hostname()}$`));
    const list = await runCli(['release', 'list', p.stackFile, 'dev'], { env: p.env });
    expect(list.stdout.split('\n')[1]).toMatch(/^3 +delete +failed \(unlocked\) /);
  });
});

describe('kapps release unlock on a terminal', () => {
  it('asks for confirmation: "n" leaves the lock, "y" unlocks', async () => {
    const p = project();
    const store = new FileReleaseStore(p.home);
    await seed(store, 'shop', true);
    const args = ['release', 'unlock', p.stackFile, 'dev'];
    const declined = runOnTerminal(args, 'n\n', p.env);
    expect(declined.code).toBe(0);
    expect(declined.output).toContain(
      'shop/dev is locked by release 3 (delete, deleting) started 2026-01-01T10:03:00.000Z',
    );
    expect(declined.output).toContain('Mark release 3 as failed? [y/N] ');
    expect(declined.output).toContain('Not unlocked.\n');
    expect((await store.latest('shop', 'dev'))?.phase).toBe('deleting');
    const accepted = runOnTerminal(args, 'y\n', p.env);
    expect(accepted.code).toBe(0);
    expect(accepted.output).toContain(
      'Unlocked shop/dev: release 3 (was deleting) is now failed; the next run can begin.\n',
    );
    expect((await store.latest('shop', 'dev'))?.phase).toBe('failed');
  });
});

describe('kapps release (PostgreSQL backend)', () => {
  const password = 'e2e-Pa55word';
  function urls(): { good: string; missingDb: string } {
    const base = inject('pgUrl');
    if (!base) throw new Error(`the PostgreSQL test server is not running: ${inject('pgError')}`);
    const good = new URL(base);
    good.password = password; // the test server trusts loopback: the password is accepted and ignored
    const missingDb = new URL(good);
    missingDb.pathname = '/no_such_db';
    return { good: good.toString(), missingDb: missingDb.toString() };
  }

  it('lists, shows and unlocks through --backend and KAPPS_BACKEND without printing the password', async () => {
    const { good } = urls();
    const p = project(`pgshop${process.pid}${Math.random().toString(36).slice(2, 7)}`);
    const name = p.dir.split('/').at(-1)!;
    const store = new PgReleaseStore(good);
    try {
      await seed(store, name, true);
    } finally {
      await store.close();
    }
    const list = await runCli(['release', 'list', p.stackFile, 'dev', '--backend', good], { env: p.env });
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n').map((l) => l.split(/ +/)[0])).toEqual(['REVISION', '3', '2', '1', '']);
    const show = await runCli(['release', 'show', p.stackFile, 'dev', '-o', 'json', '--revision', '2'], {
      env: { ...p.env, KAPPS_BACKEND: good },
    });
    expect(JSON.parse(show.stdout)).toMatchObject({ project: name, revision: 2, phase: 'failed' });
    const unlock = await runCli(['release', 'unlock', p.stackFile, 'dev', '-y', '--backend', good], { env: p.env });
    expect(unlock.stdout).toBe(
      `Unlocked ${name}/dev: release 3 (was deleting) is now failed; the next run can begin.\n`,
    );
    const empty = await runCli(['release', 'list', p.stackFile, 'prod', '--backend', good], { env: p.env });
    expect(empty.stdout).toBe(`No releases of ${name}/prod in ${good.replace(password, '***')}.\n`);
    for (const r of [list, show, unlock, empty]) expect(r.stdout + r.stderr).not.toContain(password);
  });

  it('lists and shows the approvals of releases kept in PostgreSQL', async () => {
    const { good } = urls();
    const p = project(`pgappr${process.pid}${Math.random().toString(36).slice(2, 7)}`);
    const name = p.dir.split('/').at(-1)!;
    const approvals = [{ by: 'alice', at: '2026-01-01T10:00:40.000Z', comment: 'looks fine' }];
    const breakGlass = { by: 'ops', role: 'admin', at: '2026-01-01T10:02:00.000Z' };
    const store = new PgReleaseStore(good);
    try {
      await store.create(release(1, { approvals }, name));
      await store.create(release(2, { breakGlass }, name));
    } finally {
      await store.close();
    }
    const list = await runCli(['release', 'list', p.stackFile, 'dev', '-o', 'json', '--backend', good], {
      env: p.env,
    });
    expect(list.code, list.stderr).toBe(0);
    const rows = JSON.parse(list.stdout) as { revision: number; approvals?: unknown; breakGlass?: unknown }[];
    expect(rows.map((r) => [r.revision, r.approvals ?? null, r.breakGlass ?? null])).toEqual([
      [2, null, breakGlass],
      [1, approvals, null],
    ]);
    const show = await runCli(['release', 'show', p.stackFile, 'dev', '--revision', '1', '--backend', good], {
      env: p.env,
    });
    expect(show.stderr).toBe(
      `Release 1 of ${name}/dev:\n  approved by alice at 2026-01-01T10:00:40.000Z: looks fine\n`,
    );
    expect((parse(show.stdout) as Release).approvals).toEqual(approvals);
  });

  it('reports an unreachable database with the URL redacted', async () => {
    const { missingDb } = urls();
    const p = project();
    const closedPort = new URL(missingDb);
    closedPort.port = '1';
    for (const url of [missingDb, closedPort.toString()]) {
      const r = await runCli(['release', 'list', p.stackFile, 'dev', '--backend', url], { env: p.env });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /^kapps: cannot list releases in postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/no_such_db: /,
      );
      expect(r.stdout + r.stderr).not.toContain(password);
    }
    const unsupported = await runCli(['release', 'list', p.stackFile, 'dev'], {
      env: { ...p.env, KAPPS_BACKEND: `mysql://root:${password}@db/kapps` },
    });
    expect(unsupported).toMatchObject({
      code: 1,
      stderr:
        'kapps: unsupported release backend mysql://root:***@db/kapps (env): use a directory or a postgres:// URL\n',
    });
  });
});
