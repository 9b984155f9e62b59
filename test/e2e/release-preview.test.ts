/**
 * The field-level preview of the built CLI (`kapps preview`, `kapps release diff`): what changed in each kapp, with
 * sensitive values masked; the JSON document checked against `kapps schema preview`; `--detailed-exitcode`; and the
 * live state read by `--refresh` (Drifted, Unknown) and acted on by `install -y --changed-only --refresh`.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BACKENDS,
  allReleases,
  cleanup,
  fakeKapp,
  freshBackend,
  makeProject,
  startedTags,
  tempDir,
  type KappDef,
} from '../fixtures/release/harness.js';

afterAll(cleanup);

const OLD_SECRET = 'Hunter2-old-preview-secret';
const NEW_SECRET = 'Hunter2-new-preview-secret';

/** api's descriptor: an apply step with arguments and environment, optional extra steps. */
function apiKapp(o: { version: string; level: string; secret: string; command?: string; extraStep?: boolean }): string {
  return [
    'run_units:',
    '  fake:',
    '    plan_install:',
    '      - name: plan',
    `        command: ${o.command ?? 'kapps-fake'}`,
    '        args: --tag plan-api',
    '    apply_install:',
    '      - name: apply',
    '        command: kapps-fake',
    `        args: --tag apply-api --stdout ${o.version} --tag --password=${o.secret}`,
    '        env_vars:',
    `          LOG_LEVEL: ${o.level}`,
    `          DB_PASSWORD: ${o.secret}`,
    ...(o.extraStep
      ? ['      - name: migrate', '        command: kapps-fake', '        args: --tag migrate-api']
      : ['      - name: smoke', '        command: kapps-fake', '        args: --tag smoke-api']),
    '',
  ].join('\n');
}

// ---- A tiny JSON Schema (2020-12) validator: the keywords `kapps schema preview` uses; anything else fails. ----
type Schema = Record<string, unknown>;
const ANNOTATIONS = new Set(['$schema', 'description', 'title', 'default']);

function validate(schema: Schema, value: unknown, at = '$'): string[] {
  const errors: string[] = [];
  for (const key of Object.keys(schema)) {
    if (ANNOTATIONS.has(key)) continue;
    const rule = schema[key];
    switch (key) {
      case 'type': {
        const types = Array.isArray(rule) ? (rule as string[]) : [rule as string];
        const actual =
          value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
        const ok = types.some((t) => t === actual || (t === 'number' && actual === 'integer'));
        if (!ok) errors.push(`${at}: expected ${types.join('|')}, got ${actual}`);
        break;
      }
      case 'properties':
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
          for (const [name, sub] of Object.entries(rule as Record<string, Schema>)) {
            if (Object.hasOwn(value, name)) errors.push(...validate(sub, (value as Schema)[name], `${at}.${name}`));
          }
        }
        break;
      case 'required':
        for (const name of rule as string[]) {
          if (typeof value === 'object' && value !== null && !Object.hasOwn(value, name))
            errors.push(`${at}: missing ${name}`);
        }
        break;
      case 'additionalProperties':
        if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
          const known = Object.keys(schema.properties ?? {});
          for (const [name, member] of Object.entries(value)) {
            if (known.includes(name)) continue;
            if (rule === false) errors.push(`${at}: unexpected ${name}`);
            else if (typeof rule === 'object') errors.push(...validate(rule as Schema, member, `${at}.${name}`));
          }
        }
        break;
      case 'propertyNames':
        if (typeof value === 'object' && value !== null)
          for (const name of Object.keys(value)) errors.push(...validate(rule as Schema, name, `${at}[key ${name}]`));
        break;
      case 'items':
        if (Array.isArray(value))
          value.forEach((item, i) => errors.push(...validate(rule as Schema, item, `${at}[${i}]`)));
        break;
      case 'minItems':
        if (Array.isArray(value) && value.length < (rule as number)) errors.push(`${at}: fewer than ${String(rule)}`);
        break;
      case 'enum':
        if (!(rule as unknown[]).includes(value)) errors.push(`${at}: ${JSON.stringify(value)} not in enum`);
        break;
      case 'const':
        if (value !== rule) errors.push(`${at}: not ${JSON.stringify(rule)}`);
        break;
      case 'minimum':
        if (typeof value === 'number' && value < (rule as number)) errors.push(`${at}: below ${String(rule)}`);
        break;
      case 'maximum':
        if (typeof value === 'number' && value > (rule as number)) errors.push(`${at}: above ${String(rule)}`);
        break;
      case 'anyOf': {
        const branches = (rule as Schema[]).map((s) => validate(s, value, at));
        if (!branches.some((b) => b.length === 0))
          errors.push(`${at}: no anyOf branch matches (${branches.flat()[0]})`);
        break;
      }
      default:
        throw new Error(`the test validator does not know the keyword ${key} (at ${at})`);
    }
  }
  return errors;
}

