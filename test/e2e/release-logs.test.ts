/**
 * Release logs around real runs of the built CLI, on the file backend and on PostgreSQL: every install -y / delete -y
 * keeps its log (the plain reporter's lines and every line a step printed), `kapps release logs` prints it,
 * `--follow` follows a running release to its end, secrets never reach it, and Ctrl-C loses no line.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BACKENDS, freshBackend, PG_PASSWORD } from '../fixtures/release/harness.js';
import {
  cleanupProjects,
  fake,
  fixtureProject,
  kapp,
  killMatching,
  survivors,
  uniqueMarker,
  waitFor,
} from '../support/project.js';
import { CLI, cliEnv } from '../support/cli.js';
import { spawn } from 'node:child_process';

afterAll(cleanupProjects);

function shop(dbArgs: readonly string[] = []) {
  return fixtureProject({
    manifests: {
      web: {
        kapps: [
          kapp('db', {
            apply_install: [
              fake('apply', 'apply-db', ['--stdout', 'db is up', '--stderr', 'db warns', ...dbArgs], { print: 'true' }),
            ],
            // No `print`: the output is never shown, and still kept in the log.
            apply_delete: [fake('delete', 'delete-db', ['--stdout', 'db is gone'])],
          }),
          kapp(
            'api',
            {
              apply_install: [fake('apply', 'apply-api', ['--stdout', 'api is up'], { print: 'true' })],
              apply_delete: [fake('delete', 'delete-api', ['--stdout', 'api is gone'], { print: 'true' })],
            },
            { depends_on: [{ id: 'db' }] },
          ),
        ],
      },
    },
  });
}

describe.each(BACKENDS)('kapps release logs (%s backend)', (kind) => {
  it('prints the log of the latest release or of --revision N, step lines tagged, --kapp keeping one kapp', async () => {
    const backend = await freshBackend(kind);
    const p = shop();
    const env = { env: backend.env };
    const installed = await p.run('install', ['-y', '--reporter', 'plain'], env);
    expect(installed.code, installed.stderr).toBe(0);
    const deleted = await p.run('delete', ['-y', '--reporter', 'json'], env);
    expect(deleted.code, deleted.stderr).toBe(0);

    const first = await p.run('release', ['logs', p.stackFile, 'dev', '--revision', '1'], { ...env, bare: true });
    expect(first.code, first.stderr).toBe(0);
    const lines = first.stdout.trimEnd().split('\n');
    expect(lines).toContain('[web:db apply_install/apply] db is up');
    expect(lines).toContain('[web:db apply_install/apply] db warns');
    expect(lines).toContain('[web:api apply_install/apply] api is up');
    expect(lines.indexOf('[web:db apply_install/apply] db is up')).toBeLessThan(
      lines.indexOf('[web:api apply_install/apply] api is up'),
    );
    // The plain reporter's own lines are there as the install printed them (the steps' output aside).
    const plain = installed.stdout
      .trimEnd()
      .split('\n')
      .filter((l) => l !== '' && !/is up|warns|^Recorded as release/.test(l));
    expect(plain.length).toBeGreaterThan(3);
    for (const line of plain) expect(lines, line).toContain(line);

    // The latest is the delete's, even though it ran with --reporter json.
    const latest = await p.run('release', ['logs', p.stackFile, 'dev'], { ...env, bare: true });
    expect(latest.code, latest.stderr).toBe(0);
    expect(latest.stdout).toContain('[web:api apply_delete/delete] api is gone');
    expect(latest.stdout).not.toContain('db is up');
    expect(latest.stdout.indexOf('api is gone')).toBeLessThan(
      latest.stdout.indexOf('[web:db apply_delete/delete] db is gone'),
    );
    expect(deleted.stdout).not.toContain('"text":"db is gone');

    const onlyApi = await p.run('release', ['logs', p.stackFile, 'dev', '--revision', '1', '--kapp', 'web:api'], {
      ...env,
      bare: true,
    });
    expect(
      onlyApi.stdout
        .trimEnd()
        .split('\n')
        .filter((l) => l.startsWith('[')),
    ).toEqual(['[web:api apply_install/apply] api is up']);

    const missing = await p.run('release', ['logs', p.stackFile, 'dev', '--revision', '9'], { ...env, bare: true });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('release 9 of project/dev not found (revisions are 1 to 2)');
    for (const r of [installed, deleted, first, latest, onlyApi, missing])
      expect(r.stdout + r.stderr).not.toContain(PG_PASSWORD);
  });

  it('--follow prints a running release as it goes and stops when it ends', async () => {
    const backend = await freshBackend(kind);
    const gate = join(fixtureProject().root, 'go');
    const p = shop(['--wait-file', gate, '--stdout', 'db after the gate']);
    const install = p.start('install', ['-y', '--reporter', 'plain'], { env: backend.env });
    await waitFor('the step to print', () => install.stdout().includes('db is up'), 20_000);

    const follow = spawn(process.execPath, [CLI, 'release', 'logs', p.stackFile, 'dev', '--follow'], {
      cwd: p.dir,
      env: cliEnv({ ...p.env, ...backend.env }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    follow.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    follow.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    const followed = new Promise<number | null>((resolve) => follow.on('close', (code) => resolve(code)));
    await waitFor(
      'the follower to print the log so far',
      () => out.includes('[web:db apply_install/apply] db is up'),
      20_000,
    );
    expect(out).not.toContain('api is up');

    writeFileSync(gate, 'go');
    const done = await install.done;
    expect(done.code, done.stderr).toBe(0);
    expect(await followed, err).toBe(0);
    expect(out).toContain('[web:db apply_install/apply] db after the gate');
    expect(out).toContain('[web:api apply_install/apply] api is up');
    // It ends with the summary's last line, as the install printed it.
    const lastPlain = done.stdout
      .trimEnd()
      .split('\n')
      .filter((l) => !/^Recorded as release/.test(l))
      .at(-1);
    expect(out.trimEnd().split('\n').at(-1)).toBe(lastPlain);
  });
});

describe('release logs and secrets, Ctrl-C and files', () => {
  it('a step printing one 30 MB line without a newline: kept whole in the log, in pieces of 16,384 characters', async () => {
    const printer = [
      "const chunk = Buffer.alloc(1024 * 1024, 'y');",
      "process.stdout.write('first-line\\n');",
      'let written = 0;',
      'function more() {',
      '  while (written < 30) {',
      '    written++;',
      "    if (!process.stdout.write(chunk)) return process.stdout.once('drain', more);",
      '  }',
      "  process.stdout.write('-end-of-the-long-line');",
      '}',
      'more();',
      '',
    ].join('\n');
    const p = fixtureProject({ files: { 'print.mjs': printer }, manifests: { web: { kapps: [] } } });
    p.write('manifests/web.yaml', {
      kapps: [
        kapp('noisy', {
          apply_install: [{ name: 'print', command: process.execPath, args: p.path('print.mjs') }],
          apply_delete: [],
        }),
      ],
    });
    const installed = await p.run('install', ['-y', '--reporter', 'plain']);
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    const logFile = join(p.kappsHome, 'releases', 'project', 'dev', '1.log.ndjson');
    const printed = readFileSync(logFile, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { step?: string; text: string })
      .filter((l) => l.step === 'print')
      .map((l) => l.text);
    expect(printed[0]).toBe('first-line');
    const long = printed.slice(1);
    expect(long.join('')).toBe(`${'y'.repeat(30 * 1024 * 1024)}-end-of-the-long-line`);
    expect(long.slice(0, -1).every((t) => t.length === 16_384)).toBe(true);
    const shown = await p.run('release', ['logs', p.stackFile, 'dev', '--kapp', 'web:noisy'], { bare: true });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout.split('\n').filter((l) => l.startsWith('[web:noisy apply_install/print] y')).length).toBe(
      long.length - 1,
    );
  });

  it('--follow stops with an error when the run that owns the release died (kill -9)', async () => {
    const marker = uniqueMarker('kapps-log-dead');
    const p = shop(['--fork-sleep', '60', marker, '--hang']);
    const install = p.start('install', ['-y', '--reporter', 'plain']);
    const logFile = join(p.kappsHome, 'releases', 'project', 'dev', '1.log.ndjson');
    await waitFor(
      'the step to print',
      () => existsSync(logFile) && readFileSync(logFile, 'utf8').includes('"db is up"'),
      20_000,
    );
    install.child.kill('SIGKILL');
    await install.done;
    killMatching(marker);
    const r = await p.run('release', ['logs', p.stackFile, 'dev', '-f'], { bare: true });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('[web:db apply_install/apply] db is up');
    expect(r.stderr).toMatch(/^kapps: stopped following release 1 of project\/dev: .*the owner looks dead/m);
  });

  it('never hold a sensitive output, even printed by a step', async () => {
    const SECRET = 'hunter2-release-log-secret';
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'db',
              {
                output: [
                  {
                    name: 'output',
                    command: 'sh',
                    args: `-c 'printf "{\\"token\\": \\"%s\\"}" "$E2E_SECRET" > out.json'`,
                  },
                ],
              },
              { outputs: [{ id: 'creds', path: 'out.json', format: 'json', sensitive: true }] },
            ),
            kapp(
              'api',
              {
                apply_install: [
                  {
                    name: 'echo',
                    command: 'sh',
                    args: `-c 'echo "token is $1"; echo "err $1" >&2' sh '{{ .outputs.db.creds.token }}'`,
                    print: 'true',
                  },
                ],
              },
              { depends_on: [{ id: 'db' }] },
            ),
          ],
        },
      },
    });
    const r = await p.run('install', ['-y', '--reporter', 'plain'], { env: { E2E_SECRET: SECRET } });
    expect(r.code, r.stderr).toBe(0);
    const logs = await p.run('release', ['logs', p.stackFile, 'dev'], { bare: true });
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain('[web:api apply_install/echo] token is <sensitive>');
    expect(logs.stdout).toContain('[web:api apply_install/echo] err <sensitive>');
    expect(logs.stdout).not.toContain(SECRET);
    // Nor the file itself, which is its owner's only.
    const dir = join(p.kappsHome, 'releases', 'project', 'dev');
    const file = join(dir, readdirSync(dir).find((n) => n.endsWith('.log.ndjson')) ?? 'none');
    expect(readFileSync(file, 'utf8')).not.toContain(SECRET);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('Ctrl-C: the log of the cancelled release has every line up to the end of the run', async () => {
    const marker = uniqueMarker('kapps-log-cancel');
    const p = shop(['--fork-sleep', '60', marker, '--hang']);
    const install = p.start('install', ['-y', '--reporter', 'plain']);
    // The step's line is in the log (so the run had it before the Ctrl-C).
    const logFile = join(p.kappsHome, 'releases', 'project', 'dev', '1.log.ndjson');
    await waitFor(
      'the step to print',
      () => existsSync(logFile) && readFileSync(logFile, 'utf8').includes('"db is up"'),
      20_000,
    );
    install.child.kill('SIGINT');
    const done = await install.done;
    expect(done.code).toBe(130);
    expect(await survivors(marker, 5000)).toEqual([]);
    const logs = await p.run('release', ['logs', p.stackFile, 'dev'], { bare: true });
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain('[web:db apply_install/apply] db is up');
    const lastPlain = done.stdout
      .trimEnd()
      .split('\n')
      .filter((l) => !/^Recorded as release/.test(l))
      .at(-1);
    expect(logs.stdout.trimEnd().split('\n').at(-1)).toBe(lastPlain);
    expect(logs.stdout).not.toContain('api is up');
  });
});
