import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'kapps-render-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

describe('kapps render', () => {
  it('renders a template file against merged vars files (later wins, maps merge, lists replace)', async () => {
    const a = file('a.yaml', 'stack: {name: dev1, region: eu-west-1}\nlist: [1, 2, 3]\nkeep: yes\n');
    const b = file('b.yaml', 'stack: {name: prod}\nlist: [9]\n');
    const tpl = file('t.tpl', '{{ .stack.name }}/{{ .stack.region }} {{ .list }} {{ .keep }}\n');
    const r = await runCli(['render', tpl, '--vars', a, '--vars', b]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('prod/eu-west-1 [9] true\n');
  });

  it('reads the template from stdin and types --set values like YAML', async () => {
    const r = await runCli(
      ['render', '-', '--set', 'kapp.replicas=3', '--set', 'on=true', '--set', 'ratio=1.0', '--set-string', 'id=007'],
      { input: '{{ printf "%T %T %T %T" .kapp.replicas .on .ratio .id }} {{ .kapp.replicas }} {{ .ratio }} {{ .id }}' },
    );
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('int bool float64 string 3 1 007');
  });

  it('overrides vars files with --set and nests dotted keys', async () => {
    const a = file('c.yaml', 'kapp: {vars: {replicas: 2, name: web}}\n');
    const r = await runCli(['render', '--vars', a, '--set', 'kapp.vars.replicas=5'], {
      input: '{{ .kapp.vars.name }}={{ .kapp.vars.replicas }}',
    });
    expect(r.stdout).toBe('web=5');
  });

  it('prints <no value> for a missing key, and fails with --strict', async () => {
    const lax = await runCli(['render'], { input: 'x={{ .nope }}' });
    expect(lax.code).toBe(0);
    expect(lax.stdout).toBe('x=<no value>');
    const strict = await runCli(['render', '--strict'], { input: 'x={{ .nope }}' });
    expect(strict.code).toBe(1);
    expect(strict.stdout).toBe('');
    expect(strict.stderr).toContain(
      'template: gotpl:1:5: executing "gotpl" at <.nope>: map has no entry for key "nope"',
    );
  });

  it('reports a parse error with Go’s text and exit code 1, printing nothing to stdout', async () => {
    const r = await runCli(['render'], { input: 'ok\n{{ if .x }}never closed' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('template: gotpl:2: unexpected EOF');
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/);
  });

  it('reports an unknown function at parse time even in an untaken branch', async () => {
    const r = await runCli(['render'], { input: '{{ if false }}{{ toYaml . }}{{ end }}' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('template: gotpl:1: function "toYaml" not defined');
  });

  it('rejects a malformed --set', async () => {
    const r = await runCli(['render', '--set', 'novalue'], { input: '{{ . }}' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--set expects key=value');
  });

  it('fails cleanly on a missing template file', async () => {
    const r = await runCli(['render', join(tmp, 'nope.tpl')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot read .*nope\.tpl/);
  });

  it('renders a case file with @FIXTURES@ substitution, env and strict per case', async () => {
    const cases = file(
      'cases.json',
      JSON.stringify({
        cases: [
          { id: 'a', template: '{{ .p }}|{{ .n }}|{{ printf "%T" .f }}', data: { p: '@FIXTURES@/x', n: 1, f: 1.5 } },
          { id: 'b', template: '{{ .nope }}', data: {}, strict: true },
          { id: 'c', template: '{{ .m.k }} {{ printf "%T" .m }}', yaml: 'm: {k: v}' },
          { id: 'd', template: '{{ if }}' },
        ],
      }),
    );
    const r = await runCli(['render', '--cases', cases, '--fixtures', join(tmp, 'fx')]);
    expect(r.stderr).toBe('');
    const res = (JSON.parse(r.stdout) as { results: unknown[] }).results;
    expect(res).toEqual([
      { id: 'a', output: '@FIXTURES@/x|1|float64' },
      {
        id: 'b',
        error: 'template: gotpl:1:3: executing "gotpl" at <.nope>: map has no entry for key "nope"',
        phase: 'exec',
      },
      { id: 'c', output: 'v map[interface {}]interface {}' },
      { id: 'd', error: 'template: gotpl:1: missing value for if', phase: 'parse' },
    ]);
  });

  it('keeps JSON number typing in case data: 1 is an int, 1.0 a float', async () => {
    const cases = file(
      'typing.json',
      '{"cases":[{"id":"t","template":"{{ printf \\"%T %T %v %v\\" .i .f .f .big }}","data":{"i":1,"f":1.0,"big":9007199254740993}}]}',
    );
    const r = await runCli(['render', '--cases', cases]);
    expect((JSON.parse(r.stdout) as { results: unknown[] }).results).toEqual([
      { id: 't', output: 'int float64 1 9007199254740993' },
    ]);
  });

  it('explains itself in --help', async () => {
    const r = await runCli(['render', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--vars');
    expect(r.stdout).toContain('--set');
    expect(r.stdout).toContain('--strict');
    expect(r.stdout).toContain('--cases');
  });
});
