/**
 * Everything kapps writes for a kapp stays in that kapp's directory of the workspace, on the built CLI with hostile
 * values for every field that reaches the file system: names that become directories (stack, manifest, kapp and
 * source ids), template `dest`, step `stdout`/`stderr`, output `path` (read, and deleted when sensitive), symbolic
 * links inside the kapp's directory pointing out of it, and file sources whose links are swapped for files or
 * directories between two syncs. Each case checks the error, the exit code and that nothing outside changed.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeStep as step, libraryKapp } from '../support/library-kapp.js';
import { cleanupProjects, fixtureProject, type FixtureProject } from '../support/project.js';

afterAll(cleanupProjects);

/** A directory beside the project, with a file `keep.txt` kapps must never touch. */
function outside(p: FixtureProject): { dir: string; file: string } {
  const dir = path.join(p.root, 'outside');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'keep.txt');
  writeFileSync(file, 'precious\n');
  return { dir, file };
}

/** Everything under `dir`, as relative paths. */
function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
}

const mainUnit = (apply: unknown[], extra: Record<string, unknown> = {}) => ({
  run_units: { main: { apply_install: apply, ...extra } },
});

describe('names that become directories', () => {
  it('a manifest id with ../ is refused at its line and column; nothing is created outside the workspace', async () => {
    const p = fixtureProject({
      stacks: {
        dev: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/web.yaml', id: '../../../x' }] },
      },
      manifests: { web: { kapps: [{ id: 'k', ...mainUnit([step()]) }] } },
    });
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toMatch(/stacks\.yaml:\d+:\d+/);
    expect(r.stderr).toContain('manifest id `../../../x` contains `/`');
    expect(r.stderr).toContain('dev.manifests[0].id');
    expect(p.traceLines()).toEqual([]);
    expect(existsSync(path.join(p.root, 'x'))).toBe(false);
    expect(existsSync(path.join(p.dir, 'x'))).toBe(false);
  });

  it('a manifest id taken from a uri named `..` is refused, with a hint to give an explicit id', async () => {
    const p = fixtureProject({
      stacks: { dev: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/..' }] } },
    });
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toContain('manifest id `..` is `..`');
    expect(r.stderr).toContain('explicit `id:`');
  });

  it('a stack named ../../x (its key, or its name:) is refused before any default workspace is made', async () => {
    const p = fixtureProject({
      stacks: { '../../x': { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/web.yaml' }] } },
      manifests: { web: { kapps: [{ id: 'k', ...mainUnit([step()]) }] } },
    });
    const r = await p.run('install', ['-y'], { stack: '../../x' });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toMatch(/stacks\.yaml:1:1/);
    expect(r.stderr).toContain('stack name `../../x` contains `/`');
    expect(p.traceLines()).toEqual([]);
    expect(existsSync(path.join(p.root, 'x'))).toBe(false);

    p.write('stacks.yaml', {
      dev: { name: '../../y', provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/web.yaml' }] },
    });
    const named = await p.run('install', ['-y']);
    expect(named.code).toBe(1);
    expect(named.stderr).toContain('stack name `../../y` contains `/`');
    expect(named.stderr).toContain('dev.name');
    expect(existsSync(path.join(p.root, 'y'))).toBe(false);
  });

  it('kapp ids and source ids that are not a single name are refused, naming the field', async () => {
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            { id: 'a/b', ...mainUnit([step()]) },
            { id: '-k', ...mainUnit([step()]) },
          ],
        },
      },
    });
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toMatch(/web\.yaml:\d+:\d+/);
    expect(r.stderr).toContain('kapp id `a/b` contains `/`');
    expect(r.stderr).toContain('kapp id `-k` starts with `-`');

    const o = outside(p);
    const q = fixtureProject({
      manifests: {
        web: { kapps: [{ id: 'k', sources: [{ id: `../../../../${path.basename(o.dir)}`, uri: '../lib' }] }] },
      },
      files: { 'lib/sugarkube.yaml': mainUnit([step()]), 'lib/keep.txt': 'overwritten\n' },
    });
    const s = await q.run('install', ['-y']);
    expect(s.code, s.stdout + s.stderr).toBe(1);
    expect(s.stderr).toContain('source id `../../../../outside` contains `/`');
    expect(readFileSync(o.file, 'utf8')).toBe('precious\n');
  });

  it('ordinary Sugarkube names stay valid (dots in stack names and manifest ids, hyphens, underscores)', async () => {
    const p = fixtureProject({
      stacks: {
        'local.standard': {
          provider: 'local',
          cluster: 'c',
          manifests: [{ uri: 'manifests/web.yaml', id: 'web.sites_1' }],
        },
      },
      manifests: { web: { kapps: [{ id: 'word-press_2', ...mainUnit([step()]) }] } },
    });
    const r = await p.run('install', ['-y'], { stack: 'local.standard' });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(existsSync(path.join(p.dir, '.kapps-workspace', 'local.standard', 'web.sites_1', 'word-press_2'))).toBe(
      true,
    );
  });
});

