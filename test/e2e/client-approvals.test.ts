/**
 * The CLI with a runs server whose project requires approvals: `install -y --server` says the run waits for approval
 * and waits; `kapps runs approve` by another token lets it apply (exit 0, a release), `kapps runs reject` ends it
 * (exit 1 with who rejected and why); the author's approve is the server's 403; Ctrl-C while it waits leaves it waiting
 * (exit 130, with how to cancel it); `--no-wait` returns at once; `--break-glass` for a token allowed to.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  FIXTURE_BIN,
  cleanupProjects,
  fake,
  fixtureProject,
  kapp,
  waitFor,
  type FixtureProject,
} from '../support/project.js';
import { gitRemote } from '../support/git-remote.js';
import { api, startServer, stopAllServers, type TestServer } from '../support/server.js';

afterEach(stopAllServers);
afterAll(cleanupProjects);

const TOKENS = { ci: 'ci-token-1', alice: 'alice-token-1', reader: 'read-token-1', ops: 'ops-token-1' } as const;
const hash = (t: string) => createHash('sha256').update(t).digest('hex');

/** db then api, each printing a line when installed. */
function shop(): FixtureProject {
  return fixtureProject({
    manifests: {
      web: {
        kapps: [
          kapp('db', { apply_install: [fake('apply', 'apply-db', ['--stdout', 'db is up'], { print: 'true' })] }),
          kapp(
            'api',
            { apply_install: [fake('apply', 'apply-api', ['--stdout', 'api is up'], { print: 'true' })] },
            { depends_on: [{ id: 'db' }] },
          ),
        ],
      },
    },
  });
}

/**
 * A server where every apply of `shop` needs `required` approvals of apply or admin tokens (admin may break glass),
 * with `checks` run on its previews.
 */
async function serve(p: FixtureProject, required = 1, checks: readonly object[] = []): Promise<TestServer> {
  const config = p.write('kapps-server.yaml', {
    projects: [
      {
        name: 'shop',
        stack_file: 'stacks.yaml',
        approvals: { required, break_glass: ['admin'] },
        ...(checks.length > 0 ? { checks } : {}),
      },
    ],
    tokens: [
      { name: 'ci', role: 'apply', sha256: hash(TOKENS.ci) },
      { name: 'alice', role: 'apply', sha256: hash(TOKENS.alice) },
      { name: 'reader', role: 'read', sha256: hash(TOKENS.reader) },
      { name: 'ops', role: 'admin', sha256: hash(TOKENS.ops) },
    ],
  });
  return startServer({
    args: ['--config', config],
    env: { PATH: p.env.PATH ?? FIXTURE_BIN, FAKE_TRACE: p.traceFile, HOME: p.env.HOME ?? p.root },
  });
}

/** `kapps <args…>` in the project with `token`. */
function kapps(p: FixtureProject, args: readonly string[], token: string) {
  return p.run(args[0] ?? '', args.slice(1), { bare: true, env: { KAPPS_TOKEN: token } });
}

/** `install -y --server` of shop/dev in the background with `token`. */
function install(p: FixtureProject, server: TestServer, token: string, ...extra: string[]) {
  return p.start('install', ['-y', '--server', server.url, '--project', 'shop', '--reporter', 'plain', ...extra], {
    env: { KAPPS_TOKEN: token },
  });
}

const WAITING = /^waiting for approval: run (\S+) \(kapps runs approve \1\)$/m;

/** The id of the run the started install says waits for approval, once it says so. */
async function waitingRun(started: { stderr(): string }): Promise<string> {
  await waitFor('the run to wait for approval', () => WAITING.test(started.stderr()), 25_000).catch(
    (error: unknown) => {
      throw new Error(`${String(error)}; its stderr:\n${started.stderr()}`);
    },
  );
  return WAITING.exec(started.stderr())?.[1] ?? '';
}

function applied(p: FixtureProject): string[] {
  return p
    .traceLines()
    .filter((l) => l.event === 'start')
    .map((l) => l.tag);
}

