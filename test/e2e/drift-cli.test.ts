/**
 * `kapps drift` on the built CLI: the live outputs of the installed kapps read (their output phases) and compared
 * with the last release, output by output and field by field; ignore rules; pending changes said apart from drift;
 * exit 0 in sync, 2 drifted, 1 on an error or when it cannot tell; nothing changed, no release written.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
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

/** A kapp whose output phase reads `<live>/<name>.<ext>` (text, or JSON for `info`). */
function reads(live: string, name: string, initial: string, format: 'text' | 'json' = 'text', tag = 'v1'): KappDef {
  const file = join(live, `${name}.${format === 'json' ? 'json' : 'txt'}`);
  writeFileSync(file, initial);
  return {
    id: name,
    descriptor: fakeKapp(
      { apply: `--tag apply-${name}-${tag}` },
      [
        '    output:',
        '      - name: read',
        '        command: kapps-fake',
        `        args: --tag output-${name} --cat ${file}`,
        `        stdout: ${name}/out.${format}`,
        'outputs:',
        `  - id: ${format === 'json' ? 'info' : 'version'}`,
        `    path: out.${format}`,
        `    format: ${format}`,
        '',
      ].join('\n'),
    ),
  };
}

describe('kapps drift', () => {
  it('says in sync, drifted (field by field) or unknown, honours --ignore, and changes nothing', async () => {
    const backend = await freshBackend('file');
    const live = tempDir();
    const db = reads(live, 'db', 'db-v1');
    const info = reads(live, 'api', JSON.stringify({ endpoint: 'http://api-a', timestamp: 1 }), 'json');
    const queue = reads(live, 'queue', 'queue-v1');
    const plain: KappDef = { id: 'plain', descriptor: fakeKapp({ apply: '--tag apply-plain' }) };
    const p = makeProject('shop', backend, [db, info, queue, plain]);

    // No release yet: it cannot tell (exit 1), and reads nothing.
    const none = await p.run(['drift', 'stacks.yaml', 'dev']);
    expect(none.code, none.stderr).toBe(1);
    expect(none.stdout).toBe(
      'Unknown: the stack has no release to compare with (shop/dev, against no release).\nPending changes (the configuration differs from the release; not drift): web:db Create, web:api Create, web:queue Create, web:plain Create\n',
    );

    expect((await p.run(['install', 'stacks.yaml', 'dev', '-y'])).code).toBe(0);
    const calm = await p.run(['drift', 'stacks.yaml', 'dev']);
    expect(calm.code, calm.stderr).toBe(0);
    expect(calm.stdout).toBe('In sync: the 3 kapp(s) read of shop/dev match release 1.\n');

    // Behind kapps' back: db's version and one field of api's JSON output change.
    writeFileSync(join(live, 'db.txt'), 'db-v2');
    writeFileSync(join(live, 'api.json'), JSON.stringify({ endpoint: 'http://api-a', timestamp: 2 }));
    const before = p.traceLines().length;
    const drifted = await p.run(['drift', 'stacks.yaml', 'dev']);
    expect(drifted.code, drifted.stderr).toBe(2);
    expect(drifted.stdout).toBe(
      [
        'Drifted: 2 kapp(s) of shop/dev differ from release 1.',
        '  web:db: drifted',
        '    outputs.version: "db-v1" recorded, "db-v2" read',
        '  web:api: drifted',
        '    outputs.info.timestamp: 1 recorded, 2 read',
        '',
      ].join('\n'),
    );
    // Only output phases ran; no release was written.
    expect(startedTags(p.traceLines().slice(before)).sort()).toEqual(['output-api', 'output-db', 'output-queue']);
    expect((await allReleases(backend, 'shop')).length).toBe(1);

    // Ignore rules: a kapp glob and dotted output globs.
    const ignored = await p.run([
      'drift',
      'stacks.yaml',
      'dev',
      '--ignore',
      'web:d*=version',
      '--ignore',
      'web:*=*.timestamp',
    ]);
    expect(ignored.code, ignored.stdout + ignored.stderr).toBe(0);
    expect(ignored.stdout).toBe(
      [
        'In sync: the 3 kapp(s) read of shop/dev match release 1.',
        '  web:db: in sync (differences left out)',
        '    ignored: outputs.version',
        '  web:api: in sync (differences left out)',
        '    ignored: outputs.info.timestamp',
        '',
      ].join('\n'),
    );

    // JSON: the report, with the digests of what was read.
    const json = await p.run(['drift', 'stacks.yaml', 'dev', '-o', 'json', '--ignore', 'web:db=version']);
    expect(json.code).toBe(2);
    const report = JSON.parse(json.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      project: 'shop',
      stack: 'dev',
      state: 'drifted',
      basedOnRevision: 1,
      read: ['web:db', 'web:api', 'web:queue'],
      pending: [],
      reason: null,
      kapps: [
        { id: 'web:db', state: 'inSync', changes: [], ignored: [['outputs', 'version']], noisy: [], reason: null },
        {
          id: 'web:api',
          state: 'drifted',
          changes: [{ path: ['outputs', 'info', 'timestamp'], from: 1, to: 2 }],
          ignored: [],
        },
      ],
    });
    expect(Object.keys((report.readDigests as Record<string, unknown>)['web:api'] ?? {})).toEqual([
      'info.endpoint',
      'info.timestamp',
    ]);

    // A kapp that cannot be read: unknown, exit 1 (once nothing drifted).
    writeFileSync(join(live, 'db.txt'), 'db-v1');
    writeFileSync(join(live, 'api.json'), JSON.stringify({ endpoint: 'http://api-a', timestamp: 1 }));
    rmSync(join(live, 'queue.txt'));
    const unknown = await p.run(['drift', 'stacks.yaml', 'dev']);
    expect(unknown.code, unknown.stdout).toBe(1);
    expect(unknown.stdout).toMatch(
      /^Unknown: the outputs of 1 kapp\(s\) could not be read \(shop\/dev, against release 1\)\.\n {2}web:queue: unknown: outputs not read: /,
    );
    writeFileSync(join(live, 'queue.txt'), 'queue-v1');

    // A changed configuration is a pending change, not drift, and its kapp is not read.
    p.writeKapps([reads(live, 'db', 'db-v1', 'text', 'v2'), info, queue, plain]);
    const pending = await p.run(['drift', 'stacks.yaml', 'dev']);
    expect(pending.code, pending.stderr).toBe(0);
    expect(pending.stdout).toBe(
      'In sync: the 2 kapp(s) read of shop/dev match release 1.\nPending changes (the configuration differs from the release; not drift): web:db Update\n',
    );
    expect((await allReleases(backend, 'shop')).length).toBe(1);
  });

  it('refuses a malformed --ignore with exit 1 (2 means drifted) and prints its schema', async () => {
    const backend = await freshBackend('file');
    const p = makeProject('bad', backend, [{ id: 'plain', descriptor: fakeKapp({ apply: '--tag a' }) }]);
    const bad = await p.run(['drift', 'stacks.yaml', 'dev', '--ignore', 'no-equals-sign']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('kapps: --ignore takes KAPP=OUTPUT[,OUTPUT…]');
    expect(bad.stderr).not.toMatch(/\n\s+at /);
    const missing = await p.run(['drift', 'missing.yaml', 'dev']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('missing.yaml');
    const schema = await p.run(['schema', 'drift']);
    expect(schema.code).toBe(0);
    const parsed = JSON.parse(schema.stdout) as { properties: Record<string, unknown> };
    expect(Object.keys(parsed.properties)).toEqual([
      'project',
      'stack',
      'state',
      'checkedAt',
      'basedOnRevision',
      'kapps',
      'pending',
      'read',
      'reason',
      'readDigests',
    ]);
  });
});
