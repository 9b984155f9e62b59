/**
 * The run commands' modes on the built CLI: which phases install, delete, output, clean and template run, in which
 * walk order, and that a dry run executes and writes nothing.
 */
import { existsSync, readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanupProjects,
  eventsOf,
  fake,
  fixtureProject,
  kapp,
  stepLog,
  type FixtureProject,
  type TraceLine,
} from '../support/project.js';

afterAll(cleanupProjects);

/**
 * ```
 *   web:db ──► web:api      db declares the output `conn` (written by its apply_install and output steps)
 * ```
 * Every phase of both kapps runs a fake tagged `<kapp>-<phase>`.
 */
function twoKapps(): FixtureProject {
  const phases = (id: string): Record<string, unknown[]> => ({
    plan_install: [fake('plan', `${id}-plan_install`)],
    apply_install: [fake('apply', `${id}-apply_install`)],
    plan_delete: [fake('plan', `${id}-plan_delete`)],
    apply_delete: [fake('apply', `${id}-apply_delete`)],
    output: [fake('output', `${id}-output`)],
    clean: [fake('clean', `${id}-clean`)],
  });
  const db = phases('db');
  db.apply_install = [fake('apply', 'db-apply_install', ['--write-file', 'conn.json', '{"url":"db://one"}'])];
  db.output = [fake('output', 'db-output', ['--write-file', 'conn.json', '{"url":"db://one"}'])];
  const api = phases('api');
  api.apply_delete = [
    fake('apply', 'api-apply_delete', ['--stdout', 'deleting with {{ .outputs.db.conn.url }}'], { print: 'true' }),
  ];
  return fixtureProject({
    manifests: {
      web: {
        kapps: [
          kapp('db', db, { outputs: [{ id: 'conn', path: 'conn.json', format: 'json' }] }),
          kapp('api', api, {
            depends_on: [{ id: 'db' }],
            templates: { cfg: { source: 'api.tpl', dest: 'api.conf' } },
          }),
        ],
      },
    },
    stacks: {
      dev: {
        provider: 'local',
        cluster: 'c',
        template_dirs: ['templates'],
        manifests: [{ uri: 'manifests/web.yaml' }],
      },
    },
    files: { 'templates/api.tpl': 'url={{ .outputs.db.conn.url }}\n' },
  });
}

const tags = (trace: readonly TraceLine[]): string[] => trace.filter((l) => l.event === 'start').map((l) => l.tag);

/** Index in the trace of a tag's start or end line. */
function at(trace: readonly TraceLine[], tag: string, event: 'start' | 'end'): number {
  const i = trace.findIndex((l) => l.tag === tag && l.event === event);
  expect(i, `${event} of ${tag} in the trace`).toBeGreaterThanOrEqual(0);
  return i;
}

describe('install', () => {
  it('plans by default: plan_install only, walking down, and says how to apply', async () => {
    const p = twoKapps();
    const r = await p.run('install');
    expect(r.code).toBe(0);
    expect(tags(r.trace).filter((t) => !t.endsWith('-output'))).toEqual(['db-plan_install', 'api-plan_install']);
    expect(at(r.trace, 'db-plan_install', 'end')).toBeLessThan(at(r.trace, 'api-plan_install', 'start'));
    expect(r.stdout).toContain('Rerun with --yes (-y) to apply.');
    // A plan records no release.
    expect(existsSync(p.kappsHome)).toBe(false);
  });

  it('-y runs apply_install only, dependencies first, then each kapp with outputs loads them', async () => {
    const p = twoKapps();
    const r = await p.runJson('install', ['-y']);
    expect(r.code).toBe(0);
    // db declares outputs: its output phase runs after its apply so that api can read them.
    expect(tags(r.trace)).toEqual(['db-apply_install', 'db-output', 'api-apply_install']);
    expect(at(r.trace, 'db-apply_install', 'end')).toBeLessThan(at(r.trace, 'api-apply_install', 'start'));
    expect(r.stdout).not.toContain('Rerun with --yes');
  });

  it('--one-shot plans then applies each kapp in the same visit', async () => {
    const p = twoKapps();
    const r = await p.runJson('install', ['--one-shot']);
    expect(r.code).toBe(0);
    expect(tags(r.trace)).toEqual([
      'db-plan_install',
      'db-apply_install',
      'db-output',
      'api-plan_install',
      'api-apply_install',
    ]);
    // One kapp-started/kapp-finished pair per kapp, both phases between them.
    const started = eventsOf(r.events, 'kapp-started').map((e) => e.kapp);
    expect(started).toEqual(['web:db', 'web:api']);
    const dbEvents = r.events
      .filter((e) => 'kapp' in e && e.kapp === 'web:db')
      .map((e) => (e.type === 'step-finished' ? `${e.type} ${e.phase}` : e.type));
    expect(dbEvents).toEqual([
      'kapp-started',
      'step-started',
      'step-finished plan_install',
      'step-started',
      'step-finished apply_install',
      'step-started',
      'step-finished output',
      'kapp-finished',
    ]);
    expect(eventsOf(r.events, 'run-started')[0]?.phases).toEqual(['plan_install', 'apply_install']);
  });
});

