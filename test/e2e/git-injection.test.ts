/**
 * Git sources with hostile values, on the built CLI and real local repositories: a ref, branch, `versions` entry,
 * templated branch or repository URL that git could read as an option (`--upload-pack=…`, `-c core.sshCommand=…`),
 * as a command-running transport (`ext::`), or as something other than one ref (`..`, a newline, a NUL) is refused
 * when the stack is loaded, with an error naming the file, line and field, and no command it holds ever runs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupProjects, fixtureProject, type FixtureProject } from '../support/project.js';

afterAll(cleanupProjects);

function git(cwd: string, ...args: string[]): void {
  const r = spawnSync(
    'git',
    ['-c', 'user.name=kapps', '-c', 'user.email=kapps@example.com', '-c', 'init.defaultBranch=main', ...args],
    { cwd, encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

/** A repository `<root>/repos/charts.git` with `kapps/k/sugarkube.yaml` (its step tagged `v1`), tagged v1. */
function gitRepo(p: FixtureProject): string {
  const repo = path.join(p.root, 'repos', 'charts.git');
  mkdirSync(path.join(repo, 'kapps', 'k'), { recursive: true });
  git(repo, 'init', '-q');
  p.write(path.join(repo, 'kapps', 'k', 'sugarkube.yaml'), {
    run_units: { main: { apply_install: [{ name: 'apply', command: 'kapps-fake', args: '--tag v1' }] } },
  });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'v1');
  git(repo, 'tag', 'v1');
  return repo;
}

interface HostileCase {
  readonly name: string;
  /** The source of kapp web:k, given the repository and the marker file the hostile value would create. */
  readonly source: (repo: string, marker: string) => Record<string, unknown>;
  /** Extra fields of the stack `dev` (vars, or the manifest entry's versions). */
  readonly stack?: (marker: string) => { vars?: Record<string, unknown>; versions?: Record<string, string> };
  /** The file named by the error, and the text that names the field. */
  readonly file: 'manifests/web.yaml' | 'stacks.yaml';
  readonly field: string;
}

const CASES: readonly HostileCase[] = [
  {
    name: '#ref --upload-pack=… in the uri',
    source: (repo, m) => ({ uri: `${repo}//kapps/k#--upload-pack=touch ${m}` }),
    file: 'manifests/web.yaml',
    field: 'kapps[0].sources[0].uri',
  },
  {
    name: 'options.branch --upload-pack=…',
    source: (repo, m) => ({ uri: `${repo}//kapps/k#v1`, options: { branch: `--upload-pack=touch ${m}` } }),
    file: 'manifests/web.yaml',
    field: 'kapps[0].sources[0].options.branch',
  },
  {
    name: 'options.branch -c core.sshCommand=…',
    source: (repo, m) => ({ uri: `${repo}//kapps/k#v1`, options: { branch: `-c core.sshCommand=touch ${m}` } }),
    file: 'manifests/web.yaml',
    field: 'kapps[0].sources[0].options.branch',
  },
  {
    name: 'a stack versions entry --upload-pack=…',
    source: (repo) => ({ uri: `${repo}//kapps/k#v1` }),
    stack: (m) => ({ versions: { 'k/k': `--upload-pack=touch ${m}` } }),
    file: 'stacks.yaml',
    field: 'dev.manifests[0].versions.k/k',
  },
  {
    name: 'a templated options.branch rendering to --upload-pack=…',
    source: (repo) => ({ uri: `${repo}//kapps/k#v1`, options: { branch: '{{ .myref }}' } }),
    stack: (m) => ({ vars: { myref: `--upload-pack=touch ${m}` } }),
    file: 'manifests/web.yaml',
    field: 'sources.k.options.branch',
  },
  {
    name: 'a templated #ref rendering to --upload-pack=…',
    source: (repo) => ({ uri: `${repo}//kapps/k#{{ .myref }}` }),
    stack: (m) => ({ vars: { myref: `--upload-pack=touch ${m}` } }),
    file: 'manifests/web.yaml',
    field: 'sources.k.uri',
  },
  {
    name: 'a repository starting with -',
    source: (_repo, m) => ({ uri: `--upload-pack=touch ${m}.git//kapps/k#v1` }),
    file: 'manifests/web.yaml',
    field: 'kapps[0].sources[0].uri',
  },
  {
    name: 'an ext:: repository',
    source: (_repo, m) => ({ uri: `ext::sh -c touch% ${m}.git//kapps/k#v1` }),
    file: 'manifests/web.yaml',
    field: 'kapps[0].sources[0].uri',
  },
  {
    name: 'an ssh host starting with -',
    source: (_repo, m) => ({ uri: `ssh://-oProxyCommand=touch ${m}/charts.git//kapps/k#v1` }),
    file: 'manifests/web.yaml',
    field: 'kapps[0].sources[0].uri',
  },
  {
    name: 'a ref with ..',
    source: (repo) => ({ uri: `${repo}//kapps/k#v1`, options: { branch: 'v1..main' } }),
    file: 'manifests/web.yaml',
    field: 'kapps[0].sources[0].options.branch',
  },
  {
    name: 'a ref with a newline',
    source: (repo) => ({ uri: `${repo}//kapps/k#v1`, options: { branch: 'v1\n--upload-pack=x' } }),
    file: 'manifests/web.yaml',
    field: 'kapps[0].sources[0].options.branch',
  },
  {
    name: 'a ref with a NUL',
    source: (repo) => ({ uri: `${repo}//kapps/k#v1`, options: { branch: 'v1\u0000' } }),
    file: 'manifests/web.yaml',
    field: 'kapps[0].sources[0].options.branch',
  },
  {
    name: 'a path inside the repository with ..',
    source: (repo) => ({ uri: `${repo}//kapps/../../k#v1` }),
    file: 'manifests/web.yaml',
    field: 'kapps[0].sources[0].uri',
  },
];

