/**
 * Secrets that stay secret, on the built CLI: credentials in the recorded command line whatever their form, kapps'
 * own configuration kept from steps unless a kapp asks for it, values derived from a sensitive output redacted like
 * the output itself, and sensitive files readable by their owner only and gone after the kapp's run.
 */
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { cleanupProjects, fixtureProject, kapp, parseEvents, type FixtureProject } from '../support/project.js';
import { cleanup, freshBackend } from '../fixtures/release/harness.js';

afterAll(() => {
  cleanupProjects();
  cleanup();
});

/** Every file under `dir`, read as text. */
function allText(dir: string): string {
  let text = '';
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    text += statSync(file).isDirectory() ? allText(file) : readFileSync(file, 'utf8');
  }
  return text;
}

const oneStep = (): FixtureProject =>
  fixtureProject({ manifests: { web: { kapps: [kapp('k', { apply_install: [{ name: 's', command: 'true' }] })] } } });

describe('credentials in the recorded command line', () => {
  it('are masked in every form on the file backend: --opt=URL, --opt URL, several in one argument, ?password=', async () => {
    const p = oneStep();
    const args = [
      '-y',
      `--backend=${p.kappsHome}`,
      '--profile=https://deploy:s3cret-eq-form@example.com/x',
      '--cluster',
      'https://admin:s3cret-space-form@a.example.com and ftp://u:s3cret-second@b.example.com',
      '--account=postgres://u@h/db?sslmode=off&password=s3cret-query',
    ];
    const r = await p.run('install', args);
    expect(r.code, r.stderr).toBe(0);
    const record = allText(p.kappsHome);
    expect(record).toContain('--profile=https://deploy:***@example.com/x');
    expect(record).toContain('https://admin:***@a.example.com and ftp://u:***@b.example.com');
    expect(record).toContain('password=***');
    const show = await runCli(['release', 'show', p.stackFile, 'dev', '-o', 'json', `--backend=${p.kappsHome}`], {
      cwd: p.dir,
      env: p.env,
    });
    expect(show.code, show.stderr).toBe(0);
    for (const text of [record, show.stdout + show.stderr, r.stdout + r.stderr]) expect(text).not.toMatch(/s3cret/);

    // A record written before the masking held the password as given: release show masks it when it prints it.
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((n) =>
        statSync(path.join(dir, n)).isDirectory() ? files(path.join(dir, n)) : [path.join(dir, n)],
      );
    for (const file of files(p.kappsHome)) {
      const text = readFileSync(file, 'utf8');
      if (text.includes('deploy:***@')) writeFileSync(file, text.replace('deploy:***@', 'deploy:old-s3cret@'));
    }
    expect(allText(p.kappsHome)).toContain('old-s3cret');
    const old = await runCli(['release', 'show', p.stackFile, 'dev', `--backend=${p.kappsHome}`], {
      cwd: p.dir,
      env: p.env,
    });
    expect(old.code, old.stderr).toBe(0);
    expect(old.stdout).toContain('https://deploy:***@example.com/x');
    expect(old.stdout).not.toContain('old-s3cret');
  });

  it('masks the password of --backend=postgres://… on PostgreSQL, in the record and in release show', async () => {
    const backend = await freshBackend('postgres');
    const url = new URL(backend.value);
    url.password = 'pg-eq-s3cret';
    const p = oneStep();
    const r = await p.run('install', ['-y', `--backend=${url.toString()}`]);
    expect(r.code, r.stderr).toBe(0);
    const show = await runCli(['release', 'show', p.stackFile, 'dev', '-o', 'json', `--backend=${url.toString()}`], {
      cwd: p.dir,
      env: p.env,
    });
    expect(show.code, show.stderr).toBe(0);
    const release = JSON.parse(show.stdout) as { command: string[] };
    expect(release.command).toContain(`--backend=${url.toString().replace('pg-eq-s3cret', '***')}`);
    expect(JSON.stringify(await backend.rawRecords(path.basename(p.dir), 'dev'))).not.toContain('pg-eq-s3cret');
    expect(r.stdout + r.stderr + show.stdout + show.stderr).not.toContain('pg-eq-s3cret');
  });
});

