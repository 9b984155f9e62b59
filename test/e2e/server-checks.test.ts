/**
 * Run checks on a real `kapps serve`: a command check (a small Node script of the project, judging the preview
 * document it reads on stdin) and an HTTP check (a Node server on loopback in the test). A failing mandatory check
 * fails the run with its message and nothing is applied; an advisory one is only shown; an endpoint passes and fails
 * as it answers; a check that times out fails the run.
 */
import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { LogChunk, Run } from '../../src/api/index.js';
import { freshDatabases } from '../support/pg.js';
import { markersKilledAfterEach, survivors, waitForProcess } from '../support/processes.js';
import { cleanupProjects, fake, fixtureProject, kapp, type FixtureProject } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun, type ApiClient } from '../support/server.js';

const KEY = 'check-endpoint-key-81c4e2';
const newMarker = markersKilledAfterEach('kapps-check-e2e');
const closers: (() => Promise<void>)[] = [];
const databases = freshDatabases('kapps_checks_e2e');
afterAll(() => databases.dropAll());

afterEach(async () => {
  await stopAllServers();
  for (const close of closers.splice(0)) await close();
  cleanupProjects();
});

/**
 * Reads the preview document on stdin; fails (exit 1) naming each kapp that would change, unless the project holds
 * `checks/allow` (it runs in the project's folder).
 */
const POLICY = `
import { existsSync } from 'node:fs';
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const doc = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const changing = doc.kapps.filter((k) => k.action !== 'UnChanged');
console.log('checked ' + doc.project + '/' + doc.stack + ': ' + doc.kapps.length + ' kapp(s)');
for (const k of changing) console.error('FAIL - ' + k.id + ' would ' + k.action.toLowerCase() + ' on ' + doc.stack);
process.exitCode = changing.length > 0 && !existsSync('checks/allow') ? 1 : 0;
`;

/** Never ends by itself (its marker is in its command line, to find it). */
const HANG = `setInterval(() => {}, 1000);`;

/** A project with one kapp whose install runs a fake step, served with `checks` (YAML of the list's items). */
async function serve(checks: string, env: Record<string, string> = {}, backend?: string, extra = '') {
  const p = fixtureProject({
    manifests: {
      shop: { kapps: [kapp('web', { apply_install: [fake('deploy', 'web', ['--print-env', 'CHECK_KEY'])] })] },
    },
    files: { 'checks/policy.mjs': POLICY, 'checks/hang.mjs': HANG },
  });
  const config = p.write(
    '../server.yaml',
    `projects:\n  - name: shop\n    stack_file: project/stacks.yaml\n    checks:\n${checks}${extra}`,
  );
  const server = await startServer({
    args: ['--config', config, ...(backend ? ['--backend', backend] : [])],
    env: { ...p.env, ...env },
    cwd: p.root,
  });
  return { p, server, c: api(server.url) };
}

function commandCheck(name: string, argv: string[], fields = ''): string {
  return `      - name: ${name}\n        stage: after_preview\n        command: ${JSON.stringify(argv)}\n${fields}`;
}

