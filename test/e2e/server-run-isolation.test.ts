/**
 * What a run of `kapps serve` shares with the runs beside it and with the server: nothing. Tried as an attacker
 * would: two runs at once with values derived from their secrets, a stack whose templates ask for the server's
 * own environment and files.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupProjects, fixtureProject, kapp, tempDir } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun } from '../support/server.js';

afterEach(async () => {
  await stopAllServers();
  cleanupProjects();
});

/** Every file under `dir`, read as text. */
function allText(dir: string): string {
  let text = '';
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    text += statSync(file).isDirectory() ? allText(file) : readFileSync(file, 'utf8');
  }
  return text;
}

const SECRET = 'run-secret-7fq2-zx9w';

describe('two runs at once', () => {
  it('each keeps its own sensitivity watch: a value derived from a secret never reaches a log', async () => {
    const gates = tempDir('kapps-gates-');
    // Stack `one` waits until `two` is running its kapps; `two` then waits until the test saw `one` finish, so the
    // derived values of `two` are rendered after `one` ended.
    const p = fixtureProject({
      stacks: {
        one: {
          provider: 'local',
          cluster: 'c',
          vars: { wait: 'two-started' },
          manifests: [{ uri: 'manifests/m.yaml' }],
        },
        two: { provider: 'local', cluster: 'c', vars: { wait: 'go' }, manifests: [{ uri: 'manifests/m.yaml' }] },
      },
      manifests: {
        m: {
          kapps: [
            kapp('gate', {
              apply_install: [
                {
                  name: 'gate',
                  command: 'kapps-fake',
                  args: `--write-file ${gates}/{{ .stack.name }}-started x --wait-file ${gates}/{{ .wait }} 60000`,
                },
              ],
            }),
            kapp(
              'db',
              {
                output: [
                  {
                    name: 'output',
                    command: 'sh',
                    args: `-c 'printf "{\\"token\\": \\"%s-%s\\"}" "$E2E_SECRET" "$1" > out.json' sh '{{ .stack.name }}'`,
                  },
                ],
              },
              {
                depends_on: [{ id: 'gate' }],
                outputs: [{ id: 'creds', path: 'out.json', format: 'json', sensitive: true }],
              },
            ),
            kapp(
              'api',
              {
                apply_install: [
                  {
                    name: 'echo',
                    command: 'sh',
                    args: `-c 'echo "got $1"; echo "b64 $2"' sh '{{ .outputs.db.creds.token | upper }}' '{{ b64enc .outputs.db.creds.token }}'`,
                  },
                ],
              },
              { depends_on: [{ id: 'db' }] },
            ),
          ],
        },
      },
    });
    const server = await startServer({
      args: ['--project', `shop=${p.stackFile}`, '--backend', p.kappsHome],
      env: { ...p.env, E2E_SECRET: SECRET },
      cwd: p.dir,
    });
    const c = api(server.url);
    const one = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'one' });
    const two = await c.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'two' });
    expect([one.status, two.status]).toEqual([202, 202]);
    const first = await waitForRun(c, one.body.id!, undefined, 60_000);
    expect(first.status).toBe('succeeded');
    // `one` is over; `two` is still waiting at its gate with its watch set before `one` ended.
    expect((await c.get(`/api/v1/runs/${two.body.id}`)).body.status).toBe('running');
    writeFileSync(path.join(gates, 'go'), 'x');
    const second = await waitForRun(c, two.body.id!, undefined, 60_000);
    expect(second.status).toBe('succeeded');

    const forms = ['one', 'two'].flatMap((stack) => {
      const token = `${SECRET}-${stack}`;
      return [token, token.toUpperCase(), Buffer.from(token).toString('base64')];
    });
    for (const run of [first, second]) {
      const log = await c.get(`/api/v1/runs/${run.id}/logs`);
      const text = JSON.stringify(log.body);
      // The steps printed the derived values: the log shows them redacted.
      expect(text).toContain('got <sensitive>');
      expect(text).toContain('b64 <sensitive>');
      for (const form of forms) expect(text, form).not.toContain(form);
    }
    const stored = allText(p.kappsHome);
    for (const form of forms) expect(stored, form).not.toContain(form);
  });
});
