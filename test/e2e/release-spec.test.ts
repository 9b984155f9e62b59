/**
 * The complete spec a release records and preview compares, one class of change at a time, on the built CLI: a
 * kapp variable, a file of a file source changed in place, a sensitive variable (masked, detected with the backend's
 * key, never stored in clear), a template added and removed, a git source moved to another tag with the same steps,
 * and a release recorded before the spec had a format (compared on what it recorded, with no false Update).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BACKENDS,
  cleanup,
  fakeKapp,
  freshBackend,
  makeProject,
  startedTags,
  type KappDef,
  type TestProject,
} from '../fixtures/release/harness.js';

afterAll(cleanup);

const preview = (p: TestProject, ...args: string[]) => p.run(['preview', 'stacks.yaml', 'dev', ...args]);
const install = (p: TestProject, ...args: string[]) => p.run(['install', 'stacks.yaml', 'dev', '-y', ...args]);

interface PreviewJson {
  hasChanges: boolean;
  kapps: { id: string; action: string; changes: { path: string[]; from: unknown; to: unknown; lines?: string[] }[] }[];
}

async function previewJson(p: TestProject): Promise<PreviewJson> {
  const r = await preview(p, '-o', 'json');
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as PreviewJson;
}

/** A project with the one kapp `web:api` on a file backend, its stack `dev` given `settings` (YAML lines). */
async function apiWithStack(settings: string): Promise<TestProject> {
  const backend = await freshBackend('file');
  const p = makeProject('shop', backend, [{ id: 'api', descriptor: fakeKapp({ apply: '--tag apply-api' }) }]);
  writeFileSync(p.stackFile, `dev:\n  provider: local\n${settings}  manifests:\n    - uri: manifests/web.yaml\n`);
  return p;
}

/** Install, then check that a preview finds nothing to do. */
async function installed(p: TestProject, ...args: string[]): Promise<void> {
  const r = await install(p, ...args);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  const same = await preview(p, '--detailed-exitcode');
  expect(same.stdout + same.stderr).toMatch(/^No changes: the \d+ kapp\(s\) match release \d+\.\n$/);
  expect(same.code).toBe(0);
}

