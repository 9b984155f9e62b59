/**
 * `kapps serve --config` with `approvals:`, `checks:` and `stacks:` written wrongly: it does not start, exits 1, and
 * each mistake is one diagnostic naming the file, the line and the field, never a stack trace; written rightly, it
 * starts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startServer, stopAllServers } from '../support/server.js';

const dir = mkdtempSync(path.join(tmpdir(), 'kapps-gate-config-'));
writeFileSync(
  path.join(dir, 'stacks.yaml'),
  'dev:\n  provider: local\n  manifests: []\nprod:\n  provider: local\n  manifests: []\n',
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => stopAllServers());

const KEY_ENV = 'KAPPS_TEST_GATE_CHECK_KEY';

async function serve(config: string, env: Record<string, string> = {}) {
  const file = path.join(dir, 'server.yaml');
  writeFileSync(file, config);
  return runCli(['serve', '--config', file, '--listen', '127.0.0.1:0', '--backend', path.join(dir, 'b')], {
    cwd: dir,
    env,
    killAfterMs: 20_000,
  });
}

/** A project entry whose lines 4 and after are `body` (lines 1–3: `projects:`, its name, its stack file). */
const project = (body: string) => `projects:\n  - name: shop\n    stack_file: stacks.yaml\n${body}`;

