/**
 * Run checks on real processes (small Node scripts as the checks) and a real HTTP endpoint on loopback: what a
 * command gets (the preview on stdin, its arguments as they are, the project's environment) and how its exit code and
 * output become the result; what an endpoint is sent (signed as notifications are) and how its answer is read.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { MAX_CHECK_MESSAGE_BYTES, type CheckResult } from '../../../src/api/index.js';
import { blockingFailure, runChecks, type CheckContext } from '../../../src/server/checks/run-checks.js';
import type { RunCheck } from '../../../src/server/gate-config.js';
import { markersKilledAfterEach, survivors, waitForProcess } from '../../support/processes.js';

const dir = mkdtempSync(path.join(tmpdir(), 'kapps-checks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const newMarker = markersKilledAfterEach('kapps-check');

const DOCUMENT = JSON.stringify(
  {
    stack: 'dev',
    project: 'shop',
    basedOnRevision: 4,
    kapps: [{ id: 'web:api', action: 'Update' }],
    refreshed: null,
    hasChanges: true,
  },
  null,
  2,
);

/** A Node script written to the test's folder; the check runs `node <script> args…`. */
function script(name: string, source: string): string {
  const file = path.join(dir, `${name}.mjs`);
  writeFileSync(file, source);
  return file;
}

function command(name: string, source: string, args: string[] = [], fields: Partial<RunCheck> = {}): RunCheck {
  return {
    name,
    stage: 'after_preview',
    enforcement: 'mandatory',
    timeoutSeconds: 60,
    command: [process.execPath, script(name, source), ...args],
    ...fields,
  };
}

function context(fields: Partial<CheckContext> = {}): CheckContext & { lines: string[] } {
  const lines: string[] = [];
  return {
    run: { id: 'r1', project: 'shop', stack: 'dev', type: 'apply' },
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    serverEnv: {},
    signal: new AbortController().signal,
    message: (text) => lines.push(text),
    lines,
    ...fields,
  };
}

async function one(check: RunCheck, ctx = context(), document = DOCUMENT): Promise<CheckResult> {
  const results = await runChecks([check], check.stage, document, ctx);
  expect(results).toHaveLength(1);
  return results[0] as CheckResult;
}

