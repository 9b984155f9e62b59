/**
 * `kapps release rollback` on the built CLI, with real git: a rollback to revision 1 runs revision 1's steps with
 * revision 1's variables and template contents (read from the steps' own trace and the files they wrote), recorded
 * as a new revision with `rollbackOf: 1`; a failed revision and a revision whose checkout had local changes are
 * refused with the reason; `--prune` deletes a kapp added after the target; a git-sourced kapp goes back to the
 * commit its source had then.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupProjects, fixtureProject, type FixtureProject, type ProjectRun } from '../support/project.js';
import { gitRemote, type GitRemote } from '../support/git-remote.js';

afterAll(cleanupProjects);

/** A kapp whose install writes what its variable and template say, and whose delete is traced. */
function siteKapp(out: string, greeting: string, version: string, exit = 0): Record<string, unknown> {
  return {
    'kapps/site/sugarkube.yaml':
      `vars:\n  greeting: ${greeting}\n` +
      'templates:\n  page:\n    source: page.tpl\n    dest: _generated_page.txt\n' +
      'run_units:\n  fake:\n    apply_install:\n      - name: apply\n        command: kapps-fake\n' +
      `        args: '--tag apply-site-{{ .kapp.vars.greeting }} --write-file ${out}/site.txt {{ .kapp.vars.greeting }} --exit ${exit}'\n`,
    'kapps/site/page.tpl': `Welcome, {{ .kapp.vars.greeting }}! (${version})\n`,
  };
}

function extraKapp(): Record<string, unknown> {
  return {
    'kapps/extra/sugarkube.yaml':
      'run_units:\n  fake:\n    apply_install:\n      - name: apply\n        command: kapps-fake\n        args: --tag apply-extra\n' +
      '    apply_delete:\n      - name: delete\n        command: kapps-fake\n        args: --tag delete-extra\n',
  };
}

function manifest(ids: readonly string[]): string {
  return `kapps:\n${ids.map((id) => `  - id: ${id}\n    sources:\n      - uri: file://../kapps/${id}\n`).join('')}`;
}

interface Project {
  p: FixtureProject;
  git: GitRemote;
  out: string;
}

function project(): Project {
  const p = fixtureProject({
    name: 'shop',
    stacks: 'dev:\n  provider: local\n  manifests:\n    - uri: manifests/web.yaml\n',
  });
  const out = path.join(p.root, 'out');
  mkdirSync(out);
  for (const [rel, content] of Object.entries({
    ...siteKapp(out, 'hello', 'v1'),
    'manifests/web.yaml': manifest(['site']),
  }))
    p.write(rel, content);
  return { p, git: gitRemote(p), out };
}

/** The `--tag` of each step started by a run. */
function tags(r: { trace: readonly { event: string; tag: string }[] }): string[] {
  return r.trace.filter((l) => l.event === 'start').map((l) => l.tag);
}

interface Shown {
  revision: number;
  operation: string;
  phase: string;
  rollbackOf?: number;
  source?: { repo: string; commit: string; dirty?: boolean; path?: string };
  state: Record<string, { status: string }>;
  spec: { kapps: { id: string; sources?: { id: string; commit?: string | null }[] }[] };
}

async function show(p: FixtureProject, revision?: number): Promise<Shown> {
  const r = await release(p, 'show', '-o', 'json', ...(revision ? ['--revision', String(revision)] : []));
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Shown;
}

async function installed(p: FixtureProject, ...args: string[]): Promise<void> {
  const r = await p.run('install', ['-y', ...args]);
  expect(r.code, r.stdout + r.stderr).toBe(0);
}

/** `kapps release <verb> <stack file> dev <args…>`. */
function release(p: FixtureProject, verb: string, ...args: string[]): Promise<ProjectRun> {
  return p.run('release', [verb, p.stackFile, 'dev', ...args], { bare: true });
}

function rollback(p: FixtureProject, ...args: string[]): Promise<ProjectRun> {
  return release(p, 'rollback', ...args);
}