function hostileProject(c: HostileCase) {
  const p = fixtureProject();
  const repo = gitRepo(p);
  const marker = path.join(p.root, 'pwned');
  const extra = c.stack?.(marker) ?? {};
  p.write('manifests/web.yaml', { kapps: [{ id: 'k', sources: [c.source(repo, marker)] }] });
  p.write('stacks.yaml', {
    dev: {
      provider: 'local',
      cluster: 'c',
      ...(extra.vars ? { vars: extra.vars } : {}),
      manifests: [{ uri: 'manifests/web.yaml', ...(extra.versions ? { versions: extra.versions } : {}) }],
    },
  });
  return { p, marker };
}

describe('hostile git sources are refused before git runs', () => {
  it.each(CASES)('$name', async (c) => {
    const { p, marker } = hostileProject(c);
    // install in plan mode, workspace create, template and validate all load the stack, and the first three fetch.
    const runs = await Promise.all([
      p.run('install'),
      p.run('workspace', ['create', p.stackFile, 'dev'], { bare: true }),
      p.run('template'),
      p.run('validate'),
    ]);
    for (const r of runs) {
      const out = r.stdout + r.stderr;
      expect(r.code, out).toBe(1);
      expect(r.stderr, out).toMatch(new RegExp(`(^|\\n)${c.file.replace('.', '\\.')}:\\d+:\\d+: error: `));
      expect(r.stderr, out).toContain('is refused');
      expect(r.stderr, out).toContain(c.field);
      expect(out).not.toMatch(/\n {4}at /);
    }
    expect(existsSync(marker)).toBe(false);
    expect(p.exists('.kapps-workspace/dev/web/k/.sugarkube')).toBe(false);
  });
});

describe('git sources that are fine', () => {
  it('a templated options.branch is rendered with the variables before git gets it', async () => {
    const p = fixtureProject();
    const repo = gitRepo(p);
    p.write('manifests/web.yaml', {
      kapps: [{ id: 'k', sources: [{ uri: `${repo}//kapps/k#nope`, options: { branch: '{{ .myref }}' } }] }],
    });
    p.write('stacks.yaml', {
      dev: { provider: 'local', cluster: 'c', vars: { myref: 'v1' }, manifests: [{ uri: 'manifests/web.yaml' }] },
    });
    const ws = await p.run('workspace', ['create', p.stackFile, 'dev'], { bare: true });
    expect(ws.code, ws.stderr).toBe(0);
    expect(ws.stdout).toContain(`source k: ${repo}//kapps/k#v1\n`);
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.trace.filter((l) => l.event === 'start').map((l) => l.tag)).toEqual(['v1']);
  });

  it('a ref named like a file in the repository is fetched as the ref', async () => {
    const p = fixtureProject();
    const repo = gitRepo(p);
    writeFileSync(path.join(repo, 'main'), 'a file named main\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'file');
    p.write('manifests/web.yaml', { kapps: [{ id: 'k', sources: [{ uri: `${repo}//kapps/k#main` }] }] });
    p.write('stacks.yaml', { dev: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/web.yaml' }] } });
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.trace.filter((l) => l.event === 'start').map((l) => l.tag)).toEqual(['v1']);
  });
});