describe('the spec holds what the steps do not show', () => {
  it('a kapp variable no step uses: Update with vars.replicas: 2 → 3, and --changed-only installs it', async () => {
    const backend = await freshBackend('file');
    const api = (replicas: number): KappDef => ({
      id: 'api',
      descriptor: `${fakeKapp({ apply: '--tag apply-api' })}vars:\n  replicas: ${replicas}\n  region: eu\n`,
    });
    const p = makeProject('shop', backend, [api(2), { id: 'db', descriptor: fakeKapp({ apply: '--tag apply-db' }) }]);
    await installed(p);

    p.writeKapps([api(3), { id: 'db', descriptor: fakeKapp({ apply: '--tag apply-db' }) }]);
    const r = await preview(p, '--detailed-exitcode');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe(
      [
        'Preview against release 1:',
        'ID      ACTION',
        'web:api  Update',
        'web:db  UnChanged',
        '',
        '~ web:api (Update)',
        '    ~ vars.replicas: 2 → 3',
        '',
      ]
        .join('\n')
        .replace('ID      ACTION', 'ID       ACTION')
        .replace('web:db  UnChanged', 'web:db   UnChanged'),
    );
    const doc = await previewJson(p);
    expect(doc.kapps[0]?.changes).toEqual([{ path: ['vars', 'replicas'], from: 2, to: 3 }]);

    const before = p.traceLines().length;
    const changed = await install(p, '--changed-only');
    expect(changed.code, changed.stderr).toBe(0);
    expect(startedTags(p.traceLines().slice(before))).toEqual(['apply-api']);
    expect((await preview(p)).stdout).toBe('No changes: the 2 kapp(s) match release 2.\n');
    // `release diff` compares the same specs.
    const diff = await p.run(['release', 'diff', 'stacks.yaml', 'dev', '1', '2']);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain('~ web:api: spec changed\n    ~ vars.replicas: 2 → 3\n');
  });

  it('a kapp variable read from a kapp vars file (kapp_vars_dirs) alone: Update with vars.replicas: 2 → 3', async () => {
    const p = await apiWithStack('  kapp_vars_dirs:\n    - kapp-vars\n');
    mkdirSync(join(p.dir, 'kapp-vars'));
    writeFileSync(join(p.dir, 'kapp-vars', 'api.yaml'), 'replicas: 2\n');
    await installed(p);

    writeFileSync(join(p.dir, 'kapp-vars', 'api.yaml'), 'replicas: 3\n');
    const doc = await previewJson(p);
    expect(doc.hasChanges).toBe(true);
    expect(doc.kapps.map((k) => [k.id, k.action, k.changes])).toEqual([
      ['web:api', 'Update', [{ path: ['vars', 'replicas'], from: 2, to: 3 }]],
    ]);
  });

  it('a stack variable that cannot be rendered and that nothing reads: preview, install and the next preview agree', async () => {
    const p = await apiWithStack('  vars:\n    broken: \'{{ fail "boom" }}\'\n');
    const before = await previewJson(p);
    expect(before.kapps.map((k) => [k.id, k.action])).toEqual([['web:api', 'Create']]);
    // The kapp has no template and no variable of its own: its visit renders none, as preview did not.
    const r = await install(p);
    expect(r.stderr).not.toContain('boom');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('1 succeeded, 0 failed');
    expect((await preview(p)).stdout).toBe('No changes: the 1 kapp(s) match release 1.\n');
  });

  it('a file of a file source changed in place: Update with the source named; kapps clean changes nothing', async () => {
    const backend = await freshBackend('file');
    const p = makeProject('shop', backend, [{ id: 'api', descriptor: fakeKapp({ apply: '--tag apply-api' }) }]);
    writeFileSync(join(p.dir, 'kapps', 'api', 'values.yaml'), 'image: api:1.0\n');
    await installed(p);
    // `clean` removes nothing the spec is made of.
    expect((await p.run(['clean', 'stacks.yaml', 'dev'])).code).toBe(0);
    expect((await preview(p)).stdout).toBe('No changes: the 1 kapp(s) match release 1.\n');

    writeFileSync(join(p.dir, 'kapps', 'api', 'values.yaml'), 'image: api:1.1\n');
    const r = await preview(p, '--detailed-exitcode');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toContain('web:api  Update\n');
    expect(r.stdout).toContain('~ web:api (Update)\n    ~ source file://../kapps/api: files changed\n');
    await installed(p, '--changed-only');
  });

  it('a template added, changed and removed: named with its source and destination, lines with --diff', async () => {
    const backend = await freshBackend('file');
    const withTemplate = (on: boolean): KappDef => ({
      id: 'api',
      descriptor:
        fakeKapp({ apply: '--tag apply-api' }) +
        'vars:\n  port: 8080\n' +
        (on ? 'templates:\n  values:\n    source: values.tpl.yaml\n    dest: _generated_values.yaml\n' : ''),
    });
    const p = makeProject('shop', backend, [withTemplate(false)]);
    await installed(p);

    // The template and its source file are added together.
    p.writeKapps([withTemplate(true)]);
    writeFileSync(join(p.dir, 'kapps', 'api', 'values.tpl.yaml'), 'name: api\nport: {{ .kapp.vars.port }}\n');
    const added = await preview(p);
    expect(added.stdout).toContain(
      '~ web:api (Update)\n    + template values.tpl.yaml → api/_generated_values.yaml (2 lines)\n',
    );
    // The destination is recorded relative to the kapp's directory, whatever the machine.
    const doc = await previewJson(p);
    expect(doc.kapps[0]?.changes).toHaveLength(1);
    expect(doc.kapps[0]?.changes[0]).toMatchObject({
      path: ['templates', 'values'],
      from: null,
      to: { source: 'values.tpl.yaml', dest: '${kapp_dir}/api/_generated_values.yaml', sensitive: false, lineCount: 2 },
      lines: ['+ name: api', '+ port: 8080'],
    });
    await installed(p);

    // The template's own content changes: the lines that change, with --diff.
    writeFileSync(join(p.dir, 'kapps', 'api', 'values.tpl.yaml'), 'name: api\nport: {{ .kapp.vars.port }}\nx: 1\n');
    const diff = await preview(p, '--diff');
    expect(diff.stdout).toContain(
      '    ~ template values.tpl.yaml → api/_generated_values.yaml: 1 line changed\n        + x: 1\n',
    );
    expect((await preview(p)).stdout).not.toContain('+ x: 1');
    await installed(p);

    p.writeKapps([withTemplate(false)]);
    rmSync(join(p.dir, 'kapps', 'api', 'values.tpl.yaml'));
    const removed = await preview(p, '--detailed-exitcode');
    expect(removed.code).toBe(2);
    expect(removed.stdout).toContain(
      '~ web:api (Update)\n    - template values.tpl.yaml → api/_generated_values.yaml\n',
    );
  });
});