async function apply(c: ApiClient): Promise<Run> {
  const r = await c.post<Run>('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
  expect(r.status).toBe(202);
  return waitForRun(c, r.body.id, undefined, 60_000);
}

async function logText(c: ApiClient, id: string): Promise<string> {
  const r = await c.get<LogChunk>(`/api/v1/runs/${id}/logs?offset=0`);
  expect(r.status).toBe(200);
  return r.body.lines.map((l) => l.text).join('\n');
}

async function releases(c: ApiClient): Promise<unknown[]> {
  const r = await c.get<unknown[]>('/api/v1/projects/shop/stacks/dev/releases');
  expect(r.status).toBe(200);
  return r.body;
}

/** Whether the kapp's install step ran (the fakes trace each start). */
const deployed = (p: FixtureProject) => p.traceLines().some((t) => t.tag === 'web' && t.event === 'start');

describe('kapps serve: run checks', () => {
  it('a mandatory check that exits 1 fails the run with its message, and nothing is applied', async () => {
    const { p, c } = await serve(commandCheck('policy', [process.execPath, 'checks/policy.mjs']));
    const run = await apply(c);
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/^check policy failed: exit code 1 \| /);
    expect(run.error).toContain('FAIL - shop:web would create on dev');
    expect(run.checks).toHaveLength(1);
    expect(run.checks[0]).toMatchObject({
      name: 'policy',
      stage: 'after_preview',
      enforcement: 'mandatory',
      status: 'failed',
    });
    const [head, ...lines] = run.checks[0]?.message.split('\n') ?? [];
    expect(head).toBe('exit code 1');
    // The check read the preview the apply would have applied: the one kapp, to be created.
    expect(lines.sort()).toEqual(['FAIL - shop:web would create on dev', 'checked project/dev: 1 kapp(s)']);
    expect(deployed(p)).toBe(false);
    expect(await releases(c)).toEqual([]);
    expect(await logText(c, run.id)).toMatch(/check policy \(after_preview, mandatory\): failed in .* s: exit code 1/);
  });

  it('an advisory check that fails is shown in the run, and the run goes on', async () => {
    const { p, c } = await serve(
      commandCheck('policy', [process.execPath, 'checks/policy.mjs'], '        enforcement: advisory\n'),
    );
    const run = await apply(c);
    expect(run.status).toBe('succeeded');
    expect(run.checks).toMatchObject([
      { name: 'policy', stage: 'after_preview', enforcement: 'advisory', status: 'failed' },
    ]);
    expect(run.checks[0]?.message).toContain('FAIL - shop:web would create on dev');
    expect(deployed(p)).toBe(true);
    expect(await releases(c)).toHaveLength(1);
    expect(run.releaseRevision).toBe(1);
  });

  it('a check that passes lets the run apply', async () => {
    const { p, c } = await serve(commandCheck('policy', [process.execPath, 'checks/policy.mjs']));
    expect((await apply(c)).status).toBe('failed');
    p.write('checks/allow', '');
    const run = await apply(c);
    expect(run.status).toBe('succeeded');
    expect(run.checks).toMatchObject([{ name: 'policy', status: 'passed' }]);
    expect(run.checks[0]?.message.split('\n').sort()).toEqual([
      'FAIL - shop:web would create on dev',
      'checked project/dev: 1 kapp(s)',
      'exit code 0',
    ]);
    expect(deployed(p)).toBe(true);
    expect(await releases(c)).toHaveLength(1);
  });

  it('an HTTP check on a local endpoint passes and fails as the endpoint answers', async () => {
    const seen: { headers: IncomingHttpHeaders; raw: string }[] = [];
    let verdict: { status: string; message: string } = { status: 'passed', message: 'change ticket CHG-7 approved' };
    const endpoint: Server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        seen.push({ headers: request.headers, raw: Buffer.concat(chunks).toString('utf8') });
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(verdict));
      });
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    closers.push(
      () =>
        new Promise<void>((resolve) => {
          endpoint.closeAllConnections();
          endpoint.close(() => resolve());
        }),
    );
    const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/ticket`;
    const { p, server, c } = await serve(
      `      - name: ticket\n        stage: before_apply\n        url: ${url}\n        secret_env: CHECK_KEY\n`,
      { CHECK_KEY: KEY },
    );

    const passed = await apply(c);
    expect(passed.status).toBe('succeeded');
    expect(passed.checks).toMatchObject([
      { name: 'ticket', stage: 'before_apply', status: 'passed', message: 'change ticket CHG-7 approved' },
    ]);
    expect(deployed(p)).toBe(true);

    verdict = { status: 'failed', message: 'no change ticket for shop/dev' };
    p.write('manifests/shop.yaml', {
      kapps: [kapp('web', { apply_install: [fake('deploy', 'web', ['--print-env', 'CHECK_KEY', '--version', '2'])] })],
    });
    const failed = await apply(c);
    expect(failed.status).toBe('failed');
    expect(failed.error).toContain('check ticket failed: no change ticket for shop/dev');
    expect(failed.checks).toMatchObject([
      { name: 'ticket', status: 'failed', message: 'no change ticket for shop/dev' },
    ]);
    expect(await releases(c)).toHaveLength(1);

    // Each request was signed with the key, and carried the run and the preview it judged.
    expect(seen).toHaveLength(2);
    for (const [i, s] of seen.entries()) {
      expect(s.headers['x-kapps-signature-256']).toBe(
        `sha256=${createHmac('sha256', KEY).update(s.raw).digest('hex')}`,
      );
      expect(s.headers['x-kapps-event']).toBe('run.check');
      const body = JSON.parse(s.raw) as { run: { id: string }; preview: { kapps: { id: string; action: string }[] } };
      expect(body.run.id).toBe([passed.id, failed.id][i]);
      expect(body.preview.kapps.map((k) => [k.id, k.action])).toEqual([['shop:web', i === 0 ? 'Create' : 'Update']]);
    }
    // The key is the server's: the run's step does not see it (nor would a command check).
    expect(await logText(c, passed.id)).toContain('CHECK_KEY=<unset>');
    const shown =
      JSON.stringify([passed, failed]) +
      (await logText(c, passed.id)) +
      (await logText(c, failed.id)) +
      server.stdout() +
      server.stderr();
    expect(shown).not.toContain(KEY);
  });

  it('a check that times out fails the run, its process stopped', async () => {
    const marker = newMarker();
    const { p, c } = await serve(
      commandCheck('slow', [process.execPath, 'checks/hang.mjs', marker], '        timeout: 1s\n'),
    );
    const run = await apply(c);
    expect(run.status).toBe('failed');
    expect(run.checks).toMatchObject([{ name: 'slow', status: 'failed', message: 'timed out after 1s' }]);
    expect(run.error).toContain('check slow failed: timed out after 1s');
    expect(deployed(p)).toBe(false);
    expect(await survivors(marker)).toEqual([]);
  });

  it('cancelling a run stops its running check, and the run ends cancelled with nothing applied', async () => {
    const marker = newMarker();
    const { p, c } = await serve(commandCheck('slow', [process.execPath, 'checks/hang.mjs', marker]));
    const submitted = await c.post<Run>('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    expect(submitted.status).toBe(202);
    await waitForProcess(marker);
    expect((await c.post(`/api/v1/runs/${submitted.body.id}/cancel`)).status).toBe(200);
    const run = await waitForRun(c, submitted.body.id, undefined, 60_000);
    expect(run.status).toBe('cancelled');
    expect(await survivors(marker)).toEqual([]);
    expect(deployed(p)).toBe(false);
    expect(await releases(c)).toEqual([]);
  });

  it('a preview run is judged by the after_preview checks: a failed mandatory one fails it, and it is not applied', async () => {
    const { p, c } = await serve(commandCheck('policy', [process.execPath, 'checks/policy.mjs']));
    const submitted = await c.post<Run>('/api/v1/runs', { type: 'preview', project: 'shop', stack: 'dev' });
    expect(submitted.status).toBe(202);
    const preview = await waitForRun(c, submitted.body.id, undefined, 60_000);
    expect(preview.status).toBe('failed');
    expect(preview.checks).toMatchObject([{ name: 'policy', stage: 'after_preview', status: 'failed' }]);
    expect(preview.error).toContain('FAIL - shop:web would create on dev');
    const applyThis = await c.post<Run>('/api/v1/runs', {
      type: 'apply',
      project: 'shop',
      stack: 'dev',
      previewRunId: preview.id,
    });
    expect(applyThis.status).toBe(409);
    expect(deployed(p)).toBe(false);
    expect(await releases(c)).toEqual([]);
  });

  it('with PostgreSQL, the results of every check of both stages are kept in the run, in order', async () => {
    const { p, c } = await serve(
      commandCheck('policy', [process.execPath, 'checks/policy.mjs'], '        enforcement: advisory\n') +
        commandCheck('lint', [process.execPath, '-e', 'console.log("lint ok")']) +
        '      - name: last\n        stage: before_apply\n        command: ["true"]\n',
      {},
      await databases.create(),
    );
    const run = await apply(c);
    expect(run.status).toBe('succeeded');
    expect(run.checks.map((r) => [r.name, r.stage, r.enforcement, r.status])).toEqual([
      ['policy', 'after_preview', 'advisory', 'failed'],
      ['lint', 'after_preview', 'mandatory', 'passed'],
      ['last', 'before_apply', 'mandatory', 'passed'],
    ]);
    expect(run.checks[1]?.message).toBe('exit code 0\nlint ok');
    expect(deployed(p)).toBe(true);
  });

  describe('with approvals', () => {
    const sha = (token: string) => createHash('sha256').update(token).digest('hex');
    const gated = (checks: string) =>
      serve(
        checks,
        {},
        undefined,
        '    approvals: {required: 1}\ntokens:\n' +
          `  - {name: ci, role: apply, sha256: ${sha('ci-token-1')}}\n` +
          `  - {name: alice, role: apply, sha256: ${sha('alice-token-2')}}\n`,
      );

    it('a failed after_preview check fails the run before it waits for approvals', async () => {
      const { p, server } = await gated(commandCheck('policy', [process.execPath, 'checks/policy.mjs']));
      const run = await apply(api(server.url, 'ci-token-1'));
      expect(run.status).toBe('failed');
      expect(run.approval?.waitingSince).toBeNull();
      expect(run.checks).toMatchObject([{ name: 'policy', stage: 'after_preview', status: 'failed' }]);
      expect(deployed(p)).toBe(false);
    });

    it('a failed before_apply check fails an approved run, nothing applied', async () => {
      const { p, server } = await gated(
        commandCheck('policy', [process.execPath, 'checks/policy.mjs'], '        enforcement: advisory\n') +
          '      - name: freeze\n        stage: before_apply\n' +
          `        command: ${JSON.stringify([process.execPath, '-e', 'console.error("change freeze until Monday"); process.exitCode = 3'])}\n`,
      );
      const ci = api(server.url, 'ci-token-1');
      const submitted = await ci.post<Run>('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
      expect(submitted.status).toBe(202);
      const waiting = await waitForRun(ci, submitted.body.id, (r) => r.status === 'needs-approval', 60_000);
      // Only the after_preview check ran so far: its result is in the waiting run, for the approvers to see.
      expect(waiting.checks.map((r) => [r.name, r.status])).toEqual([['policy', 'failed']]);
      const approved = await api(server.url, 'alice-token-2').post(`/api/v1/runs/${waiting.id}/approve`, {
        comment: 'fine',
      });
      expect(approved.status).toBe(200);
      const run = await waitForRun(ci, waiting.id, undefined, 60_000);
      expect(run.status).toBe('failed');
      expect(run.error).toBe('check freeze failed: exit code 3 | change freeze until Monday');
      expect(run.checks.map((r) => [r.name, r.stage, r.status])).toEqual([
        ['policy', 'after_preview', 'failed'],
        ['freeze', 'before_apply', 'failed'],
      ]);
      expect(deployed(p)).toBe(false);
      expect(await releases(ci)).toEqual([]);
    });
  });
});
