/**
 * A repository behind HTTPS-style credentials: a real git server over HTTP on loopback (`git http-backend`) that
 * answers only requests carrying the token. A project with `token_env` runs; one without fails with git's reason;
 * the token (and its base64 form) is in no log line, record, API answer or server output, and steps never see it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Run } from '../../src/api/index.js';
import { gitHttpServer, type GitHttpServer } from '../support/git-http.js';
import { gitRemote } from '../support/git-remote.js';
import { cleanupProjects, fake, fixtureProject, kapp } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun } from '../support/server.js';

const TOKEN = 'tok-9f3b2c7e61d04a5b';
let git: GitHttpServer | undefined;

afterEach(async () => {
  await stopAllServers();
  await git?.close();
  git = undefined;
  cleanupProjects();
});

/** Every file under `dir`, as text. */
function filesUnder(dir: string): { file: string; text: string }[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((rel) => path.join(dir, rel))
    .filter((file) => statSync(file).isFile())
    .map((file) => ({ file, text: readFileSync(file).toString('latin1') }));
}

describe('kapps serve: a repository that needs a token (token_env)', () => {
  it('fetches with the token, fails clearly without it, and never shows it', async () => {
    const p = fixtureProject({
      name: 'infra',
      manifests: {
        shop: {
          kapps: [
            kapp('web', { apply_install: [fake('deploy', 'web', ['--print-env', 'GIT_TOKEN', '--stdout', 'v1'])] }),
          ],
        },
      },
    });
    const remote = gitRemote(p);
    git = await gitHttpServer(path.dirname(remote.bare), TOKEN);
    const url = `${git.url}/remote.git`;
    const config = p.write(
      '../server.yaml',
      [
        'projects:',
        '  - name: shop',
        '    repo:',
        `      url: ${url}`,
        '      path: stacks.yaml',
        '      token_env: GIT_TOKEN',
        '  - name: open',
        '    repo:',
        `      url: ${url}`,
        '      path: stacks.yaml',
        '',
      ].join('\n'),
    );
    const dataDir = path.join(p.root, 'data');
    const server = await startServer({
      args: ['--config', config, '--data-dir', dataDir],
      env: { ...p.env, GIT_TOKEN: TOKEN },
      cwd: p.root,
    });
    const c = api(server.url);
    const answers: string[] = [];
    const get = async (route: string) => {
      const r = await c.get<unknown>(route);
      answers.push(typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
      return r;
    };

    const submitted = await c.post<Run>('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    answers.push(JSON.stringify(submitted.body));
    expect(submitted.status).toBe(202);
    expect(submitted.body.commit).toMatchObject({ repo: url, sha: remote.head() });
    const run = await waitForRun(c, submitted.body.id);
    expect(run.error).toBeNull();
    expect(run.status).toBe('succeeded');
    expect(git.requests.filter((r) => r.authorized).length).toBeGreaterThan(0);
    // The step's environment has no token.
    const logs = await get(`/api/v1/runs/${run.id}/logs`);
    expect(JSON.stringify(logs.body)).toContain('GIT_TOKEN=<unset>');

    // Without the token, the server answers 503 with git's reason, naming the repository.
    const refused = await c.post('/api/v1/runs', { type: 'apply', project: 'open', stack: 'dev' });
    answers.push(JSON.stringify(refused.body));
    expect(refused.status).toBe(503);
    expect(refused.body.detail).toBe(
      `${url}: could not read its default branch: fatal: could not read Username for '${git.url}': terminal prompts ` +
        'disabled (the repository asks for credentials: name the variable holding an HTTPS token in `repo.token_env`, ' +
        'or give the user the server runs as an SSH key or a credential helper)',
    );

    for (const route of [
      '/api/v1/projects',
      `/api/v1/runs/${run.id}`,
      `/api/v1/runs/${run.id}/result`,
      '/api/v1/runs',
      '/api/v1/projects/shop/stacks/dev/releases',
      '/api/v1/projects/shop/stacks/dev/releases/1',
    ])
      expect((await get(route)).status, route).toBe(200);
    expect(JSON.parse(answers.at(-1) ?? '{}')).toMatchObject({ source: { repo: url, commit: remote.head() } });
    await server.stop();

    const secrets = [
      TOKEN,
      Buffer.from(`x-access-token:${TOKEN}`).toString('base64'),
      Buffer.from(TOKEN).toString('base64'),
    ];
    const places = [
      { file: 'server stdout', text: server.stdout() },
      { file: 'server stderr', text: server.stderr() },
      ...answers.map((text, i) => ({ file: `answer ${i}`, text })),
      ...filesUnder(server.backend ?? ''),
      ...filesUnder(dataDir),
    ];
    expect(places.length).toBeGreaterThan(10);
    expect(places.filter((p) => p.file.endsWith('.git/config'))).not.toEqual([]);
    for (const { file, text } of places) for (const secret of secrets) expect(text.includes(secret), file).toBe(false);
  });
});