describe('template dest', () => {
  for (const [what, dest] of [
    ['climbing out with ..', '../../../../../outside/evil.txt'],
    ['an absolute path elsewhere', 'ABS'],
  ] as const) {
    it(`${what} is refused with its location and nothing is written`, async () => {
      const p = libraryKapp({}, { 'library/k/t.tpl': 'evil\n' });
      const o = outside(p);
      p.write('library/k/sugarkube.yaml', {
        templates: { bad: { source: 't.tpl', dest: dest === 'ABS' ? path.join(o.dir, 'evil.txt') : dest } },
        ...mainUnit([step()]),
      });
      const r = await p.run('install', ['-y']);
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toContain("template 'bad' dest");
      expect(r.stdout).toContain("outside the kapp's directory");
      expect(r.stdout).toMatch(/library\/k\/sugarkube\.yaml:4:\d+/);
      expect(listing(o.dir)).toEqual(['keep.txt']);
      expect(p.traceLines()).toEqual([]);
    });
  }

  it('is refused through a symbolic link in the kapp directory that points outside (as a directory or the file)', async () => {
    const p = libraryKapp({}, { 'library/k/t.tpl': 'evil\n' });
    const o = outside(p);
    symlinkSync(o.dir, p.path('library/k/linkdir'));
    symlinkSync(o.file, p.path('library/k/linkfile'));
    for (const dest of ['linkdir/evil.txt', 'linkdir/new/evil.txt', 'linkfile']) {
      p.write('library/k/sugarkube.yaml', {
        templates: { bad: { source: 't.tpl', dest } },
        ...mainUnit([step()]),
      });
      const r = await p.run('install', ['-y']);
      expect(r.code, `${dest}: ${r.stdout}${r.stderr}`).toBe(1);
      expect(r.stdout).toContain("template 'bad' dest");
      expect(r.stdout).toMatch(/symbolic link/);
    }
    expect(listing(o.dir)).toEqual(['keep.txt']);
    expect(readFileSync(o.file, 'utf8')).toBe('precious\n');
    expect(p.traceLines()).toEqual([]);
  });

  it('inside the kapp directory, relative or under {{ .kapp.cacheRoot }}, is written as before', async () => {
    const p = libraryKapp(
      {
        templates: {
          rel: { source: 't.tpl', dest: 'sub/_generated_rel.txt' },
          abs: { source: 't.tpl', dest: '{{ .kapp.cacheRoot }}/_generated_abs.txt' },
        },
        ...mainUnit([step({ stdout: '{{ .kapp.cacheRoot }}/out/captured.txt' })]),
      },
      { 'library/k/t.tpl': 'id={{ .kapp.id }}\n' },
    );
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(p.read('.kapps-workspace/dev/web/k/k/sub/_generated_rel.txt')).toBe('id=k\n');
    expect(p.read('.kapps-workspace/dev/web/k/_generated_abs.txt')).toBe('id=k\n');
    expect(p.read('.kapps-workspace/dev/web/k/out/captured.txt')).toContain('hello');
  });
});

describe('step stdout and stderr', () => {
  it('a capture file outside the kapp directory is refused before the step runs', async () => {
    const p = libraryKapp({});
    const o = outside(p);
    p.write('library/k/sugarkube.yaml', mainUnit([step({ stdout: '../../../../../outside/out.txt', stderr: o.file })]));
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toContain("'stdout' file");
    expect(r.stderr).toContain("'stderr' file");
    expect(r.stderr).toContain("outside the kapp's directory");
    expect(r.stderr).toMatch(/sugarkube\.yaml:\d+:\d+/);
    expect(p.traceLines()).toEqual([]);
    expect(listing(o.dir)).toEqual(['keep.txt']);
    expect(readFileSync(o.file, 'utf8')).toBe('precious\n');
  });

  it('a capture file reached through a link pointing outside fails the step and writes nothing there', async () => {
    const p = libraryKapp(mainUnit([step({ working_dir: 'k', stdout: 'linkdir/out.txt', stderr: 'linkfile' })]));
    const o = outside(p);
    symlinkSync(o.dir, p.path('library/k/linkdir'));
    symlinkSync(o.file, p.path('library/k/linkfile'));
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout + r.stderr).toContain("step 'apply' stdout");
    expect(r.stdout + r.stderr).toMatch(/symbolic link/);
    expect(listing(o.dir)).toEqual(['keep.txt']);
    expect(readFileSync(o.file, 'utf8')).toBe('precious\n');
  });
});