describe('install -y --server on a stack that requires approvals', () => {
  it('waits; the author may not approve (403); another token approves and it applies, recorded as a release', async () => {
    const p = shop();
    const server = await serve(p);
    const s = ['--server', server.url];
    const started = install(p, server, TOKENS.ci);
    const id = await waitingRun(started);
    expect(started.stderr()).toContain(
      "  0 of 1 approval so far, from a token of role apply or admin (not the run's author); discarded if not decided by ",
    );
    // Nothing applied while it waits.
    expect(applied(p)).toEqual([]);

    const shown = await kapps(p, ['runs', 'show', id, ...s], TOKENS.alice);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^status:\s+needs-approval$/m);
    expect(shown.stdout).toMatch(/^approval:\s+0 of 1 approval, from a token of role apply or admin/m);
    expect(shown.stdout).toMatch(/^waitingSince:\s+\d{4}-/m);
    expect(shown.stdout).toMatch(/^expiresAt:\s+\d{4}-/m);
    expect(shown.stdout).toMatch(/^actions:\s+cancel, approve, reject$/m);
    const waiting = await kapps(p, ['runs', 'list', '--status', 'needs-approval', ...s], TOKENS.ci);
    expect(waiting.stdout.trimEnd().split('\n').slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^${id}\\s+apply\\s+shop/dev\\s+needs-approval\\s+ci\\s`)),
    ]);

    const byAuthor = await kapps(p, ['runs', 'approve', id, ...s], TOKENS.ci);
    expect(byAuthor.code).toBe(1);
    expect(byAuthor.stderr).toMatch(
      new RegExp(
        `^kapps: ${server.url} refused the approval of run ${id}: 403 .*the author of a run may not approve it \\(approvals\\.author_may_approve is false\\)\n$`,
      ),
    );
    const byReader = await kapps(p, ['runs', 'approve', id, ...s], TOKENS.reader);
    expect(byReader.code).toBe(1);
    expect(byReader.stderr).toMatch(new RegExp(`refused the approval of run ${id}: 403 `));

    const approve = await kapps(p, ['runs', 'approve', id, '--comment', 'looks fine', ...s], TOKENS.alice);
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stdout).toBe(`run ${id} is approved and queued to apply\n`);

    const r = await started.done;
    expect(r.code, r.stderr).toBe(0);
    // Said once, however many status changes came.
    expect(r.stderr.match(new RegExp(WAITING.source, 'gm'))).toHaveLength(1);
    expect(r.stderr).toContain(`Run ${id} approved by alice; it applies the preview approved`);
    expect(r.stdout).toContain('db is up');
    expect(r.stdout).toContain(`Recorded as release 1 of stack dev by run ${id} on ${server.url}`);
    expect(applied(p)).toEqual(['apply-db', 'apply-api']);

    const after = await kapps(p, ['runs', 'show', id, ...s], TOKENS.ci);
    expect(after.stdout).toMatch(/^status:\s+succeeded$/m);
    expect(after.stdout).toMatch(/^decisions:\n {2}approved by alice \(apply\) at \S+: looks fine$/m);
    const again = await kapps(p, ['runs', 'approve', id, ...s], TOKENS.alice);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(new RegExp(`refused the approval of run ${id}: 409 .*not waiting for approval`));
  });

  it('two approvals needed: the first is counted (and shown where it waits), the second lets it apply', async () => {
    const p = shop();
    const server = await serve(p, 2);
    const s = ['--server', server.url];
    const started = install(p, server, TOKENS.ci);
    const id = await waitingRun(started);
    const first = await kapps(p, ['runs', 'approve', id, '--comment', 'fine by me', ...s], TOKENS.alice);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe(`approved run ${id} (1 of 2 approvals)\n`);
    await waitFor('the approval to be shown', () => started.stderr().includes('fine by me'), 20_000);
    expect(started.stderr()).toMatch(/^approved by alice \(apply\) at \S+: fine by me \(1 of 2 approvals\)$/m);
    expect(applied(p)).toEqual([]);
    const twice = await kapps(p, ['runs', 'approve', id, ...s], TOKENS.alice);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(
      new RegExp(`refused the approval of run ${id}: 409 .*alice approved run ${id} already`),
    );
    const second = await kapps(p, ['runs', 'approve', id, ...s, '-o', 'json'], TOKENS.ops);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({
      id,
      status: 'queued',
      approval: { required: 2, decisions: [{ by: 'alice' }, { by: 'ops', role: 'admin', comment: null }] },
    });
    const r = await started.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`Run ${id} approved by alice, ops; it applies the preview approved`);
    expect(r.stdout).toContain(`Recorded as release 1 of stack dev by run ${id}`);
  });

  it("the checks' results are shown where it waits and by runs show; a failed mandatory check ends it, exit 1", async () => {
    const p = shop();
    const script = (code: number, text: string) => [
      process.execPath,
      '-e',
      `console.log(${JSON.stringify(text)}); process.exitCode = ${code}`,
    ];
    const server = await serve(p, 1, [
      {
        name: 'cost',
        stage: 'after_preview',
        command: script(1, 'costs 40 EUR more a month'),
        enforcement: 'advisory',
      },
      { name: 'policy', stage: 'after_preview', command: script(0, 'no deletes') },
    ]);
    const started = install(p, server, TOKENS.ci);
    const id = await waitingRun(started);
    const said = started.stderr().slice(started.stderr().indexOf('waiting for approval')).split('\n');
    expect(said.slice(2).join('\n')).toMatch(
      /^ {2}check cost \(after_preview, advisory\): failed in \d+ ms\n(?: {6}.*\n)*? {6}costs 40 EUR more a month\n(?: {6}.*\n)* {2}check policy \(after_preview, mandatory\): passed in \d+ ms\n/,
    );
    const shown = await kapps(p, ['runs', 'show', id, '--server', server.url], TOKENS.ci);
    expect(shown.stdout).toMatch(/^checks:\n {2}cost \(after_preview, advisory\): failed in \d+ ms\n/m);
    expect(shown.stdout).toMatch(/^ {4}costs 40 EUR more a month$/m);
    expect(shown.stdout).toMatch(/^ {2}policy \(after_preview, mandatory\): passed in \d+ ms$/m);
    await kapps(p, ['runs', 'cancel', id, '--server', server.url], TOKENS.ci);
    expect((await started.done).code).toBe(130);

    const q = shop();
    const strict = await serve(q, 1, [
      { name: 'freeze', stage: 'after_preview', command: script(3, 'change freeze until Monday') },
    ]);
    const r = await q.run('install', ['-y', '--server', strict.url, '--project', 'shop', '--reporter', 'plain'], {
      env: { KAPPS_TOKEN: TOKENS.ci },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^kapps: run \S+ on http:\S+ failed: check freeze failed: [^\n]*(?:\n {2}[^\n]*)*change freeze until Monday$/m,
    );
    expect(r.stderr).not.toMatch(WAITING);
    expect(applied(q)).toEqual([]);
  });

  it('a rejection ends it: exit 1 saying who rejected it and why, nothing applied', async () => {
    const p = shop();
    const server = await serve(p);
    const s = ['--server', server.url];
    const started = install(p, server, TOKENS.ci);
    const id = await waitingRun(started);
    const reject = await kapps(p, ['runs', 'reject', id, '--comment', 'not during the freeze', ...s], TOKENS.alice);
    expect(reject.code, reject.stderr).toBe(0);
    expect(reject.stdout).toBe(`rejected run ${id}\n`);
    const r = await started.done;
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `kapps: run ${id} on ${server.url} was rejected by alice (apply): not during the freeze; nothing was applied\n`,
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(applied(p)).toEqual([]);
    const json = await kapps(p, ['runs', 'show', id, ...s, '-o', 'json'], TOKENS.ci);
    expect(JSON.parse(json.stdout)).toMatchObject({
      status: 'rejected',
      approval: { decisions: [{ by: 'alice', decision: 'rejected', comment: 'not during the freeze' }] },
    });
  });

  it('Ctrl-C while it waits leaves it waiting on the server and says how to cancel it: exit 130', async () => {
    const p = shop();
    const server = await serve(p);
    const s = ['--server', server.url];
    const started = install(p, server, TOKENS.ci);
    const id = await waitingRun(started);
    started.child.kill('SIGINT');
    const r = await started.done;
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toContain(
      `kapps: run ${id} is still waiting for approval on the server; cancel it with kapps runs cancel ${id}\n`,
    );
    expect(r.stderr).not.toContain('cancelling run');
    const shown = await kapps(p, ['runs', 'show', id, ...s, '-o', 'json'], TOKENS.ci);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id, status: 'needs-approval' });
    // It still takes an approval, and applies.
    const approve = await kapps(p, ['runs', 'approve', id, ...s], TOKENS.alice);
    expect(approve.stdout).toBe(`run ${id} is approved and queued to apply\n`);
    const follow = await kapps(p, ['runs', 'logs', id, '--follow', ...s], TOKENS.ci);
    expect(follow.stderr).toContain(`Run ${id} succeeded`);
    expect(applied(p)).toEqual(['apply-db', 'apply-api']);
  });

  it('--no-wait returns once it is submitted, printing the run and how to follow it', async () => {
    const p = shop();
    const server = await serve(p);
    const s = ['--server', server.url];
    const r = await p.run('install', ['-y', ...s, '--project', 'shop', '--no-wait'], {
      env: { KAPPS_TOKEN: TOKENS.ci },
    });
    expect(r.code, r.stderr).toBe(0);
    const id = /^id:\s+(\S+)$/m.exec(r.stdout)?.[1] ?? '';
    expect(id).not.toBe('');
    expect(r.stdout).toMatch(/^type:\s+apply$/m);
    expect(r.stdout).toMatch(/^approval:\s+0 of 1 approval/m);
    expect(r.stderr).toContain(
      `Not waiting for run ${id}. Follow it: kapps runs logs ${id} --follow --server ${server.url}\n`,
    );
    expect(r.stderr).toContain(
      `It needs 1 approval before it applies: kapps runs approve ${id} --server ${server.url}\n`,
    );
    expect(r.stderr).not.toMatch(WAITING);
    // It goes on on the server, to wait for approval.
    await waitFor(
      'the run to wait for approval',
      async () => (await api(server.url, TOKENS.ci).get(`/api/v1/runs/${id}`)).body.status === 'needs-approval',
      25_000,
    );
    const json = await p.run('delete', ['-y', ...s, '--project', 'shop', '--no-wait', '--reporter', 'json'], {
      env: { KAPPS_TOKEN: TOKENS.ci },
    });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ type: 'destroy', approval: { required: 1, decisions: [] } });
    const local = await p.run('install', ['--no-wait']);
    expect(local.code).toBe(2);
    expect(local.stderr).toContain('--no-wait needs --server');
  });

  it('--break-glass: refused to a token whose role may not, skips the approvals for one that may', async () => {
    const p = shop();
    const server = await serve(p);
    const s = ['--server', server.url];
    const refused = await p.run('install', ['-y', ...s, '--project', 'shop', '--break-glass'], {
      env: { KAPPS_TOKEN: TOKENS.ci },
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/refused the apply run of shop\/dev: 403 /);
    const r = await p.run('install', ['-y', ...s, '--project', 'shop', '--break-glass', '--reporter', 'plain'], {
      env: { KAPPS_TOKEN: TOKENS.ops },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Approvals skipped by break glass: ops (admin); recorded in the run and its release\n');
    expect(r.stderr).not.toMatch(WAITING);
    expect(r.stdout).toMatch(/Recorded as release 1 of stack dev by run/);
    const id = /^Run (\S+): /m.exec(r.stderr)?.[1] ?? '';
    const shown = await kapps(p, ['runs', 'show', id, ...s], TOKENS.ci);
    expect(shown.stdout).toMatch(/^breakGlass:\s+approvals skipped by ops \(admin\) at \S+$/m);
    const submitted = await kapps(
      p,
      ['runs', 'submit', 'apply', 'dev', '--project', 'shop', '--break-glass', ...s, '-o', 'json'],
      TOKENS.ops,
    );
    expect(submitted.code, submitted.stderr).toBe(0);
    expect(JSON.parse(submitted.stdout)).toMatchObject({
      options: { breakGlass: true },
      approval: { breakGlass: { by: 'ops', role: 'admin' } },
    });
    const local = await p.run('install', ['-y', '--break-glass']);
    expect(local.code).toBe(2);
    expect(local.stderr).toContain('--break-glass needs --server');
  });

  it('a release by another path while it waits makes it stale: exit 1 saying a new preview is needed', async () => {
    const p = shop();
    const server = await serve(p);
    const started = install(p, server, TOKENS.ci);
    const id = await waitingRun(started);
    // The same stack file and backend, from the CLI here: a release the waiting preview did not see.
    const local = await p.run('install', ['-y', '--backend', server.backend ?? '']);
    expect(local.code, local.stderr).toBe(0);
    const r = await started.done;
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^kapps: run ${id} on ${server.url} is stale: .*a new preview and new approvals are needed; nothing was applied$`,
        'm',
      ),
    );
  });
});

