/**
 * The CLI users run is the esbuild bundle in dist/bin/ (scripts/bundle.mjs): flat, with the commands' modules in
 * chunks loaded when a command needs them, and saying exactly what the modules it is built from (dist/cli/main.js)
 * say.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI, cliEnv, runCli } from '../support/cli.js';

const BIN = path.dirname(CLI);
const MODULES_CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The files `file` imports statically, and theirs, within dist/bin/. */
function staticClosure(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(path.join(BIN, file), 'utf8');
  // An import at the start of a line or after another statement (the bundle has no whitespace to spare).
  for (const m of text.matchAll(/(?:^|;)\s*import\s*(?:[\w*{}\s,$]+from\s*)?["']\.\/([\w.-]+\.js)["']/gm)) {
    if (m[1]) staticClosure(m[1], seen);
  }
  return seen;
}

/** The modules bundled into `file`, as its source map lists them (paths from the repository's root). */
function modulesOf(file: string): string[] {
  const map = JSON.parse(readFileSync(path.join(BIN, `${file}.map`), 'utf8')) as { sources: string[] };
  return map.sources.map((s) => path.relative(ROOT, path.resolve(BIN, s)).split(path.sep).join('/'));
}

/** The packages and source folders bundled into `files`. */
function origins(files: Iterable<string>): Set<string> {
  const found = new Set<string>();
  for (const f of files) {
    for (const module of modulesOf(f)) {
      const m = /^(node_modules\/(?:@[\w.-]+\/)?[\w.-]+|src\/[\w-]+)\//.exec(module);
      if (m?.[1]) found.add(m[1]);
    }
  }
  return found;
}

describe('the bundled CLI', () => {
  it('is flat in dist/bin: the two entries and their chunks, no sub-folder', () => {
    const files = readdirSync(BIN);
    expect(files).toContain('kapps.js');
    expect(files).toContain('process-server.js');
    expect(files.filter((f) => statSync(path.join(BIN, f)).isDirectory())).toEqual([]);
    expect(files.filter((f) => f.endsWith('.js') && !/^(kapps|process-server|chunk-[A-Z0-9]+)\.js$/.test(f))).toEqual(
      [],
    );
    expect(readFileSync(CLI, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
  });

  it('loads what a command needs when it runs: --help loads no template engine, YAML reader, schema, planner, runner, configuration reader or release module', () => {
    const atStart = origins(staticClosure('kapps.js'));
    expect(atStart).toContain('node_modules/yargs');
    expect(atStart).toContain('src/cli');
    const all = origins(readdirSync(BIN).filter((f) => f.endsWith('.js')));
    for (const lazy of [
      'src/template',
      'src/yaml',
      'src/stack',
      'src/execute',
      'src/config',
      'src/release',
      'node_modules/yaml',
      'node_modules/zod',
      'node_modules/listr2',
    ]) {
      expect(all, lazy).toContain(lazy);
      expect(atStart, lazy).not.toContain(lazy);
    }
    // pg stays a package of its own, loaded from node_modules by the PostgreSQL store only; so does re2js, loaded
    // the first time a template compiles a regular expression.
    expect(all).not.toContain('node_modules/pg');
    expect(all).not.toContain('node_modules/re2js');
  });

  it('bundles only the parts of zod kapps uses: its English messages, none of its other languages', () => {
    const modules = readdirSync(BIN)
      .filter((f) => f.endsWith('.js'))
      .flatMap(modulesOf);
    const locales = modules.flatMap((m) => /^node_modules\/zod\/v4\/locales\/([\w-]+)\.js$/.exec(m)?.[1] ?? []);
    expect(locales).toEqual(['en']);
  });

  it('matches templates with regular expressions from the bundle (re2js loaded on first use)', async () => {
    const r = await runCli(['render', '-'], {
      input: '{{ regexMatch "^a+b$" "aab" }} {{ regexReplaceAll "[0-9]+" "a1b22" "#" }} {{ regexFind "(" "x" }}',
    });
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('error parsing regexp: missing closing ): `(`');
    expect(r.code).toBe(1);
    const ok = await runCli(['render', '-'], {
      input: '{{ regexMatch "^a+b$" "aab" }} {{ regexReplaceAll "[0-9]+" "a1b22" "#" }}',
    });
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toBe('true a#b#');
    expect(ok.code).toBe(0);
  });

  it.each([['--help'], ['install', '--help'], ['vars', '--help'], ['release', 'list', '--help']])(
    'prints the same help as the modules it is built from: kapps %s',
    async (...args) => {
      const bundled = await runCli(args);
      const modules = spawnSync(process.execPath, [MODULES_CLI, ...args], { encoding: 'utf8', env: cliEnv() });
      expect(bundled.code).toBe(0);
      expect(modules.status).toBe(0);
      expect(bundled.stderr).toBe('');
      expect(bundled.stdout).toBe(modules.stdout);
    },
  );

  // What the bundle does to the code (its chunks, their shortened syntax, the packages' parts it replaces) must change
  // nothing a user sees: each command says, byte for byte, what the modules it is built from say.
  it.each(
    (
      [
        [0, 'generate', 'samples/demo/stacks.yaml', 'local'],
        [0, 'generate', 'samples/demo/stacks.yaml', 'local', '-o', 'json', '--phase', 'apply_install'],
        [0, 'graph', 'samples/demo/stacks.yaml', 'local', '-f', 'dot'],
        [0, 'vars', 'samples/demo/stacks.yaml', 'local'],
        [0, 'schema', 'stack'],
        [2, 'generate', 'samples/demo/stacks.yaml', 'local', '--gnerate'],
        [1, 'generate', 'samples/demo/stacks.yaml', 'nope'],
        [2, 'generate', 'samples/demo/stacks.yaml'],
      ] as const
    ).map(([code, ...args]) => [args.join(' '), code, args] as const),
  )('says what the modules it is built from say: kapps %s', async (_name, code, args) => {
    const cwd = fileURLToPath(new URL('../..', import.meta.url));
    const bundled = await runCli(args, { cwd });
    const modules = spawnSync(process.execPath, [MODULES_CLI, ...args], { cwd, encoding: 'utf8', env: cliEnv() });
    expect(modules.status).toBe(code);
    expect(bundled.code).toBe(code);
    expect(bundled.stdout).toBe(modules.stdout);
    expect(bundled.stderr).toBe(modules.stderr);
  });

  it('prints a stack as YAML with the yaml package it bundles (loaded by the command)', async () => {
    const r = await runCli(['generate', 'samples/demo/stacks.yaml', 'local'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^stack: local\nkapps:\n {2}- id: /);
  });
});
