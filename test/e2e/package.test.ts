/**
 * The `kapps` command as Node users get it: the packed package holds the built CLI (with its shebang and exec bit)
 * and the kapps library, its bin runs through a symlink (what `npm install -g` and `npm link` create), `npx kapps`
 * runs it in the clone, and the README's commands use `kapps` the way every message names it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, cliEnv } from '../support/cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const pkgJson = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: unknown };
const VERSION = pkgJson.version;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'kapps-package-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the kapps command', () => {
  it('npm pack includes the executable CLI, the kapps library and the README', () => {
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--offline'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: cliEnv(),
    });
    expect(r.status, r.stderr).toBe(0);
    const [pack] = JSON.parse(r.stdout) as { files: { path: string; mode: number }[] }[];
    const files = new Map((pack?.files ?? []).map((f) => [f.path, f.mode]));
    expect((files.get('dist/bin/kapps.js') ?? 0) & 0o111).toBe(0o111);
    expect(files.has('dist/bin/process-server.js')).toBe(true);
    expect(pkgJson.bin).toEqual({ kapps: 'dist/bin/kapps.js' });
    expect(files.has('kapps/static-site/sugarkube.yaml')).toBe(true);
    // The web page kapps serve serves: its index and its hashed assets.
    expect(files.has('dist/web/index.html')).toBe(true);
    expect([...files.keys()].filter((f) => /^dist\/web\/assets\/index-[\w-]+\.js$/.test(f))).toHaveLength(1);
    // The PostgreSQL migrations, read at run time from dist/pg/migrations/ (by the bundle as by the tsc output).
    const sqlFiles = readdirSync(new URL('../../src/pg/migrations/', import.meta.url)).filter((f) =>
      f.endsWith('.sql'),
    );
    expect(sqlFiles.length).toBeGreaterThan(0);
    expect(sqlFiles.filter((f) => !files.has(`dist/pg/migrations/${f}`))).toEqual([]);
    expect(files.has('README.md')).toBe(true);
    expect([...files.keys()].filter((f) => f.startsWith('src/') || f.startsWith('test/'))).toEqual([]);
    expect(readFileSync(CLI, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
  });

  it('runs as `kapps` through a symlink on PATH, as npm install -g and npm link leave it', () => {
    const bin = path.join(tmp, 'bin');
    spawnSync('mkdir', ['-p', bin]);
    symlinkSync(CLI, path.join(bin, 'kapps'));
    const r = spawnSync('kapps', ['--version'], {
      encoding: 'utf8',
      env: cliEnv({ PATH: `${bin}:${process.env.PATH ?? ''}` }),
    });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`${VERSION}\n`);
  });

  it('npx kapps runs the built CLI in the clone without downloading anything', () => {
    const r = spawnSync('npx', ['--offline', 'kapps', '--version'], { cwd: ROOT, encoding: 'utf8', env: cliEnv() });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${VERSION}\n`);
  });

  it("the README's quick start is one command, and its commands run `kapps`, not node dist/cli/main.js", () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
    expect(blocks[0]).toBe('npm ci && npm run build && npx kapps install --one-shot samples/demo/stacks.yaml local\n');
    const lines = blocks.flatMap((b) => b.split('\n')).filter((l) => l !== '');
    expect(lines.filter((l) => l.includes('dist/cli/main.js'))).toEqual([]);
    expect(lines.filter((l) => l.startsWith('npx kapps '))).toHaveLength(4);
  });
});
