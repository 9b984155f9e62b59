/**
 * What a new user meets in the first hour, on the built CLI: no success reported for kapps that were not read
 * (missing git sources are fetched, or --no-fetch fails listing them), dry runs of the README's sample on a fresh
 * copy, `<no value>` stopping an apply before anything runs, Sugarkube actions warned about, the project a release
 * is recorded under, and the rough edges of issue 8 §5.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { cleanupProjects, fake, fixtureProject, kapp, type FixtureProject } from '../support/project.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const temps: string[] = [];
afterAll(() => {
  cleanupProjects();
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): void {
  const r = spawnSync(
    'git',
    ['-c', 'user.name=kapps', '-c', 'user.email=kapps@example.com', '-c', 'init.defaultBranch=main', ...args],
    { cwd, encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
}

/** A project whose kapp web:k comes from a local git repository (tag v1) holding its sugarkube.yaml. */
function gitProject(): FixtureProject {
  const p = fixtureProject();
  const repo = path.join(p.root, 'repos', 'charts.git');
  p.write(path.join(repo, 'kapps', 'k', 'sugarkube.yaml'), {
    run_units: { main: { plan_install: [fake('plan', 'from-git')], apply_install: [fake('apply', 'from-git')] } },
  });
  git(repo, 'init', '-q');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'v1');
  git(repo, 'tag', 'v1');
  p.write('manifests/web.yaml', { kapps: [{ id: 'k', sources: [{ uri: `${repo}//kapps/k#v1` }] }] });
  p.write('stacks.yaml', { dev: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/web.yaml' }] } });
  return p;
}

describe('kapps whose git sources are not in the workspace', () => {
  it('validate fetches them and then checks what they run', async () => {
    const p = gitProject();
    const r = await p.run('validate', ['-v']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Fetching k for web:k (not in the workspace)...');
    expect(r.stdout).toContain('* web:k\n    found kapps-fake');
    expect(r.stdout).toContain('All 1 kapp(s) validated');
    expect(p.exists('.kapps-workspace/dev/web/k/k/sugarkube.yaml')).toBe(true);
  });

  it('validate --no-fetch fails listing the kapps not read and the command that fetches them', async () => {
    const p = gitProject();
    const r = await p.run('validate', ['--no-fetch']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `kapps: 1 kapp(s) not read: their git sources are not in the workspace ${p.workspace} (--no-fetch)\n` +
        '  web:k\n' +
        `fetch them with: kapps workspace create --no-update ${p.stackFile} dev\n` +
        '(or run without --no-fetch, which fetches missing sources first)\n',
    );
    expect(existsSync(p.workspace)).toBe(false);
  });

  it('install -n fetches them and shows the steps they would run', async () => {
    const p = gitProject();
    const r = await p.run('install', ['-n', '--reporter', 'plain']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('[web:k] plan_install/plan would run: kapps-fake --tag from-git');
    expect(r.trace).toEqual([]);
  });

  it('generate, graph, vars and install -n with --no-fetch fail the same way', async () => {
    const p = gitProject();
    for (const args of [['generate'], ['graph'], ['vars'], ['install', '-n']]) {
      const [command = '', ...rest] = args;
      const r = await p.run(command, [...rest, '--no-fetch']);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).toContain('1 kapp(s) not read');
    }
  });
});

describe("dry runs of the README's sample on a fresh copy", () => {
  it('install -n works with no workspace, says which templates it would write, and writes nothing', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'kapps-fresh-'));
    temps.push(root);
    const demo = path.join(root, 'samples', 'demo');
    cpSync(path.join(REPO, 'samples', 'demo'), demo, {
      recursive: true,
      filter: (src) => !src.includes('.kapps-workspace'),
    });
    cpSync(path.join(REPO, 'kapps'), path.join(root, 'kapps'), { recursive: true });
    const env = { KAPPS_HOME: path.join(root, 'home') };
    for (const args of [
      ['install', '-n'],
      ['install', '-n', '--one-shot'],
      ['template', '-n'],
    ]) {
      const r = await runCli([...args, 'samples/demo/stacks.yaml', 'local', '--reporter', 'plain'], {
        cwd: root,
        env,
      });
      expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).toBe(0);
      const ws = path.join(demo, '.kapps-workspace', 'local');
      expect(r.stdout).toContain(
        `[web:site] template 'page' would be written to ${path.join(ws, 'web', 'site', 'static-site', '_generated_page.html')}`,
      );
      expect(existsSync(ws)).toBe(false);
    }
  });
});