describe('runChecks: a command', () => {
  it('passes on exit 0, its exit code and output as the message', async () => {
    const r = await one(command('ok', 'console.log("2 tests, 2 passed");'));
    expect(r).toMatchObject({ name: 'ok', stage: 'after_preview', enforcement: 'mandatory', status: 'passed' });
    expect(r.message).toBe('exit code 0\n2 tests, 2 passed');
    expect(Number.isInteger(r.durationMs)).toBe(true);
    expect(Number.isNaN(Date.parse(r.at))).toBe(false);
  });

  it('fails on any other exit code, with its last lines of stdout and stderr', async () => {
    const r = await one(
      command(
        'deny',
        'console.log("checking web:api"); console.error("FAIL - web:api may not be updated on Fridays"); process.exit(1);',
      ),
    );
    expect(r.status).toBe('failed');
    // Two pipes: which of their lines came first is the kernel's affair, so only the set of lines is certain.
    const [head, ...lines] = r.message.split('\n');
    expect(head).toBe('exit code 1');
    expect(lines.sort()).toEqual(['FAIL - web:api may not be updated on Fridays', 'checking web:api']);
    expect(blockingFailure([r])).toBe(r);
  });

  it('gets the preview document on stdin, whole, however large', async () => {
    const big = JSON.stringify({ ...JSON.parse(DOCUMENT), pad: 'x'.repeat(3_000_000) });
    const source = `
      const chunks = [];
      for await (const c of process.stdin) chunks.push(c);
      const text = Buffer.concat(chunks).toString('utf8');
      const doc = JSON.parse(text);
      console.log(doc.stack, doc.kapps[0].action, text.length);`;
    expect((await one(command('stdin', source))).message).toBe(`exit code 0\ndev Update ${DOCUMENT.length}`);
    expect((await one(command('stdin-big', source), context(), big)).message).toBe(
      `exit code 0\ndev Update ${big.length}`,
    );
  });

  it('passes when the command does not read its input at all', async () => {
    const big = JSON.stringify({ pad: 'y'.repeat(1_000_000) });
    const r = await one(command('no-read', 'console.log("not reading");'), context(), big);
    expect(r).toMatchObject({ status: 'passed', message: 'exit code 0\nnot reading' });
  });

  it('runs no shell: each argument reaches the program as written', async () => {
    const marker = path.join(dir, 'PWNED');
    const args = [`a; touch ${marker}`, `$(touch ${marker})`, '`id`', '*', '--flag=x y', "it's"];
    const r = await one(command('argv', 'console.log(JSON.stringify(process.argv.slice(2)));', args));
    expect(r.status).toBe('passed');
    expect(JSON.parse(r.message.split('\n')[1] ?? '')).toEqual(args);
    expect(existsSync(marker)).toBe(false);
  });

  it("runs in the context's folder with the context's environment and the run's identity, nothing else", async () => {
    const r = await one(
      command(
        'env',
        'console.log(process.cwd()); console.log(JSON.stringify(Object.keys(process.env).sort()));' +
          'console.log(process.env.KAPPS_CHECK_NAME, process.env.KAPPS_CHECK_STAGE, process.env.KAPPS_RUN_ID,' +
          ' process.env.KAPPS_RUN_TYPE, process.env.KAPPS_PROJECT, process.env.KAPPS_STACK, process.env.TEAM);',
      ),
      context({ env: { PATH: process.env.PATH ?? '', TEAM: 'shop-team' } }),
    );
    const [, cwd, keys, ids] = r.message.split('\n');
    expect(cwd).toBe(dir);
    expect(JSON.parse(keys ?? '')).toEqual([
      'KAPPS_CHECK_NAME',
      'KAPPS_CHECK_STAGE',
      'KAPPS_PROJECT',
      'KAPPS_RUN_ID',
      'KAPPS_RUN_TYPE',
      'KAPPS_STACK',
      'PATH',
      'TEAM',
    ]);
    expect(ids).toBe('env after_preview r1 apply shop dev shop-team');
  });

  it("never sees a check's signing key, even when the project passes it", async () => {
    const check = command('key', 'console.log(String(process.env.CHECK_KEY));');
    const endpoint: RunCheck = {
      ...check,
      name: 'remote',
      command: undefined,
      url: 'http://127.0.0.1:9/x',
      secretEnv: 'CHECK_KEY',
    };
    const ctx = context({ env: { PATH: process.env.PATH ?? '', CHECK_KEY: 'k-123456' } });
    const [r] = await runChecks([check, { ...endpoint, stage: 'before_apply' }], 'after_preview', DOCUMENT, ctx);
    expect(r?.message).toBe('exit code 0\nundefined');
  });

  it('masks credentials in what it printed: URL passwords and the values of secret-named variables', async () => {
    const r = await one(
      command(
        'leaky',
        'console.log("db at postgres://app:hunter2-pw@db:5432/shop"); console.log("token", process.env.API_TOKEN); process.exit(3);',
      ),
      context({ env: { PATH: process.env.PATH ?? '', API_TOKEN: 'tok-7f3a9c' } }),
    );
    expect(r.status).toBe('failed');
    expect(r.message).toBe('exit code 3\ndb at postgres://app:***@db:5432/shop\ntoken ***');
    expect(JSON.stringify(r)).not.toMatch(/hunter2|tok-7f3a9c/);
  });

  it(`keeps only the last lines, within ${MAX_CHECK_MESSAGE_BYTES} bytes, whatever it printed`, async () => {
    const r = await one(
      command(
        'chatty',
        'for (let i = 0; i < 20000; i++) console.log(`line ${i} ` + "é".repeat(300)); console.log("the end"); process.exitCode = 2;',
      ),
    );
    expect(r.status).toBe('failed');
    expect(Buffer.byteLength(r.message, 'utf8')).toBeLessThanOrEqual(MAX_CHECK_MESSAGE_BYTES);
    expect(r.message.startsWith('exit code 2\n…')).toBe(true);
    expect(r.message.endsWith('line 19999 ' + 'é'.repeat(300) + '\nthe end')).toBe(true);
    expect(r.message).not.toContain('\uFFFD');
  });

  it('fails a command that times out, its whole process group killed', async () => {
    const marker = newMarker();
    const source = `
      import { spawn } from 'node:child_process';
      spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '${marker}'], { stdio: 'ignore' });
      console.log('started');
      setInterval(() => {}, 1000);`;
    const running = one(command('slow', source, [], { timeoutSeconds: 1 }));
    await waitForProcess(marker);
    const r = await running;
    expect(r).toMatchObject({ status: 'failed', message: 'timed out after 1s\nstarted' });
    expect(await survivors(marker)).toEqual([]);
  });

  it('stops a running command when the run is cancelled, and starts no other', async () => {
    const marker = newMarker();
    const controller = new AbortController();
    const ctx = context({ signal: controller.signal });
    const hang = command('hang', `setInterval(() => {}, 1000); // ${marker}`, [marker]);
    const after = command('after', 'console.log("ran");');
    const running = runChecks([hang, after], 'after_preview', DOCUMENT, ctx);
    await waitForProcess(marker);
    controller.abort();
    const results = await running;
    expect(results.map((r) => [r.name, r.status, r.message])).toEqual([
      ['hang', 'failed', 'cancelled: the run was cancelled'],
    ]);
    expect(await survivors(marker)).toEqual([]);
  });

  it('fails a command that cannot be run, saying why', async () => {
    const r = await one({ ...command('missing', ''), command: ['kapps-no-such-check-tool', 'test', '-'] });
    expect(r.status).toBe('failed');
    expect(r.message).toMatch(/^cannot run kapps-no-such-check-tool: command not found on PATH/);
  });
});

