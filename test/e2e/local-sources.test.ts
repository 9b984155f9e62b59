/**
 * A Sugarkube project run from local copies without editing its manifests: the sample project's git sources
 * (https://github.com/sugarkube/kapps.git, …/sample-project.git) substituted by `source_substitutions` in
 * sugarkube-conf.yaml (a local git repository, fetched at each source's ref) and by `--source-sub` (a plain folder,
 * copied). Nothing here reaches the network.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const SAMPLE = fileURLToPath(new URL('../fixtures/sugarkube-sample', import.meta.url));
const root = mkdtempSync(path.join(os.tmpdir(), 'kapps-local-sources-'));
const project = path.join(root, 'project');
const kappsRepo = path.join(root, 'kapps');
const sampleData = path.join(root, 'sample-project');
afterAll(() => rmSync(root, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync(
    'git',
    ['-c', 'user.name=kapps', '-c', 'user.email=kapps@example.com', '-c', 'init.defaultBranch=master', ...args],
    { cwd, encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** Where each kapp of the fixture's workspace lives in the kapps library, and the tag the manifests name. */
const LIBRARY: [string, string, string][] = [
  ['prelaunch/terraform-bucket/terraform-bucket', 'incubator/terraform-bucket', 'terraform-bucket-0.1.0'],
  ['prelaunch/public-hosted-zone/public-hosted-zone', 'incubator/public-hosted-zone', 'public-hosted-zone-0.1.0'],
  ['prelaunch/no-op/no-op', 'stable/no-op', 'no-op-1.0.0'],
  ['bootstrap/tiller/tiller', 'incubator/tiller', 'tiller-0.1.0'],
  ['bootstrap/cert-manager/cert-manager', 'incubator/cert-manager', 'cert-manager-0.2.0'],
  ['bootstrap/nginx1/nginx-ingress', 'incubator/nginx-ingress', 'nginx-ingress-0.1.0'],
  ['wordpress/site1/wordpress', 'incubator/wordpress', 'wordpress-0.1.0'],
];

beforeAll(() => {
  // The project, as moved over: no workspace.
  cpSync(SAMPLE, project, { recursive: true, filter: (src) => !src.startsWith(path.join(SAMPLE, 'workspace')) });
  // A local git repository standing in for a checkout of sugarkube/kapps.
  mkdirSync(kappsRepo);
  git(kappsRepo, 'init', '-q');
  for (const [from, to] of LIBRARY)
    cpSync(path.join(SAMPLE, 'workspace', from), path.join(kappsRepo, to), { recursive: true });
  git(kappsRepo, 'add', '-A');
  git(kappsRepo, 'commit', '-q', '-m', 'kapps');
  for (const [, , tag] of LIBRARY) git(kappsRepo, 'tag', tag);
  // A plain folder standing in for sugarkube/sample-project's demo data.
  for (const site of ['site1', 'site2']) {
    const dir = path.join(sampleData, 'demo-data', 'wordpress', site);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'data.sql'), `-- ${site}\n`);
  }
  appendFileSync(
    path.join(project, 'sugarkube-conf.yaml'),
    '\nsource_substitutions:\n  - prefix: https://github.com/sugarkube/kapps.git\n    replace: ../kapps\n',
  );
});

// The sample's Sugarkube actions (cluster_update, …) are warned about unless --no-actions: this test is about sources.
const ARGS = ['stacks/web.yaml', 'local-web', '--no-actions'];
const SUB = ['--source-sub', `https://github.com/sugarkube/sample-project.git=${path.relative(project, sampleData)}`];
const WS = path.join(project, 'stacks', '.kapps-workspace', 'local-web');

describe('the sample project from local copies', () => {
  it('workspace create fetches the kapps from the substituted repository and copies the plain folder', async () => {
    const r = await runCli(['workspace', 'create', ...ARGS, ...SUB], { cwd: project, killAfterMs: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'Fetching bootstrap:tiller source tiller: ' + kappsRepo + '//incubator/tiller#tiller-0.1.0',
    );
    const checkout = path.join(WS, 'bootstrap/tiller/.sugarkube/github.com-sugarkube-kapps-tiller');
    expect(git(checkout, 'remote', 'get-url', 'origin')).toBe(kappsRepo);
    expect(existsSync(path.join(WS, 'bootstrap/tiller/tiller/sugarkube.yaml'))).toBe(true);
    expect(readFileSync(path.join(WS, 'wordpress/site1/data/data.sql'), 'utf8')).toBe('-- site1\n');
  });

  it('generate and validate read the kapps from the workspace, with no warning', async () => {
    const r = await runCli(['generate', ...ARGS, ...SUB, '-o', 'json'], { cwd: project });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const spec = JSON.parse(r.stdout) as { kapps: { id: string; phases: Record<string, { name: string }[]> }[] };
    const tiller = spec.kapps.find((k) => k.id === 'bootstrap:tiller');
    expect(tiller?.phases.apply_install?.map((s) => s.name)).toEqual(['install RBAC', 'install tiller']);
    // Fake commands, so that validate finds every command the kapps run.
    const bin = path.join(root, 'bin');
    mkdirSync(bin);
    for (const name of ['helm', 'kubectl', 'echo', 'find']) {
      writeFileSync(path.join(bin, name), '#!/bin/sh\n');
      chmodSync(path.join(bin, name), 0o755);
    }
    const v = await runCli(['validate', ...ARGS, ...SUB], { cwd: project, env: { PATH: bin } });
    expect(v.stderr).toBe('');
    expect(v.stdout).toContain('* bootstrap:tiller requires: kubectl, helm\n');
    expect(v.stdout).toContain('All 5 kapp(s) validated');
    expect(v.code).toBe(0);
  });

  it('a substitution to a path that does not exist is an error naming the kapp, source and substitution', async () => {
    const r = await runCli(
      ['generate', ...ARGS, '--source-sub', 'https://github.com/sugarkube/sample-project.git=/nonexistent/x'],
      {
        cwd: project,
      },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "kapp wordpress:site1: source 'data': /nonexistent/x does not exist or is not a folder (substituted for https://github.com/sugarkube/sample-project.git by --source-sub)",
    );
  });

  it('a --source-sub without = is a usage error', async () => {
    const r = await runCli(['generate', ...ARGS, '--source-sub', 'https://github.com/sugarkube'], { cwd: project });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('kapps: --source-sub https://github.com/sugarkube: write PREFIX=REPLACEMENT');
  });
});