describe('<no value> in a step', () => {
  const project = () =>
    fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp('k', {
              plan_install: [fake('plan', 'plan', ['--stdout', 'v={{ .kapp.vars.missing }}'])],
              apply_install: [fake('apply', 'apply', ['--stdout', 'v={{ .kapp.vars.missing }}'])],
            }),
            kapp('env', {
              apply_install: [fake('apply', 'env', [], { env_vars: { TOKEN: '{{ .kapp.vars.token }}' } })],
            }),
          ],
        },
      },
    });

  it('is an error before anything runs in install -y and --one-shot', async () => {
    const p = project();
    for (const flag of ['-y', '--one-shot']) {
      const r = await p.run('install', [flag, '--reporter', 'plain']);
      expect(r.code, flag).toBe(1);
      expect(r.trace, flag).toEqual([]);
      expect(r.stderr).toContain(
        "error: step 'apply' of run unit 'main' (apply_install) in kapp 'web:k': its args render <no value>",
      );
      expect(r.stderr).toContain(
        "error: step 'apply' of run unit 'main' (apply_install) in kapp 'web:env': its env TOKEN renders <no value>",
      );
      expect(r.stderr).toContain('--allow-no-value runs it anyway');
    }
    // Nothing was recorded as a release either.
    expect((await p.run('release', ['list', p.stackFile, 'dev'], { bare: true })).stdout).toContain('No releases');
  });

  it('is checked when a step runs, so a step reading an output loaded by an earlier step runs under -y', async () => {
    const p = fixtureProject({
      manifests: {
        web: {
          kapps: [
            kapp(
              'db',
              {
                apply_install: [
                  fake('write', 'write', ['--write-file', 'conn.json', '{"url":"db://x"}'], { load_outputs: true }),
                  fake('use', 'use', ['--stdout', 'url={{ .outputs.this.conn.url }}']),
                  fake('later', 'later', ['--stdout', 'v={{ .kapp.vars.missing }}']),
                ],
              },
              { outputs: [{ id: 'conn', path: 'conn.json', format: 'json' }] },
            ),
          ],
        },
      },
    });
    const r = await p.run('install', ['-y', '--reporter', 'plain']);
    expect(r.code).toBe(1);
    // The step that reads the loaded output ran with it; the one with a missing variable did not run.
    expect(r.trace.filter((t) => t.event === 'start').map((t) => t.args.join(' '))).toEqual([
      '--tag write --write-file conn.json {"url":"db://x"}',
      '--tag use --stdout url=db://x',
    ]);
    expect(r.stdout + r.stderr).toContain(
      "step 'later' of run unit 'main' (apply_install) in kapp 'web:db': its args render <no value>",
    );
  });

  it('is a warning in plan mode, and --allow-no-value runs it as Sugarkube did', async () => {
    const p = project();
    const plan = await p.run('install', ['--reporter', 'plain']);
    expect(plan.code, plan.stdout).toBe(0);
    expect(plan.stderr).toContain("warning: step 'plan' of run unit 'main' (plan_install) in kapp 'web:k'");
    expect(plan.trace.filter((t) => t.event === 'start').map((t) => t.args.join(' '))).toEqual([
      '--tag plan --stdout v=<no value>',
    ]);
    const r = await p.run('install', ['-y', '--allow-no-value', '--reporter', 'plain']);
    expect(r.code, r.stderr).toBe(0);
    expect(
      r.trace
        .filter((t) => t.event === 'start')
        .map((t) => t.args.join(' '))
        .sort(),
    ).toEqual(['--tag apply --stdout v=<no value>', '--tag env']);
  });
});