describe('runChecks: a stage', () => {
  it("runs only the stage's checks, in their order, every one of them, one log line each", async () => {
    const ctx = context();
    const checks = [
      command('first', 'process.exit(1);', [], { enforcement: 'advisory' }),
      command('later', 'console.log("before apply");', [], { stage: 'before_apply' }),
      command('second', 'console.error("no"); process.exit(4);'),
      command('third', 'console.log("fine");'),
    ];
    const results = await runChecks(checks, 'after_preview', DOCUMENT, ctx);
    expect(results.map((r) => [r.name, r.enforcement, r.status, r.message])).toEqual([
      ['first', 'advisory', 'failed', 'exit code 1'],
      ['second', 'mandatory', 'failed', 'exit code 4\nno'],
      ['third', 'mandatory', 'passed', 'exit code 0\nfine'],
    ]);
    expect(blockingFailure(results)?.name).toBe('second');
    expect(ctx.lines).toHaveLength(3);
    expect(ctx.lines[0]).toMatch(/^check first \(after_preview, advisory\): failed in \d+(\.\d)? s: exit code 1$/);
    expect(ctx.lines[1]).toMatch(/^check second \(after_preview, mandatory\): failed in .* s: exit code 4 \| no$/);
    expect(ctx.lines[2]).toMatch(/^check third \(after_preview, mandatory\): passed in .* s: exit code 0 \| fine$/);
    expect(await runChecks(checks, 'before_apply', DOCUMENT, context())).toMatchObject([
      { name: 'later', stage: 'before_apply', status: 'passed' },
    ]);
  });

  it('an advisory failure does not block', async () => {
    const results = await runChecks(
      [command('soft', 'process.exit(1);', [], { enforcement: 'advisory' })],
      'after_preview',
      DOCUMENT,
      context(),
    );
    expect(results[0]?.status).toBe('failed');
    expect(blockingFailure(results)).toBeUndefined();
  });
});

const KEY = 'check-key-5d1e77';

interface Seen {
  readonly headers: IncomingHttpHeaders;
  readonly raw: string;
  readonly method: string;
}

interface Endpoint {
  readonly url: string;
  readonly seen: Seen[];
  close(): Promise<void>;
}

const endpoints: Endpoint[] = [];
afterEach(async () => {
  await Promise.all(endpoints.splice(0).map((e) => e.close()));
});

