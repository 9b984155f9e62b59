/**
 * The runs server on a file backend whose disk fills up: a real `kapps serve` on a 2 MB tmpfs mounted by this test
 * (as root; unmounted after it). The run that fills the disk ends `failed` saying why, `/readyz` is not ready while
 * the disk is full, no stack is left locked once space returns, and a server started on a full disk says what is
 * wrong (exit 1, not "a bug").
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanupProjects, fake, fixtureProject, kapp } from '../support/project.js';
import { api, startServer, stopAllServers, waitForRun } from '../support/server.js';
import { waitFor } from '../support/wait.js';

let mount: string;
let outside: string;

beforeAll(() => {
  if (process.getuid?.() !== 0) throw new Error('this test mounts a tmpfs: run it as root');
  mount = mkdtempSync(join(tmpdir(), 'kapps-full-'));
  outside = mkdtempSync(join(tmpdir(), 'kapps-full-src-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'tmpfs', mount]);
});

afterEach(stopAllServers);

afterAll(() => {
  cleanupProjects();
  if (mount) {
    try {
      execFileSync('umount', [mount]);
    } finally {
      rmSync(mount, { recursive: true, force: true });
    }
  }
  if (outside) rmSync(outside, { recursive: true, force: true });
});

/** Write `bytes` zeros to `file` (as much as fits: a full disk stops it). */
function ballast(file: string, bytes: number): void {
  try {
    writeFileSync(file, Buffer.alloc(bytes));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  }
}

describe('kapps serve on a file backend whose disk fills up', () => {
  it('the run that fills the disk fails saying why; not ready meanwhile; no stack left locked once space returns', async () => {
    // What the step prints: 3 MB, more than the disk holds; later a few lines.
    const printed = join(outside, 'printed.txt');
    writeFileSync(printed, `${'x'.repeat(99)}\n`.repeat(30_000));
    const p = fixtureProject({
      manifests: {
        web: { kapps: [kapp('work', { apply_install: [fake('step', 'dev', ['--cat', printed])] })] },
      },
      stacks: { dev: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/web.yaml' }] } },
    });
    const server = await startServer({
      args: ['--backend', mount, '--project', `shop=${p.stackFile}`, '--lease', '3'],
      env: p.env,
      cwd: p.dir,
    });
    const client = api(server.url);
    // Space to give back later.
    ballast(join(mount, 'ballast'), 512 * 1024);

    const res = await client.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    expect(res.status).toBe(202);
    const first = await waitForRun(client, (res.body as { id: string }).id, undefined, 60_000);
    expect(first.status).toBe('failed');
    expect(first.error).toMatch(/no space left on the device \(ENOSPC\)/);

    const ready = await client.get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ type: 'https://kapps.dev/problems/unavailable' });
    const full = await client.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    expect(full.status).toBe(503);
    expect(full.headers.get('retry-after')).toBe('5');

    // Space returns: the server is ready again, the release of the failed run is closed, the next run runs.
    rmSync(join(mount, 'ballast'));
    writeFileSync(printed, 'a few lines\n');
    await waitFor('the server to be ready again', async () => (await client.get('/readyz')).status === 200);
    await waitFor('the stack to be unlocked', async () => {
      const stack = await client.get<{ lock: unknown }>('/api/v1/projects/shop/stacks/dev');
      return stack.status === 200 && stack.body.lock === null;
    });
    const listed = await client.get<{ runs: { id: string }[] }>('/api/v1/runs');
    expect(listed.body.runs.map((r) => r.id)).toEqual([first.id]);
    const again = await client.post('/api/v1/runs', { type: 'apply', project: 'shop', stack: 'dev' });
    expect(again.status).toBe(202);
    const second = await waitForRun(client, (again.body as { id: string }).id);
    expect(second.status, second.error ?? '').toBe('succeeded');
    expect(server.stderr()).not.toMatch(/this is a bug|\n\s+at /);
  }, 120_000);

  it('a server started on a full disk says what is wrong and exits 1', async () => {
    const p = fixtureProject({
      manifests: { web: { kapps: [kapp('work', { apply_install: [fake('step', 'dev')] })] } },
      stacks: { dev: { provider: 'local', cluster: 'c', manifests: [{ uri: 'manifests/web.yaml' }] } },
    });
    rmSync(join(mount, 'runs', 'instance.lock'), { force: true });
    ballast(join(mount, 'fill'), 4 * 1024 * 1024);
    const started = startServer({
      args: ['--backend', mount, '--project', `shop=${p.stackFile}`],
      env: p.env,
      cwd: p.dir,
    });
    const error = await started.then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/exited \(1\) before listening/);
    expect(error?.message).toMatch(/no space left on the device \(ENOSPC\)/);
    expect(error?.message).not.toMatch(/this is a bug|\n\s+at /);
    rmSync(join(mount, 'fill'));
  }, 60_000);
});