describe('Sugarkube actions', () => {
  const SAMPLE = fileURLToPath(new URL('../fixtures/sugarkube-sample', import.meta.url));
  const ARGS = ['stacks/web.yaml', 'local-web', 'workspace'];

  it('are warned about once per kapp and action, naming the flag that silences the warning', async () => {
    const r = await runCli(['graph', ...ARGS], { cwd: SAMPLE });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.split('\n').filter((l) => l.includes('warning:'));
    expect(lines).toEqual([
      "manifests/web/prelaunch.yaml:25:9: warning: kapp prelaunch:public-hosted-zone: post_install_actions 'cluster_update' is not run: kapps runs no Sugarkube actions",
      "manifests/web/prelaunch.yaml:27:9: warning: kapp prelaunch:public-hosted-zone: pre_delete_actions 'cluster_delete' is not run: kapps runs no Sugarkube actions",
      "manifests/web/prelaunch.yaml:35:9: warning: kapp prelaunch:no-op: post_install_actions 'cluster_update' is not run: kapps runs no Sugarkube actions",
      "manifests/web/prelaunch.yaml:37:9: warning: kapp prelaunch:no-op: pre_delete_actions 'cluster_delete' is not run: kapps runs no Sugarkube actions",
    ]);
    expect(r.stderr.match(/hint: --no-actions silences this warning/g)).toHaveLength(4);
  });

  it('--no-actions silences the warnings', async () => {
    const r = await runCli(['graph', ...ARGS, '--no-actions'], { cwd: SAMPLE });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
  });
});

describe('the project a release is recorded under', () => {
  /** Two projects in Sugarkube's layout (`<project>/stacks/`, `<project>/sugarkube-conf.yaml`), one KAPPS_HOME. */
  function twoProjects() {
    const p = fixtureProject();
    for (const name of ['alpha', 'beta']) {
      p.write(`${name}/sugarkube-conf.yaml`, { num_workers: 2 });
      p.write(`${name}/manifests/m.yaml`, { kapps: [kapp(name, { apply_install: [fake('apply', name)] })] });
      p.write(`${name}/stacks/dev.yaml`, {
        dev: { provider: 'local', cluster: 'c', manifests: [{ uri: '../manifests/m.yaml' }] },
      });
    }
    const cli = (args: string[]) => runCli(args, { cwd: p.dir, env: p.env });
    return { p, cli };
  }

  it('is the folder of sugarkube-conf.yaml, so projects whose stacks live in stacks/ do not share a history', async () => {
    const { cli } = twoProjects();
    const a = await cli(['install', '-y', 'alpha/stacks/dev.yaml', 'dev', '--reporter', 'plain']);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toContain('Recorded as release 1 of alpha/dev (project from the folder of sugarkube-conf.yaml)');
    const preview = await cli(['install', 'beta/stacks/dev.yaml', 'dev', '--reporter', 'plain']);
    expect(preview.stderr).toContain('Preview against no previous release');
    expect(preview.stderr).not.toContain('Delete');
    const b = await cli(['install', '-y', 'beta/stacks/dev.yaml', 'dev', '--reporter', 'plain']);
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toContain('Recorded as release 1 of beta/dev');
    const list = await cli(['release', 'list', 'alpha/stacks/dev.yaml', 'dev']);
    expect(list.code).toBe(0);
    expect(list.stderr).toMatch(/^Releases of alpha\/dev \(project from the folder of sugarkube-conf.yaml\) in /);
    expect(list.stdout.split('\n').filter((l) => /^\d/.test(l))).toHaveLength(1);
  });

  it('a history under the former default (the stack folder) stays readable, and kapps says how', async () => {
    const { cli } = twoProjects();
    const old = await cli(['install', '-y', 'alpha/stacks/dev.yaml', 'dev', '--project', 'stacks']);
    expect(old.code, old.stderr).toBe(0);
    const list = await cli(['release', 'list', 'alpha/stacks/dev.yaml', 'dev']);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^No releases of alpha\/dev in /);
    expect(list.stderr).toBe(
      'warning: no release of alpha/dev (project named after the folder of sugarkube-conf.yaml), but 1 release(s) ' +
        "of stacks/dev, recorded under the project kapps used to default to (the stack file's folder). To go on " +
        'with that history pass --project stacks, or set `project: stacks` in sugarkube-conf.yaml\n',
    );
    const withFlag = await cli(['release', 'list', 'alpha/stacks/dev.yaml', 'dev', '--project', 'stacks']);
    expect(withFlag.stdout.split('\n').filter((l) => /^1 +install +succeeded/.test(l))).toHaveLength(1);
    // A run says so too, before it starts a new history.
    const run = await cli(['install', '-y', 'alpha/stacks/dev.yaml', 'dev', '--reporter', 'plain']);
    expect(run.stderr).toContain('warning: no release of alpha/dev');
  });

  it('release commands accept the workspace directory like every stack command', async () => {
    const { cli } = twoProjects();
    for (const verb of [['list'], ['show'], ['unlock', '-y']]) {
      const r = await cli(['release', ...verb, 'alpha/stacks/dev.yaml', 'dev', 'alpha/ws']);
      expect(r.stderr, verb.join(' ')).not.toContain('Unknown argument');
      expect(r.code === 0 || r.stderr.includes('has no releases'), `${verb.join(' ')}: ${r.stderr}`).toBe(true);
    }
  });
});