/** An endpoint on loopback; `answer` writes each request's answer (or leaves it unanswered). */
async function endpoint(answer: (seen: Seen, response: ServerResponse) => void): Promise<Endpoint> {
  const seen: Seen[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const s = { headers: request.headers, raw: Buffer.concat(chunks).toString('utf8'), method: request.method ?? '' };
      seen.push(s);
      answer(s, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const e: Endpoint = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/policy`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  endpoints.push(e);
  return e;
}

const json = (status: number, body: unknown) => (_s: Seen, response: ServerResponse) =>
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

function urlCheck(url: string, fields: Partial<RunCheck> = {}): RunCheck {
  return {
    name: 'remote',
    stage: 'before_apply',
    enforcement: 'mandatory',
    timeoutSeconds: 60,
    url,
    secretEnv: 'CHECK_KEY',
    ...fields,
  };
}

const keyed = (fields: Partial<CheckContext> = {}) => context({ serverEnv: { CHECK_KEY: KEY }, ...fields });

function verified(raw: string, header: string | string[] | undefined, secret: string): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
  const given = Buffer.from(typeof header === 'string' ? header : '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe('runChecks: an endpoint', () => {
  it('is POSTed the preview with the run and the check, signed as notifications are, and passes as answered', async () => {
    const e = await endpoint(json(200, { status: 'passed', message: 'cost +$3/month, within budget' }));
    const ctx = keyed();
    const r = await one(urlCheck(e.url), ctx);
    expect(r).toMatchObject({ name: 'remote', stage: 'before_apply', status: 'passed' });
    expect(r.message).toBe('cost +$3/month, within budget');
    expect(e.seen).toHaveLength(1);
    const s = e.seen[0] as Seen;
    expect(s.method).toBe('POST');
    expect(s.headers['content-type']).toBe('application/json');
    expect(s.headers['x-kapps-event']).toBe('run.check');
    expect(s.headers['x-kapps-delivery']).toMatch(/^[0-9a-f-]{36}$/);
    expect(verified(s.raw, s.headers['x-kapps-signature-256'], KEY)).toBe(true);
    expect(verified(s.raw, s.headers['x-kapps-signature-256'], 'another-key')).toBe(false);
    const body = JSON.parse(s.raw) as Record<string, unknown>;
    expect(body).toEqual({
      event: 'run.check',
      deliveryId: s.headers['x-kapps-delivery'],
      check: { name: 'remote', stage: 'before_apply', enforcement: 'mandatory' },
      run: { id: 'r1', project: 'shop', stack: 'dev', type: 'apply' },
      preview: JSON.parse(DOCUMENT) as unknown,
    });
    expect(ctx.lines).toEqual([
      expect.stringMatching(/^check remote \(before_apply, mandatory\): passed in .* s: cost/),
    ]);
    expect(JSON.stringify([r, ctx.lines])).not.toContain(KEY);
  });

  it('fails as answered, with its message', async () => {
    const e = await endpoint(json(200, { status: 'failed', message: 'ticket CHG-12 is not approved' }));
    const r = await one(urlCheck(e.url), keyed());
    expect(r).toMatchObject({ status: 'failed', message: 'ticket CHG-12 is not approved' });
  });

  it.each([
    ['a non-2xx status', json(503, { status: 'passed' }), /^the endpoint answered 503: \{"status":"passed"\}$/],
    [
      'a non-2xx status with a large page',
      (_s: Seen, res: ServerResponse) =>
        res.writeHead(502, { 'content-type': 'text/html' }).end(`<html>\n<h1>Bad gateway</h1>\n${'x'.repeat(50_000)}`),
      /^the endpoint answered 502: <html> \| <h1>Bad gateway<\/h1> \| x+…$/,
    ],
    [
      'a redirect (not followed)',
      (_s: Seen, res: ServerResponse) => res.writeHead(302, { location: 'http://127.0.0.1:9/' }).end(),
      /^the endpoint answered 302$/,
    ],
    [
      'a body that is not JSON',
      (_s: Seen, res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>ok</h1>'),
      /^the endpoint's answer is not JSON: <h1>ok<\/h1>$/,
    ],
    [
      'an empty body',
      (_s: Seen, res: ServerResponse) => res.writeHead(204).end(),
      /^the endpoint's answer is not JSON: \(empty\)$/,
    ],
    ['no status', json(200, { message: 'fine' }), /^the endpoint's answer has no `status` "passed" or "failed"/],
    [
      'another status',
      json(200, { status: 'ok' }),
      /^the endpoint's answer has no `status` "passed" or "failed": \{"status":"ok"\}$/,
    ],
    ['a message that is no string', json(200, { status: 'passed', message: 3 }), /`message` that is not a string$/],
    [
      'an answer too large',
      json(200, { status: 'passed', message: 'm'.repeat(100_000) }),
      /^the endpoint's answer is larger than 64 KiB$/,
    ],
  ])('fails on %s, saying why', async (_what, answer, why) => {
    const e = await endpoint(answer);
    const r = await one(urlCheck(e.url), keyed());
    expect(r.status).toBe('failed');
    expect(r.message).toMatch(why);
  });

  it('fails on an endpoint that does not answer within the timeout', async () => {
    const e = await endpoint(() => undefined);
    const r = await one(urlCheck(e.url, { timeoutSeconds: 1 }), keyed());
    expect(r).toMatchObject({ status: 'failed', message: 'timed out after 1s' });
  });

  it('fails on a connection refused', async () => {
    const e = await endpoint(json(200, { status: 'passed' }));
    await e.close();
    const r = await one(urlCheck(e.url), keyed());
    expect(r.status).toBe('failed');
    expect(r.message).toMatch(/^no answer from the endpoint: ECONNREFUSED/);
  });

  it("fails, sending nothing, when the key is not in the server's environment", async () => {
    const e = await endpoint(json(200, { status: 'passed' }));
    const r = await one(urlCheck(e.url), context());
    expect(r).toMatchObject({ status: 'failed', message: "`CHECK_KEY` is not set in the server's environment" });
    expect(e.seen).toHaveLength(0);
  });

  it('never says the key, even when the endpoint echoes it', async () => {
    const e = await endpoint(json(200, { status: 'failed', message: `bad key ${KEY}` }));
    const ctx = keyed();
    const r = await one(urlCheck(e.url), ctx);
    expect(r.message).toBe('bad key ***');
    expect(ctx.lines.join('\n')).not.toContain(KEY);
  });

  it('keeps an endpoint message within the bound', async () => {
    const e = await endpoint(json(200, { status: 'failed', message: `${'a'.repeat(10_000)}END` }));
    const r = await one(urlCheck(e.url), keyed());
    expect(Buffer.byteLength(r.message)).toBeLessThanOrEqual(MAX_CHECK_MESSAGE_BYTES);
    expect(r.message.endsWith('aEND')).toBe(true);
  });
});