describe.each(BACKENDS)('a sensitive variable (%s backend)', (kind) => {
  const OLD = 'Swordfish-old-7f3a';
  const NEW = 'Swordfish-new-9c1e';
  it('is masked, a change is detected with the backend key, and no record holds it or its plain hash', async () => {
    const backend = await freshBackend(kind);
    const api = (secret: string): KappDef => ({
      id: 'api',
      descriptor:
        fakeKapp({ apply: '--tag apply-api' }) +
        `vars:\n  db_password: ${secret}\n  db_user: app\n` +
        'templates:\n  conf:\n    source: conf.tpl\n    dest: _generated_conf.ini\n',
    });
    const p = makeProject('shop', backend, [api(OLD)]);
    // A template that is not marked sensitive but passes the secret on.
    // It also reads a token from the environment.
    p.env.SERVICE_API_TOKEN = 'Swordfish-env-5d2b';
    writeFileSync(
      join(p.dir, 'kapps', 'api', 'conf.tpl'),
      'user = {{ .kapp.vars.db_user }}\npassword = {{ .kapp.vars.db_password }}\ntoken = {{ env "SERVICE_API_TOKEN" }}\n',
    );
    await installed(p);

    p.writeKapps([api(NEW)]);
    const r = await preview(p, '--diff', '--detailed-exitcode');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toContain('    ~ vars.db_password: (sensitive) → (sensitive, changed)\n');
    expect(r.stdout).toContain(
      '    ~ template conf.tpl → api/_generated_conf.ini: 1 line changed\n' +
        '        - password = (sensitive)\n' +
        '        + password = (sensitive, changed)\n',
    );
    const json = await preview(p, '-o', 'json');
    expect((JSON.parse(json.stdout) as PreviewJson).kapps[0]?.changes).toContainEqual({
      path: ['vars', 'db_password'],
      from: '(sensitive)',
      to: '(sensitive, changed)',
    });
    await installed(p);

    const diff = await p.run(['release', 'diff', 'stacks.yaml', 'dev', '1', '2']);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain(
      '    ~ template conf.tpl → api/_generated_conf.ini: 1 line changed\n' +
        '        - password = (sensitive)\n' +
        '        + password = (sensitive, changed)\n' +
        '    ~ vars.db_password: (sensitive) → (sensitive, changed)\n',
    );
    const shown = await p.run(['release', 'show', 'stacks.yaml', 'dev']);
    expect(shown.stdout).toContain('db_password: (sensitive)');

    const plainHashes = [OLD, NEW].map((s) => createHash('sha256').update(s).digest('hex'));
    const records = [...(await backend.rawRecords('shop', 'dev')).values()].join('\n');
    expect(records).toContain('(sensitive#');
    for (const text of [OLD, NEW, 'Swordfish-env-5d2b', ...plainHashes]) expect(records).not.toContain(text);
    expect(records).toContain('token = (sensitive#');
    for (const out of [r.stdout, r.stderr, json.stdout, diff.stdout, shown.stdout]) {
      expect(out).not.toMatch(/Swordfish|\(sensitive#/);
    }
    if (kind === 'file') {
      const keyFile = join(backend.value, 'spec-key');
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      const key = readFileSync(keyFile, 'utf8').trim();
      expect(key).toMatch(/^[0-9a-f]{64}$/);
      expect(records + r.stdout + json.stdout).not.toContain(key);
    }
  });
});

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync(
    'git',
    ['-c', 'user.name=kapps', '-c', 'user.email=kapps@example.com', '-c', 'init.defaultBranch=main', ...args],
    { cwd, encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

describe('a git source', () => {
  it('moved to another tag with the same steps: Update naming both tags and commits', async () => {
    const backend = await freshBackend('file');
    const p = makeProject('shop', backend, []);
    const repo = join(p.root, 'repos', 'charts.git');
    mkdirSync(join(repo, 'kapps', 'chart'), { recursive: true });
    git(repo, 'init', '-q');
    writeFileSync(join(repo, 'kapps', 'chart', 'sugarkube.yaml'), fakeKapp({ apply: '--tag apply-chart' }));
    writeFileSync(join(repo, 'kapps', 'chart', 'Chart.yaml'), 'version: 0.1.0\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'chart 0.1.0');
    git(repo, 'tag', 'chart-0.1.0');
    writeFileSync(join(repo, 'kapps', 'chart', 'Chart.yaml'), 'version: 0.2.0\n');
    git(repo, 'commit', '-q', '-am', 'chart 0.2.0');
    git(repo, 'tag', 'chart-0.2.0');
    const sha = (tag: string): string => git(repo, 'rev-parse', `${tag}^{commit}`).slice(0, 7);
    const manifest = (tag: string): void => {
      writeFileSync(
        join(p.dir, 'manifests', 'web.yaml'),
        `kapps:\n  - id: chart\n    sources:\n      - uri: ${repo}//kapps/chart#${tag}\n`,
      );
    };
    manifest('chart-0.1.0');
    await installed(p);

    manifest('chart-0.2.0');
    const r = await preview(p, '--detailed-exitcode');
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe(
      [
        'Preview against release 1:',
        'ID         ACTION',
        'web:chart  Update',
        '',
        '~ web:chart (Update)',
        `    ~ source ${repo}//kapps/chart: chart-0.1.0 (${sha('chart-0.1.0')}) → chart-0.2.0 (${sha('chart-0.2.0')})`,
        '',
      ].join('\n'),
    );
    const before = p.traceLines().length;
    const changed = await install(p, '--changed-only');
    expect(changed.code, changed.stderr).toBe(0);
    expect(startedTags(p.traceLines().slice(before))).toEqual(['apply-chart']);
    expect((await preview(p)).stdout).toBe('No changes: the 1 kapp(s) match release 2.\n');
  });
});

/** The spec digest as kapps wrote it before spec format 2: sha256 of the canonical spec JSON, `selected` left out. */
function legacyDigest(kapp: Record<string, unknown>): string {
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  };
  const { selected: _selected, ...rest } = kapp;
  return createHash('sha256')
    .update(JSON.stringify(sortKeys(rest)))
    .digest('hex');
}

/**
 * The record an older kapps wrote after installing the stack `dev` of project `shop` as revision 1: its spec is the
 * `kapps generate` document (steps and dependencies, the machine's paths), its state entries have no specFormat.
 */
async function writeOldRelease(p: TestProject, backendDir: string): Promise<void> {
  const generated = await p.run(['generate', 'stacks.yaml', 'dev', '-o', 'json']);
  expect(generated.code, generated.stderr).toBe(0);
  const spec = JSON.parse(generated.stdout) as { stack: string; kapps: Record<string, unknown>[] };
  const fixture = JSON.parse(
    readFileSync(new URL('../fixtures/release/old-format-release.json', import.meta.url), 'utf8'),
  ) as Record<string, unknown> & { state: Record<string, { specDigest: string }> };
  const entry = fixture.state['web:api'];
  if (!entry) throw new Error('the fixture has no web:api');
  entry.specDigest = legacyDigest(spec.kapps[0] ?? {});
  fixture.spec = spec;
  const dir = join(backendDir, 'releases', 'shop', 'dev');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '1.yaml'), JSON.stringify(fixture, null, 2));
}

describe('a release recorded before the spec had a format', () => {
  it('is previewed on what it recorded: no false Update, the fields it lacks named', async () => {
    const backend = await freshBackend('file');
    const api = (tag: string): KappDef => ({
      id: 'api',
      descriptor: `${fakeKapp({ apply: tag })}vars:\n  replicas: 2\n`,
    });
    const p = makeProject('shop', backend, [api('--tag apply-api')]);
    await writeOldRelease(p, backend.value);

    const listed = await p.run(['release', 'show', 'stacks.yaml', 'dev', '--revision', '1']);
    expect(listed.code, listed.stderr).toBe(0);

    const same = await preview(p, '--detailed-exitcode');
    expect(same.code, same.stdout + same.stderr).toBe(0);
    expect(same.stdout).toBe(
      'No changes: the 1 kapp(s) match release 1.\n' +
        'Note: the release that recorded web:api did not record their sources, templates, vars; compared their ' +
        'steps and dependencies only.\n',
    );
    const doc = (await previewJson(p)) as PreviewJson & { kapps: { notRecorded: string[] }[] };
    expect(doc.kapps[0]).toMatchObject({
      action: 'UnChanged',
      changes: [],
      notRecorded: ['sources', 'templates', 'vars'],
    });

    // A change of a step is still found, and only it is listed.
    p.writeKapps([api('--tag apply-api-v2')]);
    const changed = await preview(p, '--detailed-exitcode');
    expect(changed.code).toBe(2);
    expect(changed.stdout).toContain(
      '~ web:api (Update)\n    ~ apply_install/apply args: "--tag apply-api" → "--tag apply-api-v2"\n\nNote:',
    );

    // Once installed again, the release holds the whole spec: no note any more.
    await installed(p);
    expect((await preview(p)).stdout).toBe('No changes: the 1 kapp(s) match release 2.\n');
    rmSync(join(p.dir, '.kapps-workspace'), { recursive: true, force: true });
    expect((await preview(p)).stdout).toBe('No changes: the 1 kapp(s) match release 2.\n');
  });

  it('is compared by release diff on what both recorded, its paths made portable: no false difference', async () => {
    const backend = await freshBackend('file');
    const api = (tag: string): KappDef => ({
      id: 'api',
      descriptor: `${fakeKapp({ apply: tag })}vars:\n  replicas: 2\n`,
    });
    const p = makeProject('shop', backend, [api('--tag apply-api')]);
    await writeOldRelease(p, backend.value);
    await installed(p);
    const note =
      'Note: release 1 did not record the sources, templates, vars of web:api; compared their steps and ' +
      'dependencies only.\n';

    const same = await p.run(['release', 'diff', 'stacks.yaml', 'dev', '1', '2']);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toBe(`Release 1 → 2 of shop/dev\nNo differences.\n0 changed, 1 unchanged\n${note}`);
    // Either way round.
    const back = await p.run(['release', 'diff', 'stacks.yaml', 'dev', '2', '1']);
    expect(back.stdout).toBe(`Release 2 → 1 of shop/dev\nNo differences.\n0 changed, 1 unchanged\n${note}`);
    const json = await p.run(['release', 'diff', 'stacks.yaml', 'dev', '1', '2', '-o', 'json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      changed: [],
      unchanged: ['web:api'],
      notRecorded: [{ id: 'web:api', revision: 1, fields: ['sources', 'templates', 'vars'] }],
    });

    // A real change of a step is still found, and only it.
    p.writeKapps([api('--tag apply-api-v2')]);
    await installed(p);
    const changed = await p.run(['release', 'diff', 'stacks.yaml', 'dev', '1', '3']);
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stdout).toBe(
      'Release 1 → 3 of shop/dev\n~ web:api: spec changed\n' +
        '    ~ apply_install/apply args: "--tag apply-api" → "--tag apply-api-v2"\n' +
        `1 changed, 0 unchanged\n${note}`,
    );
  });
});

describe('a release that fails before its steps run', () => {
  it('records why: a missing command as the release error, a template error as the kapp error, and logs them', async () => {
    const backend = await freshBackend('file');
    const descriptor = (command: string): string =>
      'templates:\n  conf:\n    source: conf.tpl\n    dest: _generated_conf.yaml\n' +
      `run_units:\n  u:\n    apply_install:\n      - name: apply\n        command: ${command}\n        args: --tag apply-api\n`;
    const p = makeProject('shop', backend, [{ id: 'api', descriptor: descriptor('no-such-command-4711') }]);
    writeFileSync(join(p.dir, 'kapps', 'api', 'conf.tpl'), 'name: api\n');

    const missing = await install(p);
    expect(missing.code).toBe(1);
    const shown = await p.run(['release', 'show', 'stacks.yaml', 'dev', '-o', 'json']);
    const first = JSON.parse(shown.stdout) as { phase: string; error?: string; state: Record<string, unknown> };
    expect(first).toMatchObject({ phase: 'failed', state: {} });
    expect(first.error).toContain("kapp web:api, apply_install step 'apply': 'no-such-command-4711' not found");
    const logs = await p.run(['release', 'logs', 'stacks.yaml', 'dev']);
    expect(logs.stdout).toContain('error: 1 command(s) not found, nothing was run:\n');
    expect(logs.stdout).toContain("  kapp web:api, apply_install step 'apply': 'no-such-command-4711' not found");

    // A template that does not parse fails the kapp before its first step: the kapp's entry says why.
    p.writeKapps([{ id: 'api', descriptor: descriptor('kapps-fake') }]);
    writeFileSync(join(p.dir, 'kapps', 'api', 'conf.tpl'), 'name: {{ .kapp.id \n');
    const broken = await install(p);
    expect(broken.code).toBe(1);
    expect(startedTags(p.traceLines())).toEqual([]);
    const second = JSON.parse((await p.run(['release', 'show', 'stacks.yaml', 'dev', '-o', 'json'])).stdout) as {
      revision: number;
      phase: string;
      state: Record<string, { status: string; error?: string }>;
    };
    expect(second).toMatchObject({ revision: 2, phase: 'failed', state: { 'web:api': { status: 'failed' } } });
    expect(second.state['web:api']?.error).toMatch(/template 'conf' .*unclosed action/);
  });
});