describe('kapps release rollback', () => {
  it("runs revision 1's steps with its variables and templates again, recorded as revision 3 with rollbackOf: 1", async () => {
    const { p, git, out } = project();
    const first = git.head();
    await installed(p);
    const one = await show(p);
    expect(one.source).toEqual({ repo: git.bare, commit: first, dirty: false, path: 'stacks.yaml' });

    const second = git.commit('Say bonjour', siteKapp(out, 'bonjour', 'v2'));
    await installed(p);
    expect(readFileSync(path.join(out, 'site.txt'), 'utf8')).toBe('bonjour');
    const page = path.join(p.workspace, 'web', 'site', 'site', '_generated_page.txt');
    expect(readFileSync(page, 'utf8')).toBe('Welcome, bonjour! (v2)\n');

    // Without -y: the preview, nothing changed.
    const previewed = await rollback(p, '--to', '1');
    expect(previewed.code, previewed.stderr).toBe(0);
    expect(previewed.stderr).toContain('Rollback to revision 1 (the latest is 2).');
    expect(previewed.stderr).toMatch(/web:site\s+Update/);
    expect(previewed.stderr).toContain('~ vars.greeting: "bonjour" → "hello"');
    expect(previewed.stderr).toContain('Nothing was changed. To apply this rollback:');
    expect(previewed.stderr).toContain('--to 1 -y');
    expect(tags(previewed)).toEqual([]);
    expect(readFileSync(path.join(out, 'site.txt'), 'utf8')).toBe('bonjour');
    expect((await show(p)).revision).toBe(2);

    const applied = await rollback(p, '--to', '1', '-y', '--reporter', 'plain');
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect(tags(applied)).toEqual(['apply-site-hello']);
    expect(readFileSync(path.join(out, 'site.txt'), 'utf8')).toBe('hello');
    expect(readFileSync(page, 'utf8')).toBe('Welcome, hello! (v1)\n');
    expect(applied.stdout).toContain('Recorded as release 3 of shop/dev');
    const three = await show(p);
    expect(three).toMatchObject({ revision: 3, operation: 'install', phase: 'succeeded', rollbackOf: 1 });
    expect(three.source).toEqual({ repo: git.bare, commit: first, dirty: false, path: 'stacks.yaml' });
    // Today's checkout is untouched, and the copy of revision 1's commit is gone.
    expect(git.git('rev-parse', 'HEAD')).toBe(second);
    expect(git.git('status', '--porcelain', '--ignored')).toBe('!! .kapps-workspace/');
    expect(execFileSync('ls', ['-A', path.join(p.dir, '.kapps-workspace')], { encoding: 'utf8' })).toBe('dev\n');

    const list = await release(p, 'list');
    expect(list.stdout).toMatch(/^3\s+install \(rollback of 1\)\s+succeeded/m);
    const shown = await release(p, 'show');
    expect(shown.stderr).toContain(
      `Release 3 of shop/dev: rollback of 1; commit ${first.slice(0, 12)} of ${git.bare} (clean)`,
    );

    // --to -1: the one before the latest (2), whose greeting was bonjour.
    const back = await rollback(p, '--to', '-1', '-y', '--reporter', 'plain');
    expect(back.code, back.stderr).toBe(0);
    expect(tags(back)).toEqual(['apply-site-bonjour']);
    expect(await show(p)).toMatchObject({ revision: 4, rollbackOf: 2, source: { commit: second } });
  });

  it('refuses a revision that failed, with the reason, and records nothing', async () => {
    const { p, git, out } = project();
    await installed(p);
    git.commit('Break it', siteKapp(out, 'broken', 'v2', 3));
    expect((await p.run('install', ['-y'])).code).toBe(1);
    git.commit('Fix it', siteKapp(out, 'fixed', 'v3'));
    await installed(p);

    const r = await rollback(p, '--to', '2', '-y');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('kapps: revision 2 failed; only a revision that succeeded can be rolled back to\n');
    expect(tags(r)).toEqual([]);
    expect((await show(p)).revision).toBe(3);
    // A revision that does not exist, and a usage error.
    const missing = await rollback(p, '--to', '9');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('kapps: revision 9 does not exist: the latest is 3\n');
    const usage = await rollback(p, '--to', '0');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--to must be a revision number (1, 2, …) or -1');
  });

  it("refuses a revision whose checkout had local changes; --force rolls back on today's checkout, saying so", async () => {
    const { p, git, out } = project();
    // Revision 1 is made from a change not committed.
    p.write('kapps/site/page.tpl', 'Welcome, {{ .kapp.vars.greeting }}! (not committed)\n');
    await installed(p);
    expect((await show(p)).source).toMatchObject({ dirty: true });
    git.commit('Say bonjour', siteKapp(out, 'bonjour', 'v2'));
    await installed(p);
    expect((await show(p)).source).toMatchObject({ dirty: false });

    const r = await rollback(p, '--to', '1', '-y');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'kapps: cannot roll back to revision 1: the checkout of revision 1 had local changes (not committed)',
    );
    expect(r.stderr).toContain("--force rolls back to its recorded sources and variables on top of today's checkout");
    expect(tags(r)).toEqual([]);
    expect((await show(p)).revision).toBe(2);

    const forced = await rollback(p, '--to', '1', '-y', '--force', '--reporter', 'plain');
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain('warning: --force: revision 1 is not reproduced exactly:');
    expect(forced.stderr).toContain("today's checkout is used");
    expect(await show(p)).toMatchObject({ revision: 3, rollbackOf: 1 });
  });

  it('lists a kapp added after the target and leaves it; --prune deletes it, recorded as a rollback too', async () => {
    const { p, git } = project();
    await installed(p);
    git.commit('Add extra', { ...extraKapp(), 'manifests/web.yaml': manifest(['site', 'extra']) });
    await installed(p);

    const kept = await rollback(p, '--to', '1', '-y', '--reporter', 'plain');
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.stderr).toContain('Kapps revision 1 did not have, left alone (--prune deletes them): web:extra');
    expect(kept.stderr).toMatch(/web:extra\s+Delete/);
    expect(tags(kept)).toEqual([]);
    expect((await show(p)).state['web:extra']?.status).toBe('installed');

    const pruned = await rollback(p, '--to', '1', '-y', '--prune', '--reporter', 'plain');
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stderr).toContain('deleted after the install (--prune): web:extra');
    expect(tags(pruned)).toEqual(['delete-extra']);
    const last = await show(p);
    expect(last).toMatchObject({ operation: 'delete', phase: 'succeeded', rollbackOf: 1 });
    expect(last.state['web:extra']?.status).toBe('deleted');
    expect(last.state['web:site']?.status).toBe('installed');
  });

  it('takes a git-sourced kapp back to the commit its source had at the target', async () => {
    const { p, git } = project();
    // A library kept in its own repository, used at its branch main.
    const lib = fixtureProject({ name: 'lib', stacks: null });
    lib.write('k/sugarkube.yaml', libKapp('one'));
    const libGit = gitRemote(lib);
    const firstLib = libGit.head();
    git.commit('Use lib', {
      'manifests/web.yaml': `${manifest(['site'])}  - id: lib\n    sources:\n      - id: lib\n        uri: ${libGit.url}//k#main\n`,
    });
    await installed(p);
    const one = await show(p);
    expect(one.spec.kapps.find((k) => k.id === 'web:lib')?.sources?.[0]?.commit).toBe(firstLib);

    const secondLib = libGit.commit('Two', { 'k/sugarkube.yaml': libKapp('two') });
    await installed(p, '--fetch');
    const two = await show(p);
    expect(two.spec.kapps.find((k) => k.id === 'web:lib')?.sources?.[0]?.commit).toBe(secondLib);

    const r = await rollback(p, '--to', '1', '-y', '--reporter', 'plain');
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(tags(r), r.stdout + r.stderr).toEqual(['apply-lib-one']);
    const three = await show(p);
    expect(three).toMatchObject({ revision: 3, rollbackOf: 1 });
    expect(three.spec.kapps.find((k) => k.id === 'web:lib')?.sources?.[0]).toMatchObject({ commit: firstLib });
    const checkout = path.join(p.workspace, 'web', 'lib', '.sugarkube');
    const head = execFileSync(
      'git',
      ['-C', path.join(checkout, execFileSync('ls', [checkout], { encoding: 'utf8' }).trim()), 'rev-parse', 'HEAD'],
      {
        encoding: 'utf8',
      },
    ).trim();
    expect(head).toBe(firstLib);
    // The checkout says it is the pinned commit of main, so the next install brings main back.
    const marker = path.join(
      checkout,
      execFileSync('ls', [checkout], { encoding: 'utf8' }).trim(),
      '.git',
      'kapps-ref',
    );
    expect(readFileSync(marker, 'utf8')).toBe(`main@${firstLib}\n`);
    await installed(p);
    expect((await show(p)).spec.kapps.find((k) => k.id === 'web:lib')?.sources?.[0]).toMatchObject({
      commit: secondLib,
    });
  });
});

function libKapp(word: string): string {
  return `run_units:\n  fake:\n    apply_install:\n      - name: apply\n        command: kapps-fake\n        args: --tag apply-lib-${word}\n`;
}