describe.each(BACKENDS)('field-level preview (%s backend)', (kind) => {
  it('shows what changed in each kapp, masks secrets, and exits 0/2 with --detailed-exitcode', async () => {
    const backend = await freshBackend(kind);
    const db: KappDef = {
      id: 'db',
      descriptor: fakeKapp({ plan: '--tag plan-db', apply: '--tag apply-db', delete: '--tag delete-db' }),
    };
    const cache: KappDef = { id: 'cache', descriptor: fakeKapp({ apply: '--tag apply-cache' }) };
    const api = (o: Parameters<typeof apiKapp>[0], dependsOn = ['db']): KappDef => ({
      id: 'api',
      dependsOn,
      descriptor: apiKapp(o),
    });
    const p = makeProject('shop', backend, [db, cache, api({ version: 'v1', level: 'info', secret: OLD_SECRET })]);
    expect((await p.run(['install', 'stacks.yaml', 'dev', '-y'])).code).toBe(0);

    // Nothing changed: one line, exit 0 (also with --detailed-exitcode).
    const same = await p.run(['preview', 'stacks.yaml', 'dev', '--detailed-exitcode']);
    expect(same).toMatchObject({ code: 0, stdout: 'No changes: the 3 kapp(s) match release 1.\n' });

    // Every kind of change at once: args, env (plain and secret), command, a step removed and one added, a
    // dependency added.
    p.writeKapps([
      db,
      cache,
      api({ version: 'v2', level: 'debug', secret: NEW_SECRET, command: 'kapps-fake-v2', extraStep: true }, [
        'db',
        'cache',
      ]),
    ]);
    const table = await p.run(['preview', 'stacks.yaml', 'dev', '--detailed-exitcode']);
    expect(table.code, table.stderr).toBe(2);
    expect(table.stdout).toBe(
      [
        'Preview against release 1:',
        'ID         ACTION',
        'web:db     UnChanged',
        'web:cache  UnChanged',
        'web:api    Update',
        '',
        '~ web:api (Update)',
        '    ~ dependsOn: ["web:db"] → ["web:db","web:cache"]',
        '    ~ plan_install/plan command: "kapps-fake" → "kapps-fake-v2"',
        '    - apply_install/smoke: kapps-fake --tag smoke-api',
        '    + apply_install/migrate: kapps-fake --tag migrate-api',
        '    ~ apply_install/apply args: "--tag apply-api --stdout v1 --tag --password=(sensitive)" → ' +
          '"--tag apply-api --stdout v2 --tag --password=(sensitive, changed)"',
        '    ~ apply_install/apply env.DB_PASSWORD: (sensitive) → (sensitive, changed)',
        '    ~ apply_install/apply env.LOG_LEVEL: "info" → "debug"',
        '',
      ].join('\n'),
    );
    const json = await p.run(['preview', 'stacks.yaml', 'dev', '-o', 'json']);
    expect(json.code, json.stderr).toBe(0);
    const doc = JSON.parse(json.stdout) as {
      kapps: { id: string; action: string; from: unknown; to: unknown; changes: unknown[] }[];
      hasChanges: boolean;
      refreshed: unknown;
    };
    expect(Object.keys(doc)).toEqual(['stack', 'project', 'basedOnRevision', 'kapps', 'refreshed', 'hasChanges']);
    expect(doc).toMatchObject({ hasChanges: true, refreshed: null });
    const apiEntry = doc.kapps[2];
    expect(Object.keys(apiEntry ?? {})).toEqual([
      'id',
      'action',
      'from',
      'to',
      'changes',
      'drift',
      'reason',
      'specDigest',
      'notRecorded',
    ]);
    expect(apiEntry?.changes).toContainEqual({
      path: ['apply_install', 'apply', 'env', 'DB_PASSWORD'],
      from: '(sensitive)',
      to: '(sensitive, changed)',
    });
    expect(apiEntry?.changes).toContainEqual({
      path: ['apply_install', 'apply', 'env', 'LOG_LEVEL'],
      from: 'info',
      to: 'debug',
    });
    expect(apiEntry?.from).toMatchObject({
      id: 'web:api',
      phases: { apply_install: [{ name: 'apply', env: { DB_PASSWORD: '(sensitive)', LOG_LEVEL: 'info' } }, {}] },
    });
    expect(apiEntry?.to).toMatchObject({ dependsOn: ['web:db', 'web:cache'] });
    expect(doc.kapps[0]).toMatchObject({ id: 'web:db', action: 'UnChanged', changes: [], drift: [], reason: null });

    // The document is valid against its published schema.
    const schemaRun = await p.run(['schema', 'preview']);
    expect(schemaRun.code).toBe(0);
    const schema = JSON.parse(schemaRun.stdout) as Schema;
    expect(validate(schema, doc)).toEqual([]);
    // The validator does reject what the schema forbids.
    expect(validate(schema, { ...doc, extra: 1 })).toEqual(['$: unexpected extra']);
    expect(validate(schema, { ...doc, kapps: [{ ...apiEntry, action: 'Sideways' }] })).toEqual([
      '$.kapps[0].action: "Sideways" not in enum',
    ]);

    // A kapp to create shows the steps it will run; one leaving the stack, those its deletion runs.
    p.writeKapps([
      cache,
      api({ version: 'v1', level: 'info', secret: OLD_SECRET }, []),
      { id: 'queue', descriptor: fakeKapp({ apply: '--tag apply-queue' }) },
    ]);
    const created = await p.run(['preview', 'stacks.yaml', 'dev']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('+ web:queue (Create)\n    + apply_install/apply: kapps-fake --tag apply-queue\n');
    expect(created.stdout).toContain('- web:db (Delete)\n    - apply_delete/apply: kapps-fake --tag delete-db\n');

    for (const r of [same, table, json, created]) expect(r.stdout + r.stderr).not.toMatch(/Hunter2/);
  });

  it('shows field-level changes and changed outputs between two real releases', async () => {
    const backend = await freshBackend('file');
    const secrets = tempDir();
    const secretFile = (secret: string): string => {
      const file = join(secrets, secret === OLD_SECRET ? 'old.txt' : 'new.txt');
      writeFileSync(file, secret);
      return file;
    };
    const out = (endpoint: string, secret: string): string =>
      fakeKapp(
        { apply: `--tag apply-db --stdout ${endpoint}` },
        [
          '    output:',
          '      - name: endpoint',
          '        command: kapps-fake',
          `        args: --stdout ${endpoint}`,
          '        stdout: db/endpoint.txt',
          '      - name: dsn',
          '        command: kapps-fake',
          `        args: --stdout postgres://app:${secret}@${endpoint.slice(7, 11)}/app`,
          '        stdout: db/dsn.txt',
          '      - name: password',
          '        command: kapps-fake',
          `        args: --cat ${secretFile(secret)}`,
          '        env_vars:',
          `          DB_PASSWORD: ${secret}`,
          '        stdout: db/password.txt',
          'outputs:',
          '  - id: endpoint',
          '    path: endpoint.txt',
          '    format: text',
          // An ordinary output that passes the secret on: recorded with the secret redacted by the run.
          '  - id: dsn',
          '    path: dsn.txt',
          '    format: text',
          '  - id: password',
          '    path: password.txt',
          '    format: text',
          '    sensitive: true',
          '',
        ].join('\n'),
      );
    const p = makeProject('shop', backend, [{ id: 'db', descriptor: out('http://db-a:5432', OLD_SECRET) }]);
    const run1 = await p.run(['install', 'stacks.yaml', 'dev', '-y']);
    expect(run1.code, run1.stderr).toBe(0);
    p.writeKapps([{ id: 'db', descriptor: out('http://db-b:5432', NEW_SECRET) }]);
    expect((await p.run(['install', 'stacks.yaml', 'dev', '-y'])).code).toBe(0);

    const diff = await p.run(['release', 'diff', 'stacks.yaml', 'dev', '1', '2']);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain('~ web:db: spec changed; outputs changed (~dsn, ~endpoint)\n');
    expect(diff.stdout).toContain(
      '    ~ apply_install/apply args: "--tag apply-db --stdout http://db-a:5432" → ' +
        '"--tag apply-db --stdout http://db-b:5432"\n',
    );
    // A URL's password is masked, and marked changed.
    expect(diff.stdout).toContain(
      '    ~ output/dsn args: "--stdout postgres://app:(sensitive)@db-a/app" → ' +
        '"--stdout postgres://app:(sensitive, changed)@db-b/app"\n',
    );
    expect(diff.stdout).toContain('    ~ output/password env.DB_PASSWORD: (sensitive) → (sensitive, changed)\n');
    expect(diff.stdout).toContain('    ~ outputs.dsn: (sensitive) → (sensitive, changed)\n');
    expect(diff.stdout).toContain('    ~ outputs.endpoint: "http://db-a:5432\\n" → "http://db-b:5432\\n"\n');
    const json = await p.run(['release', 'diff', 'stacks.yaml', 'dev', '1', '2', '-o', 'json']);
    const parsed = JSON.parse(json.stdout) as { changed: { outputChanges: unknown[]; changes: unknown[] }[] };
    expect(parsed.changed[0]?.outputChanges).toEqual([
      { path: ['outputs', 'dsn'], from: '(sensitive)', to: '(sensitive, changed)' },
      { path: ['outputs', 'endpoint'], from: 'http://db-a:5432\n', to: 'http://db-b:5432\n' },
    ]);
    for (const r of [diff, json]) expect(r.stdout + r.stderr).not.toMatch(/Hunter2/);
  });
});

it('shows the change of a step named like the repeat of another (`a`, `a#2`, and `a` in a second run unit)', async () => {
  const backend = await freshBackend('file');
  const descriptor = (middle: string): string =>
    [
      'run_units:',
      '  first:',
      '    apply_install:',
      '      - {name: a, command: kapps-fake, args: --tag a-one}',
      `      - {name: "a#2", command: kapps-fake, args: --tag ${middle}}`,
      '  second:',
      '    apply_install:',
      '      - {name: a, command: kapps-fake, args: --tag a-two}',
      '',
    ].join('\n');
  const p = makeProject('shop', backend, [{ id: 'api', descriptor: descriptor('a2-old') }]);
  const created = await p.run(['preview', 'stacks.yaml', 'dev']);
  expect(created.stdout).toContain(
    [
      '    + apply_install/a: kapps-fake --tag a-one',
      '    + apply_install/a#2: kapps-fake --tag a2-old',
      '    + apply_install/a#3: kapps-fake --tag a-two',
    ].join('\n'),
  );
  expect((await p.run(['install', 'stacks.yaml', 'dev', '-y'])).code).toBe(0);
  p.writeKapps([{ id: 'api', descriptor: descriptor('a2-new') }]);
  const changed = await p.run(['preview', 'stacks.yaml', 'dev']);
  expect(changed.code, changed.stderr).toBe(0);
  expect(changed.stdout).toContain(
    '~ web:api (Update)\n    ~ apply_install/a#2 args: "--tag a2-old" → "--tag a2-new"\n',
  );
  const generated = await p.run(['generate', 'stacks.yaml', 'dev', '-o', 'json']);
  const doc = JSON.parse(generated.stdout) as { kapps: { phases: { apply_install: { args: string[] }[] } }[] };
  expect(doc.kapps[0]?.phases.apply_install.map((s) => s.args.join(' '))).toEqual([
    '--tag a-one',
    '--tag a2-new',
    '--tag a-two',
  ]);
});

describe('preview --refresh (live state)', () => {
  it('reports Drifted and Unknown, changes nothing, and --changed-only --refresh reinstalls exactly the drifted kapp', async () => {
    const backend = await freshBackend('file');
    const live = tempDir();
    const reads = (name: string): KappDef => {
      writeFileSync(join(live, `${name}.txt`), `${name}-v1`);
      return {
        id: name,
        descriptor: fakeKapp(
          { apply: `--tag apply-${name}` },
          [
            '    output:',
            '      - name: read',
            '        command: kapps-fake',
            `        args: --tag output-${name} --cat ${join(live, `${name}.txt`)}`,
            `        stdout: ${name}/version.txt`,
            'outputs:',
            '  - id: version',
            '    path: version.txt',
            '    format: text',
            '',
          ].join('\n'),
        ),
      };
    };
    const plain: KappDef = { id: 'plain', descriptor: fakeKapp({ apply: '--tag apply-plain' }) };
    const p = makeProject('shop', backend, [reads('db'), reads('cache'), reads('queue'), plain]);
    expect((await p.run(['install', 'stacks.yaml', 'dev', '-y'])).code).toBe(0);

    // Nothing drifted yet.
    const calm = await p.run(['preview', 'stacks.yaml', 'dev', '--refresh', '--detailed-exitcode']);
    expect(calm.code, calm.stderr).toBe(0);
    expect(calm.stdout).toBe('No changes: the 4 kapp(s) match release 1.\n');
    expect(calm.stderr).toContain('Refresh: ran the output phase of web:db, web:cache, web:queue');

    // db's live state changes; queue's can no longer be read.
    writeFileSync(join(live, 'db.txt'), 'db-v2');
    rmSync(join(live, 'queue.txt'));
    const before = p.traceLines().length;
    const drift = await p.run(['preview', 'stacks.yaml', 'dev', '--refresh']);
    expect(drift.code, drift.stderr).toBe(0);
    expect(drift.stdout).toContain(
      ['web:db     Drifted', 'web:cache  UnChanged', 'web:queue  Unknown', 'web:plain  UnChanged'].join('\n'),
    );
    expect(drift.stdout).toContain('! web:db (Drifted)\n    ~ outputs.version: "db-v1" → "db-v2"\n');
    expect(drift.stdout).toMatch(/\? web:queue \(Unknown\): outputs not read: output step 'read' .*\n/);
    // Only output phases ran; no release was written.
    expect(startedTags(p.traceLines().slice(before)).sort()).toEqual(['output-cache', 'output-db', 'output-queue']);
    expect((await allReleases(backend, 'shop')).length).toBe(1);
    const detailed = await p.run(['preview', 'stacks.yaml', 'dev', '--refresh', '--detailed-exitcode', '-o', 'json']);
    expect(detailed.code).toBe(2);
    const doc = JSON.parse(detailed.stdout) as { kapps: unknown[]; refreshed: string[] };
    expect(doc.refreshed).toEqual(['web:db', 'web:cache', 'web:queue']);
    expect(doc.kapps[0]).toMatchObject({
      id: 'web:db',
      action: 'Drifted',
      changes: [],
      drift: [{ path: ['outputs', 'version'], from: 'db-v1', to: 'db-v2' }],
      reason: null,
    });
    expect(doc.kapps[2]).toMatchObject({
      id: 'web:queue',
      action: 'Unknown',
      reason: expect.stringContaining('read') as unknown,
    });
    // A plan-only install shows the same refreshed preview before planning.
    const plan = await p.run(['install', 'stacks.yaml', 'dev', '--refresh']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stderr).toContain('web:db     Drifted\n');
    expect(plan.stderr).toContain('! web:db (Drifted)\n    ~ outputs.version: "db-v1" → "db-v2"\n');
    expect((await allReleases(backend, 'shop')).length).toBe(1);
    // An error is exit 1 with --detailed-exitcode (2 means "changes").
    const broken = await p.run(['preview', 'missing.yaml', 'dev', '--detailed-exitcode']);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('missing.yaml');
    // Without --refresh the preview does not look at the live state.
    expect((await p.run(['preview', 'stacks.yaml', 'dev', '--detailed-exitcode'])).code).toBe(0);

    // --changed-only --refresh reinstalls db, and only db.
    writeFileSync(join(live, 'queue.txt'), 'queue-v1');
    const mark = p.traceLines().length;
    const fixed = await p.run(['install', 'stacks.yaml', 'dev', '-y', '--changed-only', '--refresh', '-w', '1']);
    expect(fixed.code, fixed.stdout + fixed.stderr).toBe(0);
    expect(startedTags(p.traceLines().slice(mark)).filter((t) => t.startsWith('apply-'))).toEqual(['apply-db']);
    const releases = await allReleases(backend, 'shop');
    expect(releases[1]?.spec.kapps.map((k) => k.id)).toEqual(['web:db']);
    expect(releases[1]?.state['web:db']).toMatchObject({ revision: 2, outputs: { version: 'db-v2' } });
  });
});