describe('credentials in error messages', () => {
  it('a usage error quoting a URL with a password masks the password', async () => {
    const p = oneStep();
    const r = await runCli(['install', p.stackFile, 'dev', 'ws', 'postgres://u:usage-s3cret@h/db'], {
      cwd: p.dir,
      env: p.env,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Unknown argument: postgres://u:***@h/db');
    expect(r.stdout + r.stderr).not.toContain('usage-s3cret');
  });
});

describe("kapps' own configuration in the steps' environment", () => {
  /** A step that prints its whole environment, and one that writes the KAPPS_BACKEND it got to a file. */
  const envProject = (asks: boolean): FixtureProject =>
    fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp('k', {
              apply_install: [
                { name: 'env', command: 'env', print: 'true' },
                {
                  name: 'save',
                  command: 'sh',
                  args: `-c 'printf "%s" "$KAPPS_BACKEND" > backend.txt; exit 3'`,
                  ...(asks ? { env_vars: { KAPPS_BACKEND: '{{ env "KAPPS_BACKEND" }}' } } : {}),
                },
              ],
            }),
          ],
        },
      },
    });

  it('keeps every KAPPS_* and PG* from steps, and keeps what steps need', async () => {
    const backend = await freshBackend('postgres');
    const url = new URL(backend.value);
    url.password = 'env-s3cret-pw';
    const p = envProject(false);
    const env = {
      KAPPS_BACKEND: url.toString(),
      PGPASSWORD: 'pg-s3cret-pw',
      E2E_USER_VAR: 'kept-for-steps',
      KAPPS_TOKEN: 'token-s3cret-pw',
      KAPPS_SERVER: 'http://127.0.0.1:1',
      KAPPS_ANYTHING: 'any-s3cret-pw',
    };
    for (const reporter of ['plain', 'json']) {
      const r = await p.run('install', ['-y', '--reporter', reporter], { env });
      expect(r.code).toBe(1);
      const out = r.stdout + r.stderr;
      expect(out).toContain('E2E_USER_VAR=kept-for-steps');
      expect(out).toMatch(/PATH=/);
      // Every KAPPS_* variable is kapps' own, not only the ones it reads today.
      expect(out).not.toMatch(/KAPPS_[A-Z_]*=|PGPASSWORD=/);
      expect(out).not.toMatch(/s3cret-pw/);
      expect(p.read('.kapps-workspace/dev/web/k/backend.txt')).toBe('');
    }
  });

  it('passes KAPPS_BACKEND to a step whose env_vars ask for it, and still redacts it', async () => {
    const backend = await freshBackend('postgres');
    const url = new URL(backend.value);
    url.password = 'env-s3cret-pw';
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp('k', {
              apply_install: [
                {
                  name: 'show',
                  command: 'sh',
                  args: `-c 'printf "%s" "$KAPPS_BACKEND" > backend.txt; echo "url: $KAPPS_BACKEND"; exit 3'`,
                  print: 'true',
                  env_vars: { KAPPS_BACKEND: '{{ env "KAPPS_BACKEND" }}' },
                },
              ],
            }),
          ],
        },
      },
    });
    const r = await p.runJson('install', ['-y'], { env: { KAPPS_BACKEND: url.toString() } });
    expect(r.code).toBe(1);
    expect(p.read('.kapps-workspace/dev/web/k/backend.txt')).toBe(url.toString());
    expect(r.stdout).toContain('url: <sensitive>');
    expect(r.stdout + r.stderr).not.toContain('env-s3cret-pw');
  });
});