describe('kapps generate --parents', () => {
  it('marks the ancestors it processes as selected: the spec says what will run', async () => {
    const p = fixtureProject({
      manifests: {
        m: {
          kapps: [
            kapp('db', { apply_install: [fake('apply', 'db')] }),
            kapp('web', { apply_install: [fake('apply', 'web')] }, { depends_on: [{ id: 'db' }] }),
          ],
        },
      },
    });
    const selected = async (args: string[]) => {
      const r = await p.run('generate', ['-i', 'm:web', '-o', 'json', ...args]);
      expect(r.code, r.stderr).toBe(0);
      const spec = JSON.parse(r.stdout) as { kapps: { id: string; selected: boolean }[] };
      return spec.kapps.map((k) => `${k.id} ${String(k.selected)}`);
    };
    expect(await selected(['--parents'])).toEqual(['m:db true', 'm:web true']);
    expect(await selected([])).toEqual(['m:db false', 'm:web true']);
  });
});

describe('a KAPPS_HOME that cannot hold directories', () => {
  it('is refused with a clear error, exit 1, before anything runs', async () => {
    const p = fixtureProject({ manifests: { m: { kapps: [kapp('k', { apply_install: [fake('apply', 'k')] })] } } });
    const under = path.join(p.root, 'a-file');
    p.write(under, 'not a directory\n');
    const cases: [string, string][] = [
      ['/proc/kapps-home', 'it is under /proc, which cannot hold its directories'],
      ['/sys/kapps-home', 'it is under /sys'],
      [path.join(under, 'home'), `${under} is not a directory`],
    ];
    for (const [home, message] of cases) {
      const r = await p.run('install', ['-y', '--reporter', 'plain'], { env: { KAPPS_HOME: home } });
      expect(r.code, home).toBe(1);
      expect(r.signal).toBe(null);
      expect(r.stderr).toContain(`kapps: the release store ${home} cannot be used: ${message}`);
      expect(r.trace).toEqual([]);
    }
  });
});
