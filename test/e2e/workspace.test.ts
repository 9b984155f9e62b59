/**
 * Workspaces on the built CLI: `<workspace>/<manifest>/<kapp>/` filled from plain paths, `file://` paths and git
 * URIs (a real local repository, fetched with the git CLI), by `kapps workspace create` or by the run commands,
 * which fetch what is missing first.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupProjects, fixtureProject, survivors, waitFor, type FixtureProject } from '../support/project.js';
import { markersKilledAfterEach } from '../support/processes.js';

afterAll(cleanupProjects);
const newMarker = markersKilledAfterEach();

/** A kapp's sugarkube.yaml whose apply_install step runs a fake tagged `tag`. */
const kappFile = (tag: string) => ({
  run_units: {
    main: {
      apply_install: [{ name: 'apply', command: 'kapps-fake', args: `--tag ${tag} --write-file state.txt ${tag}` }],
    },
  },
});

const started = (p: { trace: readonly { event: string; tag: string }[] }): string[] =>
  p.trace.filter((l) => l.event === 'start').map((l) => l.tag);

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync(
    'git',
    ['-c', 'user.name=kapps', '-c', 'user.email=kapps@example.com', '-c', 'init.defaultBranch=main', ...args],
    {
      cwd,
      encoding: 'utf8',
    },
  );
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/**
 * A git repository `<root>/repos/charts.git` (a working repository whose folder name ends in `.git`) with
 * `kapps/k/sugarkube.yaml` and `kapps/other/`, tagged v1 (step tag `v1`) and v2 (step tag `v2`); `main` is at v2.
 */
function gitRepo(p: FixtureProject): string {
  const repo = path.join(p.root, 'repos', 'charts.git');
  mkdirSync(path.join(repo, 'kapps', 'other'), { recursive: true });
  git(repo, 'init', '-q');
  writeFileSync(path.join(repo, 'kapps', 'other', 'README'), 'not for k\n');
  p.write(path.join(repo, 'kapps', 'k', 'sugarkube.yaml'), kappFile('v1'));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'v1');
  git(repo, 'tag', 'v1');
  p.write(path.join(repo, 'kapps', 'k', 'sugarkube.yaml'), kappFile('v2'));
  git(repo, 'commit', '-q', '-am', 'v2');
  git(repo, 'tag', 'v2');
  return repo;
}