describe('release rollback --server -y on a stack that requires approvals', () => {
  it('waits for approval the same way, then rolls back to the revision', async () => {
    const manifest = (tag: string) => ({
      kapps: [kapp('web', { apply_install: [fake('deploy', 'web', ['--stdout', tag], { print: 'true' })] })],
    });
    const p = fixtureProject({ name: 'infra', manifests: { shop: manifest('v1') } });
    const remote = gitRemote(p);
    const config = p.write('../server.yaml', {
      projects: [
        {
          name: 'shop',
          repo: { url: remote.url, path: 'stacks.yaml' },
          approvals: { required: 1, break_glass: ['admin'] },
        },
      ],
      tokens: [
        { name: 'ci', role: 'apply', sha256: hash(TOKENS.ci) },
        { name: 'alice', role: 'apply', sha256: hash(TOKENS.alice) },
        { name: 'ops', role: 'admin', sha256: hash(TOKENS.ops) },
      ],
    });
    const server = await startServer({
      args: ['--config', config, '--data-dir', join(p.root, 'data')],
      env: p.env,
      cwd: p.root,
    });
    const s = ['--server', server.url, '--project', 'shop'];
    const deploy = async (revision: number) => {
      const r = await p.run('install', ['-y', ...s, '--break-glass'], { env: { KAPPS_TOKEN: TOKENS.ops } });
      expect(r.stdout, r.stderr).toContain(`Recorded as release ${revision} of stack dev`);
    };
    await deploy(1);
    remote.commit('v2', { 'manifests/shop.yaml': manifest('v2') });
    await deploy(2);

    const started = p.start(
      'release',
      ['rollback', p.stackFile, 'dev', '--to', '1', ...s, '-y', '--reporter', 'plain'],
      {
        bare: true,
        env: { KAPPS_TOKEN: TOKENS.ci },
      },
    );
    const id = await waitingRun(started);
    const approve = await kapps(p, ['runs', 'approve', id, '--server', server.url], TOKENS.alice);
    expect(approve.stdout, approve.stderr).toBe(`run ${id} is approved and queued to apply\n`);
    const r = await started.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Recorded as release 3 of stack dev by run ${id} on ${server.url}`);
    expect(
      p
        .traceLines()
        .filter((l) => l.event === 'start')
        .map((l) => l.args[l.args.indexOf('--stdout') + 1]),
    ).toEqual(['v1', 'v2', 'v1']);

    const usage = await p.run('release', ['rollback', p.stackFile, 'dev', '--to', '1', ...s, '--no-wait'], {
      bare: true,
    });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--no-wait applies to the rollback run: add -y');
  });
});