describe('values derived from a sensitive output', () => {
  const SECRET = 'hunter2-derived-secret';
  const FLOAT = 1234567.5;
  /** The forms of the secret the templates below print. */
  const derivedForms = [
    SECRET.toUpperCase(),
    Buffer.from(SECRET).toString('base64'),
    '1.2345675e+06',
    SECRET.slice(0, 10),
    `${SECRET}!${SECRET.toUpperCase()}`,
    'hunter2DERIVED',
  ];

  const derived = (): FixtureProject =>
    fixtureProject({
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
                    args: `-c 'printf "{\\"token\\": \\"%s\\", \\"num\\": ${FLOAT}}" "$E2E_SECRET" > out.json'`,
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
                    args: [
                      `-c 'for a in "$@"; do echo "got $a"; echo "err $a" >&2; done; exit 4' sh`,
                      `'{{ .outputs.db.creds.token | upper }}'`,
                      `'{{ b64enc .outputs.db.creds.token }}'`,
                      `'{{ printf "%v" .outputs.db.creds.num }}'`,
                      `'{{ trunc 10 .outputs.db.creds.token }}'`,
                      `'{{ print .outputs.db.creds.token "!" (upper .outputs.db.creds.token) }}'`,
                      `'{{ $p := splitList "-" .outputs.db.creds.token }}{{ index $p 0 }}{{ index $p 1 | upper }}'`,
                    ].join(' '),
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

  it('never appear in the output (plain and JSON), the failure summary or the release record', async () => {
    for (const reporter of ['plain', 'json']) {
      const p = derived();
      const r = await p.run('install', ['-y', '--reporter', reporter], { env: { E2E_SECRET: SECRET } });
      expect(r.code).toBe(1);
      const out = r.stdout + r.stderr;
      expect(out).toContain('got <sensitive>');
      expect(out).toContain('err <sensitive>');
      if (reporter === 'json') {
        const finished = parseEvents(r.stdout).find((e) => e.type === 'step-finished' && e.status === 'failed');
        expect(JSON.stringify(finished)).toContain('<sensitive>');
      } else {
        expect(r.stdout).toContain('| err <sensitive>');
      }
      const record = allText(p.kappsHome);
      for (const form of [SECRET, ...derivedForms]) {
        expect(out, form).not.toContain(form);
        expect(record, form).not.toContain(form);
      }
    }
  });
});

describe('sensitive files', () => {
  const templated = (phases: Record<string, unknown[]>): FixtureProject =>
    fixtureProject({
      stacks: {
        dev: {
          provider: 'local',
          cluster: 'c',
          template_dirs: ['templates'],
          manifests: [{ uri: 'manifests/web.yaml' }],
        },
      },
      manifests: {
        web: {
          kapps: [
            kapp('k', phases, {
              vars: { password: 'pw-123456' },
              templates: { secret: { source: 'secret.tpl', dest: 'secret.conf', sensitive: true } },
            }),
          ],
        },
      },
      files: { 'templates/secret.tpl': 'password={{ .kapp.vars.password }}\n' },
    });

  it('a sensitive template rendered over an existing 0644 file is 0600, and removed after a failure', async () => {
    const p = templated({
      apply_install: [
        { name: 'mode', command: 'sh', args: `-c 'stat -c %a secret.conf > mode.txt; cat secret.conf > seen.txt'` },
        { name: 'fail', command: 'false' },
      ],
    });
    const existing = p.write('.kapps-workspace/dev/web/k/secret.conf', 'old\n');
    chmodSync(existing, 0o644);
    const r = await p.run('install', ['-y']);
    expect(r.code).toBe(1);
    expect(p.read('.kapps-workspace/dev/web/k/mode.txt')).toBe('600\n');
    expect(p.read('.kapps-workspace/dev/web/k/seen.txt')).toBe('password=pw-123456\n');
    expect(p.exists('.kapps-workspace/dev/web/k/secret.conf')).toBe(false);
  });

  it('is removed after a timeout', async () => {
    const p = templated({ apply_install: [{ name: 'slow', command: 'sleep', args: '5', timeout: 1 }] });
    const r = await p.run('install', ['-y', '--kill-grace', '0']);
    expect(r.code).toBe(1);
    expect(p.exists('.kapps-workspace/dev/web/k/secret.conf')).toBe(false);
  });

  it('an unparsable sensitive output file, or one a failed run never loaded, is removed', async () => {
    const outputs = { outputs: [{ id: 'token', path: 'token.json', format: 'json', sensitive: true }] };
    const bad = fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'db',
              { output: [{ name: 'o', command: 'sh', args: `-c 'echo "{not json s3cret" > token.json'` }] },
              outputs,
            ),
          ],
        },
      },
    });
    const r1 = await bad.run('install', ['-y']);
    expect(r1.code).toBe(1);
    expect(r1.stdout + r1.stderr).toContain('cannot read output');
    expect(bad.exists('.kapps-workspace/dev/web/db/token.json')).toBe(false);

    const failing = fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'db',
              {
                apply_install: [
                  { name: 'w', command: 'sh', args: `-c 'echo "{}" > token.json'` },
                  { name: 'fail', command: 'false' },
                ],
              },
              outputs,
            ),
          ],
        },
      },
    });
    const r2 = await failing.run('install', ['-y']);
    expect(r2.code).toBe(1);
    expect(failing.exists('.kapps-workspace/dev/web/db/token.json')).toBe(false);
  });
});