describe('delete', () => {
  it('plans by default: plan_delete only, dependents first', async () => {
    const p = twoKapps();
    const r = await p.run('delete');
    expect(r.code).toBe(0);
    expect(tags(r.trace).filter((t) => !t.endsWith('-output'))).toEqual(['api-plan_delete', 'db-plan_delete']);
    expect(r.stdout).toContain('Rerun with --yes (-y) to apply.');
  });

  it('-y loads outputs walking down first, then deletes walking up', async () => {
    const p = twoKapps();
    const r = await p.runJson('delete', ['-y']);
    expect(r.code).toBe(0);
    // db's output phase (to load the outputs api reads) before anything is deleted; api before db.
    expect(tags(r.trace)).toEqual(['db-output', 'api-apply_delete', 'db-apply_delete']);
    const output = eventsOf(r.events, 'step-output').map((e) => e.text);
    expect(output).toContain('deleting with db://one\n');
  });

  it('--one-shot runs plan_delete then apply_delete per kapp, dependents first', async () => {
    const p = twoKapps();
    const r = await p.runJson('delete', ['--one-shot']);
    expect(r.code).toBe(0);
    expect(tags(r.trace)).toEqual([
      'db-output',
      'api-plan_delete',
      'api-apply_delete',
      'db-plan_delete',
      'db-apply_delete',
    ]);
    expect(stepLog(r.events).filter((s) => !s.includes('output/'))).toEqual([
      'web:api plan_delete/plan succeeded',
      'web:api apply_delete/apply succeeded',
      'web:db plan_delete/plan succeeded',
      'web:db apply_delete/apply succeeded',
    ]);
  });
});

describe('output, clean, template', () => {
  it('output runs the output phase of the selected kapps, walking down', async () => {
    const p = twoKapps();
    const r = await p.run('output');
    expect(r.code).toBe(0);
    expect(tags(r.trace)).toEqual(['db-output', 'api-output']);
  });

  it('clean runs the clean phase of the selected kapps, walking down', async () => {
    const p = twoKapps();
    const r = await p.run('clean');
    expect(r.code).toBe(0);
    expect(tags(r.trace)).toEqual(['db-clean', 'api-clean']);
  });

  it('template renders templates with the outputs of the kapps they depend on', async () => {
    const p = twoKapps();
    const r = await p.run('template', ['-i', 'web:api']);
    expect(r.code).toBe(0);
    // db is not selected: it only provides its outputs (its output phase runs); nothing else runs.
    expect(tags(r.trace)).toEqual(['db-output']);
    expect(p.read('.kapps-workspace/dev/web/api/api.conf')).toBe('url=db://one\n');
  });
});

describe('--dry-run', () => {
  const cases: [string, string[]][] = [
    ['install', []],
    ['install', ['-y']],
    ['install', ['--one-shot']],
    ['delete', ['-y']],
    ['delete', ['--one-shot']],
    ['output', []],
    ['clean', []],
    ['template', []],
  ];
  it.each(cases)('%s %j prints the rendered command lines and runs and writes nothing', async (command, args) => {
    const p = twoKapps();
    const r = await p.run(command, [...args, '-n']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.trace).toEqual([]);
    expect(r.stdout).toContain('would run: kapps-fake --tag');
    expect(r.stdout).toContain('Dry run: nothing was executed.');
    expect(existsSync(p.path('.kapps-workspace')), 'workspace').toBe(false);
    expect(existsSync(p.kappsHome), 'release state').toBe(false);
    expect(readdirSync(p.dir).sort()).toEqual(['manifests', 'stacks.yaml', 'templates']);
  });

  it('shows the rendered command line of each step it would run', async () => {
    const p = twoKapps();
    const r = await p.run('delete', ['-y', '-n']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      "[web:api] apply_delete/apply would run: kapps-fake --tag api-apply_delete --stdout 'deleting with",
    );
    expect(r.stdout).toContain('[web:db] apply_delete/apply would run: kapps-fake --tag db-apply_delete');
  });
});

describe('a project with programs (test/fixtures/projects/programs)', () => {
  // platform:network requires the program faketf (outputs), platform:ingress requires fakehelm and reads them.
  it('--one-shot runs each kapp’s program steps in priority order, calls included, then loads its outputs', async () => {
    const p = fixtureProject({ from: 'programs' });
    const r = await p.runJson('install', ['--one-shot']);
    expect(r.code, r.stderr).toBe(0);
    expect(tags(r.trace)).toEqual([
      'tf-plan-network',
      'tf-apply-network',
      'tf-output-network',
      'tf-output-network',
      'helm-lint-ingress',
      'helm-install-ingress',
    ]);
    expect(
      eventsOf(r.events, 'step-output')
        .map((e) => e.text)
        .join(''),
    ).toBe('HELM_NAMESPACE=dev\nrelease=edge\ncidr=10.0.0.0/16\n');
    expect(eventsOf(r.events, 'run-started')[0]?.workers).toBe(2);
    // Steps ran in the workspace copies; the library is untouched.
    expect(readdirSync(p.path('library/network'))).toEqual(['sugarkube.yaml']);
    expect(p.read('.kapps-workspace/dev/platform/network/network/tf-output.json')).toBe('{"cidr":"10.0.0.0/16"}\n');
  });

  it('delete -y loads the outputs, then deletes the dependent first', async () => {
    const p = fixtureProject({ from: 'programs' });
    const r = await p.run('delete', ['-y']);
    expect(r.code, r.stderr).toBe(0);
    expect(tags(r.trace)).toEqual(['tf-output-network', 'helm-delete-ingress', 'tf-destroy-network']);
  });
});
