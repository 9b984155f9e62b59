/**
 * The CLI with a runs server's project from git: `--ref` on install, delete, preview, generate and `runs submit`,
 * and the commit and trigger `kapps runs show|list` print. The built CLI against a real `kapps serve` and a bare
 * repository on disk.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { gitRemote } from '../support/git-remote.js';
import { cleanupProjects, fake, fixtureProject, kapp } from '../support/project.js';
import { startServer, stopAllServers } from '../support/server.js';

afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});

function manifest(tag: string) {
  return { kapps: [kapp('web', { apply_install: [fake('deploy', 'web', ['--stdout', tag])] })] };
}

describe('kapps --server --ref: runs of a project from git from the command line', () => {
  it('runs install, preview and generate at a ref, submits at a ref, and prints the commit and trigger', async () => {
    const p = fixtureProject({ name: 'infra', manifests: { shop: manifest('v1') } });
    const remote = gitRemote(p);
    const first = remote.head();
    const feature = remote.commit('Feature work', { 'manifests/shop.yaml': manifest('feature') }, 'feature');
    const config = p.write(
      '../server.yaml',
      `projects:\n  - name: shop\n    repo:\n      url: ${remote.url}\n      path: stacks.yaml\n`,
    );
    const server = await startServer({
      args: ['--config', config, '--data-dir', path.join(p.root, 'data')],
      env: p.env,
      cwd: p.root,
    });
    const kapps = (...args: string[]) => runCli(args, { cwd: p.dir, env: p.env });
    const remoteArgs = ['--server', server.url, '--project', 'shop'];

    const generated = await kapps('generate', p.stackFile, 'dev', ...remoteArgs, '--ref', 'feature');
    expect(generated.stderr).toMatch(/^Run \S+: generate of shop\/dev on http:\/\/127\.0\.0\.1:\d+\n$/);
    expect(generated.code).toBe(0);
    expect(generated.stdout).toContain('feature');
    expect(generated.stdout).not.toContain('v1');

    const previewed = await kapps('preview', p.stackFile, 'dev', ...remoteArgs, '--ref', first, '-o', 'json');
    expect(previewed.code).toBe(0);
    expect(JSON.parse(previewed.stdout)).toMatchObject({ basedOnRevision: null, hasChanges: true });

    const installed = await kapps('install', p.stackFile, 'dev', '-y', ...remoteArgs, '--ref', 'feature');
    expect(installed.code).toBe(0);
    expect(installed.stdout).toMatch(/Recorded as release 1 of stack dev by run \S+ on http/);
    const runId = /^Run (\S+): apply/m.exec(installed.stderr)?.[1] ?? '';
    expect(
      p
        .traceLines()
        .filter((l) => l.event === 'start')
        .map((l) => l.args.at(-1)),
    ).toEqual(['feature']);

    const shown = await kapps('runs', 'show', runId, '--server', server.url);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`\ncommit:          ${feature.slice(0, 12)} Feature work\n`);
    expect(shown.stdout).toContain('\nref:             feature\n');
    expect(shown.stdout).toContain('\nauthor:          Ada Lovelace <ada@example.com>\n');
    expect(shown.stdout).toContain('\ntrigger:         api feature\n');

    const submitted = await kapps(
      'runs',
      'submit',
      'preview',
      'dev',
      '--project',
      'shop',
      '--ref',
      'main',
      '--server',
      server.url,
    );
    expect(submitted.code).toBe(0);
    expect(submitted.stdout).toContain(`\ncommit:          ${first.slice(0, 12)} First stack\n`);
    expect(submitted.stdout).toContain('\ntrigger:         api main\n');

    const listed = await kapps('runs', 'list', '--server', server.url);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +TYPE +STACK +STATUS +BY +TRIGGER +CREATED +RELEASE +COMMIT$/);
    expect(lines.slice(1).every((l) => / api /.test(l))).toBe(true);
    expect(lines.filter((l) => l.endsWith(`${feature.slice(0, 12)} Feature work`))).toHaveLength(2);
    expect(lines.filter((l) => l.endsWith(`${first.slice(0, 12)} First stack`))).toHaveLength(2);
  });

  it('refuses --ref without --server, and a ref the server would refuse, before anything is sent', async () => {
    const p = fixtureProject({ manifests: { shop: manifest('v1') } });
    for (const command of ['install', 'delete', 'preview', 'generate']) {
      const r = await p.run(command, ['--ref', 'main']);
      expect(r.stderr).toBe(
        'kapps: --ref needs --server: a local run reads the stack file as it is\nRun `kapps --help` for usage.\n',
      );
      expect(r.code).toBe(2);
    }
    const option = await p.run('generate', [
      '--server',
      'http://127.0.0.1:9',
      '--project',
      'shop',
      '--ref=--upload-pack=x',
    ]);
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/^kapps: --ref "--upload-pack=x" is not a ref the server takes: /);
    expect(p.traceLines()).toEqual([]);
  });
});