describe('kapps serve --config: approvals, checks and stacks written wrongly', () => {
  it.each([
    [
      'a check with both command and url',
      project(
        '    checks:\n      - name: opa\n        stage: after_preview\n        command: [opa, eval]\n' +
          `        url: https://policy.example/check\n        secret_env: ${KEY_ENV}\n`,
      ),
      8,
      'a check takes `command` or `url`, not both (at projects[0].checks[0].url)',
    ],
    [
      'a check with neither',
      project('    checks:\n      - name: opa\n        stage: after_preview\n'),
      5,
      'a check needs `command` (a program and its arguments) or `url` (an endpoint) (at projects[0].checks[0].name)',
    ],
    [
      'a url without secret_env',
      project(
        '    checks:\n      - name: cost\n        stage: before_apply\n        url: https://cost.example/check\n',
      ),
      7,
      'a check with `url` needs `secret_env`: its requests are signed as notifications are (at projects[0].checks[0].url)',
    ],
    [
      'a secret_env the server does not have',
      project(
        '    checks:\n      - name: cost\n        stage: before_apply\n        url: https://cost.example/check\n' +
          '        secret_env: KAPPS_TEST_UNSET_CHECK_KEY\n',
      ),
      8,
      "`KAPPS_TEST_UNSET_CHECK_KEY` is not set in the server's environment (at projects[0].checks[0].secret_env)",
    ],
    [
      'a secret_env on a command check',
      project(
        `    checks:\n      - name: opa\n        stage: after_preview\n        command: [opa]\n        secret_env: ${KEY_ENV}\n`,
      ),
      8,
      '`secret_env` signs the requests of a `url` check; a command check has none (at projects[0].checks[0].secret_env)',
    ],
    [
      'credentials in a check url',
      project(
        '    checks:\n      - name: cost\n        stage: before_apply\n        url: https://bob:hunter2@cost.example/x\n' +
          `        secret_env: ${KEY_ENV}\n`,
      ),
      7,
      'the URL holds credentials: the endpoint is authenticated by the signature (at projects[0].checks[0].url)',
    ],
    [
      'a check name used twice',
      project(
        '    checks:\n      - name: opa\n        stage: after_preview\n        command: [opa]\n' +
          '      - name: opa\n        stage: before_apply\n        command: [opa]\n',
      ),
      8,
      'check `opa` is declared twice (at projects[0].checks[1].name)',
    ],
    [
      'a timeout over 1h',
      project(
        '    checks:\n      - name: opa\n        stage: after_preview\n        command: [opa]\n        timeout: 2h\n',
      ),
      8,
      '`timeout: 2h` is out of bounds: at most 1h (at projects[0].checks[0].timeout)',
    ],
    [
      'a timeout that is no duration',
      project(
        '    checks:\n      - name: opa\n        stage: after_preview\n        command: [opa]\n        timeout: 90\n',
      ),
      8,
      '(at projects[0].checks[0].timeout)',
    ],
    [
      'an unknown stage',
      project('    checks:\n      - name: opa\n        stage: before_preview\n        command: [opa]\n'),
      6,
      '(at projects[0].checks[0].stage)',
    ],
    [
      'an unknown key in a check',
      project(
        '    checks:\n      - name: opa\n        stage: after_preview\n        command: [opa]\n        shell: true\n',
      ),
      8,
      'unknown field `shell` (at projects[0].checks[0].shell)',
    ],
    [
      'expire_after under 1m',
      project('    approvals:\n      required: 1\n      expire_after: 30s\n'),
      6,
      '`expire_after: 30s` is out of bounds: at least 1m, at most 90d (at projects[0].approvals.expire_after)',
    ],
    [
      'expire_after over 90d',
      project('    approvals:\n      required: 1\n      expire_after: 91d\n'),
      6,
      '`expire_after: 91d` is out of bounds: at least 1m, at most 90d (at projects[0].approvals.expire_after)',
    ],
    [
      'from_roles with read',
      project('    approvals:\n      required: 1\n      from_roles: [read, apply]\n'),
      6,
      '`read` may not approve: a read token sees runs, it changes nothing (at projects[0].approvals.from_roles)',
    ],
    [
      'break_glass with plan',
      project('    approvals:\n      required: 1\n      break_glass: [admin, plan]\n'),
      6,
      '`plan` may not break glass: its tokens cannot start an apply, destroy or rollback (at projects[0].approvals.break_glass)',
    ],
    ['required over 10', project('    approvals:\n      required: 11\n'), 5, '(at projects[0].approvals.required)'],
    [
      'an unknown role',
      project('    approvals:\n      required: 1\n      from_roles: [approver]\n'),
      6,
      '(at projects[0].approvals.from_roles[0])',
    ],
    [
      'an unknown key in approvals',
      project('    approvals:\n      required: 1\n      skip_for: [ci]\n'),
      6,
      'unknown field `skip_for` (at projects[0].approvals.skip_for)',
    ],
    [
      'an unknown key in a stack',
      project('    stacks:\n      prod:\n        approvals: {required: 2}\n        notify: []\n'),
      7,
      'unknown field `notify` (at projects[0].stacks.prod.notify)',
    ],
    [
      "a mistake in a stack's checks",
      project(
        '    stacks:\n      prod:\n        checks:\n          - name: opa\n            stage: after_preview\n' +
          '            command: [opa]\n            timeout: 3h\n',
      ),
      10,
      '`timeout: 3h` is out of bounds: at most 1h (at projects[0].stacks.prod.checks[0].timeout)',
    ],
    [
      'a stack the stack file does not define',
      project('    stacks:\n      prd:\n        approvals: {required: 2}\n'),
      6,
      '`prd` is not a stack of stacks.yaml (at projects[0].stacks.prd)',
    ],
  ])('%s', async (_what, config, line, message) => {
    const r = await serve(config, { [KEY_ENV]: 'k-0123456789' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^server\\.yaml:${line}:\\d+: error: `));
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stderr).not.toContain('hunter2');
    expect(r.stderr).not.toContain('k-0123456789');
  });

  it('reports every mistake at once, in the order of the file', async () => {
    const r = await serve(
      project(
        '    approvals:\n      required: 1\n      expire_after: 30s\n' + // 4–6
          '    checks:\n      - name: opa\n        stage: after_preview\n' + // 7–9
          '    stacks:\n      prod:\n        approvals: {required: 1, from_roles: [read]}\n', // 10–12
      ),
    );
    expect(r.code).toBe(1);
    const located = [...r.stderr.matchAll(/^server\.yaml:(\d+):\d+: error: .*\(at (\S+)\)$/gm)].map((m) => [
      Number(m[1]),
      m[2],
    ]);
    expect(located).toEqual([
      [6, 'projects[0].approvals.expire_after'],
      [8, 'projects[0].checks[0].name'],
      [12, 'projects[0].stacks.prod.approvals.from_roles'],
    ]);
    expect(r.stderr).toContain('3 errors');
  });

  it('starts with approvals, checks and per-stack overrides written rightly', async () => {
    writeFileSync(
      path.join(dir, 'good.yaml'),
      project(
        '    approvals: {required: 1, from_roles: [apply, admin], author_may_approve: false, expire_after: 7d, break_glass: [admin]}\n' +
          '    checks:\n' +
          '      - {name: opa, stage: after_preview, command: [opa, eval, --stdin-input, data.kapps.deny], timeout: 30s}\n' +
          `      - {name: cost, stage: before_apply, url: "https://cost.example/check", secret_env: ${KEY_ENV}, enforcement: advisory}\n` +
          '    stacks:\n      dev: {approvals: {required: 0}, checks: []}\n',
      ),
    );
    const server = await startServer({
      args: ['--config', path.join(dir, 'good.yaml')],
      cwd: dir,
      env: { [KEY_ENV]: 'k-0123456789' },
    });
    expect(server.stderr()).not.toContain('error');
    expect(server.stderr()).not.toContain('k-0123456789');
    await server.stop();
  });
});