/** A project whose kapp web:k has one git source from `gitRepo`. */
function gitProject(ref: string, options: Record<string, unknown> = {}) {
  const p = fixtureProject();
  const repo = gitRepo(p);
  p.write('manifests/web.yaml', { kapps: [{ id: 'k', sources: [{ uri: `${repo}//kapps/k#${ref}`, ...options }] }] });
  p.write('stacks.yaml', { dev: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/web.yaml' }] } });
  return p;
}

/** The one checkout under the kapp's `.sugarkube/`. */
function checkoutOf(p: FixtureProject): string {
  const dir = p.path('.kapps-workspace/dev/web/k/.sugarkube');
  const [only] = readdirSync(dir);
  return path.join(dir, only ?? '');
}

describe('file sources', () => {
  it('a plain path relative to the manifest is copied into <workspace>/<manifest>/<kapp>/<source id>/', async () => {
    const p = fixtureProject({
      manifests: { web: { kapps: [{ id: 'k', sources: [{ uri: '../library/k' }] }] } },
      files: { 'library/k/sugarkube.yaml': kappFile('lib-v1'), 'library/k/chart/values.yaml': 'a: 1\n' },
    });
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(started(r)).toEqual(['lib-v1']);
    expect(p.read('.kapps-workspace/dev/web/k/k/chart/values.yaml')).toBe('a: 1\n');
    // The step ran in the kapp's cache root: what it writes stays in the workspace, not in the library.
    expect(p.read('.kapps-workspace/dev/web/k/state.txt')).toBe('lib-v1');
    expect(p.exists('library/k/state.txt')).toBe(false);

    // The copy follows the library on the next run.
    p.write('library/k/sugarkube.yaml', kappFile('lib-v2'));
    const again = await p.run('install', ['-y']);
    expect(again.code).toBe(0);
    expect(started(again)).toEqual(['lib-v2']);
  });

  it('a file:// path works the same', async () => {
    const p = fixtureProject();
    p.write('elsewhere/k/sugarkube.yaml', kappFile('from-file-uri'));
    p.write('manifests/web.yaml', {
      kapps: [{ id: 'k', sources: [{ id: 'src', uri: `file://${p.path('elsewhere/k')}` }] }],
    });
    p.write('stacks.yaml', { dev: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/web.yaml' }] } });
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(started(r)).toEqual(['from-file-uri']);
    expect(p.exists('.kapps-workspace/dev/web/k/src/sugarkube.yaml')).toBe(true);
  });
});

describe('file sources run again', () => {
  /** A project whose kapp web:k has the file source `library/k` (a sugarkube.yaml, a chart and a README). */
  function libraryProject() {
    const p = fixtureProject({
      manifests: { web: { kapps: [{ id: 'k', sources: [{ uri: '../library/k' }] }] } },
      files: {
        'library/k/sugarkube.yaml': kappFile('lib'),
        'library/k/chart/values.yaml': 'a: 1\n',
        'library/k/chart/old.yaml': 'old: true\n',
        'library/k/README': 'read me\n',
      },
    });
    // Modification times with more than millisecond precision, as file systems keep them.
    for (const f of ['sugarkube.yaml', 'chart/values.yaml', 'chart/old.yaml', 'README'])
      utimesSync(p.path(`library/k/${f}`), 1_700_000_000.1234567, 1_700_000_000.1234567);
    return p;
  }

  it('a second install writes nothing over the unchanged copies', async () => {
    const p = libraryProject();
    expect((await p.run('install', ['-y'])).code).toBe(0);
    const files = ['k/sugarkube.yaml', 'k/chart/values.yaml', 'k/README'].map((f) =>
      p.path(`.kapps-workspace/dev/web/k/${f}`),
    );
    const before = files.map((f) => statSync(f));
    const again = await p.run('install', ['-y']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(started(again)).toEqual(['lib']);
    const after = files.map((f) => statSync(f));
    // Neither replaced (a new inode) nor written to (a new change time).
    expect(after.map((s) => [s.ino, s.ctimeMs])).toEqual(before.map((s) => [s.ino, s.ctimeMs]));
  });

  it('an edited, an added and a removed source file are all reflected in the next run, and what steps wrote stays', async () => {
    const p = libraryProject();
    expect((await p.run('install', ['-y'])).code).toBe(0);
    p.write('library/k/chart/values.yaml', 'a: 2\n');
    p.write('library/k/chart/new.yaml', 'new: true\n');
    rmSync(p.path('library/k/chart/old.yaml'));
    p.write('library/k/sugarkube.yaml', kappFile('lib-v2'));
    const again = await p.run('install', ['-y']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(started(again)).toEqual(['lib-v2']);
    expect(p.read('.kapps-workspace/dev/web/k/k/chart/values.yaml')).toBe('a: 2\n');
    expect(p.read('.kapps-workspace/dev/web/k/k/chart/new.yaml')).toBe('new: true\n');
    expect(p.exists('.kapps-workspace/dev/web/k/k/chart/old.yaml')).toBe(false);
    // The step's own file in the cache root is not the source's: left alone.
    expect(p.read('.kapps-workspace/dev/web/k/state.txt')).toBe('lib-v2');
  });
});

describe('git sources', () => {
  it('kapps workspace create fetches URL//path#ref with git: a sparse checkout and a link named after the source', async () => {
    const p = gitProject('v1');
    const r = await p.run('workspace', ['create', p.stackFile, 'dev'], { bare: true });
    expect(r.code, r.stderr).toBe(0);
    const checkout = checkoutOf(p);
    expect(existsSync(path.join(checkout, 'kapps', 'k', 'sugarkube.yaml'))).toBe(true);
    expect(existsSync(path.join(checkout, 'kapps', 'other'))).toBe(false);
    const link = p.path('.kapps-workspace/dev/web/k/k');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(path.resolve(path.dirname(link), readlinkSync(link))).toBe(path.join(checkout, 'kapps', 'k'));

    const install = await p.run('install', ['-y']);
    expect(install.code, install.stderr).toBe(0);
    expect(started(install)).toEqual(['v1']);
  });

  it('--dry-run lists the sources and fetches nothing', async () => {
    const p = gitProject('v1');
    const r = await p.run('workspace', ['create', p.stackFile, 'dev', '-n'], { bare: true });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Would fetch web:k source k:');
    expect(p.exists('.kapps-workspace')).toBe(false);
  });

  it('run commands fetch what is missing first', async () => {
    const p = gitProject('v1');
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Fetching k for web:k...');
    expect(started(r)).toEqual(['v1']);
    const again = await p.run('install', ['-y']);
    expect(again.stderr).not.toContain('Fetching');
    expect(started(again)).toEqual(['v1']);
  });

  it('a changed ref is fetched by the next run', async () => {
    const p = gitProject('v1');
    expect((await p.run('install', ['-y'])).code).toBe(0);
    p.write('manifests/web.yaml', p.read('manifests/web.yaml').replace('#v1', '#v2'));
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stderr).toBe(0);
    expect(started(r)).toEqual(['v2']);
  });

  it('options.branch wins over the #ref', async () => {
    const p = gitProject('v1', { options: { branch: 'v2' } });
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stderr).toBe(0);
    expect(started(r)).toEqual(['v2']);
  });

  it('a checkout with local changes is never switched to another ref', async () => {
    const p = gitProject('v1');
    expect((await p.run('install', ['-y'])).code).toBe(0);
    writeFileSync(path.join(checkoutOf(p), 'kapps', 'k', 'sugarkube.yaml'), JSON.stringify(kappFile('edited')));
    p.write('manifests/web.yaml', p.read('manifests/web.yaml').replace('#v1', '#v2'));
    const r = await p.run('install', ['-y']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('has local changes; not switching it from v1 to v2, to prevent losing work');
    expect(r.trace).toEqual([]);
  });

  it('a checkout whose first fetch did not complete is fetched again', async () => {
    const p = gitProject('v1');
    expect((await p.run('install', ['-y'])).code).toBe(0);
    // Leave what an interrupted first fetch leaves: an initialised repository without the fetched files.
    const checkout = checkoutOf(p);
    rmSync(checkout, { recursive: true });
    mkdirSync(path.join(checkout, '.git'), { recursive: true });
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stderr).toBe(0);
    expect(started(r)).toEqual(['v1']);
  });

  it('Ctrl-C while a source is fetched stops git and exits 130 without running anything', async () => {
    const p = gitProject('v1');
    const marker = newMarker();
    // A git that hangs (with the marker in its command line) stands in for a slow fetch.
    p.write('slow-bin/git', `#!/bin/sh\nexec kapps-fake --tag git-${marker} --hang\n`);
    chmodSync(p.path('slow-bin/git'), 0o755);
    const cli = p.start('install', ['-y', '--kill-grace', '1'], {
      env: { PATH: `${p.path('slow-bin')}:${p.env.PATH}` },
    });
    await waitFor('git to start', () => p.traceLines().some((l) => l.tag === `git-${marker}`));
    cli.child.kill('SIGINT');
    const r = await cli.done;
    expect(r.code).toBe(130);
    expect(await survivors(marker)).toEqual([]);
    expect(r.trace.filter((l) => !l.tag.startsWith('git-'))).toEqual([]);
  });

  it('a ref that does not exist fails before anything runs, naming the kapp and source', async () => {
    const p = gitProject('no-such-tag');
    const r = await p.run('install', ['-y']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /kapp web:k, source k: git fetch --depth=1 --tags --end-of-options origin no-such-tag failed/,
    );
    expect(r.trace).toEqual([]);
  });
});

describe('the first fetch into a fresh workspace', () => {
  it('is taken in turns: several kapps processes started at once all succeed, with one checkout', async () => {
    for (let round = 0; round < 3; round++) {
      const p = gitProject('v1');
      const runs = [0, 1, 2].map(() => p.start('generate'));
      const done = await Promise.all(runs.map((r) => r.done));
      for (const r of done) {
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
      }
      expect(readdirSync(p.path('.kapps-workspace/dev/web/k/.sugarkube'))).toHaveLength(1);
      const apply = await p.run('install', ['-y', '--no-fetch']);
      expect(apply.code, apply.stderr).toBe(0);
      expect(started(apply)).toEqual(['v1']);
    }
  });
});

describe('sources already in the workspace (the fetch policy)', () => {
  /** The checkout directory kapps uses for web:k's source (`.sugarkube/<fqId>`). */
  const checkoutDirOf = (p: FixtureProject, repo: string): string =>
    p.path(
      '.kapps-workspace/dev/web/k/.sugarkube',
      `${repo
        .replace(/^\/+/, '')
        .replaceAll('/', '-')
        .replace(/\.git$/, '')}-k`,
    );

  it('a checkout cloned by hand is used as it is; --fetch brings it to the ref', async () => {
    const p = gitProject('v2');
    const repo = p.path('../repos/charts.git');
    const checkout = checkoutDirOf(p, repo);
    mkdirSync(path.dirname(checkout), { recursive: true });
    git(p.dir, 'clone', '-q', repo, checkout);
    git(checkout, 'checkout', '-q', 'v1');
    p.write('.kapps-workspace/dev/web/k/.keep', '');
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('Fetching');
    expect(started(r)).toEqual(['v1']);

    const fetched = await p.run('install', ['-y', '--fetch']);
    expect(fetched.code, fetched.stderr).toBe(0);
    expect(fetched.stderr).toContain('Fetching k for web:k...');
    expect(started(fetched)).toEqual(['v2']);
  });

  it('a source folder laid out by hand is used as it is, without fetching its repository', async () => {
    const p = fixtureProject();
    p.write('manifests/web.yaml', {
      kapps: [{ id: 'k', sources: [{ uri: 'https://git.invalid/none/kapps.git//kapps/k#v1' }] }],
    });
    p.write('stacks.yaml', { dev: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/web.yaml' }] } });
    p.write('.kapps-workspace/dev/web/k/k/sugarkube.yaml', kappFile('by-hand'));
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('Fetching');
    expect(started(r)).toEqual(['by-hand']);
  });

  it('a kapp with no source finds a sugarkube.yaml laid in its workspace directory, through a link too, not in a file of that name', async () => {
    const p = fixtureProject();
    p.write('manifests/web.yaml', { kapps: [{ id: 'a' }, { id: 'b' }, { id: 'c' }, { id: 'd' }] });
    p.write('stacks.yaml', { dev: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/web.yaml' }] } });
    p.write('.kapps-workspace/dev/web/a/chart/sugarkube.yaml', kappFile('in-dir'));
    p.write('elsewhere/b/sugarkube.yaml', kappFile('through-link'));
    symlinkSync(p.path('elsewhere/b'), p.path('.kapps-workspace/dev/web/b'));
    p.write('.kapps-workspace/dev/web/c', 'a file, not a directory\n');
    const plan = await p.run('generate', ['-o', 'json']);
    expect(plan.code, plan.stderr).toBe(0);
    const steps = (
      JSON.parse(plan.stdout) as { kapps: { id: string; phases: { apply_install: { args: string[] }[] } }[] }
    ).kapps.map((k) => [k.id, k.phases.apply_install.map((s) => s.args[1])]);
    expect(steps).toEqual([
      ['web:a', ['in-dir']],
      ['web:b', ['through-link']],
      ['web:c', []],
      ['web:d', []],
    ]);
    // A run cannot use the file as web:c's directory: the kapp fails, saying so; the others run.
    const r = await p.run('install', ['-y']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      `web:c: cannot make the directory ${p.path('.kapps-workspace/dev/web/c')}: a file that is not a directory is in the way (EEXIST)`,
    );
    expect(started(r).sort()).toEqual(['in-dir', 'through-link']);
  });

  it("kapps' own checkout of a branch is not updated unless --fetch is given", async () => {
    const p = gitProject('main');
    const repo = p.path('../repos/charts.git');
    expect(started(await p.run('install', ['-y']))).toEqual(['v2']);
    p.write(path.join(repo, 'kapps', 'k', 'sugarkube.yaml'), kappFile('v3'));
    git(repo, 'commit', '-q', '-am', 'v3');
    const again = await p.run('install', ['-y']);
    expect(again.stderr).not.toContain('Fetching');
    expect(started(again)).toEqual(['v2']);
    const fetched = await p.run('install', ['-y', '--fetch']);
    expect(fetched.code, fetched.stderr).toBe(0);
    expect(started(fetched)).toEqual(['v3']);
  });
});
