/**
 * Limits that hold on configuration nobody checked, end to end on the built CLI: regular expressions in templates
 * run in linear time (a catastrophic pattern on a long input ends promptly), functions that would build huge
 * values fail with the template's location and the function's name, and YAML nested too deeply is a located
 * configuration error (exit 1) instead of a stack overflow.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupProjects, fake, fixtureProject, kapp } from '../support/project.js';

afterAll(cleanupProjects);

/** A project whose one kapp `web:k` runs a step printing `{{ TEMPLATE }}` (rendered in its args). */
const withTemplate = (template: string) =>
  fixtureProject({
    manifests: { web: { kapps: [kapp('k', { apply_install: [fake('show', 'show', ['--stdout', template])] })] } },
  });

describe('templates', () => {
  it('a catastrophic regular expression on a long input finishes promptly (linear-time matching)', async () => {
    const input = 'a'.repeat(5000) + '!';
    const p = withTemplate(`m={{ regexMatch "^(a+)+$" "${input}" }} f={{ regexFind "(a|aa)+b" "${input}" }}.`);
    const r = await p.run('install', ['-y']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.trace.filter((l) => l.event === 'start').map((l) => l.args.join(' '))).toEqual([
      '--tag show --stdout m=false f=.',
    ]);
  }, 15_000);

  it.each([
    ['repeat', '{{ repeat 100000000 "x" }}', /error calling repeat: result of 100000000 characters exceeds/],
    ['randAlphaNum', '{{ randAlphaNum 100000000 }}', /error calling randAlphaNum: result of 100000000 characters/],
    ['until', '{{ len (until 100000000) }}', /error calling until: result of 100000000 items exceeds/],
  ])('%s of a huge size fails before allocating, naming the template and the function', async (_n, tpl, re) => {
    const p = withTemplate(tpl);
    const r = await p.run('install', ['-y']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(re);
    expect(r.stderr).toMatch(/template: [^\n]*:1:\d+: executing/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.trace).toEqual([]);
  });
});

/** `depth` nested block maps `k:` ending in a scalar. */
const deepBlock = (depth: number): string => {
  let s = '';
  for (let i = 0; i < depth; i++) s += `${' '.repeat(i)}k:\n`;
  return s + `${' '.repeat(depth)}v\n`;
};

describe('YAML nesting depth', () => {
  it('a stack file nested 3,000 levels deep is a located error, exit 1, no stack trace', async () => {
    const p = fixtureProject({ stacks: `dev:\n  provider: local\n  cluster: c\n  extra:\n${deepBlock(3000)}` });
    const r = await p.run('validate');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/stacks\.yaml:\d+:\d+/);
    expect(r.stderr).toContain('YAML nesting deeper than 256 levels');
    expect(r.stderr).not.toMatch(/Maximum call stack|\n\s+at /);
    // Within the limit, the same document is read.
    p.write('stacks.yaml', `dev:\n  provider: local\n  cluster: c\n  extra:\n${deepBlock(200)}`);
    expect((await p.run('validate')).stderr).not.toContain('YAML nesting');
  });

  it('a manifest holding `[[[…` 10,000 deep is a located error, exit 1', async () => {
    const deep = '['.repeat(10000) + ']'.repeat(10000);
    const p = fixtureProject({ manifests: { web: `kapps:\n  - id: k\n    vars:\n      x: ${deep}\n` } });
    const r = await p.run('install', ['-y']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/manifests\/web\.yaml:4:\d+/);
    expect(r.stderr).toContain('YAML nesting deeper than 256 levels');
    expect(r.stderr).not.toMatch(/Maximum call stack|\n\s+at /);
    expect(r.trace).toEqual([]);
  });
});