describe('output path', () => {
  it('a sensitive output naming an existing file outside is refused: the file is neither read nor deleted', async () => {
    const p = libraryKapp({});
    const o = outside(p);
    for (const outPath of [o.file, '../../../../../outside/keep.txt', 'linkfile', 'linkdir/keep.txt']) {
      if (!existsSync(p.path('library/k/linkfile'))) {
        symlinkSync(o.file, p.path('library/k/linkfile'));
        symlinkSync(o.dir, p.path('library/k/linkdir'));
      }
      p.write('library/k/sugarkube.yaml', {
        outputs: [{ id: 'secret', path: outPath, format: 'text', sensitive: true }],
        ...mainUnit([step({ load_outputs: true })]),
      });
      const r = await p.run('install', ['-y']);
      expect(r.code, `${outPath}: ${r.stdout}${r.stderr}`).toBe(1);
      expect(r.stdout + r.stderr).toContain("output 'secret' path");
      expect(r.stdout + r.stderr).not.toContain('precious');
      expect(existsSync(o.file)).toBe(true);
      expect(readFileSync(o.file, 'utf8')).toBe('precious\n');
    }
  });
});

describe('file source sync and links', () => {
  it('a link in the source is copied as a link; a file later at its name replaces the link, not its target', async () => {
    const p = libraryKapp(mainUnit([step()]));
    const o = outside(p);
    symlinkSync(o.file, p.path('library/k/abslink'));
    const first = await p.run('workspace', ['create', p.stackFile, 'dev'], { bare: true });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const copy = p.path('.kapps-workspace/dev/web/k/k/abslink');
    expect(lstatSync(copy).isSymbolicLink()).toBe(true);

    rmSync(p.path('library/k/abslink'));
    writeFileSync(p.path('library/k/abslink'), 'new content\n');
    const second = await p.run('workspace', ['create', p.stackFile, 'dev'], { bare: true });
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(readFileSync(o.file, 'utf8')).toBe('precious\n');
    expect(lstatSync(copy).isFile()).toBe(true);
    expect(readFileSync(copy, 'utf8')).toBe('new content\n');
  });

  it('a directory later at a linked name is copied into the workspace, not into the link target', async () => {
    const p = libraryKapp(mainUnit([step()]));
    const o = outside(p);
    symlinkSync(o.dir, p.path('library/k/d'));
    const first = await p.run('workspace', ['create', p.stackFile, 'dev'], { bare: true });
    expect(first.code, first.stdout + first.stderr).toBe(0);

    rmSync(p.path('library/k/d'));
    p.write('library/k/d/f.txt', 'inside\n');
    const second = await p.run('workspace', ['create', p.stackFile, 'dev'], { bare: true });
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(listing(o.dir)).toEqual(['keep.txt']);
    const copy = p.path('.kapps-workspace/dev/web/k/k/d');
    expect(statSync(copy).isDirectory() && !lstatSync(copy).isSymbolicLink()).toBe(true);
    expect(readFileSync(path.join(copy, 'f.txt'), 'utf8')).toBe('inside\n');
  });

  it('a link a step left in the workspace copy is replaced, never written through, when the source has a file', async () => {
    const p = libraryKapp(mainUnit([step()]), { 'library/k/values.yaml': 'a: 1\n' });
    const o = outside(p);
    const first = await p.run('workspace', ['create', p.stackFile, 'dev'], { bare: true });
    expect(first.code).toBe(0);
    const copy = p.path('.kapps-workspace/dev/web/k/k/values.yaml');
    rmSync(copy);
    symlinkSync(o.file, copy);
    p.write('library/k/values.yaml', 'a: 2\n');
    const second = await p.run('workspace', ['create', p.stackFile, 'dev'], { bare: true });
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(readFileSync(o.file, 'utf8')).toBe('precious\n');
    expect(readFileSync(copy, 'utf8')).toBe('a: 2\n');
  });
});
